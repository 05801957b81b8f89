//! The transcript formats `hive import` reads: the `Importer` of each
//! provider whose descriptor has one, so history/ reaches them without
//! knowing any agent's transcript shape.

use serde_json::Value;

use super::Registry;
use crate::history::import::{Builder, Importer};

/// A transcript format hive reads: a provider whose descriptor has an
/// importer, by the provider's name (`hive import claude …`).
#[derive(Clone, Copy)]
pub struct Format(&'static (dyn Importer + Sync));

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Format").field(&self.0.name()).finish()
    }
}

impl Format {
    /// The format of provider `name`, if it has one.
    pub fn named(name: &str) -> Option<Self> {
        Registry::builtin().importer(name).map(Self)
    }

    /// The providers whose transcripts hive reads.
    pub fn names() -> Vec<&'static str> {
        let registry = Registry::builtin();
        registry
            .descriptors()
            .filter(|d| d.importer.is_some())
            .map(|d| d.name)
            .collect()
    }

    /// The provider's importer.
    pub(crate) fn importer(self) -> &'static dyn Importer {
        self.0
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        Self::named(name).ok_or_else(|| {
            format!(
                "no transcript format `{name}`; known: {}",
                Self::names().join(", ")
            )
        })
    }
}

impl Importer for Format {
    fn name(&self) -> &'static str {
        self.importer().name()
    }

    fn session_id(&self, text: &str) -> Option<String> {
        self.importer().session_id(text)
    }

    fn parse(&self, lines: &[Value], builder: &mut Builder) {
        self.importer().parse(lines, builder);
    }
}

/// RFC 3339 text or epoch milliseconds → milliseconds.
pub(crate) fn ts_of(v: Option<&Value>) -> Option<i64> {
    match v? {
        Value::String(s) => chrono::DateTime::parse_from_rfc3339(s)
            .ok()
            .map(|t| t.timestamp_millis()),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

/// Text of a content value that is a string or a list of `{type, text}`
/// blocks, keeping the blocks of the given types.
pub(crate) fn content_text(v: Option<&Value>, types: &[&str]) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| {
                    b.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| types.contains(&t))
                })
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            parts.join("\n")
        }
        _ => String::new(),
    }
}
