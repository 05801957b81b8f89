//! Code highlighting with syntect (loaded once, on first use).

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    static SET: OnceLock<ThemeSet> = OnceLock::new();
    SET.get_or_init(ThemeSet::load_defaults)
}

/// Loads syntect's tables now, so the first code block does not stall a frame.
pub fn warm_up() {
    let _ = (syntaxes(), themes());
}

/// Highlights `code` as `lang` (a fence info word: `rust`, `py`, `diff`…).
/// Returns one span list per line, or `None` when the language is unknown.
pub fn highlight(code: &str, lang: &str, theme_name: &str) -> Option<Vec<Vec<Span<'static>>>> {
    let set = syntaxes();
    let lang = lang.split([',', ' ']).next().unwrap_or("").trim();
    if lang.is_empty() {
        return None;
    }
    let syntax = set
        .find_syntax_by_token(lang)
        .or_else(|| set.find_syntax_by_extension(lang))?;
    let theme = themes()
        .themes
        .get(theme_name)
        .or_else(|| themes().themes.get("base16-ocean.dark"))?;
    let mut h = HighlightLines::new(syntax, theme);
    let mut out = Vec::new();
    for line in syntect::util::LinesWithEndings::from(code) {
        let ranges = h.highlight_line(line, set).ok()?;
        let spans = ranges
            .into_iter()
            .filter_map(|(style, text)| {
                let text = text.trim_end_matches(['\n', '\r']).replace('\t', "    ");
                if text.is_empty() {
                    return None;
                }
                let fg = style.foreground;
                let mut s = Style::new().fg(Color::Rgb(fg.r, fg.g, fg.b));
                if style.font_style.contains(FontStyle::BOLD) {
                    s = s.add_modifier(Modifier::BOLD);
                }
                if style.font_style.contains(FontStyle::ITALIC) {
                    s = s.add_modifier(Modifier::ITALIC);
                }
                Some(Span::styled(text, s))
            })
            .collect();
        out.push(spans);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_are_coloured_unknown_are_not() {
        let lines = highlight("fn main() {}\nlet x = 1;\n", "rust", "base16-ocean.dark").unwrap();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].len() > 1);
        assert!(highlight("x", "no-such-language", "base16-ocean.dark").is_none());
    }
}
