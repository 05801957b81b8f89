//! Themes: `themes/*.toml` (dark and light ship inside the binary; a file of
//! the same name in `<config dir>/themes/` or next to the config wins).

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    syntax_theme: Option<String>,
    #[serde(default)]
    colors: toml::Table,
}

/// Semantic colours; widgets never hard-code a colour.
#[derive(Debug, Clone, PartialEq)]
pub struct Theme {
    pub name: String,
    pub(crate) syntax_theme: String,
    pub text: Color,
    pub dim: Color,
    pub(crate) accent: Color,
    pub border: Color,
    pub(crate) border_focused: Color,
    pub title: Color,
    pub user: Color,
    pub(crate) user_bg: Color,
    pub agent: Color,
    pub system: Color,
    pub thinking: Color,
    pub tool: Color,
    pub success: Color,
    pub error: Color,
    pub warning: Color,
    pub attention: Color,
    pub heading: Color,
    pub code: Color,
    pub(crate) code_bg: Color,
    pub link: Color,
    pub(crate) quote: Color,
    pub(crate) diff_add: Color,
    pub(crate) diff_remove: Color,
    pub(crate) diff_hunk: Color,
    pub selection_bg: Color,
    pub(crate) status_bg: Color,
    pub(crate) status_fg: Color,
}

impl Default for Theme {
    fn default() -> Self {
        Self::builtin("dark").unwrap_or_else(Self::plain)
    }
}

fn parse_color(s: &str) -> Option<Color> {
    match s.trim().to_ascii_lowercase().as_str() {
        "default" | "none" | "reset" => Some(Color::Reset),
        _ => s.trim().parse().ok(),
    }
}

impl Theme {
    /// Terminal default colours only: the fallback if nothing parses.
    pub fn plain() -> Self {
        let c = Color::Reset;
        Self {
            name: "plain".into(),
            syntax_theme: "base16-ocean.dark".into(),
            text: c,
            dim: Color::DarkGray,
            accent: Color::Blue,
            border: Color::DarkGray,
            border_focused: Color::Blue,
            title: c,
            user: Color::Green,
            user_bg: c,
            agent: c,
            system: Color::Cyan,
            thinking: Color::DarkGray,
            tool: Color::Yellow,
            success: Color::Green,
            error: Color::Red,
            warning: Color::Yellow,
            attention: Color::Magenta,
            heading: Color::Blue,
            code: Color::Magenta,
            code_bg: c,
            link: Color::Cyan,
            quote: Color::Gray,
            diff_add: Color::Green,
            diff_remove: Color::Red,
            diff_hunk: Color::Cyan,
            selection_bg: Color::DarkGray,
            status_bg: c,
            status_fg: c,
        }
    }

    pub fn builtin(name: &str) -> Option<Self> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        Self::parse(text).ok().map(|(t, _)| t)
    }

    /// Parses a theme file; unknown or bad colours become warnings and keep
    /// the dark theme's value.
    pub fn parse(text: &str) -> Result<(Self, Vec<String>), String> {
        let file: ThemeFile = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut theme = Self::plain();
        let mut warnings = Vec::new();
        if let Some(n) = file.name {
            theme.name = n;
        }
        if let Some(s) = file.syntax_theme {
            theme.syntax_theme = s;
        }
        for (key, value) in &file.colors {
            let Some(color) = value.as_str().and_then(parse_color) else {
                warnings.push(format!("theme colour `{key}` = {value} is not a colour"));
                continue;
            };
            let slot = match key.as_str() {
                "text" => &mut theme.text,
                "dim" => &mut theme.dim,
                "accent" => &mut theme.accent,
                "border" => &mut theme.border,
                "border_focused" => &mut theme.border_focused,
                "title" => &mut theme.title,
                "user" => &mut theme.user,
                "user_bg" => &mut theme.user_bg,
                "agent" => &mut theme.agent,
                "system" => &mut theme.system,
                "thinking" => &mut theme.thinking,
                "tool" => &mut theme.tool,
                "success" => &mut theme.success,
                "error" => &mut theme.error,
                "warning" => &mut theme.warning,
                "attention" => &mut theme.attention,
                "heading" => &mut theme.heading,
                "code" => &mut theme.code,
                "code_bg" => &mut theme.code_bg,
                "link" => &mut theme.link,
                "quote" => &mut theme.quote,
                "diff_add" => &mut theme.diff_add,
                "diff_remove" => &mut theme.diff_remove,
                "diff_hunk" => &mut theme.diff_hunk,
                "selection_bg" => &mut theme.selection_bg,
                "status_bg" => &mut theme.status_bg,
                "status_fg" => &mut theme.status_fg,
                _ => {
                    warnings.push(format!("unknown theme colour `{key}`"));
                    continue;
                }
            };
            *slot = color;
        }
        Ok((theme, warnings))
    }

    /// Finds theme `name`: a file in one of `dirs`, else a built-in one,
    /// else dark with a warning.
    pub fn load(name: &str, dirs: &[PathBuf]) -> (Self, Vec<String>) {
        for dir in dirs {
            let path = dir.join(format!("{name}.toml"));
            if path.is_file() {
                return match std::fs::read_to_string(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|t| Self::parse(&t))
                {
                    Ok((t, w)) => (t, prefixed(&path, w)),
                    Err(e) => (
                        Self::default(),
                        vec![format!("{}: {e}; using the dark theme", path.display())],
                    ),
                };
            }
        }
        match Self::builtin(name) {
            Some(t) => (t, Vec::new()),
            None => (
                Self::default(),
                vec![format!(
                    "no theme `{name}` (built in: dark, light); using the dark theme"
                )],
            ),
        }
    }

    pub fn fg(&self, c: Color) -> Style {
        Style::new().fg(c)
    }

    pub(crate) fn dim_style(&self) -> Style {
        Style::new().fg(self.dim)
    }

    pub fn bold(&self, c: Color) -> Style {
        Style::new().fg(c).add_modifier(Modifier::BOLD)
    }
}

fn prefixed(path: &Path, warnings: Vec<String>) -> Vec<String> {
    warnings
        .into_iter()
        .map(|w| format!("{}: {w}", path.display()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_parse_cleanly() {
        for (name, text) in BUILTIN {
            let (theme, warnings) = Theme::parse(text).unwrap();
            assert!(warnings.is_empty(), "{name}: {warnings:?}");
            assert_eq!(theme.name, *name);
        }
        assert_ne!(Theme::builtin("dark"), Theme::builtin("light"));
    }

    #[test]
    fn bad_colours_warn_and_unknown_theme_falls_back() {
        let (t, w) = Theme::parse("[colors]\naccent = \"nope\"\nuser = \"#00ff00\"\n").unwrap();
        assert_eq!(t.user, Color::Rgb(0, 255, 0));
        assert_eq!(w.len(), 1);
        let (t, w) = Theme::load("neon", &[]);
        assert_eq!(t.name, "dark");
        assert_eq!(w.len(), 1);
    }
}
