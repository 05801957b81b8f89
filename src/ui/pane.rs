//! One pane: border and titles, transcript, approval card, queue, composer;
//! or a terminal pane's screen.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{BorderType, Widget};
use ratatui_textarea::TextArea;
use unicode_width::UnicodeWidthStr;

use super::border::Frame;
use super::cells::{self, SPINNER};
use super::theme::Theme;
use super::transcript::{self, Ctx};
use super::view::PaneView;
use super::wrap::{Logical, truncate, wrap};
use crate::app::geometry::PaneGeometry;
use crate::app::pane::Pane;
use crate::keymap::{Action, Keymap};
use crate::protocol::pane::TurnState;

pub(crate) use super::pane_ctx::PaneCtx;
use super::permission_card::{fit, permission_card};

/// A narrow pane's streaming answer moves up by a third of the view at a
/// time: every move repaints the whole pane, so moving row by row would
/// write the pane's height in rows for every row of text.
const JUMP_FRACTION: u16 = 3;

pub(crate) fn state_label(p: &Pane, spin: usize) -> (String, bool) {
    let s = SPINNER[spin % SPINNER.len()];
    if p.conversation.failed.is_some() {
        return ("✗ failed".into(), true);
    }
    if p.is_waiting() {
        return ("⚠ needs approval".into(), true);
    }
    match p.conversation.state {
        TurnState::Idle if p.conversation.held.is_some() => (super::held::label(p), true),
        TurnState::Idle => ("idle".into(), false),
        TurnState::Starting => (format!("{s} starting"), false),
        TurnState::Streaming => (format!("{s} streaming"), false),
        TurnState::Cancelling => (format!("{s} interrupting"), false),
        TurnState::Dead => ("✗ stopped".into(), true),
    }
}

pub(crate) fn draw(
    p: &Pane,
    geo: &mut PaneGeometry,
    view: &mut PaneView,
    ctx: &PaneCtx<'_>,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = ctx.theme;
    // No `Clear` first: `ui::render` draws into a blank buffer, and
    // blanking every cell again cost ~2 % of the CPU of a streaming pane.
    let mut frame = pane_frame(p, ctx, area);
    if let Some(note) = conflict_note(&ctx.conflicts) {
        frame.bottom.push(Line::from(Span::styled(
            note,
            Style::new().fg(t.error).add_modifier(Modifier::BOLD),
        )));
    }
    if let Some(note) = overlap_note(&ctx.overlaps, &ctx.conflicts) {
        frame.bottom.push(Line::from(Span::styled(
            note,
            Style::new().fg(t.warning).add_modifier(Modifier::BOLD),
        )));
    }
    if let Some(note) = super::terminal::note(p, ctx.keymap, t) {
        frame.bottom.push(note);
    }
    if let Some(gauge) = gauges(p, t) {
        frame.bottom.push(gauge);
    }
    let inner = frame.inner(area);
    if let Some(cut) = p
        .terminal
        .screen
        .as_ref()
        .and_then(|s| super::terminal::cut(s, inner, t))
    {
        frame.bottom.push(cut);
    }
    frame.render(area, buf);
    geo.inner = inner;
    geo.transcript = Rect::default();
    if inner.width == 0 || inner.height == 0 {
        return;
    }
    if let Some(err) = &p.conversation.failed {
        let unreachable = p.agent.provider == crate::protocol::snapshot::UNREACHABLE;
        // In its worktree: the failure is its setup's, which can run again.
        let retry = p
            .worktree
            .is_some()
            .then(|| ctx.keymap.hint(Action::Restart).to_owned());
        draw_failed(err, (unreachable, retry), t, inner, buf);
        return;
    }
    if let Some(screen) = &p.terminal.screen {
        let cursor = ctx.focused && p.terminal.copy.is_none();
        super::terminal::render(screen, cursor, inner, buf);
        if let Some(copy) = &p.terminal.copy {
            let selection = Style::new().fg(t.text).bg(t.selection_bg);
            super::terminal::paint_copy(screen, p.terminal.scroll, copy, selection, inner, buf);
        }
        return;
    }
    draw_conversation(&mut Drawing { p, ctx, geo, view }, inner, buf);
}

/// A conversation pane being drawn: the model it reads, and where it
/// records its geometry (for the app) and layout caches (for the next frame).
struct Drawing<'a, 'c> {
    p: &'a Pane,
    ctx: &'a PaneCtx<'c>,
    geo: &'a mut PaneGeometry,
    view: &'a mut PaneView,
}

/// The pane's border with its number, name, provider, model and state.
fn pane_frame(p: &Pane, ctx: &PaneCtx<'_>, area: Rect) -> Frame<'static> {
    let t = ctx.theme;
    let (border_style, border_type) = if ctx.focused {
        (Style::new().fg(t.border_focused), BorderType::Thick)
    } else if p.attention.flagged {
        (Style::new().fg(t.attention), BorderType::Rounded)
    } else {
        (Style::new().fg(t.border), BorderType::Rounded)
    };
    let mut title = vec![Span::styled(
        format!(" {} ", ctx.index + 1),
        if ctx.focused {
            Style::new()
                .fg(t.status_bg)
                .bg(t.border_focused)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().fg(t.dim)
        },
    )];
    if let Some(mark) = super::digest::marker(p, ctx.focused) {
        title.push(Span::styled(
            mark,
            Style::new().fg(t.attention).add_modifier(Modifier::BOLD),
        ));
    } else {
        title.push(Span::raw(" "));
    }
    if p.attention.muted {
        title.push(Span::styled("⊘ ", Style::new().fg(t.dim)));
    }
    let name_style = if ctx.focused {
        Style::new().fg(t.title).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(t.title)
    };
    let (label, alarm) = state_label(p, ctx.spin);
    let label_style = if alarm {
        Style::new().fg(t.warning).add_modifier(Modifier::BOLD)
    } else if p.is_busy() {
        Style::new().fg(t.accent)
    } else {
        Style::new().fg(t.dim)
    };
    let branch = after_name(p, t);
    let fit = super::pane_title::fit(
        &super::pane_title::Parts {
            head: Line::from(title.clone()).width(),
            name: p.name(),
            branch: Line::from(branch.clone()).width().saturating_sub(1),
            provider: &p.agent.provider,
            model: p.conversation.model.as_deref(),
            label: &label,
        },
        usize::from(area.width.saturating_sub(4)),
    );
    title.push(Span::styled(fit.name, name_style));
    if fit.branch {
        title.extend(branch);
    } else {
        title.push(Span::raw(" "));
    }
    let mut right = Vec::new();
    if fit.label.is_some() || !fit.meta.is_empty() {
        right.push(Span::raw(" "));
        right.push(Span::styled(fit.meta, Style::new().fg(t.dim)));
        if let Some(label) = fit.label {
            right.push(Span::styled(label, label_style));
        }
        right.push(Span::raw(" "));
    }
    Frame {
        kind: border_type,
        style: border_style,
        top: vec![Line::from(title), Line::from(right).right_aligned()],
        bottom: Vec::new(),
    }
}

/// The space after the pane's name, and its worktree branch if it has one.
fn after_name(p: &Pane, t: &Theme) -> Vec<Span<'static>> {
    let mut spans = vec![Span::raw(" ")];
    if let Some(w) = &p.worktree {
        spans.push(Span::styled(
            format!("⎇ {} ", w.branch),
            Style::new().fg(t.dim),
        ));
    }
    spans
}

/// ` 12% 340M · ctx 42% of 200k ` on the pane's bottom border, right: the
/// agent's processes (flagged past the agent's `max_cpu_percent` /
/// `max_rss_mb`) and how full the context is (past 80 % in the warning
/// colour, with `/compact` where the agent has one).
fn gauges(p: &Pane, t: &Theme) -> Option<Line<'static>> {
    let warn = Style::new().fg(t.warning).add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(t.dim);
    let mut spans = Vec::new();
    if let Some(s) = &p.process {
        let style = if p.over_limit() { warn } else { dim };
        spans.push(Span::styled(format!(" {} ", cells::process_text(s)), style));
    }
    if let Some((used, window)) = p.conversation.context_fill(&p.agent) {
        let share = used as f64 / window as f64;
        let mut text = format!(" ctx {:.0}% of {} ", share * 100.0, cells::tokens(window));
        let style = if share >= crate::protocol::event::CONTEXT_WARN {
            if p.conversation.offers_compact() {
                text.push_str("· /compact ");
            }
            warn
        } else {
            dim
        };
        if !spans.is_empty() {
            spans.push(Span::styled("·", dim));
        }
        spans.push(Span::styled(text, style));
    }
    (!spans.is_empty()).then(|| Line::from(spans).right_aligned())
}

/// ` ⚠ b also changed README.md ` for the pane's bottom border (a pair
/// whose merge would conflict says that instead).
fn overlap_note(overlaps: &[(String, String)], conflicts: &[(String, String)]) -> Option<String> {
    let notes: Vec<String> = overlaps
        .iter()
        .filter(|(other, _)| !conflicts.iter().any(|(c, _)| c == other))
        .map(|(other, files)| format!("{other} also changed {files}"))
        .collect();
    (!notes.is_empty()).then(|| format!(" ⚠ {} ", notes.join("; ")))
}

/// ` ✗ conflict with b: README.md ` for the pane's bottom border: merging
/// both would conflict in those files.
fn conflict_note(conflicts: &[(String, String)]) -> Option<String> {
    let notes: Vec<String> = conflicts
        .iter()
        .map(|(other, files)| {
            let other = if other == "the main branch" {
                "main"
            } else {
                other
            };
            format!("{other}: {files}")
        })
        .collect();
    (!notes.is_empty()).then(|| format!(" ✗ conflict with {} ", notes.join("; ")))
}

/// A pane whose agent could not start, or (`unreachable`) the stand-in
/// for a host whose server is not connected (issue 30).
fn draw_failed(
    err: &str,
    (unreachable, retry): (bool, Option<String>),
    t: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let mut lines = cells::turn_error("provider", err, t);
    let (head, hint) = if unreachable {
        (
            "✗ this host's hive is not connected",
            "Its panes appear here once it is; check `ssh` to it, or its [[host]] entry."
                .to_owned(),
        )
    } else if let Some(key) = retry {
        (
            "✗ this agent could not start",
            format!(
                "{key} runs its worktree_setup again, then starts the agent; /close removes a pane."
            ),
        )
    } else {
        (
            "✗ this agent could not start",
            "Fix its [[agent]] entry and start hive again (`hive doctor` says what is missing); /close removes a pane.".to_owned(),
        )
    };
    lines[0] = Logical::new(vec![Span::styled(
        head,
        Style::new().fg(t.error).add_modifier(Modifier::BOLD),
    )]);
    lines.push(Logical::default());
    lines.push(Logical::raw(hint, Style::new().fg(t.dim)));
    put_lines(&lines, area, buf);
}

/// Wraps and draws logical lines from the top of `area`; returns rows used.
fn put_lines(lines: &[Logical], area: Rect, buf: &mut Buffer) -> u16 {
    let mut y = area.y;
    for l in lines {
        for row in wrap(l, area.width) {
            if y >= area.bottom() {
                return y - area.y;
            }
            if row.style.bg.is_some() {
                buf.set_style(Rect::new(area.x, y, area.width, 1), row.style);
            }
            super::put::line(buf, area.x, y, &row, area.width);
            y += 1;
        }
    }
    y - area.y
}

fn wrapped_height(lines: &[Logical], width: u16) -> u16 {
    lines.iter().map(|l| wrap(l, width).len() as u16).sum()
}

/// Takes `h` rows off the bottom of `rest`, returning them.
fn take_bottom(rest: &mut Rect, h: u16) -> Rect {
    let h = h.min(rest.height);
    rest.height -= h;
    Rect::new(rest.x, rest.y + rest.height, rest.width, h)
}

fn composer_rows(p: &Pane, width: u16) -> u16 {
    let w = usize::from(width.max(1));
    let rows: usize = p
        .composer
        .area
        .lines()
        .iter()
        .map(|l| l.width().max(1).div_ceil(w))
        .sum();
    rows.clamp(1, 8) as u16
}

fn draw_conversation(d: &mut Drawing<'_, '_>, area: Rect, buf: &mut Buffer) {
    let (p, ctx) = (d.p, d.ctx);
    let t = ctx.theme;
    let mut rest = area;
    // The composer always keeps a row; the rest shrink first on tiny panes.
    let prompt_w = 2u16.min(area.width);
    let comp_h = composer_rows(p, area.width.saturating_sub(prompt_w)).min(rest.height.max(1));
    let composer = take_bottom(&mut rest, comp_h);
    let sep_h = u16::from(rest.height >= 3);
    let sep = take_bottom(&mut rest, sep_h);
    let chips = super::chips::lines(p, t);
    let chips_h = wrapped_height(&chips, area.width).min(rest.height.saturating_sub(1));
    let chips_area = take_bottom(&mut rest, chips_h);

    let (mut card, keys) = permission_card(p, ctx);
    let mut card_title = " approval needed ";
    if card.is_empty() {
        card = super::held::budget_card(p, ctx);
        card_title = " budget spent ";
    }
    let card_w = area.width.saturating_sub(2);
    let card_h = if card.is_empty() {
        0
    } else {
        (wrapped_height(&card, card_w) + 2).min(rest.height.saturating_sub(1))
    };
    fit(&mut card, keys, card_w, card_h.saturating_sub(2), t);
    let card_area = take_bottom(&mut rest, card_h);

    let queue = queue_lines(p, ctx);
    let queue_h = wrapped_height(&queue, area.width).min(rest.height.saturating_sub(2));
    let queue_area = take_bottom(&mut rest, queue_h);

    let banner = dead_banner(p, ctx);
    let banner_h = wrapped_height(&banner, area.width).min(rest.height.saturating_sub(1));
    let banner_area = take_bottom(&mut rest, banner_h);
    let digest = super::digest::line(p, ctx, area.width).filter(|_| rest.height >= 4);
    let digest_area = take_bottom(&mut rest, u16::from(digest.is_some()));

    draw_transcript(d, rest, buf);
    if let Some(line) = &digest {
        buf.set_line(digest_area.x, digest_area.y, line, digest_area.width);
    }

    put_lines(&banner, banner_area, buf);
    put_lines(&queue, queue_area, buf);
    put_lines(&chips, chips_area, buf);
    if card_area.height > 0 {
        let block = super::overlay::titled_box(t.warning, card_title.into());
        let inner = block.inner(card_area);
        block.render(card_area, buf);
        put_lines(&card, inner, buf);
    }
    if sep.height > 0 {
        draw_separator(p, ctx, sep, buf);
    }
    // "↓ N lines below" sits in the separator, clear of the text; a pane
    // too small for one puts it on the transcript's last row.
    if let Some(scroll) = d.geo.scroll.filter(|s| *s > 0) {
        let row = if sep.height > 0 { sep } else { rest };
        if row.height > 0 {
            let marker = transcript::scroll_marker(scroll, t);
            let x = row.right().saturating_sub(marker.width() as u16);
            buf.set_line(x.max(row.x), row.bottom() - 1, &marker, row.width);
        }
    }
    draw_composer(p, ctx, composer, prompt_w, buf);
    if ctx.focused
        && let Some(menu) = p.composer.picker.as_ref().or(p.composer.menu.as_ref())
    {
        let above = Rect::new(area.x, area.y, area.width, sep.y.saturating_sub(area.y));
        super::menu::draw(menu, t, above, buf);
    }
}

/// The transcript (or the empty pane's greeting) and, while scrolled up,
/// the "lines below" marker; records the page size and scroll bounds.
fn draw_transcript(d: &mut Drawing<'_, '_>, area: Rect, buf: &mut Buffer) {
    let Drawing { p, ctx, geo, view } = d;
    let (p, ctx) = (*p, *ctx);
    let t = ctx.theme;
    let km = ctx.keymap;
    geo.view_rows = area.height;
    let expand_key = km.hint(Action::Expand);
    let tctx = Ctx {
        theme: t,
        full_view: ctx.full_view,
        expanded: p.expanded,
        spin: ctx.spin,
        expand_key,
        jump: if ctx.narrow {
            usize::from(area.height / JUMP_FRACTION)
        } else {
            0
        },
    };
    let extra = working_line(p, ctx);
    // The rows that scroll as the transcript grows: the working line stays.
    geo.transcript = Rect {
        height: area.height.saturating_sub(extra.len() as u16),
        ..area
    };
    if p.conversation.transcript.is_empty() && extra.is_empty() {
        draw_empty(p, ctx, area, buf);
        geo.max_scroll = 0;
    } else {
        let caches = view.caches(&p.conversation.transcript);
        let scroll = p.reveal.map_or(p.scroll, |e| {
            let entries = &p.conversation.transcript.entries;
            super::search::reveal_scroll(entries, caches, e, extra.len(), &tctx, area)
        });
        let (scroll, max) = transcript::draw(
            &p.conversation.transcript.entries,
            view,
            scroll,
            &extra,
            &tctx,
            area,
            buf,
        );
        if let Some(needle) = &p.highlight {
            super::search::highlight(needle, area, t, buf);
        }
        geo.scroll = Some(scroll);
        geo.max_scroll = max;
    }
}

fn draw_empty(p: &Pane, ctx: &PaneCtx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.theme;
    let km = ctx.keymap;
    let mut lines = vec![
        Logical::new(vec![
            Span::styled(
                p.name().to_owned(),
                Style::new().fg(t.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!(" · {}", p.agent.provider), Style::new().fg(t.dim)),
        ]),
        Logical::raw(
            format!(
                "Type a message, {} to send. {} for help.",
                km.short(Action::Submit),
                km.short(Action::Help)
            ),
            Style::new().fg(t.dim),
        ),
    ];
    // A demo agent says which words show its features (slow, approve, …).
    if !p.try_words.is_empty() {
        let mut spans = vec![Span::styled("Try: ", Style::new().fg(t.dim))];
        for (i, w) in p.try_words.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" · ", Style::new().fg(t.dim)));
            }
            spans.push(Span::styled(w.clone(), Style::new().fg(t.accent)));
        }
        lines.push(Logical::new(spans));
    }
    let y = area.y + area.height.saturating_sub(2) / 3;
    put_lines(
        &lines,
        Rect::new(
            area.x + 1.min(area.width),
            y,
            area.width.saturating_sub(1),
            area.bottom().saturating_sub(y),
        ),
        buf,
    );
}

/// "⠋ working 3s · Esc interrupts" under the transcript while a turn runs.
fn working_line(p: &Pane, ctx: &PaneCtx<'_>) -> Vec<Line<'static>> {
    let t = ctx.theme;
    if !p.is_busy() {
        return Vec::new();
    }
    let s = SPINNER[ctx.spin % SPINNER.len()];
    let secs = p
        .conversation
        .transcript
        .running_since()
        .map(|since| ctx.now.saturating_duration_since(since).as_secs());
    let what = match p.conversation.state {
        TurnState::Starting => "waiting for the agent",
        TurnState::Cancelling => "interrupting",
        _ => "working",
    };
    let mut spans = vec![Span::styled(
        format!("{s} {what}"),
        Style::new().fg(t.accent),
    )];
    if let Some(secs) = secs {
        spans.push(Span::styled(format!(" {secs}s"), Style::new().fg(t.dim)));
    }
    if let Some(since) = p.conversation.stalled_since {
        // The agent has said nothing for a while: it may hang.
        spans.push(Span::styled(
            format!(
                " · no output for {} s · {} interrupts · {} restarts",
                ctx.now.saturating_duration_since(since).as_secs(),
                ctx.keymap.hint(Action::Interrupt),
                ctx.keymap.hint(Action::Restart),
            ),
            Style::new().fg(t.warning),
        ));
    } else if p.conversation.state != TurnState::Cancelling {
        spans.push(Span::styled(
            format!(" · {} to interrupt", ctx.keymap.hint(Action::Interrupt)),
            Style::new().fg(t.dim),
        ));
    }
    vec![Line::default(), Line::from(spans)]
}

fn dead_banner(p: &Pane, ctx: &PaneCtx<'_>) -> Vec<Logical> {
    if p.conversation.state != TurnState::Dead {
        return Vec::new();
    }
    let t = ctx.theme;
    vec![Logical::new(vec![
        Span::styled(
            "✗ the agent stopped",
            Style::new().fg(t.error).add_modifier(Modifier::BOLD),
        ),
        Span::styled(
            format!(" · {} restarts it", ctx.keymap.short(Action::Restart)),
            Style::new().fg(t.dim),
        ),
    ])]
}

fn queue_lines(p: &Pane, ctx: &PaneCtx<'_>) -> Vec<Logical> {
    if p.pending.queue.is_empty() {
        return Vec::new();
    }
    let t = ctx.theme;
    let km = ctx.keymap;
    let head = if p.pending.restored {
        format!(
            "queued from last session ({}) · {} on an empty composer sends · {} manage",
            p.pending.queue.len(),
            km.short(Action::Submit),
            km.short(Action::ManageQueue)
        )
    } else if p.pending.selected.is_some() {
        "queue · ↑↓ select · e edit · d remove · Shift+↑↓ move · Esc done".to_owned()
    } else {
        format!(
            "queued ({}) · {} edit last · {} manage",
            p.pending.queue.len(),
            km.short(Action::RecallQueued),
            km.short(Action::ManageQueue)
        )
    };
    let mut out = vec![Logical::new(vec![Span::styled(
        head,
        Style::new().fg(t.accent).add_modifier(Modifier::ITALIC),
    )])];
    const SHOWN: usize = 3;
    let sel = p.pending.selected;
    let start = match sel {
        Some(s) if s >= SHOWN => s + 1 - SHOWN,
        _ => 0,
    };
    for (i, q) in p.pending.queue.iter().enumerate().skip(start).take(SHOWN) {
        let first = q.lines().next().unwrap_or("");
        let more = if q.lines().count() > 1 { " …" } else { "" };
        let selected = sel == Some(i);
        let style = if selected {
            super::overlay::row_style(t, true)
        } else {
            Style::new().fg(t.dim)
        };
        let mark = if selected { "▶" } else { " " };
        out.push(Logical::new(vec![
            Span::styled(format!("{mark}{}. ", i + 1), Style::new().fg(t.accent)),
            Span::styled(format!("{}{more}", truncate(first, 200)), style),
        ]));
    }
    let hidden = p.pending.queue.len().saturating_sub(start + SHOWN);
    if hidden > 0 {
        out.push(Logical::raw(
            format!("   … {hidden} more"),
            Style::new().fg(t.dim),
        ));
    }
    out
}

fn draw_separator(p: &Pane, ctx: &PaneCtx<'_>, area: Rect, buf: &mut Buffer) {
    let t = ctx.theme;
    let line_style = Style::new().fg(if ctx.focused {
        t.border_focused
    } else {
        t.border
    });
    super::put::repeat(buf, area.x, area.y, "─", area.width, line_style);
    let label = if p.composer.deny_reason {
        Some((" reason for denying ".to_owned(), t.warning))
    } else if let Some((i, _)) = &p.composer.editing_queued {
        Some((format!(" editing queued #{} ", i + 1), t.accent))
    } else {
        None
    };
    if let Some((text, color)) = label {
        let text = truncate(&text, usize::from(area.width.saturating_sub(2)));
        buf.set_string(
            area.x + 1.min(area.width),
            area.y,
            text,
            Style::new().fg(color),
        );
    }
}

/// How a pane's composer looks this frame: placeholder and styles.
pub(crate) struct ComposerLook {
    placeholder: String,
    placeholder_style: Style,
    style: Style,
    cursor_style: Style,
}

impl ComposerLook {
    /// The look for `p`'s composer (focus, theme, turn state).
    pub(crate) fn of(p: &Pane, focused: bool, t: &Theme, km: &Keymap) -> Self {
        let placeholder = if p.composer.deny_reason {
            format!(
                "reason for denying (optional) · {} denies · {} goes back",
                km.hint(Action::Submit),
                km.hint(Action::Interrupt)
            )
        } else if p.conversation.state == TurnState::Dead {
            format!("agent stopped · {} restarts", km.hint(Action::Restart))
        } else if p.is_busy() {
            format!(
                "{} queues · {} steers · {} interrupts",
                km.hint(Action::Submit),
                km.hint(Action::Steer),
                km.hint(Action::Interrupt)
            )
        } else {
            format!("Message {}…", p.name())
        };
        Self {
            placeholder,
            placeholder_style: Style::new().fg(t.dim),
            style: Style::new().fg(t.text),
            cursor_style: if focused {
                Style::new().add_modifier(Modifier::REVERSED)
            } else {
                Style::new()
            },
        }
    }

    /// Styles the text area. The composer widget keeps its styles, so the
    /// app loop applies the look before each frame (`app::frame`).
    pub(crate) fn apply(self, ta: &mut TextArea<'static>) {
        ta.set_placeholder_text(self.placeholder);
        ta.set_placeholder_style(self.placeholder_style);
        ta.set_style(self.style);
        ta.set_cursor_line_style(Style::new());
        ta.set_cursor_style(self.cursor_style);
    }
}

fn draw_composer(p: &Pane, ctx: &PaneCtx<'_>, area: Rect, prompt_w: u16, buf: &mut Buffer) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let t = ctx.theme;
    let prompt_style = if ctx.focused {
        Style::new().fg(t.accent).add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(t.dim)
    };
    buf.set_string(area.x, area.y, "›", prompt_style);
    let text_area = Rect::new(
        area.x + prompt_w,
        area.y,
        area.width.saturating_sub(prompt_w),
        area.height,
    );
    (&p.composer.area).render(text_area, buf);
}
