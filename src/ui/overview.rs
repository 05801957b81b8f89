//! The overview overlay: one row per pane with state, model, current tool
//! or last line, queue, tokens and cost, and time in state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::cells;
use super::overlay::{age, fit, frame, name_width, row_style, window};
use super::pane::state_label;
use crate::app::overview::activity;
use crate::app::pane::Pane;
use crate::app::state::App;

pub(crate) fn draw(app: &App, spin: usize, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let n = app.panes.len();
    let w = area.width.saturating_sub(2).min(150);
    let foot = super::conflicts::footer(app, w.saturating_sub(2));
    let h = (n as u16 + 3 + foot.len() as u16).min(area.height);
    let title = match hive_total(app) {
        Some(total) => format!("overview · {n} panes · {total} in all"),
        None => format!("overview · {n} panes"),
    };
    let hint = format!(
        "↑↓ select · s sort ({}) · Enter focus · Esc close",
        app.overview.sort.label()
    );
    let inner = frame(t, area, (w, h), &title, &hint, buf);
    if inner.height == 0 {
        return;
    }
    // Helpers are indented under their parent (two columns a level).
    let indent = (0..n)
        .map(|i| 2 * crate::app::overview::depth(&app.panes, i))
        .max()
        .unwrap_or(0);
    let name_w = (name_width(&app.panes, 20) + indent).clamp(4, 26);
    let cols = Cols::fit(name_w, usize::from(inner.width));
    draw_head(app, cols, inner, buf);
    let rows = usize::from(inner.height - 1).saturating_sub(foot.len());
    super::conflicts::draw_footer(&foot, inner, buf);
    let sel = app.overview.sel;
    let order = crate::app::overview::order(&app.panes, app.overview.sort);
    for (row, at, &i) in window(&order, sel, rows) {
        let line = row_line(app, i, at == sel, (spin, cols, inner.width));
        buf.set_line(inner.x, inner.y + 1 + row, &line, inner.width);
    }
}

/// The optional columns that fit, and the pane names' width (#46 item 22:
/// at 80 columns the table ran past the overlay's edge, `cpu / mem` cut,
/// `for` and `doing` never seen). They go in this order until `doing` has
/// `DOING_MIN` columns: model (the pane's border names it), processes,
/// queue, time in state.
#[derive(Debug, Clone, Copy)]
struct Cols {
    name_w: usize,
    model: bool,
    procs: bool,
    queue: bool,
    since: bool,
}

/// What `doing` needs to say anything.
const DOING_MIN: usize = 16;

impl Cols {
    fn fit(name_w: usize, width: usize) -> Self {
        let mut c = Self {
            name_w,
            model: true,
            procs: true,
            queue: true,
            since: true,
        };
        let drops: [fn(&mut Self); 4] = [
            |c| c.model = false,
            |c| c.procs = false,
            |c| c.queue = false,
            |c| c.since = false,
        ];
        for drop in drops {
            if c.used() + DOING_MIN <= width {
                break;
            }
            drop(&mut c);
        }
        c
    }

    /// Columns before `doing`: selection mark, number and name; state;
    /// the shown optional ones; tokens / cost (as `row_line` lays them).
    fn used(&self) -> usize {
        let on = |shown: bool, w: usize| if shown { w } else { 0 };
        6 + self.name_w
            + 16
            + on(self.model, 17)
            + on(self.queue, 6)
            + 17
            + on(self.procs, 11)
            + on(self.since, 9)
    }
}

/// Pane `i`'s row: its number and name (a helper indented under its
/// parent), state, model, queue, usage, processes, time in state, doing
/// (those of `cols`).
fn row_line(
    app: &App,
    i: usize,
    selected: bool,
    (spin, cols, width): (usize, Cols, u16),
) -> Line<'static> {
    let t = &app.theme;
    let Some(p) = app.panes.get(i) else {
        return Line::default();
    };
    let style = row_style(t, selected);
    let (state, alarm) = state_label(p, spin);
    let usage = usage_cell(p);
    let since = app
        .overview
        .state_since
        .get(&i)
        .map_or_else(String::new, |at| {
            age(app.now.saturating_duration_since(*at))
        });
    let queue = if p.pending.queue.is_empty() {
        String::new()
    } else {
        p.pending.queue.len().to_string()
    };
    // A helper sits under the agent that spawned it.
    let depth = crate::app::overview::depth(&app.panes, i);
    let name = match depth {
        0 => p.name().to_owned(),
        d => format!("{}└ {}", " ".repeat(2 * (d - 1)), p.name()),
    };
    let cells_text = format!(
        "{}{:>2} {} ",
        if selected { "▸ " } else { "  " },
        i + 1,
        fit(&name, cols.name_w)
    );
    let state_style = if alarm { style.fg(t.attention) } else { style };
    let model = fit(p.conversation.model.as_deref().unwrap_or("-"), 16);
    let mut rest = String::new();
    if cols.model {
        rest.push_str(&format!(" {model}"));
    }
    if cols.queue {
        rest.push_str(&format!(" {queue:>5}"));
    }
    rest.push_str(&format!(" {usage:>15} "));
    let procs = if cols.procs {
        format!("{:>11}", process_cell(p))
    } else {
        String::new()
    };
    let procs_style = if p.over_limit() {
        style.fg(t.warning).add_modifier(Modifier::BOLD)
    } else {
        style
    };
    let since = if cols.since {
        format!(" {since:>6}  ")
    } else {
        String::new()
    };
    let doing = [team_cell(app, i), activity(p)]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    let doing = fit(&doing, usize::from(width).saturating_sub(cols.used()));
    Line::from(vec![
        Span::styled(cells_text, style),
        Span::styled(fit(&state, 16), state_style),
        Span::styled(rest, style),
        Span::styled(procs, procs_style),
        Span::styled(since, style),
        Span::styled(doing, style.fg(t.dim)),
    ])
}

/// The column headings (those of `cols`).
fn draw_head(app: &App, cols: Cols, inner: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let mut head = format!(
        "  {:>2} {} {}",
        "#",
        fit("pane", cols.name_w),
        fit("state", 16)
    );
    if cols.model {
        head.push_str(&format!(" {}", fit("model", 16)));
    }
    if cols.queue {
        head.push_str(&format!(" {:>5}", "queue"));
    }
    head.push_str(&format!(" {:>15} ", "tokens / cost"));
    if cols.procs {
        head.push_str(&format!("{:>11}", "cpu / mem"));
    }
    if cols.since {
        head.push_str(&format!(" {:>6}  ", "for"));
    }
    head.push_str("doing");
    buf.set_line(
        inner.x,
        inner.y,
        &Line::from(Span::styled(
            head,
            Style::new().fg(t.heading).add_modifier(Modifier::BOLD),
        )),
        inner.width,
    );
}

/// "team of 3 · ↑12k ↓3k · $0.42": what a pane and its helpers used
/// together, for a pane with helpers.
fn team_cell(app: &App, i: usize) -> String {
    let helpers = crate::app::overview::helpers(&app.panes, i);
    if helpers.is_empty() {
        return String::new();
    }
    let mut total = app.panes[i].conversation.usage.clone();
    for &h in &helpers {
        total.accumulate(&app.panes[h].conversation.usage);
    }
    format!(
        "team of {} · ↑{} ↓{} · {}",
        helpers.len() + 1,
        cells::tokens(total.input_tokens),
        cells::tokens(total.output_tokens),
        cells::usage_cost(&total)
    )
}

/// "12% 340M": the agent's processes' CPU and memory, or nothing before
/// the first sample (an HTTP agent has no process).
fn process_cell(p: &Pane) -> String {
    p.process
        .map_or_else(String::new, |s| cells::process_text(&s))
}

/// "in/out cost" ("—" for a cost nobody reported or priced), or nothing
/// before the pane used any tokens.
fn usage_cell(p: &Pane) -> String {
    let u = &p.conversation.usage;
    if !u.is_known() {
        return String::new();
    }
    format!(
        "{}/{} {}",
        cells::tokens(u.input_tokens),
        cells::tokens(u.output_tokens),
        cells::usage_cost(u)
    )
}

/// The whole hive's usage (every pane's session totals added up), or
/// `None` before any pane used anything.
fn hive_total(app: &App) -> Option<String> {
    let mut total = crate::protocol::event::Usage::default();
    let mut unpriced = false;
    for p in &app.panes {
        let u = &p.conversation.usage;
        unpriced |= u.is_known() && u.cost_usd.is_none();
        total.accumulate(u);
    }
    if !total.is_known() {
        return None;
    }
    // A sum that leaves out panes with no cost says so.
    let cost = match (total.cost_usd, unpriced) {
        (Some(_), true) => format!("{} + —", cells::usage_cost(&total)),
        _ => cells::usage_cost(&total),
    };
    Some(format!(
        "↑{} ↓{} · {cost}",
        cells::tokens(total.input_tokens),
        cells::tokens(total.output_tokens)
    ))
}
