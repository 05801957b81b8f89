//! Fan-out's two overlays: the chooser (panes with checkboxes, then the
//! prompt) and the compare view (each run's final answer with duration,
//! tokens, cost, tools and files; side by side, or stacked when narrow).
//! What a run produced is read by `app::fanout::outcome`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Widget};

use super::cells;
use super::overlay::{fit, frame, row_style, window};
use super::wrap::{Logical, wrap};
use crate::app::fanout::{Outcome, RunState, can_receive, outcome};
use crate::app::state::App;
use crate::theme::Theme;

/// A column narrower than this stacks the answers instead.
const MIN_COLUMN: u16 = 36;

pub(crate) fn draw_chooser(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let f = &app.fanout;
    let n = app.panes.len();
    let w = area.width.saturating_sub(4).min(90);
    let typing = f.prompt.is_some();
    let h = (n as u16 + 5).min(area.height);
    let hint = if typing {
        "type the prompt · Enter send to all · Alt+Enter new line · Esc back"
    } else if f.runs.is_empty() {
        "↑↓ move · Space choose · a all · 2-9 best of N · Enter prompt · Esc close"
    } else {
        "↑↓ move · Space choose · a all · 2-9 best of N · Enter prompt · c last compare · Esc close"
    };
    let title = format!("fan-out · {} of {n} panes", f.chosen.len());
    let inner = frame(t, area, (w, h), &title, hint, buf);
    if inner.height == 0 {
        return;
    }
    let rows = usize::from(inner.height.saturating_sub(2));
    for (row, i, p) in window(&app.panes, f.sel, rows) {
        let selected = i == f.sel && !typing;
        let style = row_style(t, selected);
        let ok = can_receive(p);
        let mark = match (ok, f.chosen.contains(&i)) {
            (false, _) => "[-]",
            (true, true) => "[x]",
            (true, false) => "[ ]",
        };
        let why = if p.is_terminal() {
            "terminal pane"
        } else if p.conversation.failed.is_some() {
            "not running"
        } else if p.is_busy() {
            "busy: the prompt queues"
        } else {
            ""
        };
        let line = Line::from(vec![
            Span::styled(
                format!("{}{mark} {:>2} ", if selected { "▸ " } else { "  " }, i + 1),
                style,
            ),
            Span::styled(fit(p.name(), 28), if ok { style } else { style.fg(t.dim) }),
            Span::styled(format!(" {why}"), style.fg(t.dim)),
        ]);
        buf.set_line(inner.x, inner.y + row, &line, inner.width);
    }
    let y = inner.bottom() - 1;
    let prompt = match &f.prompt {
        Some(p) => {
            // The end of a long prompt stays in view, after the cursor mark.
            let shown = p.replace('\n', " ⏎ ");
            let room = usize::from(inner.width).saturating_sub(4);
            let tail: String = {
                let chars: Vec<char> = shown.chars().collect();
                chars[chars.len().saturating_sub(room)..].iter().collect()
            };
            Line::from(vec![
                Span::styled("› ", Style::new().fg(t.accent).add_modifier(Modifier::BOLD)),
                Span::styled(tail, Style::new().fg(t.text)),
                Span::styled("▏", Style::new().fg(t.accent)),
            ])
        }
        None => Line::from(Span::styled(
            "Enter: type one prompt for every chosen pane",
            Style::new().fg(t.dim),
        )),
    };
    buf.set_line(inner.x, y, &prompt, inner.width);
}

pub(crate) fn draw_compare(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let f = &app.fanout;
    let (w, h) = (area.width, area.height);
    let done = f
        .runs
        .iter()
        .filter_map(|r| {
            app.panes
                .get(r.pane)
                .map(|p| outcome(p, r, &f.sent, app.now))
        })
        .filter(|o| !matches!(o.state, RunState::Running | RunState::Queued))
        .count();
    let title = format!(
        "compare · {done} of {} answered · {}",
        f.runs.len(),
        super::wrap::truncate(&f.sent.replace('\n', " "), 40)
    );
    let inner = frame(
        t,
        area,
        (w, h),
        &title,
        "←→ select · ↑↓ scroll · t take this one · d differences · Enter open pane · f new fan-out · Esc close",
        buf,
    );
    let n = f.runs.len() as u16;
    if inner.height == 0 || n == 0 {
        return;
    }
    let inner = draw_take(app, inner, buf);
    // With `d`, each answer marks the words the selected one lacks.
    let reference = f
        .words
        .then(|| f.runs.get(f.compare_sel))
        .flatten()
        .and_then(|r| Some(outcome(app.panes.get(r.pane)?, r, &f.sent, app.now).answer));
    let side_by_side = inner.width / n >= MIN_COLUMN;
    for (k, run) in f.runs.iter().enumerate() {
        let Some(p) = app.panes.get(run.pane) else {
            continue;
        };
        let k16 = k as u16;
        let cell = if side_by_side {
            let cw = inner.width / n;
            let x = inner.x + k16 * cw;
            let width = if k16 + 1 == n { inner.right() - x } else { cw };
            Rect::new(x, inner.y, width, inner.height)
        } else {
            let ch = inner.height / n;
            let y = inner.y + k16 * ch;
            let height = if k16 + 1 == n { inner.bottom() - y } else { ch };
            Rect::new(inner.x, y, inner.width, height)
        };
        let o = outcome(p, run, &f.sent, app.now);
        let head = format!("{} {}", run.pane + 1, p.name());
        let selected = k == f.compare_sel;
        let marks = reference.as_deref().filter(|_| !selected);
        // A worktree pane: what its worktree holds, whatever the tools said.
        let worktree = p
            .worktree
            .as_ref()
            .and_then(|_| app.worktree_changes.get(&run.pane));
        let extra = Extra {
            selected,
            reference: marks,
            changes: worktree.map(|files| worktree_line(files)),
            worktree_files: worktree.map(Vec::len),
        };
        draw_cell(t, &head, &o, &extra, f.scroll, cell, buf);
    }
}

/// One run: a box titled with the pane and its state, the figures, the answer.
/// What a cell shows besides its run: whether it is selected, the answer
/// its words are compared with (`d`), its worktree's changes.
struct Extra<'a> {
    selected: bool,
    reference: Option<&'a str>,
    changes: Option<String>,
    /// How many files its worktree holds changed (the count the figures
    /// give: the tools' own count misses what a shell command wrote).
    worktree_files: Option<usize>,
}

fn draw_cell(
    t: &Theme,
    head: &str,
    o: &Outcome,
    extra: &Extra<'_>,
    scroll: u16,
    area: Rect,
    buf: &mut Buffer,
) {
    let (selected, reference) = (extra.selected, extra.reference);
    let (state_color, mark) = match o.state {
        RunState::Done => (t.accent, "✓"),
        RunState::Failed => (t.error, "✗"),
        RunState::Interrupted => (t.warning, "⏹"),
        RunState::Queued | RunState::Running => (t.dim, "…"),
    };
    let border = if selected {
        Style::new().fg(t.border_focused)
    } else {
        Style::new().fg(t.border)
    };
    let block = Block::new()
        .borders(Borders::ALL)
        .border_type(if selected {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(border)
        .title(Line::from(vec![
            Span::styled(
                format!(" {head} "),
                Style::new().fg(t.title).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("{mark} {} ", o.state.label()),
                Style::new().fg(state_color),
            ),
        ]));
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.height == 0 || inner.width == 0 {
        return;
    }
    buf.set_line(
        inner.x,
        inner.y,
        &Line::from(Span::styled(
            figures(o, extra.worktree_files),
            Style::new().fg(t.dim),
        )),
        inner.width,
    );
    let mut top = 1;
    if let Some(line) = &extra.changes
        && inner.height > 2
    {
        buf.set_line(
            inner.x,
            inner.y + 1,
            &Line::from(Span::styled(line.clone(), Style::new().fg(t.accent))),
            inner.width,
        );
        top = 2;
    }
    let body = Rect::new(
        inner.x,
        inner.y + top,
        inner.width,
        inner.height.saturating_sub(top),
    );
    let lines = answer_lines(o, reference, t);
    let rows = lines.iter().flat_map(|l| wrap(l, body.width));
    for (y, row) in (body.y..body.bottom()).zip(rows.skip(usize::from(scroll))) {
        buf.set_line(body.x, y, &row, body.width);
    }
}

/// `12.3s · ↑1.2k ↓300 · ~$0.0100 · 2 tools · 1 file changed`: the cost
/// marked `~` when estimated from `[prices]`, the files counted in the
/// worktree when the pane has one (`worktree_files`), else from its tools.
fn figures(o: &Outcome, worktree_files: Option<usize>) -> String {
    let mut parts = Vec::new();
    if o.state == RunState::Queued {
        return String::new();
    }
    if let Some(d) = o.duration {
        parts.push(format!("{:.1}s", d.as_secs_f64()));
    }
    if let Some(u) = &o.usage {
        parts.push(format!(
            "↑{} ↓{}",
            cells::tokens(u.input_tokens),
            cells::tokens(u.output_tokens)
        ));
        if u.cost_usd.is_some() {
            parts.push(cells::usage_cost(u));
        }
    }
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    parts.push(plural(o.tools, "tool"));
    let files = worktree_files.unwrap_or(o.files.len());
    parts.push(format!("{} changed", plural(files, "file")));
    parts.join(" · ")
}

/// The answer as plain text, the words `reference` lacks highlighted.
fn differences(reference: &str, answer: &str, t: &Theme) -> Vec<Logical> {
    let plain = Style::new().fg(t.text);
    let marked = Style::new()
        .fg(t.warning)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    crate::app::word_diff::marks(reference, answer)
        .into_iter()
        .map(|segments| {
            Logical::new(
                segments
                    .into_iter()
                    .map(|(text, differs)| {
                        let text: String = text.chars().filter(|c| !c.is_control()).collect();
                        Span::styled(text, if differs { marked } else { plain })
                    })
                    .collect(),
            )
        })
        .collect()
}

/// The taken answer's lines at the bottom of `inner` (wrapped: a refused
/// merge's error is read whole; at most half the view, its last rows
/// kept); returns the room left above them.
fn draw_take(app: &App, inner: Rect, buf: &mut Buffer) -> Rect {
    match take_lines(app, inner.width) {
        Some(lines) if inner.height > 2 => {
            let rows = (lines.len() as u16).clamp(1, inner.height / 2);
            let top = inner.bottom() - rows;
            let skip = lines.len().saturating_sub(usize::from(rows));
            for (y, line) in (top..).zip(lines.iter().skip(skip)) {
                buf.set_line(inner.x, y, line, inner.width);
            }
            Rect::new(inner.x, inner.y, inner.width, inner.height - rows)
        }
        _ => inner,
    }
}

/// The compare view's last lines while an answer is being taken, wrapped
/// to `width`.
fn take_lines(app: &App, width: u16) -> Option<Vec<Line<'static>>> {
    use crate::app::overlay::Take;
    let t = &app.theme;
    let name = |i: &usize| app.panes.get(*i).map_or("?", |p| p.name()).to_owned();
    let (text, style) = match app.fanout.take.as_ref()? {
        Take::Confirm(p) => (
            format!(
                "Take {}'s answer: merge its worktree into the main checkout? [y/N]",
                name(p)
            ),
            Style::new().fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        Take::Merging(p) => (format!("merging {}…", name(p)), Style::new().fg(t.dim)),
        Take::ResetOthers(others) => (
            format!(
                "Merged. Discard the work of {} (reset to the main checkout)? [y/N]",
                others.iter().map(name).collect::<Vec<_>>().join(", ")
            ),
            Style::new().fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        Take::DiscardOthers(others) => (
            format!(
                "Merged. Close {} and remove their worktrees and branches? [y/N]",
                others.iter().map(name).collect::<Vec<_>>().join(", ")
            ),
            Style::new().fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        Take::Done(ok, text) => (
            text.clone(),
            Style::new().fg(if *ok { t.success } else { t.error }),
        ),
    };
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Some(wrap(&Logical::raw(text, style), width))
}

/// `worktree: README.md +1 -1, main.rs +2 -0` (or that it is clean).
fn worktree_line(files: &[crate::protocol::git::FileChange]) -> String {
    if files.is_empty() {
        return "worktree: no changes".into();
    }
    let list: Vec<String> = files
        .iter()
        .map(|(path, added, removed)| {
            let path: String = path.chars().filter(|c| !c.is_control()).collect();
            format!("{path} +{added} -{removed}")
        })
        .collect();
    format!("worktree: {}", list.join(", "))
}

/// The run's answer as drawn: why there is none, its error, its words
/// against `reference` (`d`), or markdown.
fn answer_lines(o: &Outcome, reference: Option<&str>, t: &Theme) -> Vec<Logical> {
    if o.answer.is_empty() {
        let what = match o.state {
            RunState::Queued => "waiting in the pane's queue",
            _ => "no answer yet",
        };
        vec![Logical::raw(what, Style::new().fg(t.dim))]
    } else if o.state == RunState::Failed {
        vec![Logical::raw(o.answer.clone(), Style::new().fg(t.error))]
    } else if let Some(reference) = reference {
        differences(reference, &o.answer, t)
    } else {
        super::markdown::render(&o.answer, t, Style::new().fg(t.text))
    }
}
