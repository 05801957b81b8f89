//! The Chat Completions wire format, as far as the agent loop uses it: the
//! request body, the messages of a conversation, and the streamed chunks.
//!
//! Field names follow the OpenAI reference; servers that speak the same
//! dialect (llama.cpp, vLLM, Ollama, LM Studio, OpenRouter) add fields we
//! ignore, and some name the reasoning stream `reasoning` instead of
//! `reasoning_content`, so both are accepted.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of the conversation sent with every request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    System {
        content: String,
    },
    User {
        content: UserContent,
    },
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        tool_call_id: String,
        content: String,
    },
}

/// A user message's content: plain text, or parts when images go with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(String),
    Parts(Vec<ContentPart>),
}

impl From<String> for UserContent {
    fn from(s: String) -> Self {
        Self::Text(s)
    }
}

impl From<&str> for UserContent {
    fn from(s: &str) -> Self {
        Self::Text(s.to_owned())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text { text: String },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    /// A `data:` URL with the image's bytes.
    pub url: String,
}

impl ChatMessage {
    /// The user's message; images go as `image_url` parts with data URLs
    /// after the text.
    pub fn user(text: String, images: &[crate::image::Image]) -> Self {
        if images.is_empty() {
            return Self::User {
                content: text.into(),
            };
        }
        let mut parts = vec![ContentPart::Text { text }];
        parts.extend(images.iter().map(|i| ContentPart::ImageUrl {
            image_url: ImageUrl { url: i.data_url() },
        }));
        Self::User {
            content: UserContent::Parts(parts),
        }
    }
}

/// A complete tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// JSON text, as the model wrote it.
    pub arguments: String,
}

impl ToolCall {
    pub fn function(id: impl Into<String>, name: impl Into<String>, arguments: String) -> Self {
        Self {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: name.into(),
                arguments,
            },
        }
    }
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ToolSpec {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: FunctionSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct FunctionSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct StreamOptions {
    pub include_usage: bool,
}

/// The body of `POST {base_url}/chat/completions`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ChatRequest<'a> {
    pub model: &'a str,
    pub messages: &'a [ChatMessage],
    pub stream: bool,
    pub stream_options: StreamOptions,
    #[serde(skip_serializing_if = "<[ToolSpec]>::is_empty")]
    pub tools: &'a [ToolSpec],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<&'a str>,
}

/// One `data:` line of the stream.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Chunk {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<WireUsage>,
    /// Some servers report a failure inside the stream.
    #[serde(default)]
    pub error: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Choice {
    #[serde(default)]
    pub delta: Delta,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Delta {
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default, alias = "reasoning")]
    pub reasoning_content: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallDelta>,
}

/// A fragment of a tool call; `index` ties the fragments of one call.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ToolCallDelta {
    #[serde(default)]
    pub index: usize,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct FunctionDelta {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct WireUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct PromptDetails {
    #[serde(default)]
    pub cached_tokens: Option<u64>,
}

/// The message of an error body (`{"error": {"message": …}}`, or a bare
/// string, or whatever text the server sent).
pub fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|v| {
        let e = v.get("error").unwrap_or(v);
        e.get("message")
            .and_then(Value::as_str)
            .or_else(|| e.as_str())
            .map(str::to_owned)
    });
    let text = found.unwrap_or_else(|| body.trim().to_owned());
    crate::provider::json::excerpt(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_alias_and_tool_fragments_parse() {
        let c: Chunk = serde_json::from_str(
            r#"{"choices":[{"index":0,"delta":{"reasoning":"hm","tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"f","arguments":"{\""}}]},"finish_reason":null}]}"#,
        )
        .unwrap();
        let d = &c.choices[0].delta;
        assert_eq!(d.reasoning_content.as_deref(), Some("hm"));
        assert_eq!(d.tool_calls[0].index, 1);
        assert_eq!(d.tool_calls[0].id.as_deref(), Some("c1"));
    }

    #[test]
    fn error_bodies_give_their_message() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad model","type":"invalid_request_error"}}"#),
            "bad model"
        );
        assert_eq!(error_message(r#"{"error":"nope"}"#), "nope");
        assert_eq!(error_message("plain text\n"), "plain text");
    }

    #[test]
    fn messages_serialise_in_the_chat_shape() {
        let m = ChatMessage::Assistant {
            content: None,
            tool_calls: vec![ToolCall::function("c1", "hive_list", "{}".into())],
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["tool_calls"][0]["type"], "function");
        assert!(v.get("content").is_none());
    }
}
