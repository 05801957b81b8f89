//! `[prices."<model>"]`: what a model's tokens cost, in USD per million,
//! for the agents that report tokens but no cost. hive ships no prices:
//! they change, and a wrong built-in figure would be a lie on screen. A
//! cost worked out from this table (`runner::usage::estimate`) is marked as
//! estimated wherever it shows.

use serde::{Deserialize, Serialize};

/// One model's prices, USD per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    /// Cached input read back; absent: billed as input.
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input written to the cache; absent: billed as input.
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    /// A price must be a finite, non-negative number.
    pub(super) fn check(&self) -> Result<(), String> {
        let fields = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ];
        for (name, value) in fields {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(format!(
                    "`{name}` must be a price in USD per million tokens, not {v}"
                ));
            }
        }
        Ok(())
    }
}

/// The model's price: its exact name, else the longest configured name
/// that is a prefix of it followed by `-`, `.`, `@` or `:` (an agent often
/// reports `claude-sonnet-4-5-20250929` for a table entry
/// `claude-sonnet-4-5`).
pub fn price_of<'a>(
    prices: &'a std::collections::BTreeMap<String, Price>,
    model: &str,
) -> Option<&'a Price> {
    if let Some(p) = prices.get(model) {
        return Some(p);
    }
    prices
        .iter()
        .filter(|(name, _)| {
            model
                .strip_prefix(name.as_str())
                .is_some_and(|rest| rest.starts_with(['-', '.', '@', ':']) && !name.is_empty())
        })
        .max_by_key(|(name, _)| name.len())
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[test]
    fn a_dated_model_name_finds_its_family_price() {
        let mut prices = BTreeMap::new();
        let short = Price {
            input: 1.0,
            ..Price::default()
        };
        let long = Price {
            input: 2.0,
            ..Price::default()
        };
        prices.insert("claude-sonnet".to_owned(), short);
        prices.insert("claude-sonnet-4-5".to_owned(), long);
        assert_eq!(price_of(&prices, "claude-sonnet-4-5"), Some(&long));
        assert_eq!(price_of(&prices, "claude-sonnet-4-5-20250929"), Some(&long));
        assert_eq!(price_of(&prices, "claude-sonnet-3"), Some(&short));
        assert_eq!(price_of(&prices, "claude-sonnetX"), None);
        assert_eq!(price_of(&prices, "gpt-5"), None);
    }

    #[test]
    fn the_table_loads_from_config_and_a_bad_price_names_its_model() {
        use crate::config::{Config, ConfigSource};
        let c = Config::parse(
            "[prices.\"gpt-4.1\"]\ninput = 2.0\noutput = 8.0\ncache_read = 0.5\n",
            ConfigSource::Builtin,
        )
        .unwrap();
        assert_eq!(
            c.prices["gpt-4.1"],
            Price {
                input: 2.0,
                output: 8.0,
                cache_read: Some(0.5),
                cache_write: None
            }
        );
        let e = Config::parse(
            "[prices.m]\ninput = -2.0\noutput = 8.0\n",
            ConfigSource::Builtin,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("prices.\"m\"") && e.contains("`input`"), "{e}");
        let e = Config::parse("[prices.m]\ninput = 1.0\n", ConfigSource::Builtin)
            .unwrap_err()
            .to_string();
        assert!(e.contains("output"), "{e}");
        // The commented example table is valid once uncommented.
        let example = include_str!("../../config/hive.example.toml");
        let table: String = example
            .lines()
            .skip_while(|l| !l.starts_with("# [prices."))
            .take_while(|l| l.starts_with("# "))
            .map(|l| format!("{}\n", &l[2..]))
            .collect();
        let c = Config::parse(&table, ConfigSource::Builtin).unwrap();
        assert_eq!(c.prices.len(), 2, "{table}");
    }

    #[test]
    fn a_negative_or_infinite_price_is_refused() {
        let bad = Price {
            input: -1.0,
            ..Price::default()
        };
        assert!(bad.check().unwrap_err().contains("`input`"));
        let nan = Price {
            cache_read: Some(f64::NAN),
            ..Price::default()
        };
        assert!(nan.check().unwrap_err().contains("`cache_read`"));
    }
}
