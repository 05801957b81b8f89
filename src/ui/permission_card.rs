//! A pane's approval card: what the agent asks to run, its description
//! (cut after a few lines), and the answers it offers.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::cells;
use super::pane_ctx::PaneCtx;
use super::theme::Theme;
use super::wrap::{Logical, truncate, wrap};
use crate::app::pane::Pane;
use crate::keymap::Action;

/// Lines of an approval card's description shown before "… N more lines".
const CARD_LINES: usize = 12;

/// The card's lines and how many at its end are the answers (keys and
/// the waiting count), which [`fit`] keeps when the pane is short.
pub(super) fn permission_card(p: &Pane, ctx: &PaneCtx<'_>) -> (Vec<Logical>, usize) {
    let Some(req) = p.pending.permissions.front() else {
        return (Vec::new(), 0);
    };
    let t = ctx.theme;
    let km = ctx.keymap;
    let mut out = vec![Logical::new(vec![
        Span::styled(
            req.tool_name.clone(),
            Style::new().fg(t.tool).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!("  {}", truncate(cells::summary(req.display.as_ref()), 300)),
            Style::new().fg(t.text),
        ),
    ])];
    if let Some(d) = &req.description {
        out.extend(description_rows(d, t));
    }
    let diff = cells::edit_diff(req.display.as_ref(), t);
    let n = diff.len();
    out.extend(diff.into_iter().take(8));
    if n > 8 {
        out.push(Logical::raw(
            format!("… {} more lines", n - 8),
            Style::new().fg(t.dim),
        ));
    }
    let body = out.len();
    let key = |s: String| Span::styled(s, Style::new().fg(t.accent).add_modifier(Modifier::BOLD));
    let dim = |s: &str| Span::styled(s.to_owned(), Style::new().fg(t.dim));
    if p.composer.deny_reason {
        out.push(Logical::new(vec![
            dim("type a reason in the composer, "),
            key(km.short(Action::Submit)),
            dim(" to deny, "),
            key(km.short(Action::Interrupt)),
            dim(" to go back"),
        ]));
    } else if req.options.is_empty() {
        out.push(Logical::new(vec![
            key(format!("[{}]", km.short(Action::AllowOnce))),
            dim(" allow once  "),
            key(format!("[{}]", km.short(Action::AllowAlways))),
            dim(" allow always  "),
            key(format!("[{}]", km.short(Action::Deny))),
            dim(" deny…"),
        ]));
    } else {
        out.extend(option_rows(req, t));
    }
    if p.pending.permissions.len() > 1 {
        out.push(Logical::raw(
            format!("(+{} more waiting)", p.pending.permissions.len() - 1),
            Style::new().fg(t.dim),
        ));
    }
    let keys = out.len() - body;
    (out, keys)
}

/// Cuts a card to `rows` rows of `width`: the body loses lines from its
/// end (all but the first, which names the tool) so the last `keep`
/// lines, the answers, stay in view; a cut body ends in "…".
pub(super) fn fit(card: &mut Vec<Logical>, keep: usize, width: u16, rows: u16, t: &Theme) {
    let height = |c: &[Logical]| -> usize { c.iter().map(|l| wrap(l, width).len()).sum() };
    let rows = usize::from(rows);
    if height(card) <= rows || keep == 0 {
        return;
    }
    let mut body = card.len() - keep;
    let mut cut = false;
    while body > 1 && height(card) + 1 > rows {
        card.remove(body - 1);
        body -= 1;
        cut = true;
    }
    if cut {
        card.insert(body, Logical::raw("…".to_owned(), Style::new().fg(t.dim)));
    }
}

/// A card's description as the agent's own lines (codex-acp puts a
/// command's argv one per line): a row each, or the words run together.
fn description_rows(text: &str, t: &Theme) -> Vec<Logical> {
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines.len().min(CARD_LINES);
    let mut out: Vec<Logical> = lines[..shown]
        .iter()
        .map(|l| Logical::raw((*l).to_owned(), Style::new().fg(t.dim)))
        .collect();
    if lines.len() > shown {
        out.push(Logical::raw(
            format!("… {} more lines", lines.len() - shown),
            Style::new().fg(t.dim),
        ));
    }
    out
}

/// The agent's options, one a row with its key and what kind of answer
/// it is.
fn option_rows(req: &crate::protocol::agent::PermissionRequest, t: &Theme) -> Vec<Logical> {
    let key = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    req.options
        .iter()
        .enumerate()
        .take(9)
        .map(|(i, o)| {
            let mark = format!("[{}] ", i + 1);
            let indent = " ".repeat(mark.len());
            let mut spans = vec![Span::styled(o.label.clone(), Style::new().fg(t.text))];
            if let Some(kind) = option_kind(&o.kind) {
                spans.push(Span::styled(format!("  · {kind}"), Style::new().fg(t.dim)));
            }
            Logical::new(spans).with_prefix(vec![Span::styled(mark, key)], vec![Span::raw(indent)])
        })
        .collect()
}

/// How an agent's permission option kind reads on the card.
fn option_kind(kind: &str) -> Option<&'static str> {
    match kind {
        "allow_once" => Some("allow once"),
        "allow_always" => Some("allow always"),
        "reject_once" => Some("reject"),
        "reject_always" => Some("reject always"),
        _ => None,
    }
}
