//! How each transcript entry looks, as logical (unwrapped) lines: user and
//! agent messages, thinking, tool calls, turn footers, error banners, notices.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::theme::Theme;
use super::wrap::{Logical, truncate};
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::event::{Origin, ToolDisplay, Usage};
use crate::protocol::upsert::{Upsert, UpsertKind, UpsertStatus};

pub(crate) const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Lines of tool output shown while collapsed.
pub(crate) const OUTPUT_PREVIEW: usize = 4;
/// Lines of live thinking shown while it streams.
pub(crate) const THINKING_TAIL: usize = 4;
/// Expanded output is still capped: nobody reads 10k lines in a pane.
const OUTPUT_MAX: usize = 400;

pub struct CellCtx<'a> {
    pub theme: &'a Theme,
    pub expanded: bool,
    pub spin: usize,
    pub expand_key: &'a str,
}

impl CellCtx<'_> {
    pub(crate) fn spinner(&self) -> &'static str {
        SPINNER[self.spin % SPINNER.len()]
    }
}

fn gutter(first: &str, style: Style) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
    let w = unicode_width::UnicodeWidthStr::width(first);
    (
        vec![Span::styled(first.to_owned(), style)],
        vec![Span::raw(" ".repeat(w))],
    )
}

/// The user's own message: a tinted block with a `›` marker.
pub fn user_message(text: &str, t: &Theme) -> Vec<Logical> {
    user_lines(text, true, t)
}

/// `user_message`'s lines of `text`, the marker on the first only when
/// `first` (a long message is laid out a range of lines at a time).
pub(crate) fn user_lines(text: &str, first: bool, t: &Theme) -> Vec<Logical> {
    let bar = Style::new().fg(t.user).add_modifier(Modifier::BOLD);
    let body = Style::new().fg(t.text);
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            let first = if i == 0 && first { "› " } else { "  " };
            Logical::raw(line.to_owned(), body)
                .with_prefix(vec![Span::styled(first, bar)], vec![Span::raw("  ")])
                .styled_line(Style::new().bg(t.user_bg))
        })
        .collect()
}

/// A system notice inside the conversation (rate-limit retries, compaction…).
pub(crate) fn system_message(text: &str, t: &Theme) -> Vec<Logical> {
    let style = Style::new().fg(t.system).add_modifier(Modifier::ITALIC);
    let (first, cont) = gutter("ⓘ ", Style::new().fg(t.system));
    text.split('\n')
        .enumerate()
        .map(|(i, line)| {
            let p = if i == 0 { first.clone() } else { cont.clone() };
            Logical::raw(line.to_owned(), style).with_prefix(p, cont.clone())
        })
        .collect()
}

/// Marks an agent message's first row with a dot and indents the rest.
pub fn agent_gutter(lines: &mut [Logical], t: &Theme, failed: bool) {
    let dot = if failed { t.error } else { t.accent };
    for (i, l) in lines.iter_mut().enumerate() {
        let mark = if i == 0 {
            Span::styled("● ", Style::new().fg(dot))
        } else {
            Span::raw("  ")
        };
        l.prefix.insert(0, mark);
        l.cont.insert(0, Span::raw("  "));
    }
}

pub fn thinking(u: &Upsert, text: &str, ctx: &CellCtx<'_>) -> Vec<Logical> {
    let live = !u.is_closed();
    let mut out = vec![thinking_head(u, text, ctx)];
    let show: Vec<&str> = if ctx.expanded {
        text.lines().collect()
    } else if live {
        let all: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let skip = all.len().saturating_sub(THINKING_TAIL);
        all[skip..].to_vec()
    } else {
        Vec::new()
    };
    out.extend(show.into_iter().map(|l| thought_line(l, ctx.theme)));
    out
}

/// The lines of an expanded thought (a long one is laid out a range of
/// lines at a time; `_first` as `user_lines` takes it).
pub(crate) fn thought_lines(text: &str, _first: bool, t: &Theme) -> Vec<Logical> {
    text.lines().map(|l| thought_line(l, t)).collect()
}

fn thought_line(line: &str, t: &Theme) -> Logical {
    let body = Style::new().fg(t.thinking).add_modifier(Modifier::ITALIC);
    let (bar, _) = gutter("│ ", Style::new().fg(t.border));
    Logical::raw(line.to_owned(), body).with_prefix(bar.clone(), bar)
}

/// A thinking item's first row: live, or the thought's size.
pub(crate) fn thinking_head(u: &Upsert, text: &str, ctx: &CellCtx<'_>) -> Logical {
    let t = ctx.theme;
    let head_style = Style::new().fg(t.thinking).add_modifier(Modifier::ITALIC);
    let live = !u.is_closed();
    let words = text.split_whitespace().count();
    let head = if live {
        format!("{} Thinking…", ctx.spinner())
    } else if ctx.expanded {
        format!("▾ Thought · {words} words")
    } else {
        format!("▸ Thought · {words} words ({} to expand)", ctx.expand_key)
    };
    Logical::raw(head, head_style)
}

/// The summary line of a tool call, as its provider described it.
pub fn summary(display: Option<&ToolDisplay>) -> &str {
    display.map_or("", |d| d.summary.as_str())
}

/// True when `text` reads as a unified diff.
pub(crate) fn looks_like_diff(text: &str) -> bool {
    text.lines().any(|l| l.starts_with("@@ "))
        || (text.contains("\n+++ ") && text.starts_with("--- "))
}

/// A diff line coloured by its first character.
pub(crate) fn diff_line(line: &str, t: &Theme) -> Logical {
    let style = if line.starts_with("+++") || line.starts_with("---") {
        Style::new().fg(t.dim).add_modifier(Modifier::BOLD)
    } else if line.starts_with('+') {
        Style::new().fg(t.diff_add)
    } else if line.starts_with('-') {
        Style::new().fg(t.diff_remove)
    } else if line.starts_with("@@") {
        Style::new().fg(t.diff_hunk)
    } else {
        Style::new().fg(t.dim)
    };
    Logical::raw(line.replace('\t', "    "), style).hard()
}

/// The change an editing tool call makes, as its provider described it.
pub(crate) fn edit_diff(display: Option<&ToolDisplay>, t: &Theme) -> Vec<Logical> {
    display
        .and_then(|d| d.diff.as_deref())
        .map(|d| d.lines().map(|l| diff_line(l, t)).collect())
        .unwrap_or_default()
}

pub fn tool_call(u: &Upsert, ctx: &CellCtx<'_>) -> Vec<Logical> {
    let t = ctx.theme;
    let UpsertKind::ToolCall {
        tool_name,
        output,
        output_is_error,
        display,
        ..
    } = &u.kind
    else {
        return Vec::new();
    };
    let failed = u.status == UpsertStatus::Error || *output_is_error == Some(true);
    let mut out = vec![tool_head(u, tool_name, display.as_deref(), failed, ctx)];
    let elbow = Style::new().fg(t.border);
    let mut body: Vec<Logical> = Vec::new();
    if let Some(msg) = &u.error_message {
        // One row per line (a newline inside a row would vanish).
        body.extend(
            msg.lines()
                .map(|l| Logical::raw(l.to_owned(), Style::new().fg(t.error))),
        );
    }
    let diff = edit_diff(display.as_deref(), t);
    let limit = if ctx.expanded {
        OUTPUT_MAX
    } else {
        OUTPUT_PREVIEW
    };
    let mut unmade = 0;
    match output.as_deref() {
        // A running call's output so far: its last lines, as a terminal shows.
        Some(out_text) if !u.is_closed() => {
            body.extend(diff.into_iter().take(limit));
            body.extend(live_tail(out_text, limit, Style::new().fg(t.dim)));
            push_body(&mut out, body, elbow);
            return out;
        }
        // Only the lines shown become rows: an output can be megabytes.
        Some(out_text) if looks_like_diff(out_text) => {
            unmade = shown_lines(&mut body, out_text, limit, |l| diff_line(l, t));
        }
        Some(out_text) => {
            body.extend(diff);
            let style = Style::new().fg(if failed { t.error } else { t.dim });
            unmade = shown_lines(&mut body, out_text, limit, |l| {
                Logical::raw(l.replace('\t', "    "), style).hard()
            });
        }
        None => body.extend(diff),
    }
    let hidden = body.len().saturating_sub(limit) + unmade;
    body.truncate(limit);
    push_body(&mut out, body, elbow);
    if hidden > 0 {
        let more = if ctx.expanded {
            format!("    … {hidden} more lines")
        } else {
            format!("    … +{hidden} lines ({} to expand)", ctx.expand_key)
        };
        out.push(Logical::raw(more, Style::new().fg(t.dim)));
    }
    out
}

/// Adds rows for `text`'s lines up to `limit` rows in `body`; returns how
/// many lines were left out.
fn shown_lines(
    body: &mut Vec<Logical>,
    text: &str,
    limit: usize,
    row: impl FnMut(&str) -> Logical,
) -> usize {
    let room = limit.saturating_sub(body.len());
    body.extend(text.lines().take(room).map(row));
    text.lines().skip(room).count()
}

/// A tool call's first row: its state, name and summary.
/// A tool call's status: `✗` failed, `✓` done, `⊘` interrupted, else the
/// spinner.
pub(crate) fn status_icon(u: &Upsert, failed: bool, ctx: &CellCtx<'_>) -> (&'static str, Style) {
    let t = ctx.theme;
    if failed {
        ("✗", Style::new().fg(t.error).add_modifier(Modifier::BOLD))
    } else if u.is_final() {
        ("✓", Style::new().fg(t.success).add_modifier(Modifier::BOLD))
    } else if u.status == UpsertStatus::Interrupted {
        ("⊘", Style::new().fg(t.warning).add_modifier(Modifier::BOLD))
    } else {
        (ctx.spinner(), Style::new().fg(t.tool))
    }
}

fn tool_head(
    u: &Upsert,
    tool_name: &str,
    display: Option<&ToolDisplay>,
    failed: bool,
    ctx: &CellCtx<'_>,
) -> Logical {
    let t = ctx.theme;
    let (icon, icon_style) = status_icon(u, failed, ctx);
    let summary = summary(display);
    let mut head = vec![Span::styled(
        tool_name.to_owned(),
        Style::new().fg(t.tool).add_modifier(Modifier::BOLD),
    )];
    if !summary.is_empty() {
        head.push(Span::styled(
            format!("  {}", truncate(summary, 200)),
            Style::new().fg(t.text),
        ));
    }
    Logical::new(head).with_prefix(
        vec![Span::styled(format!("{icon} "), icon_style)],
        vec![Span::raw("  ")],
    )
}

/// Indents a tool call's body under its head, the first row with an elbow.
fn push_body(out: &mut Vec<Logical>, body: Vec<Logical>, elbow: Style) {
    for (i, mut l) in body.into_iter().enumerate() {
        let lead = if i == 0 { "  ⎿ " } else { "    " };
        l.prefix.insert(0, Span::styled(lead, elbow));
        l.cont.insert(0, Span::raw("    "));
        out.push(l);
    }
}

/// The last `limit` lines of a running call's output, after a count of the
/// lines above them.
fn live_tail(text: &str, limit: usize, style: Style) -> Vec<Logical> {
    let lines: Vec<&str> = text.lines().collect();
    let hidden = lines.len().saturating_sub(limit);
    let mut out = Vec::with_capacity(limit + 1);
    if hidden > 0 {
        out.push(Logical::raw(format!("… {hidden} more lines"), style));
    }
    out.extend(
        lines[hidden..]
            .iter()
            .map(|l| Logical::raw(l.replace('\t', "    "), style).hard()),
    );
    out
}

/// Compact token counts: 950, 12.3k, 4.1M.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

pub fn cost(usd: f64) -> String {
    crate::protocol::event::usd(usd, if usd < 0.01 { 4 } else { 2 })
}

/// A token count as reported: a turn never uses zero tokens, so a zero is
/// a count the agent did not report, shown as "—" (issue 13 item 3).
fn reported(n: u64) -> String {
    if n == 0 { "—".into() } else { tokens(n) }
}

/// Tokens in and out, and the cost where the agent reports one:
/// `↑12.3k ↓456 · $0.05`, `↑9.5k ↓—`.
pub fn usage_text(u: &Usage) -> String {
    let mut s = format!(
        "↑{} ↓{}",
        reported(u.input_tokens),
        reported(u.output_tokens)
    );
    if u.cost_usd.is_some() {
        s.push_str(" · ");
        s.push_str(&usage_cost(u));
    }
    s
}

/// A process sample in one short cell: `12% 340M` (CPU of one core,
/// resident memory).
pub fn process_text(s: &crate::protocol::pane::ProcessSample) -> String {
    format!("{:.0}% {}", s.cpu_percent, bytes(s.rss_bytes))
}

/// Compact byte counts: 512K, 340M, 1.2G.
pub fn bytes(n: u64) -> String {
    const K: u64 = 1 << 10;
    const M: u64 = 1 << 20;
    const G: u64 = 1 << 30;
    match n {
        0..M => format!("{}K", n / K),
        M..G => format!("{}M", n / M),
        _ => format!("{:.1}G", n as f64 / G as f64),
    }
}

/// A usage's cost: `$0.05` as the agent reported it, `~$0.05` estimated
/// from `[prices]`, `—` when neither is known.
pub fn usage_cost(u: &Usage) -> String {
    match u.cost_usd {
        Some(c) if u.cost_estimated => format!("~{}", cost(c)),
        Some(c) => cost(c),
        None => "—".into(),
    }
}

pub fn footer(
    model: &str,
    duration: Option<std::time::Duration>,
    usage: Option<&Usage>,
    cancelled: bool,
    t: &Theme,
) -> Vec<Logical> {
    let mut parts = Vec::new();
    if cancelled {
        parts.push("interrupted".to_owned());
    }
    if !model.is_empty() {
        parts.push(model.to_owned());
    }
    if let Some(d) = duration {
        parts.push(format!("{:.1}s", d.as_secs_f64()));
    }
    if let Some(u) = usage {
        parts.push(usage_text(u));
    }
    let color = if cancelled { t.warning } else { t.dim };
    let mark = if cancelled { "⏹ " } else { "── " };
    vec![Logical::new(vec![
        Span::styled(mark, Style::new().fg(color)),
        Span::styled(parts.join(" · "), Style::new().fg(color)),
    ])]
}

pub fn turn_error(code: &str, message: &str, t: &Theme) -> Vec<Logical> {
    let bar = Style::new().fg(t.error);
    let mut out = vec![
        Logical::new(vec![
            Span::styled(
                "✗ turn failed ",
                Style::new().fg(t.error).add_modifier(Modifier::BOLD),
            ),
            Span::styled(
                format!("[{code}]"),
                Style::new()
                    .fg(t.error)
                    .add_modifier(Modifier::BOLD | Modifier::REVERSED),
            ),
        ])
        .with_prefix(vec![Span::styled("▌ ", bar)], vec![Span::styled("▌ ", bar)]),
    ];
    for line in message.lines() {
        out.push(
            Logical::raw(line.to_owned(), Style::new().fg(t.error))
                .with_prefix(vec![Span::styled("▌ ", bar)], vec![Span::styled("▌ ", bar)]),
        );
    }
    out
}

pub fn notice(level: DiagnosticLevel, text: &str, t: &Theme) -> Vec<Logical> {
    let (mark, color) = match level {
        DiagnosticLevel::Info => ("ⓘ ", t.dim),
        DiagnosticLevel::Warn => ("⚠ ", t.warning),
        DiagnosticLevel::Error => ("✗ ", t.error),
    };
    let (first, cont) = gutter(mark, Style::new().fg(color));
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let p = if i == 0 { first.clone() } else { cont.clone() };
            Logical::raw(l.to_owned(), Style::new().fg(color)).with_prefix(p, cont.clone())
        })
        .collect()
}

/// Origin of a message item.
pub fn origin(u: &Upsert) -> Option<Origin> {
    match &u.kind {
        UpsertKind::Message { origin, .. } => Some(*origin),
        _ => None,
    }
}
