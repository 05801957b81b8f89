//! Line-ranged layout of a long fenced code block (issue 15 item 4).
//!
//! A code block has no markdown boundary inside, so `ui::lazy_md` would lay
//! a megabyte block out whole. Instead it is cut into ranges of lines, each
//! a chunk of its own, laid out only when the view reaches it. The rows are
//! the ones the whole block renders to (`markdown::code_head`, `code_body`,
//! `code_foot`); highlighting carries the parser's state from range to
//! range (`highlight::Resume`): it only moves forward, so reaching a range
//! first runs the parser over the ranges above it (without making spans)
//! and keeps the state at each range start for the next time.

use std::ops::Range;
use std::sync::Arc;

use super::highlight::Resume;
use super::markdown;
use super::theme::Theme;
use super::wrap::Logical;

/// A block is cut into ranges of about this many bytes of lines.
const RANGE_BYTES: usize = 4 * 1024;

/// Blocks longer than this are cut into ranges; shorter ones render whole.
pub(super) const SPLIT_BYTES: usize = 32 * 1024;

/// Code the parser runs over, without making spans, to reach a range in one
/// frame: a range or so, a few ms (syntect parses about 1 MB/s at best). A
/// range further from the last state known is drawn plain for now
/// (`CodeRange::plain`) while the frames that follow run the parser this
/// far each, so a restart at the bottom of a 10 MB block shows at once and
/// a key pressed meanwhile is not held up; the colours follow.
pub(super) const SKIP_BUDGET: usize = RANGE_BYTES;

/// One range of a code block's lines.
#[derive(Debug)]
pub(super) struct CodeRange {
    /// The fence's info string (the label, and the language's first word).
    lang: Arc<str>,
    /// The range's code lines in the text (fences excluded).
    body: Range<usize>,
    /// The block's first range: draws its head (`╭ lang`).
    pub(super) head: bool,
    /// The block's last range: draws its foot, and its last line has no
    /// newline (as `markdown` strips it from the whole block's code).
    foot: bool,
    /// The highlighter's state at `body.start` once reached: `Some(None)`
    /// when the block is not highlighted (unknown language).
    at: Option<Option<Resume>>,
    /// Laid out plain because its state was out of reach: laid out again
    /// once the parser gets there.
    pub(super) plain: bool,
}

impl CodeRange {
    /// Rows this range lays out to at `width`, counting a code line's wraps
    /// from its length (exact for ASCII code; the layout corrects it).
    pub(super) fn estimate(&self, src: &str, width: u16) -> u32 {
        // The agent's gutter and the block's `│ ` take four columns.
        let avail = usize::from(width.saturating_sub(4)).max(1);
        let rows: usize = self
            .code(src)
            .lines()
            .map(|l| l.chars().count().max(1).div_ceil(avail))
            .sum();
        (rows + usize::from(self.head) + usize::from(self.foot)) as u32
    }

    fn code<'s>(&self, src: &'s str) -> &'s str {
        let code = &src[self.body.clone()];
        if self.foot {
            code.strip_suffix('\n').unwrap_or(code)
        } else {
            code
        }
    }
}

/// A fenced code block opening `seg` (source starting at a top-level block
/// boundary): (its info string, its code lines, where its closing fence line
/// ends), all relative to `seg`. `None` when `seg` does not start with a
/// fence, the fence is not closed inside it, or its info string has escapes
/// (markdown would decode them).
pub(super) fn fence(seg: &str) -> Option<(&str, Range<usize>, usize)> {
    let first_end = seg.find('\n')?;
    let first = &seg[..first_end];
    let c = first.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = first.chars().take_while(|x| *x == c).count();
    let info = first[n..].trim();
    if n < 3 || (c == '`' && info.contains('`')) || info.contains(['\\', '&']) {
        return None;
    }
    let body_start = first_end + 1;
    let mut pos = body_start;
    while pos < seg.len() {
        let end = seg[pos..].find('\n').map_or(seg.len(), |i| pos + i);
        let line = &seg[pos..end];
        let spaces = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[spaces..];
        let m = rest.chars().take_while(|x| *x == c).count();
        if spaces < 4 && m >= n && rest[m..].trim_matches([' ', '\t', '\r']).is_empty() {
            return Some((info, body_start..pos, (end + 1).min(seg.len())));
        }
        pos = end + 1;
    }
    None
}

/// Cuts the code lines `body` (of a block with info `lang`) into ranges of
/// about `RANGE_BYTES`, each with the chunk source span it covers: the
/// first from `open` (its fence line), the last up to `close` (after its
/// closing fence).
pub(super) fn ranges(
    src: &str,
    lang: &str,
    open: usize,
    body: Range<usize>,
    close: usize,
) -> Vec<(Range<usize>, CodeRange)> {
    let lang: Arc<str> = Arc::from(lang);
    let mut cuts = vec![body.start];
    let mut from = body.start;
    while body.end - from > RANGE_BYTES {
        let at = from + RANGE_BYTES;
        let Some(nl) = src[at..body.end].find('\n') else {
            break;
        };
        let cut = at + nl + 1;
        if cut >= body.end {
            break;
        }
        cuts.push(cut);
        from = cut;
    }
    cuts.push(body.end);
    let last = cuts.len() - 2;
    (0..=last)
        .map(|k| {
            let span = (if k == 0 { open } else { cuts[k] })..(if k == last {
                close
            } else {
                cuts[k + 1]
            });
            let range = CodeRange {
                lang: lang.clone(),
                body: cuts[k]..cuts[k + 1],
                head: k == 0,
                foot: k == last,
                at: None,
                plain: false,
            };
            (span, range)
        })
        .collect()
}

/// Runs the parser down to range `i` of `ranges` (the code ranges of the
/// text's chunks in order, `None` for other chunks) from the nearest range
/// above with a state, over about `budget` bytes (which it uses up),
/// keeping the state at each range start it passes. Returns whether range
/// `i`'s state is known.
pub(super) fn reach(
    ranges: &mut [Option<&mut CodeRange>],
    i: usize,
    src: &str,
    t: &Theme,
    budget: &mut usize,
) -> bool {
    let name = &t.syntax_theme;
    let mut j = i;
    while j > 0
        && ranges[j]
            .as_ref()
            .is_some_and(|r| r.at.is_none() && !r.head)
    {
        j -= 1;
    }
    for k in j..=i {
        let Some(r) = ranges[k].as_deref_mut() else {
            return false;
        };
        if r.at.is_none() && r.head {
            r.at = Some(Resume::start(&r.lang, name));
        }
        if k == i {
            return r.at.is_some();
        }
        // A range is parsed whole once started: at most one past `budget`.
        if *budget == 0 {
            return false;
        }
        let code = r.code(src);
        *budget = budget.saturating_sub(code.len());
        let mut state = r.at.clone().flatten();
        if let Some(s) = &mut state
            && s.skip(code, name).is_none()
        {
            state = None;
        }
        set_next(ranges, k, state);
    }
    false
}

/// The logical lines of range `i` of `ranges`, highlighted from the state
/// at its start when `reach` gets there within `budget`, plain otherwise
/// (and then marked `plain`).
pub(super) fn render(
    ranges: &mut [Option<&mut CodeRange>],
    i: usize,
    src: &str,
    t: &Theme,
    budget: &mut usize,
) -> Vec<Logical> {
    let known = reach(ranges, i, src, t, budget);
    let Some(r) = ranges[i].as_deref_mut() else {
        return Vec::new();
    };
    let code = r.code(src);
    let mut state = r.at.clone().flatten().filter(|_| known);
    let spans = state
        .as_mut()
        .and_then(|s| s.highlight(code, &t.syntax_theme));
    r.plain = !known;
    let (head, foot, lang) = (r.head, r.foot, r.lang.clone());
    if known {
        set_next(ranges, i, state.filter(|_| spans.is_some()));
    }
    let mut out = Vec::new();
    if head {
        out.push(markdown::code_head(&lang, Vec::new(), t));
    }
    markdown::code_body(&mut out, code, spans, &[], t);
    if foot {
        out.push(markdown::code_foot(Vec::new(), t));
    }
    out
}

/// Gives range `k + 1` of the same block the state after range `k`.
fn set_next(ranges: &mut [Option<&mut CodeRange>], k: usize, state: Option<Resume>) {
    if let Some(Some(next)) = ranges.get_mut(k + 1)
        && !next.head
        && next.at.is_none()
    {
        next.at = Some(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_are_found_with_their_code_and_end() {
        let seg = "```rust\nfn a() {}\n```not a close\n  ```\nafter\n";
        let (info, body, end) = fence(seg).unwrap();
        assert_eq!(info, "rust");
        assert_eq!(&seg[body], "fn a() {}\n```not a close\n");
        assert_eq!(&seg[end..], "after\n");
        assert!(
            fence("````\nx\n```\n").is_none(),
            "a shorter fence does not close"
        );
        assert!(fence("``` a`b\nx\n```\n").is_none(), "not a fence");
        assert!(fence("paragraph\n```\n").is_none());
        let tilde = "~~~\nx\n~~~~\n";
        assert_eq!(fence(tilde).map(|f| f.2), Some(tilde.len()));
    }

    #[test]
    fn ranges_cover_the_block_at_line_ends() {
        let mut src = String::from("```py\n");
        for n in 0..3000 {
            src.push_str(&format!("x_{n} = {n}\n"));
        }
        let body = 6..src.len();
        src.push_str("```\n");
        let rs = ranges(&src, "py", 0, body.clone(), src.len());
        assert!(rs.len() > 3);
        assert_eq!(rs[0].0.start, 0);
        assert_eq!(rs.last().unwrap().0.end, src.len());
        for w in rs.windows(2) {
            assert_eq!(w[0].0.end, w[1].0.start);
            assert_eq!(w[0].1.body.end, w[1].1.body.start);
            assert!(src[..w[1].1.body.start].ends_with('\n'));
        }
        assert_eq!(rs[0].1.body.start, body.start);
        assert!(rs[0].1.head && rs.last().unwrap().1.foot);
    }
}
