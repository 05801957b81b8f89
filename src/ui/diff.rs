//! The diff view (issue 19): one pane's worktree changes, a file list on the
//! left and the selected file's unified diff on the right, code coloured by
//! syntect from the file's extension. Read-only over `App::diff`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};
use unicode_width::UnicodeWidthStr;

use super::highlight;
use super::theme::Theme;
use super::wrap::{Logical, truncate, wrap};
use crate::app::comment::ReviewComment;
use crate::app::overlay::Review;
use crate::app::overlay::{Confirm, DiffView};
use crate::app::state::App;
use crate::protocol::git::LineKind;
use crate::protocol::git::{BringMode, DiffScope, FileDiff};

pub fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(v) = app.diff.as_ref() else {
        return;
    };
    let t = &app.theme;
    Clear.render(area, buf);
    let pane = app.panes.get(v.pane);
    let name = pane.map_or("?", |p| p.name());
    let branch = pane
        .and_then(|p| p.worktree.as_ref())
        .map_or("", |w| w.branch.as_str());
    let block = frame_block(v, t, name, branch);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.width < 10 || inner.height < 2 {
        return;
    }
    let mut body = inner;
    let top = top_lines(app, v, branch, body.width);
    if !top.is_empty() {
        let h = (top.len() as u16).min(body.height - 1);
        Paragraph::new(top).render(Rect::new(body.x, body.y, body.width, h), buf);
        body.y += h;
        body.height -= h;
    }
    draw_body(v, t, body, buf);
}

/// The border: agent, branch and scope on top, the keys below.
fn frame_block(v: &DiffView, t: &Theme, name: &str, branch: &str) -> Block<'static> {
    let hints = if v.confirm.is_some() {
        " y confirm · any other key cancels "
    } else if v.conflict.is_some() {
        " h hand the conflict to the agent · a abort · Esc "
    } else if v.review.composing.is_some() {
        " Enter keep the comment · Esc drop it "
    } else if v.files.iter().any(|f| !f.repo.is_empty()) {
        " Esc · ↑↓ file · [ ] hunk · a/A accept · x/X reject · J/K line · C comment · S send · m merge all · M merge this repo · c pick · s commit · Tab turn · r reload "
    } else {
        // Most used first: a narrow view cuts the end.
        " Esc · ↑↓ file · [ ] hunk · a/A accept · x/X reject · J/K line · C comment · S send · m merge · c pick · s commit · Tab turn · r reload "
    };
    super::overlay::rounded_box(t.accent)
        .title(Line::from(vec![
            Span::styled(" diff ", t.bold(t.accent)),
            Span::styled(
                format!("· {name} · {branch} · {} ", v.scope.label()),
                t.fg(t.title),
            ),
        ]))
        .title_bottom(Line::from(Span::styled(hints, t.dim_style())))
}

/// Above the files: the question being asked or the last result (wrapped:
/// a conflict names every file), the hand-off offer, then the predicted
/// conflicts and overlap warnings.
fn top_lines(app: &App, v: &DiffView, branch: &str, width: u16) -> Vec<Line<'static>> {
    let t = &app.theme;
    let mut top = Vec::new();
    let mut add = |text: String, style: Style| {
        top.extend(wrap(&Logical::raw(clean(&text), style), width));
    };
    if let Some(confirm) = &v.confirm {
        let question = question(v, confirm, branch);
        add(question, t.bold(t.warning));
    } else if let Some((ok, text)) = &v.message {
        add(text.clone(), t.fg(if *ok { t.success } else { t.error }));
    }
    if let Some(line) = repo_line(app, v) {
        add(line, t.fg(t.heading));
    }
    if let Some(text) = &v.review.composing {
        let at = v
            .selected_file()
            .and_then(|f| ReviewComment::at(f, v.review.hunk, v.review.line, String::new()))
            .map_or_else(String::new, |c| format!("{}:{}", c.path, c.line));
        add(format!("comment on {at} › {text}▏"), t.bold(t.accent));
    } else if v.scope == DiffScope::LastTurn
        && let Some(prompt) = app.last_prompt(v.pane)
    {
        let first = prompt.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let heading = truncate(
            &format!("last turn: “{}”", first.trim()),
            usize::from(width),
        );
        add(heading, t.bold(t.heading));
    }
    if !v.review.comments.is_empty() {
        let n = v.review.comments.len();
        add(
            format!(
                "{n} comment{} to send (S sends them to the agent as its next prompt)",
                if n == 1 { "" } else { "s" }
            ),
            t.fg(t.accent),
        );
    }
    if v.conflict.is_some() {
        let name = app.panes.get(v.pane).map_or("the agent", |p| p.name());
        add(
            format!(
                "h: rebase {branch} onto the main checkout in its worktree and give {name} the conflict to resolve · a: abort (nothing was applied)"
            ),
            t.bold(t.warning),
        );
    }
    for (other, files) in app.conflicts_of(v.pane) {
        add(
            format!("✗ merging with {other} would conflict in {files}"),
            t.fg(t.error),
        );
    }
    let conflicting: Vec<String> = app.conflicts_of(v.pane).into_iter().map(|c| c.0).collect();
    for (other, files) in app.overlaps_of(v.pane) {
        if !conflicting.contains(&other) {
            add(format!("⚠ {other} also changed {files}"), t.fg(t.warning));
        }
    }
    top
}

/// A workspace's repositories, each with what it changed (each against its
/// own main checkout): `api: 2 files +5 -1 · web: nothing`.
fn repo_line(app: &App, v: &DiffView) -> Option<String> {
    let w = app.panes.get(v.pane)?.worktree.as_ref()?;
    if w.repos.is_empty() {
        return None;
    }
    let parts: Vec<String> = w
        .repos
        .iter()
        .map(|m| {
            let files: Vec<&FileDiff> = v.files.iter().filter(|f| f.repo == m.name).collect();
            if files.is_empty() {
                return format!("{}: nothing", m.name);
            }
            let added: usize = files.iter().map(|f| f.added()).sum();
            let removed: usize = files.iter().map(|f| f.removed()).sum();
            let n = files.len();
            let s = if n == 1 { "" } else { "s" };
            format!("{}: {n} file{s} +{added} -{removed}", m.name)
        })
        .collect();
    Some(format!("repositories · {}", parts.join(" · ")))
}

/// What the view asks before doing `confirm`.
fn question(v: &DiffView, confirm: &Confirm, branch: &str) -> String {
    match confirm {
        Confirm::Bring(mode, repo) => {
            let what = match mode {
                BringMode::Merge => "Merge",
                BringMode::CherryPick => "Cherry-pick",
            };
            let into = match repo {
                Some(r) => format!("{r}'s main checkout (only {r}; the other repositories stay)"),
                None => "the main checkout".to_owned(),
            };
            format!(
                "{what} {branch} into {into} (uncommitted work is committed on {branch} first)? [y/N]"
            )
        }
        Confirm::Commit(message) => {
            format!("Commit everything on {branch} as “{message}”? [y/N]")
        }
        Confirm::Reject(hunk) => {
            let path = v.selected_file().map_or_else(String::new, FileDiff::shown);
            match hunk {
                Some(i) => format!(
                    "Revert hunk {} of {path} in the worktree (the marked one below)? [y/N]",
                    i + 1
                ),
                None => format!(
                    "Revert {path} in the worktree to how it was before ({})? [y/N]",
                    v.scope.label()
                ),
            }
        }
    }
}

/// The file list and the selected file's diff (or why there is none).
fn draw_body(v: &DiffView, t: &Theme, body: Rect, buf: &mut Buffer) {
    if let Some(e) = &v.error {
        let text = format!("cannot diff: {}", clean(e));
        put(buf, body, 0, &text, t.fg(t.error));
        return;
    }
    if v.files.is_empty() {
        let what = if v.loading {
            "reading the worktree…".to_owned()
        } else {
            format!("no changes ({})", v.scope.label())
        };
        put(buf, body, 0, &what, t.dim_style());
        return;
    }
    let list_w = list_width(v, body.width);
    let list = Rect::new(body.x, body.y, list_w, body.height);
    let right = Rect::new(
        body.x + list_w + 1,
        body.y,
        body.width.saturating_sub(list_w + 1),
        body.height,
    );
    draw_list(v, t, list, buf);
    for y in body.y..body.bottom() {
        buf.set_string(body.x + list_w, y, "│", t.fg(t.border));
    }
    if let Some(f) = v.selected_file() {
        let lines = file_lines(f, &v.review, t);
        let skip = usize::from(v.scroll).min(lines.len().saturating_sub(1));
        Paragraph::new(lines.into_iter().skip(skip).collect::<Vec<_>>()).render(right, buf);
    }
}

/// The file column: wide enough for the names, at most a third of the view.
fn list_width(v: &DiffView, width: u16) -> u16 {
    let widest = v
        .files
        .iter()
        .map(|f| f.shown().width() + 14)
        .max()
        .unwrap_or(20);
    (widest as u16)
        .clamp(16, (width / 3).max(16))
        .min(width / 2)
}

fn draw_list(v: &DiffView, t: &Theme, area: Rect, buf: &mut Buffer) {
    let rows = usize::from(area.height);
    let first = v.selected.saturating_sub(rows.saturating_sub(1));
    for (row, (i, f)) in v
        .files
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .enumerate()
    {
        let y = area.y + row as u16;
        let selected = i == v.selected;
        let base = if selected {
            Style::new().bg(t.selection_bg)
        } else {
            Style::new()
        };
        if selected {
            buf.set_style(Rect::new(area.x, y, area.width, 1), base);
        }
        let counts = if f.binary {
            "bin".to_owned()
        } else {
            format!("+{} -{}", f.added(), f.removed())
        };
        let status = if v.review.file_accepted(f) {
            Span::styled("✓ ", base.fg(t.success))
        } else {
            Span::styled(format!("{} ", f.status.letter()), base.fg(t.accent))
        };
        let counts = match v.review.comments_on(&f.shown()) {
            0 => counts,
            n => format!("✎{n} {counts}"),
        };
        let room = usize::from(area.width).saturating_sub(counts.width() + 3);
        let name = Span::styled(fit(&clean(&f.shown()), room), base.fg(t.text));
        let line = Line::from(vec![status, name]);
        buf.set_line(area.x, y, &line, area.width);
        let cx = area.right().saturating_sub(counts.width() as u16);
        buf.set_string(cx, y, &counts, base.fg(t.dim));
    }
}

/// The selected file's diff: a header, then each hunk with line numbers
/// (the selected one marked, accepted ones ticked) and its comments.
/// `app::review::hunk_row` counts these rows.
fn file_lines(f: &FileDiff, review: &Review, t: &Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut head = vec![Span::styled(clean(&f.shown()), t.bold(t.heading))];
    if let Some(old) = &f.old_path {
        head.push(Span::styled(
            format!("  (renamed from {})", clean(old)),
            t.dim_style(),
        ));
    }
    out.push(Line::from(head));
    if f.binary {
        out.push(Line::from(Span::styled("binary file", t.dim_style())));
    }
    let ext = std::path::Path::new(&f.path)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (i, h) in f.hunks.iter().enumerate() {
        out.push(hunk_header(f, i, review, t));
        let (mut old, mut new) = (h.old_start, h.new_start);
        let cursor = (review.hunk == i).then_some(review.line).flatten();
        for (j, l) in h.lines.iter().enumerate() {
            let Some(line) = code_line(l, (&mut old, &mut new), cursor == Some(j), &ext, t) else {
                out.push(Line::from(Span::styled(clean(&l.text), t.dim_style())));
                continue;
            };
            out.push(line);
            // A comment on this line sits under it.
            for c in review
                .comments_at(&f.shown(), i)
                .filter(|c| c.diff_line == Some(j))
            {
                out.push(Line::from(Span::styled(
                    format!("      ✎ {}", clean(&c.text)),
                    t.bold(t.accent),
                )));
            }
        }
        for c in review
            .comments_at(&f.shown(), i)
            .filter(|c| c.diff_line.is_none())
        {
            out.push(Line::from(Span::styled(
                format!("      ✎ {}", clean(&c.text)),
                t.bold(t.accent),
            )));
        }
    }
    out
}

/// One line of a hunk: its number (`▸` when `selected`), sign and code;
/// `None` for a "no newline" note. Counts the old and new line numbers on.
fn code_line(
    l: &crate::protocol::git::DiffLine,
    (old, new): (&mut u32, &mut u32),
    selected: bool,
    ext: &str,
    t: &Theme,
) -> Option<Line<'static>> {
    let text = clean(&l.text);
    let (num, sign, sign_style) = match l.kind {
        LineKind::Added => {
            *new += 1;
            (*new - 1, "+", t.bold(t.diff_add))
        }
        LineKind::Removed => {
            *old += 1;
            (*old - 1, "-", t.bold(t.diff_remove))
        }
        LineKind::Context => {
            *old += 1;
            *new += 1;
            (*new - 1, " ", t.dim_style())
        }
        LineKind::Note => return None,
    };
    let number = if selected {
        Span::styled(format!("▸{num:>4} "), t.bold(t.accent).bg(t.selection_bg))
    } else {
        Span::styled(format!("{num:>5} "), t.dim_style())
    };
    let mut spans = vec![number, Span::styled(sign, sign_style)];
    let code: Vec<Span<'static>> = match l.kind {
        LineKind::Removed => vec![Span::styled(text, t.fg(t.diff_remove))],
        _ => highlight::highlight(&text, ext, &t.syntax_theme)
            .and_then(|mut lines| lines.drain(..).next())
            .unwrap_or_else(|| vec![Span::styled(text, t.fg(t.text))]),
    };
    if l.kind == LineKind::Context {
        spans.extend(
            code.into_iter()
                .map(|s| s.patch_style(Style::new().add_modifier(Modifier::DIM))),
        );
    } else {
        spans.extend(code);
    }
    Some(Line::from(spans))
}

/// `▶ @@ -1,3 +1,4 @@ … ✓ accepted` for the selected, accepted hunk.
fn hunk_header(f: &FileDiff, i: usize, review: &Review, t: &Theme) -> Line<'static> {
    let Some(h) = f.hunks.get(i) else {
        return Line::default();
    };
    let selected = review.hunk == i;
    let mut style = t.fg(t.diff_hunk);
    if selected {
        style = style.bg(t.selection_bg).add_modifier(Modifier::BOLD);
    }
    let mut spans = vec![
        Span::styled(if selected { "▶ " } else { "  " }, style),
        Span::styled(clean(&h.header), style),
    ];
    if review.is_accepted(&f.shown(), i) {
        spans.push(Span::styled("  ✓ accepted", t.bold(t.success)));
    }
    Line::from(spans)
}

/// Agent-written text on screen: tabs as spaces, no control characters.
fn clean(s: &str) -> String {
    s.replace('\t', "    ")
        .chars()
        .filter(|c| !c.is_control())
        .collect()
}

fn fit(s: &str, width: usize) -> String {
    if s.width() <= width {
        return s.to_owned();
    }
    // Keep the end of a path: the file name matters most.
    let mut out = String::from("…");
    let mut tail: Vec<&str> = Vec::new();
    let mut w = 1;
    // By grapheme, as the buffer counts columns (wrap.rs).
    for g in unicode_segmentation::UnicodeSegmentation::graphemes(s, true).rev() {
        w += g.width();
        if w > width {
            break;
        }
        tail.push(g);
    }
    out.extend(tail.into_iter().rev());
    out
}

fn put(buf: &mut Buffer, area: Rect, row: u16, text: &str, style: Style) {
    if row < area.height {
        buf.set_stringn(area.x, area.y + row, text, usize::from(area.width), style);
    }
}
