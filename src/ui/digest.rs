//! The "since you looked" digest: one line at the foot of a focused pane's
//! transcript saying what happened while it was not looked at, and the key
//! that jumps to the first unread item. The tally is `app::unread`.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::wrap::truncate;

use super::pane_ctx::PaneCtx;
use crate::app::pane::Pane;
use crate::keymap::Action;

/// The digest line of `p` for a `width`-column row, if it has one to show.
/// The key hint stays whole; the tally gives way (ends in `…`).
pub(crate) fn line(p: &Pane, ctx: &PaneCtx<'_>, width: u16) -> Option<Line<'static>> {
    let d = p.attention.digest.as_ref()?;
    if !ctx.focused {
        return None;
    }
    let t = ctx.theme;
    let esc = ctx.keymap.short(Action::Interrupt);
    let hint = match d.first {
        Some(_) => format!(
            "  {} first unread · {esc} dismiss",
            ctx.keymap.short(Action::JumpUnread)
        ),
        None => format!("  {esc} dismiss"),
    };
    let tally = d.parts().join(" · ");
    // Narrow panes drop the words around the tally before the tally itself.
    let full = "◆ since you looked: ".width() + tally.width() + hint.width();
    let (head, hint) = if full <= usize::from(width) {
        ("◆ since you looked: ", hint)
    } else {
        ("◆ ", format!("  {}", ctx.keymap.short(Action::JumpUnread)))
    };
    let room = usize::from(width).saturating_sub(head.width() + hint.width());
    Some(Line::from(vec![
        Span::styled(head, Style::new().fg(t.accent).add_modifier(Modifier::BOLD)),
        Span::styled(truncate(&tally, room), Style::new().fg(t.title)),
        Span::styled(hint, Style::new().fg(t.dim)),
    ]))
}

/// The unread marker for a pane's title: `● 3` (or `●` with attention only).
pub(crate) fn marker(p: &Pane, focused: bool) -> Option<String> {
    if focused {
        return None;
    }
    match p.attention.unread.count {
        0 if p.attention.flagged => Some(" ● ".into()),
        0 => None,
        n => Some(format!(" ● {n} ")),
    }
}
