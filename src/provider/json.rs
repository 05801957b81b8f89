//! Small JSON and text helpers every translator needs when reading an agent's
//! lines: one place for how a bad line is quoted in a diagnostic and how a
//! string field is read.

use serde_json::Value;

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

/// `v[key]` when it is a string.
pub(crate) fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
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
}
