//! What a pane can copy: answers, code blocks, tool output and whole turns,
//! taken from the transcript's own text (the markdown source, the raw tool
//! output), never from the screen, so no borders, gutters or wrapped lines
//! end up in the clipboard.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use super::menu::MenuItem;
use super::transcript::{EntryKind, Transcript};
use crate::protocol::event::Origin;
use crate::protocol::upsert::UpsertKind;

/// What `/copy WHAT` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyKind {
    /// The agent's last answer.
    Message,
    /// The last code block of the agent's answers.
    Code,
    /// The last tool call's output.
    Tool,
    /// The last turn: prompt, answers, tool calls and their output.
    Turn,
}

impl CopyKind {
    pub(crate) fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "message" | "answer" | "msg" => Self::Message,
            "code" | "block" => Self::Code,
            "tool" | "output" => Self::Tool,
            "turn" | "all" => Self::Turn,
            _ => return None,
        })
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Message => "answer",
            Self::Code => "code block",
            Self::Tool => "tool output",
            Self::Turn => "whole turn",
        }
    }
}

/// One thing that can be copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Copyable {
    pub kind: CopyKind,
    /// What it is, for the picker (`code (rust)`, `Bash output`…).
    pub what: String,
    pub text: String,
}

/// Everything copyable in `t`, newest first, at most `limit`.
pub(crate) fn copyables(t: &Transcript, limit: usize) -> Vec<Copyable> {
    let mut out = Vec::new();
    let mut turn: Option<(String, Vec<String>)> = None;
    for e in &t.entries {
        let EntryKind::Item(u) = &e.kind else {
            continue;
        };
        let part = match &u.kind {
            UpsertKind::Message { content, origin } => {
                let text = content.to_string();
                if *origin != Origin::User {
                    out.push(Copyable {
                        kind: CopyKind::Message,
                        what: "answer".into(),
                        text: text.clone(),
                    });
                    for (lang, code) in code_blocks(&text) {
                        let what = if lang.is_empty() {
                            "code".to_owned()
                        } else {
                            format!("code ({lang})")
                        };
                        out.push(Copyable {
                            kind: CopyKind::Code,
                            what,
                            text: code,
                        });
                    }
                    Some(text)
                } else {
                    Some(format!("> {}", text.replace('\n', "\n> ")))
                }
            }
            UpsertKind::ToolCall {
                tool_name,
                arguments,
                output,
                ..
            } => {
                if let Some(o) = output {
                    out.push(Copyable {
                        kind: CopyKind::Tool,
                        what: format!("{tool_name} output"),
                        text: o.clone(),
                    });
                }
                let call = format!("{tool_name} {arguments}");
                Some(match output {
                    Some(o) => format!("{call}\n{o}"),
                    None => call,
                })
            }
            UpsertKind::Thinking { .. } => None,
        };
        let Some(part) = part else { continue };
        match &mut turn {
            Some((id, parts)) if *id == u.turn_id => parts.push(part),
            _ => {
                if let Some(done) = turn.take() {
                    out.push(whole_turn(done.1));
                }
                turn = Some((u.turn_id.clone(), vec![part]));
            }
        }
    }
    if let Some(done) = turn {
        out.push(whole_turn(done.1));
    }
    out.reverse();
    out.truncate(limit);
    out
}

fn whole_turn(parts: Vec<String>) -> Copyable {
    Copyable {
        kind: CopyKind::Turn,
        what: "whole turn".into(),
        text: parts.join("\n\n"),
    }
}

/// The newest copyable of `kind`.
pub(crate) fn latest(t: &Transcript, kind: CopyKind) -> Option<Copyable> {
    copyables(t, usize::MAX)
        .into_iter()
        .find(|c| c.kind == kind)
}

/// Picker entries: what it is and its first line; the text is the value.
pub(crate) fn menu_items(list: Vec<Copyable>) -> Vec<MenuItem> {
    list.into_iter()
        .map(|c| {
            let first = c.text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let lines = c.text.lines().count();
            let detail = if lines > 1 {
                let more = lines - 1;
                format!("{first} (+{more} line{})", if more == 1 { "" } else { "s" })
            } else {
                first.to_owned()
            };
            MenuItem::new(c.what, detail).with_value(c.text)
        })
        .collect()
}

/// Fenced and indented code blocks of a markdown text: (language, code).
pub(crate) fn code_blocks(markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(String, String)> = None;
    for ev in Parser::new(markdown) {
        match ev {
            Event::Start(Tag::CodeBlock(kind)) => {
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => {
                        info.split_whitespace().next().unwrap_or("").to_owned()
                    }
                    CodeBlockKind::Indented => String::new(),
                };
                current = Some((lang, String::new()));
            }
            Event::Text(text) => {
                if let Some((_, code)) = current.as_mut() {
                    code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some((lang, code)) = current.take() {
                    let code = code.strip_suffix('\n').unwrap_or(&code).to_owned();
                    out.push((lang, code));
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_blocks_come_out_without_fences() {
        let md = "Intro\n\n```rust\nfn main() {}\n```\n\ntext\n\n    indented\n";
        assert_eq!(
            code_blocks(md),
            vec![
                ("rust".to_owned(), "fn main() {}".to_owned()),
                (String::new(), "indented".to_owned())
            ]
        );
    }
}
