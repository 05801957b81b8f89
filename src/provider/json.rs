//! Small JSON and text helpers every translator needs when reading an agent's
//! lines: one place for how a bad line is quoted in a diagnostic, how a
//! string field is read, how token counts are read, and how tool arguments
//! read while they stream.

use serde_json::{Map, Value};

use crate::event::Usage;

/// How many characters of an unreadable line a diagnostic quotes.
const EXCERPT: usize = 200;

/// The start of `line`, cut at `EXCERPT` characters with an ellipsis, for
/// diagnostics that quote what the agent sent.
pub(crate) fn excerpt(line: &str) -> String {
    match line.char_indices().nth(EXCERPT) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line.to_owned(),
    }
}

/// A line the agent wrote as one JSON object, or the warning that quotes it
/// (`<who>: unreadable output line: …`).
pub(crate) fn object_line(who: &str, line: &str) -> Result<Value, String> {
    match serde_json::from_str(line) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(format!("{who}: unreadable output line: {}", excerpt(line))),
    }
}

/// `v[key]` when it is a string.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The names an agent gives the token counts in its usage objects.
pub(crate) struct UsageKeys {
    pub input: &'static str,
    pub output: &'static str,
    pub cache_read: &'static str,
    pub(crate) cache_write: &'static str,
}

impl UsageKeys {
    /// The token counts, `count` reading one by name (an absent input or
    /// output count is 0, an absent cache count unknown). No cost: an agent
    /// that reports one adds it.
    pub(crate) fn read(&self, count: impl Fn(&str) -> Option<u64>) -> Usage {
        Usage {
            input_tokens: count(self.input).unwrap_or(0),
            output_tokens: count(self.output).unwrap_or(0),
            cache_read_input_tokens: count(self.cache_read),
            cache_creation_input_tokens: count(self.cache_write),
            cost_usd: None,
            cost_estimated: false,
            context_tokens: None,
            context_window: None,
            model: None,
        }
    }
}

/// What a streamed, still incomplete JSON object says so far: complete
/// members as they are and a string value cut mid-way as far as it came
/// (`{"command": "cargo te` reads as `{"command": "cargo te"}`). A member
/// whose key or non-string value is still incomplete is left out. `None`
/// when `raw` does not start an object.
pub(crate) fn partial_object(raw: &str) -> Option<Map<String, Value>> {
    let text = raw.trim_start();
    if !text.starts_with('{') {
        return None;
    }
    let mut closers: Vec<char> = Vec::new();
    // Per open container: is the next string an object key?
    let mut expect_key: Vec<bool> = Vec::new();
    let mut in_string = false;
    let mut string_is_key = false;
    let mut escape = false;
    // The longest prefix known to close into valid JSON, with its closers.
    let mut safe = (0usize, String::new());
    let closing = |closers: &[char]| closers.iter().rev().collect::<String>();
    for (i, c) in text.char_indices() {
        if in_string {
            match (escape, c) {
                (true, _) => escape = false,
                (false, '\\') => escape = true,
                (false, '"') => {
                    in_string = false;
                    if !string_is_key {
                        safe = (i + 1, closing(&closers));
                    }
                }
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                string_is_key = expect_key.last().copied().unwrap_or(false);
            }
            '{' | '[' => {
                closers.push(if c == '{' { '}' } else { ']' });
                expect_key.push(c == '{');
                safe = (i + 1, closing(&closers));
            }
            '}' | ']' => {
                closers.pop();
                expect_key.pop();
                safe = (i + 1, closing(&closers));
            }
            ':' => {
                if let Some(k) = expect_key.last_mut() {
                    *k = false;
                }
            }
            ',' => {
                if let (Some(k), Some('}')) = (expect_key.last_mut(), closers.last()) {
                    *k = true;
                }
            }
            _ => {}
        }
    }
    let candidate = if in_string && !string_is_key {
        // A value cut mid-string: close it where it stands (without a
        // dangling escape).
        let mut cut = text.to_owned();
        if escape {
            cut.pop();
        } else if let Some(at) = cut.rfind("\\u").filter(|at| cut.len() - at < 6) {
            cut.truncate(at);
        }
        format!("{cut}\"{}", closing(&closers))
    } else {
        let mut prefix = text[..safe.0].trim_end().to_owned();
        if prefix.ends_with(',') {
            prefix.pop();
        }
        format!("{prefix}{}", safe.1)
    };
    match serde_json::from_str::<Value>(&candidate) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excerpt_cuts_long_lines_on_a_char_boundary() {
        let long = "é".repeat(EXCERPT + 5);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), EXCERPT + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt("short"), "short");
    }

    #[test]
    fn str_field_reads_only_strings() {
        let v = serde_json::json!({"a": "x", "b": 1});
        assert_eq!(str_field(&v, "a"), Some("x"));
        assert_eq!(str_field(&v, "b"), None);
        assert_eq!(str_field(&v, "c"), None);
    }

    #[test]
    fn partial_objects_read_what_has_streamed() {
        let read = |raw: &str| partial_object(raw).map(|m| Value::Object(m).to_string());
        assert_eq!(
            read(r#"{"command": "cargo te"#).as_deref(),
            Some(r#"{"command":"cargo te"}"#)
        );
        assert_eq!(
            read(r#"{"command": "ls", "desc"#).as_deref(),
            Some(r#"{"command":"ls"}"#)
        );
        assert_eq!(
            read(r#"{"command": "ls", "n": 12"#).as_deref(),
            Some(r#"{"command":"ls"}"#)
        );
        assert_eq!(read(r#"{"a": "x\"#).as_deref(), Some(r#"{"a":"x"}"#));
        assert_eq!(read(r#"{"a": "\u00"#).as_deref(), Some(r#"{"a":""}"#));
        assert_eq!(
            read(r#"{"a": ["x", "y"#).as_deref(),
            Some(r#"{"a":["x","y"]}"#)
        );
        assert_eq!(
            read(r#"{"a": {"b": "c"}, "#).as_deref(),
            Some(r#"{"a":{"b":"c"}}"#)
        );
        assert_eq!(read(r#"{"#).as_deref(), Some("{}"));
        assert_eq!(read(r#"{"a": 1}"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(read(r#"["a""#), None);
        assert_eq!(read(""), None);
    }
}
