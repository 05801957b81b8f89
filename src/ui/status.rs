//! The status bar: focused agent, provider, model, state, queue, tokens and
//! cost, then key hints (or a transient message, or the prefix's menu).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::cells;
use super::pane::state_label;
use crate::app::state::App;
use crate::keymap::Action;

/// A piece of the bar and when it gives way: `None` stays, else the piece
/// goes in rank order (lowest first) until the bar fits. What a user needs
/// at 80 columns stays whole: the focused pane's name and state, the
/// "● 1 waiting · Alt+I" count and the F1 hint (issue 34 item 13).
struct Piece {
    spans: Vec<Span<'static>>,
    drop: Option<u8>,
    /// One of the focused pane's `a · b · c` parts: the first one shown
    /// loses its ` · `.
    part: bool,
}

impl Piece {
    fn keep(spans: Vec<Span<'static>>) -> Self {
        Self {
            spans,
            drop: None,
            part: false,
        }
    }

    fn width(&self) -> usize {
        self.spans.iter().map(|s| s.content.width()).sum()
    }
}

/// Drops pieces, lowest rank first, until `left` and `right` fit `width`
/// with a column between them; then gives back, highest rank first, any
/// dropped piece that fits again (a wide usage gone leaves room for a hint).
/// Only ranks up to `most` may go.
fn fit(left: &mut Vec<Piece>, right: &mut Vec<Piece>, width: usize, most: u8) {
    let pieces = || left.iter().chain(right.iter());
    let mut ranks: Vec<u8> = pieces()
        .filter_map(|p| p.drop)
        .filter(|r| *r <= most)
        .collect();
    ranks.sort_unstable();
    let width_without = |gone: &[u8]| -> usize {
        let shown = pieces().filter(|p| p.drop.is_none_or(|r| !gone.contains(&r)));
        shown.map(Piece::width).sum::<usize>() + 1
    };
    let mut gone: Vec<u8> = Vec::new();
    for &rank in &ranks {
        if width_without(&gone) <= width {
            break;
        }
        gone.push(rank);
    }
    for i in (0..gone.len()).rev() {
        let rank = gone.remove(i);
        if width_without(&gone) > width {
            gone.insert(i, rank);
        }
    }
    let keep = |p: &Piece| p.drop.is_none_or(|r| !gone.contains(&r));
    left.retain(keep);
    right.retain(keep);
    if let Some(first) = left.iter_mut().find(|p| p.part)
        && let Some(span) = first.spans.first_mut()
        && let Some(rest) = span.content.strip_prefix(" · ")
    {
        span.content = format!(" {rest}").into();
    }
}

pub(crate) fn draw(app: &App, spin: usize, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let base = Style::new().fg(t.status_fg).bg(t.status_bg);
    buf.set_style(area, base);
    let mut left = left_pieces(app, spin, base);
    let mut right = right_pieces(app, base);
    // A transient message is cut rather than cost the provider or model;
    // only the usage gives way to it.
    let hints = !app.prefix_armed && app.status.is_none() && app.link.is_none();
    fit(
        &mut left,
        &mut right,
        usize::from(area.width),
        if hints { u8::MAX } else { 5 },
    );
    let join = |pieces: Vec<Piece>| {
        Line::from(pieces.into_iter().flat_map(|p| p.spans).collect::<Vec<_>>())
    };
    let left = join(left);
    let right = join(right);
    super::put::line(buf, area.x, area.y, &left, area.width);
    let lw = left.width() as u16;
    let rw = right.width() as u16;
    if lw + rw < area.width {
        super::put::line(buf, area.right() - rw, area.y, &right, rw);
    } else if lw < area.width {
        let room = area.width - lw;
        let text: String = right.spans.iter().map(|s| s.content.as_ref()).collect();
        let cut = super::wrap::truncate(text.trim(), usize::from(room).saturating_sub(1));
        let style = right.spans.first().map_or(base, |s| s.style);
        buf.set_string(area.x + lw + 1, area.y, &cut, style);
    }
}

/// The focused agent, its provider, model, state, queue and usage, then
/// how many other panes need the user. Usage goes first when room is
/// short, then the provider, then the model.
fn left_pieces(app: &App, spin: usize, base: Style) -> Vec<Piece> {
    let t = &app.theme;
    let mut left = Vec::new();
    // Always in sight: this console only looks (`hive attach --read-only`).
    if app.read_only {
        left.push(Piece::keep(vec![Span::styled(
            " READ-ONLY ",
            Style::new()
                .fg(t.status_bg)
                .bg(t.warning)
                .add_modifier(Modifier::BOLD),
        )]));
    }
    if let Some(p) = app.focused() {
        left.push(Piece::keep(vec![Span::styled(
            format!(" {} ", p.name()),
            Style::new()
                .fg(t.status_bg)
                .bg(t.accent)
                .add_modifier(Modifier::BOLD),
        )]));
        let mut parts: Vec<(String, Option<u8>)> = vec![(p.agent.provider.clone(), Some(6))];
        if let Some(m) = &p.conversation.model {
            parts.push((m.clone(), Some(7)));
        }
        parts.push((state_label(p, spin).0, None));
        if !p.pending.queue.is_empty() {
            parts.push((format!("{} queued", p.pending.queue.len()), None));
        }
        if p.conversation.usage.input_tokens + p.conversation.usage.output_tokens > 0
            || p.conversation.usage.cost_usd.is_some()
        {
            parts.push((cells::usage_text(&p.conversation.usage), Some(5)));
        }
        // " a · b · c ": each part a piece that owns its leading separator.
        for (i, (text, drop)) in parts.into_iter().enumerate() {
            let sep = if i == 0 { " " } else { " · " };
            left.push(Piece {
                spans: vec![Span::styled(format!("{sep}{text}"), base)],
                drop,
                part: true,
            });
        }
        left.push(Piece::keep(vec![Span::styled(" ", base)]));
    }
    let waiting = app.inbox.len();
    if waiting > 0 {
        left.push(Piece::keep(vec![Span::styled(
            format!(
                " ● {waiting} waiting · {} ",
                app.keymap.short(Action::Inbox)
            ),
            Style::new()
                .fg(t.attention)
                .bg(t.status_bg)
                .add_modifier(Modifier::BOLD),
        )]));
    }
    left
}

/// The prefix menu, a transient message, or the key hints (the F1 hint
/// stays; the others go from the last when room is short).
fn right_pieces(app: &App, base: Style) -> Vec<Piece> {
    let t = &app.theme;
    let km = &app.keymap;
    if app.prefix_armed {
        return vec![Piece::keep(vec![Span::styled(
            " prefix: 1-9 pane · ←→↑↓ move · z zoom · i inbox · ? help · d detach · q quit · other keys go to a terminal pane ",
            Style::new().fg(t.status_bg).bg(t.warning),
        )])];
    }
    if let Some(down) = &app.link {
        return vec![Piece::keep(vec![Span::styled(
            format!(" ⟳ {down} "),
            Style::new().fg(t.status_bg).bg(t.warning),
        )])];
    }
    if let Some((msg, _)) = &app.status {
        return vec![Piece::keep(vec![Span::styled(
            format!(" {msg} "),
            Style::new()
                .fg(t.accent)
                .bg(t.status_bg)
                .add_modifier(Modifier::BOLD),
        )])];
    }
    let zoom = if app.zoom { "unzoom" } else { "zoom" };
    let hints = [
        (km.short(Action::Help), "help", None),
        (
            pair(km.hint(Action::FocusPrev), km.hint(Action::FocusNext)),
            "panes",
            Some(4),
        ),
        (km.short(Action::Zoom), zoom, Some(3)),
        (
            km.short(Action::ToggleView),
            if app.full_view { "simple" } else { "full" },
            Some(2),
        ),
        (
            km.short(Action::Quit),
            if app.read_only { "detach" } else { "quit" },
            Some(1),
        ),
    ];
    hints
        .into_iter()
        .map(|(k, what, drop)| Piece {
            spans: vec![
                Span::styled(k, base.add_modifier(Modifier::BOLD)),
                Span::styled(format!(" {what}  "), base.fg(t.dim)),
            ],
            drop,
            part: false,
        })
        .collect()
}

/// `Alt+←` and `Alt+→` as `Alt+←→`.
fn pair(a: &str, b: &str) -> String {
    match (a.rsplit_once('+'), b.rsplit_once('+')) {
        (Some((ma, ka)), Some((mb, kb))) if ma == mb => format!("{ma}+{ka}{kb}"),
        _ => format!("{a}/{b}"),
    }
}
