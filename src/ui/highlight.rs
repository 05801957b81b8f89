//! Code highlighting with syntect (loaded once, on first use).

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{FontStyle, HighlightIterator, HighlightState, Highlighter, ThemeSet};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

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

/// Lines longer than this (bytes) are drawn plain, and so is the rest of
/// their block: syntect's time grows with a line's length (100 KB of
/// minified code takes 0.05–0.4 s) and a streaming block's unfinished line
/// is highlighted again every frame. Editors cap it too (VS Code: 20,000
/// characters).
pub(crate) const LONG_LINE: usize = 4 * 1024;

/// What highlighting a growing code block again can reuse: its complete
/// lines, already highlighted, and the parser's state after them. A
/// streaming answer's open code block is highlighted on every frame; with
/// this only the lines that arrived since (and the unfinished last one) are.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    /// Language and theme the state belongs to.
    key: (String, String),
    /// Source of the complete lines highlighted so far.
    done: String,
    lines: Vec<Vec<Span<'static>>>,
    state: Option<(ParseState, HighlightState)>,
    /// The grammar and theme `key` names: looking a language up scans
    /// every grammar, once per frame of a streaming block.
    resolved: Option<(
        &'static SyntaxReference,
        &'static syntect::highlighting::Theme,
    )>,
    /// The unfinished last line highlighted after `done`, and its spans:
    /// a block drawn again unchanged (the frame its fence closes, then as
    /// a finished piece) does not run the grammar over it again.
    partial: Option<(String, Vec<Span<'static>>)>,
    /// A complete line past [`LONG_LINE`] follows `done`: it and every line
    /// after it stay plain.
    stopped: bool,
}

/// Where highlighting a code block picks up at the start of a line: the
/// parser's and highlighter's states there. Highlighting only moves forward,
/// so a code block laid out a range of lines at a time (`ui::lazy_md`) keeps
/// one at the start of each range it has reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    parse: ParseState,
    hl: HighlightState,
}

/// The fence info's first word, and the grammar and theme it names.
fn resolve<'a>(
    lang: &'a str,
    theme_name: &str,
) -> Option<(
    &'a str,
    &'static SyntaxReference,
    &'static syntect::highlighting::Theme,
)> {
    let set = syntaxes();
    let lang = first_word(lang);
    if lang.is_empty() {
        return None;
    }
    let syntax = set
        .find_syntax_by_token(lang)
        .or_else(|| set.find_syntax_by_extension(lang))?;
    Some((lang, syntax, theme(theme_name)?))
}

/// The fence info's first word: the language.
fn first_word(lang: &str) -> &str {
    lang.split([',', ' ']).next().unwrap_or("").trim()
}

fn theme(name: &str) -> Option<&'static syntect::highlighting::Theme> {
    let set = &themes().themes;
    set.get(name).or_else(|| set.get("base16-ocean.dark"))
}

impl Resume {
    /// The state at the start of a block of `lang`, or `None` when the
    /// language is unknown (the block is not highlighted).
    pub fn start(lang: &str, theme_name: &str) -> Option<Self> {
        let (_, syntax, theme) = resolve(lang, theme_name)?;
        Some(Self {
            parse: ParseState::new(syntax),
            hl: HighlightState::new(&Highlighter::new(theme), ScopeStack::new()),
        })
    }

    /// Highlights `code` (whole lines; the last may lack its newline, as a
    /// block's last line does) from this state, which moves past it.
    /// `None` when the grammar fails on a line.
    pub fn highlight(&mut self, code: &str, theme_name: &str) -> Option<Vec<Vec<Span<'static>>>> {
        let highlighter = Highlighter::new(theme(theme_name)?);
        syntect::util::LinesWithEndings::from(code)
            .map(|line| {
                highlight_line(
                    line,
                    &mut self.parse,
                    &mut self.hl,
                    &highlighter,
                    syntaxes(),
                )
            })
            .collect()
    }

    /// Moves this state past `code` (whole lines) without making spans.
    pub fn skip(&mut self, code: &str, theme_name: &str) -> Option<()> {
        let highlighter = Highlighter::new(theme(theme_name)?);
        for line in syntect::util::LinesWithEndings::from(code) {
            if line.len() > LONG_LINE {
                return None;
            }
            let ops = self.parse.parse_line(line, syntaxes()).ok()?;
            for _ in HighlightIterator::new(&mut self.hl, &ops, line, &highlighter) {}
        }
        Some(())
    }
}

/// Highlights `code` as `lang` (a fence info word: `rust`, `py`, `diff`…).
/// Returns one span list per line, up to a line past [`LONG_LINE`], or
/// `None` when the language is unknown.
pub fn highlight(code: &str, lang: &str, theme_name: &str) -> Option<Vec<Vec<Span<'static>>>> {
    highlight_with(code, lang, theme_name, &mut Memo::default())
}

/// `highlight`, resuming from `memo` when `code` extends the code it saw
/// (same language and theme), and leaving in it the state after `code`'s
/// complete lines.
pub(crate) fn highlight_with(
    code: &str,
    lang: &str,
    theme_name: &str,
    memo: &mut Memo,
) -> Option<Vec<Vec<Span<'static>>>> {
    let set = syntaxes();
    let word = first_word(lang);
    let reuse = memo.state.is_some()
        && memo.key.0 == word
        && memo.key.1 == theme_name
        && code.starts_with(memo.done.as_str());
    if !reuse {
        let (lang, syntax, theme) = resolve(lang, theme_name)?;
        *memo = Memo {
            key: (lang.to_owned(), theme_name.to_owned()),
            state: Some((
                ParseState::new(syntax),
                HighlightState::new(&Highlighter::new(theme), ScopeStack::new()),
            )),
            resolved: Some((syntax, theme)),
            ..Memo::default()
        };
    }
    if memo.stopped {
        return Some(memo.lines.clone());
    }
    let (_, theme) = memo.resolved?;
    let highlighter = Highlighter::new(theme);
    let rest = &code[memo.done.len()..];
    let mut partial = None;
    for line in syntect::util::LinesWithEndings::from(rest) {
        let (parse, hl) = memo.state.as_mut()?;
        if line.len() > LONG_LINE {
            // Still streaming, it may end; complete, it ends highlighting.
            memo.stopped = line.ends_with('\n');
            break;
        }
        if line.ends_with('\n') {
            let Some(spans) = highlight_line(line, parse, hl, &highlighter, set) else {
                *memo = Memo::default();
                return None;
            };
            memo.lines.push(spans);
            memo.done.push_str(line);
            memo.partial = None;
        } else if let Some((_, spans)) = memo.partial.as_ref().filter(|(t, _)| t == line) {
            partial = Some(spans.clone());
        } else {
            // The unfinished last line: highlighted from a copy of the
            // state, since its end may still change how it parses.
            let (mut parse, mut hl) = (parse.clone(), hl.clone());
            let spans = highlight_line(line, &mut parse, &mut hl, &highlighter, set)?;
            memo.partial = Some((line.to_owned(), spans.clone()));
            partial = Some(spans);
        }
    }
    let mut out = memo.lines.clone();
    out.extend(partial);
    Some(out)
}

fn highlight_line(
    line: &str,
    parse: &mut ParseState,
    hl: &mut HighlightState,
    highlighter: &Highlighter<'_>,
    set: &SyntaxSet,
) -> Option<Vec<Span<'static>>> {
    if line.len() > LONG_LINE {
        return None;
    }
    let ops = parse.parse_line(line, set).ok()?;
    let spans = HighlightIterator::new(hl, &ops, line, highlighter)
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
    Some(spans)
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

    #[test]
    fn a_block_highlighted_in_pieces_from_kept_states_is_highlighted_whole() {
        let code = "fn main() {\n    /* a comment\n  over lines */\n    let s = r#\"raw\n    string\"#;\n}\nfn b() {}";
        let whole = highlight(code, "rust", "base16-ocean.dark").unwrap();
        let cuts: Vec<usize> = code.match_indices('\n').map(|(i, _)| i + 1).collect();
        for &cut in &cuts {
            // The lines above the cut skipped, the ones below highlighted.
            let mut at = Resume::start("rust", "base16-ocean.dark").unwrap();
            at.skip(&code[..cut], "base16-ocean.dark").unwrap();
            let below = at.highlight(&code[cut..], "base16-ocean.dark").unwrap();
            let above = cuts.iter().take_while(|c| **c <= cut).count();
            assert_eq!(below, whole[above..], "from line {above}");
        }
        assert!(Resume::start("no-such-language", "base16-ocean.dark").is_none());
    }

    #[test]
    fn resuming_from_a_memo_gives_what_a_fresh_highlight_gives() {
        let code = "fn main() {\n    let s = \"a\\n\n    b\";\n    /* x\n y */ s.len()\n}\n";
        let mut memo = Memo::default();
        for n in (0..=code.len()).filter(|n| code.is_char_boundary(*n)) {
            let prefix = &code[..n];
            let fresh = highlight(prefix, "rust", "base16-ocean.dark");
            let resumed = highlight_with(prefix, "rust", "base16-ocean.dark", &mut memo);
            assert_eq!(resumed, fresh, "after {prefix:?}");
            // Drawn again unchanged: the kept last line gives the same.
            let again = highlight_with(prefix, "rust", "base16-ocean.dark", &mut memo);
            assert_eq!(again, fresh, "again after {prefix:?}");
        }
        assert_eq!(memo.lines.len(), 6, "the complete lines are kept");
        // Other code starts again rather than resuming.
        let other = highlight_with("x = 1\n", "python", "base16-ocean.dark", &mut memo);
        assert_eq!(other, highlight("x = 1\n", "python", "base16-ocean.dark"));
        assert_eq!(memo.done, "x = 1\n");
    }

    #[test]
    fn a_long_line_and_the_rest_of_its_block_stay_plain() {
        let long = "x".repeat(LONG_LINE + 1);
        let code = format!("let a = 1;\n{long}\nlet b = 2;\n");
        let theme = "base16-ocean.dark";
        let whole = highlight(&code, "rust", theme).unwrap();
        assert_eq!(whole.len(), 1, "only the line before the long one");
        // Streamed in pieces: the same, and once the long line is complete
        // nothing after it is parsed any more.
        let mut memo = Memo::default();
        for n in (0..=code.len()).step_by(97).chain([code.len()]) {
            let prefix = &code[..n];
            let resumed = highlight_with(prefix, "rust", theme, &mut memo);
            assert_eq!(resumed, highlight(prefix, "rust", theme), "after {n} bytes");
        }
        assert!(memo.stopped);
        assert_eq!(memo.done, "let a = 1;\n");
        // Laid out a range at a time: the range with it is plain.
        let mut at = Resume::start("rust", theme).unwrap();
        assert!(at.clone().highlight(&code, theme).is_none());
        assert!(at.skip(&code, theme).is_none());
    }
}
