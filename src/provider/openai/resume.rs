//! A direct agent keeps no session of its own: its conversation is hive's
//! history. On resume the session's records become chat messages again.
//!
//! The history keeps one assistant record per turn (tool calls, then the
//! texts) with the tool results as records beside it, so a multi-step turn
//! comes back as one tool-calling assistant message, its results, and the
//! turn's text; thinking is not sent back (several servers reject it).

use std::collections::HashMap;

use super::wire::{ChatMessage, ToolCall};
use crate::history::record::{Block, Record, Role};

pub(crate) fn messages_from_records<'a>(
    records: impl IntoIterator<Item = &'a Record>,
) -> Vec<ChatMessage> {
    let mut out = Vec::new();
    let mut results: HashMap<String, String> = HashMap::new();
    for r in records {
        match r.role {
            // `/compact` asked for a summary; the rebuilt conversation is whole.
            Role::User if r.text().trim() == super::COMPACT => {}
            Role::User => {
                results.clear();
                out.push(ChatMessage::User {
                    content: r.text().into(),
                });
            }
            Role::ToolResult => {
                if let Some(id) = &r.tool_call_id {
                    results.insert(id.clone(), r.text());
                }
            }
            Role::Assistant => {
                let calls: Vec<ToolCall> = r
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        Block::ToolCall {
                            id,
                            name,
                            arguments,
                            ..
                        } => Some(ToolCall::function(id, name, arguments.to_string())),
                        _ => None,
                    })
                    .collect();
                if !calls.is_empty() {
                    let ids: Vec<String> = calls.iter().map(|c| c.id.clone()).collect();
                    out.push(ChatMessage::Assistant {
                        content: None,
                        tool_calls: calls,
                    });
                    // Every call needs its result, or the server rejects
                    // the conversation.
                    for id in ids {
                        let content = results
                            .remove(&id)
                            .unwrap_or_else(|| "error: no result was recorded".into());
                        out.push(ChatMessage::Tool {
                            tool_call_id: id,
                            content,
                        });
                    }
                }
                let text = r.text();
                if !text.is_empty() {
                    out.push(ChatMessage::Assistant {
                        content: Some(text),
                        tool_calls: Vec::new(),
                    });
                }
                results.clear();
            }
            Role::System => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(role: Role, blocks: Vec<Block>) -> Record {
        let mut r = Record::new("a", "s", 0, role);
        r.content = blocks;
        r
    }

    fn text(t: &str) -> Block {
        Block::Text { text: t.into() }
    }

    #[test]
    fn a_tool_turn_comes_back_as_call_result_answer() {
        let mut result = rec(Role::ToolResult, vec![text("3")]);
        result.tool_call_id = Some("c1".into());
        let records = vec![
            rec(Role::User, vec![text("add 1 2")]),
            result,
            rec(
                Role::Assistant,
                vec![
                    Block::Thinking {
                        thinking: "hm".into(),
                    },
                    Block::ToolCall {
                        id: "c1".into(),
                        name: "add".into(),
                        arguments: json!({"a": 1, "b": 2}),
                        display: None,
                    },
                    text("It is 3."),
                ],
            ),
            rec(Role::System, vec![text("retrying")]),
        ];
        let m = messages_from_records(&records);
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[0],
            ChatMessage::User {
                content: "add 1 2".into()
            }
        );
        let ChatMessage::Assistant { tool_calls, .. } = &m[1] else {
            panic!("{m:?}")
        };
        assert_eq!(tool_calls[0].function.name, "add");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&tool_calls[0].function.arguments).unwrap(),
            json!({"a": 1, "b": 2})
        );
        assert_eq!(
            m[2],
            ChatMessage::Tool {
                tool_call_id: "c1".into(),
                content: "3".into()
            }
        );
        assert_eq!(
            m[3],
            ChatMessage::Assistant {
                content: Some("It is 3.".into()),
                tool_calls: vec![]
            }
        );
    }

    #[test]
    fn a_call_without_a_recorded_result_still_gets_one() {
        let records = vec![
            rec(Role::User, vec![text("go")]),
            rec(
                Role::Assistant,
                vec![Block::ToolCall {
                    id: "c9".into(),
                    name: "x".into(),
                    arguments: json!({}),
                    display: None,
                }],
            ),
        ];
        let m = messages_from_records(&records);
        assert!(matches!(&m[2], ChatMessage::Tool { tool_call_id, .. } if tool_call_id == "c9"));
        assert_eq!(m.len(), 3);
    }
}
