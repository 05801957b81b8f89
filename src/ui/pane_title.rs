//! What a pane's top border keeps when it is narrow.
//!
//! The model is what a user checks most (which brain answers here?), so it
//! goes last: first the provider goes, then the worktree branch, then the
//! name is shortened, then the state label, and only then is the model
//! itself cut.

use unicode_width::UnicodeWidthStr;

use super::wrap::truncate;

/// A name keeps at least this many columns (with its `…`) before the state
/// label gives way (and three once only the model is left).
const MIN_NAME: usize = 6;

/// The parts of a title, as wide as they are in full.
pub(crate) struct Parts<'a> {
    /// Columns before the name (pane number, attention mark).
    pub head: usize,
    pub name: &'a str,
    /// The worktree branch after the name (0: none).
    pub branch: usize,
    pub provider: &'a str,
    pub model: Option<&'a str>,
    pub label: &'a str,
}

/// What fits: the name (maybe shortened), whether the branch shows, the
/// dim `provider · model · ` text, and the state label (maybe only its
/// symbol, maybe none).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Fit {
    pub name: String,
    pub branch: bool,
    pub meta: String,
    pub label: Option<String>,
}

/// `⠋ streaming` → `⠋`: the state's symbol, for narrow titles.
fn short_label(label: &str) -> &str {
    label.split_once(' ').map_or(label, |(symbol, _)| symbol)
}

/// Fits the title's parts into `avail` columns (the border less corners).
pub(crate) fn fit(parts: &Parts<'_>, avail: usize) -> Fit {
    let provider = parts.provider;
    // A terminal pane's "model" is its provider (`pty`): said once.
    let model = parts.model.filter(|m| *m != provider);
    let full = Some(parts.label);
    let short = Some(short_label(parts.label));
    // (meta, label, branch) from the fullest to the barest.
    let mut options: Vec<(String, Option<&str>, bool)> = Vec::new();
    match model {
        Some(m) => {
            options.push((format!("{provider} · {m} · "), full, true));
            options.push((format!("{m} · "), full, true));
            options.push((format!("{m} · "), full, false));
            options.push((format!("{m} · "), short, false));
        }
        None => {
            options.push((format!("{provider} · "), full, true));
            options.push((String::new(), full, true));
            options.push((String::new(), full, false));
            options.push((String::new(), short, false));
        }
    }
    let name_w = parts.name.width();
    let short_name = name_w.min(MIN_NAME);
    // " " + meta + label + " " on the right; a space after the name.
    let right = |meta: &str, label: Option<&str>| {
        if meta.is_empty() && label.is_none() {
            0
        } else {
            2 + meta.width() + label.map_or(0, str::width)
        }
    };
    let left =
        |name: usize, branch: bool| parts.head + name + 1 + if branch { parts.branch } else { 0 };
    for min_name in [name_w, short_name] {
        for (meta, label, branch) in &options {
            let used = left(0, *branch) + right(meta, *label);
            if used + min_name <= avail {
                let room = avail - used;
                return Fit {
                    name: truncate(parts.name, room),
                    branch: *branch,
                    meta: meta.clone(),
                    label: label.map(str::to_owned),
                };
            }
        }
    }
    // No room for the label: the model alone, cut if it must be; the name
    // keeps a couple of letters.
    let base = left(name_w.min(3), false) + 2;
    let meta = model.map_or(String::new(), |m| {
        let room = avail.saturating_sub(base);
        if room == 0 {
            String::new()
        } else {
            truncate(m, room)
        }
    });
    let name_room = avail.saturating_sub(left(0, false) + right(&meta, None));
    Fit {
        name: truncate(parts.name, name_room.max(1)),
        branch: false,
        meta,
        label: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts<'a>(model: Option<&'a str>) -> Parts<'a> {
        Parts {
            head: 4,
            name: "Architect (demo)",
            branch: 0,
            provider: "claude",
            model,
            label: "⠋ streaming",
        }
    }

    #[test]
    fn the_model_outlasts_provider_name_and_label() {
        let p = parts(Some("opus-4"));
        let full = fit(&p, 80);
        assert_eq!(full.meta, "claude · opus-4 · ");
        assert_eq!(full.name, "Architect (demo)");
        // Narrower: the provider goes first.
        let f = fit(&p, 45);
        assert_eq!(f.meta, "opus-4 · ");
        assert_eq!(f.label.as_deref(), Some("⠋ streaming"));
        assert_eq!(f.name, "Architect (demo)");
        // Then the label shrinks to its symbol.
        let f = fit(&p, 33);
        assert_eq!(f.label.as_deref(), Some("⠋"));
        assert_eq!(f.name, "Architect (demo)");
        // Then the name is shortened.
        let f = fit(&p, 25);
        assert_eq!(
            (f.meta.as_str(), f.label.as_deref()),
            ("opus-4 · ", Some("⠋"))
        );
        assert!(f.name.ends_with('…'), "{f:?}");
        // Then the label goes; the model stays.
        let f = fit(&p, 20);
        assert_eq!((f.meta.as_str(), f.label), ("opus-4", None));
        // At the very narrowest the model is cut, never dropped first.
        let f = fit(&p, 16);
        assert!(f.meta.starts_with("op"), "{f:?}");
    }
}
