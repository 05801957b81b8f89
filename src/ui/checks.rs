//! The checks view (`/checks`, issue 48): a pane's pull request as the
//! server's watcher last saw it — its state, each check (the selected one's
//! failed log on `l`), the reviews and comments (those the watcher does not
//! pass on marked so), and what the watcher sent and when. Every text in it
//! is the forge's: each line is neutralised here, as it is drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::overlay::{fit, frame, row_style};
use crate::app::state::App;
use crate::protocol::forge::PrView;
use crate::theme::Theme;

/// One line of forge text, safe to draw.
fn safe(s: &str) -> String {
    crate::sanitize::peer_line(s.lines().next().unwrap_or_default())
}

pub(crate) fn draw(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(c) = app.checks.as_ref() else {
        return;
    };
    let t = &app.theme;
    let w = area.width.saturating_sub(4).min(110);
    if let Some((check, log)) = &c.log {
        return draw_log(t, area, w, (check, log, c.log_scroll), buf);
    }
    let name = app.panes.get(c.pane).map_or("?", |p| p.name());
    let Some(v) = c.view.as_ref() else {
        let inner = frame(t, area, (w, 3), "pull request", "Esc close", buf);
        let line = format!("asking the forge about {}'s pull request…", safe(name));
        buf.set_string(
            inner.x,
            inner.y,
            fit(&line, inner.width.into()),
            Style::new().fg(t.dim),
        );
        return;
    };
    let hint = if c.confirm_merge {
        "y merge · any other key: not"
    } else {
        "↑↓ check · l failed log · r refresh · m merge · Esc close"
    };
    let mut lines = lines(t, c.sel, v);
    // A workspace's other pull requests (issue 52), each under its heading.
    for part in &v.parts {
        lines.push(Line::styled(
            format!(
                "── {} · pull request #{} {}",
                safe(&part.repo),
                part.number,
                part.summary.as_deref().map(safe).unwrap_or_default()
            ),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
        lines.extend(self::lines(t, usize::MAX, part));
    }
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let repo = if v.repo.is_empty() {
        String::new()
    } else {
        format!(" of {}", safe(&v.repo))
    };
    let title = format!(
        "{} · pull request{repo} #{} {}",
        safe(name),
        v.number,
        v.summary.as_deref().map(safe).unwrap_or_default()
    );
    let inner = frame(t, area, (w, h), &title, hint, buf);
    for (row, line) in lines.iter().take(inner.height.into()).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}

/// The view's lines: state, checks (`sel` the selected one), remarks,
/// what was sent.
fn lines(t: &Theme, sel: usize, v: &PrView) -> Vec<Line<'static>> {
    let dim = Style::new().fg(t.dim);
    let head = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    let mut state = vec![v.state.as_deref().unwrap_or("not polled yet").to_owned()];
    if v.draft {
        state.push("draft".into());
    }
    if let Some(m) = &v.mergeable {
        state.push(m.clone());
    }
    out.push(Line::from(vec![
        Span::styled(safe(&state.join(" · ")), Style::new().fg(t.text)),
        Span::styled(format!("  {}", safe(&v.url)), dim),
    ]));
    if let Some(e) = &v.error {
        out.push(Line::styled(
            format!("⚠ the last poll failed: {}", safe(e)),
            Style::new().fg(t.error),
        ));
    }
    if let Some(files) = &v.fork_set_aside {
        out.push(Line::styled(
            format!(
                "a fork's head: its instructions set aside ({})",
                safe(&files.join(", "))
            ),
            Style::new().fg(t.warning),
        ));
    }
    check_lines(t, sel, v, &mut out);
    remark_lines(t, v, &mut out);
    let cap = if v.capped {
        " · cap reached: the user decides"
    } else {
        ""
    };
    out.push(Line::styled(
        format!(
            "the watcher sent {} message(s){cap}; {} remark(s) not passed on",
            v.attempts, v.ignored
        ),
        head,
    ));
    for s in &v.sent {
        out.push(Line::from(vec![
            Span::styled(format!("  {}  ", safe(&s.at)), dim),
            Span::styled(safe(&s.what), Style::new().fg(t.text)),
        ]));
    }
    out
}

/// The pull request's checks, the selected one marked.
fn check_lines(t: &Theme, sel: usize, v: &PrView, out: &mut Vec<Line<'static>>) {
    let dim = Style::new().fg(t.dim);
    let head = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    out.push(Line::styled("checks", head));
    let checks = v.checks.as_deref().unwrap_or_default();
    if checks.is_empty() {
        out.push(Line::styled("  none yet", dim));
    }
    for (i, check) in checks.iter().enumerate() {
        let (mark, colour) = match check.outcome.as_str() {
            "passed" => ("✓", t.success),
            "failed" => ("✗", t.error),
            "pending" => ("…", t.warning),
            _ => ("·", t.dim),
        };
        let selected = i == sel;
        let style = row_style(t, selected);
        out.push(Line::from(vec![
            Span::styled(if selected { "▸ " } else { "  " }, style),
            Span::styled(format!("{mark} "), style.fg(colour)),
            Span::styled(safe(&check.name), style),
            Span::styled(format!("  {}", safe(&check.url)), dim),
        ]));
    }
}

/// Its reviews and comments, each saying whether it reached the agent.
fn remark_lines(t: &Theme, v: &PrView, out: &mut Vec<Line<'static>>) {
    let dim = Style::new().fg(t.dim);
    let head = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    out.push(Line::styled("reviews and comments", head));
    if v.remarks.is_empty() {
        out.push(Line::styled("  none", dim));
    }
    for r in &v.remarks {
        let verdict = r
            .review
            .as_deref()
            .map(|v| format!(" {}", safe(v)))
            .unwrap_or_default();
        let passed = if r.allowed {
            ""
        } else {
            "  (not passed on: author not allowed)"
        };
        out.push(Line::from(vec![
            Span::styled(
                format!(
                    "  {} ({}){verdict}: ",
                    safe(&r.author),
                    safe(&r.association)
                ),
                Style::new().fg(t.text),
            ),
            Span::styled(safe(&r.body), dim),
            Span::styled(passed.to_owned(), Style::new().fg(t.warning)),
        ]));
    }
}

/// A failed check's log tail, its end in view (scrolled up by `scroll`).
fn draw_log(
    t: &Theme,
    area: Rect,
    w: u16,
    (check, log, scroll): (&str, &str, usize),
    buf: &mut Buffer,
) {
    let h = area.height.saturating_sub(2);
    let title = format!("failed log · {check}");
    let inner = frame(
        t,
        area,
        (w, h),
        &title,
        "↑↓ PgUp PgDn scroll · any other key: back",
        buf,
    );
    let lines: Vec<&str> = log.lines().collect();
    let rows = usize::from(inner.height);
    let end = lines
        .len()
        .saturating_sub(scroll.min(lines.len().saturating_sub(rows)));
    let start = end.saturating_sub(rows);
    for (row, l) in lines[start..end].iter().enumerate() {
        let text = crate::sanitize::peer_line(&l.replace('\t', "  "));
        buf.set_string(
            inner.x,
            inner.y + row as u16,
            fit(&text, inner.width.into()),
            Style::new().fg(t.text),
        );
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use crate::app::command::AppCommand;
    use crate::app::state::{App, Overlay};
    use crate::config::{Config, ConfigSource};
    use crate::protocol::forge::{ForgeAsk, ForgeNews, PrView, ViewCheck, ViewRemark};

    fn app() -> App {
        let text = "[[agent]]\nid = \"a\"\nprovider = \"claude\"\n";
        let config = Config::parse(text, ConfigSource::Builtin).unwrap();
        crate::app::build_app(&config).0
    }

    fn screen(app: &App) -> String {
        let area = Rect::new(0, 0, 100, 30);
        let mut buf = Buffer::empty(area);
        super::draw(app, area, &mut buf);
        buf.content().iter().map(|c| c.symbol()).collect()
    }

    /// A pull request whose check name and remark carry escapes.
    fn hostile_view() -> PrView {
        PrView {
            pane: "a".into(),
            number: 8,
            summary: Some("#8 draft ✗1".into()),
            state: Some("open".into()),
            checks: Some(vec![ViewCheck {
                name: "test\u{1b}]0;pwned\u{7}".into(),
                outcome: "failed".into(),
                url: "u".into(),
                run_id: Some("1".into()),
            }]),
            remarks: vec![ViewRemark {
                author: "drive-by".into(),
                association: "NONE".into(),
                review: None,
                body: "rm -rf /\u{1b}[2J\nsecond line".into(),
                when: String::new(),
                allowed: false,
            }],
            ..PrView::default()
        }
    }

    /// The forge's text is a stranger's: a check's name, a reviewer's
    /// words and a failed log reach the screen with their escapes
    /// visible, never as escapes.
    #[test]
    fn the_checks_view_asks_shows_and_never_draws_an_escape() {
        let mut app = app();
        app.open_checks();
        assert_eq!(app.overlay, Overlay::Checks);
        let asked = app
            .outbox
            .drain_where(|c| matches!(c, AppCommand::Forge { .. }));
        assert!(matches!(
            asked.as_slice(),
            [AppCommand::Forge {
                pane: 0,
                ask: ForgeAsk::PrStatus { .. }
            }]
        ));
        let view = hostile_view();
        app.on_forge(0, ForgeNews::View(Box::new(view)));
        let s = screen(&app);
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s:?}");
        assert!(s.contains("test␛]0;pwned␇"), "{s}");
        assert!(s.contains("not passed on"), "{s}");
        assert!(!s.contains("second line"), "one line per remark: {s}");
        // `l`: the selected failed check's log, asked of the server.
        app.checks_key_for_test('l');
        let asked = app
            .outbox
            .drain_where(|c| matches!(c, AppCommand::Forge { .. }));
        assert!(matches!(
            asked.as_slice(),
            [AppCommand::Forge { ask: ForgeAsk::PrLog { check, .. }, .. }] if check.starts_with("test")
        ));
        let log = "line 1\n\u{1b}[31merror\u{1b}[0m: it broke\u{1b}]52;c;eA==\u{7}".to_owned();
        app.on_forge(
            0,
            ForgeNews::Log {
                check: "test".into(),
                text: log,
            },
        );
        let s = screen(&app);
        assert!(
            s.contains("failed log · test") && s.contains("it broke"),
            "{s}"
        );
        assert!(!s.contains('\u{1b}') && !s.contains('\u{7}'), "{s:?}");
        // `m` asks; only `y` merges.
        app.checks_key_for_test('x');
        app.checks_key_for_test('m');
        app.checks_key_for_test('n');
        assert!(
            app.outbox
                .drain_where(|c| matches!(c, AppCommand::Forge { .. }))
                .is_empty()
        );
        app.checks_key_for_test('m');
        app.checks_key_for_test('y');
        let asked = app
            .outbox
            .drain_where(|c| matches!(c, AppCommand::Forge { .. }));
        assert!(matches!(
            asked.as_slice(),
            [AppCommand::Forge {
                ask: ForgeAsk::PrMerge { .. },
                ..
            }]
        ));
    }

    #[test]
    fn a_refused_checks_view_closes_and_says_why_in_the_pane() {
        let mut app = app();
        app.open_checks();
        app.on_forge(
            0,
            ForgeNews::Said {
                text: "`a` has no watched pull request\u{1b}[2J".into(),
                failed: true,
            },
        );
        assert_eq!(app.overlay, Overlay::None);
        let t = &app.panes[0].conversation.transcript;
        let Some(crate::app::transcript::EntryKind::Notice { text, .. }) =
            t.entries.last().map(|e| &e.kind)
        else {
            panic!("no notice in the pane");
        };
        assert!(text.contains("no watched pull request"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
    }
}
