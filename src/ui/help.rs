//! Overlays: the help (the live keymap, as configured) and the leave dialog
//! (detach or stop).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use super::overlay::{centered, frame, titled_box};
use crate::app::state::App;
use crate::keymap::{ACTIONS, Action, Scope};

pub(crate) fn help_lines(app: &App) -> Vec<Line<'static>> {
    let t = &app.theme;
    let km = &app.keymap;
    let head = Style::new().fg(t.heading).add_modifier(Modifier::BOLD);
    let key = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(t.dim);
    let mut out = Vec::new();
    for (scope, title) in [
        (Scope::Global, "Everywhere (terminal panes too)"),
        (Scope::Conversation, "Conversation panes"),
    ] {
        out.push(Line::from(Span::styled(title, head)));
        let mut focus_done = false;
        for (action, _, s, _, desc) in ACTIONS {
            if *s != scope {
                continue;
            }
            if action.focus_index().is_some() {
                // One line for Alt+1…9 when they follow the default pattern.
                if focus_done {
                    continue;
                }
                focus_done = true;
                let first = km.short(Action::Focus1);
                let last = km.short(Action::Focus9);
                out.push(Line::from(vec![
                    Span::styled(format!("  {:<25}", format!("{first} … {last}")), key),
                    Span::raw("focus pane 1…9"),
                ]));
                continue;
            }
            out.push(Line::from(vec![
                Span::styled(format!("  {:<25}", km.label(*action)), key),
                Span::raw(desc.to_string()),
            ]));
        }
        out.push(Line::default());
    }
    out.push(Line::from(Span::styled("Notes", head)));
    for note in [
        "Keys without Ctrl/Alt (?, y, Home…) act only while the composer is empty.".to_owned(),
        format!(
            "Terminal panes get every key except the ones above; {} then a key sends that key verbatim.",
            km.short(Action::Prefix)
        ),
        "Mouse: click a pane to focus it; the wheel scrolls it.".to_owned(),
        format!("Keys are set in the [keys] table of {}.", app.config_source),
        "Logs: hive.log in the state directory ($XDG_STATE_HOME/hive).".to_owned(),
    ] {
        out.push(Line::from(Span::styled(format!("  {note}"), dim)));
    }
    out
}

pub(crate) fn draw_help(app: &App, area: Rect, buf: &mut Buffer) {
    let lines = help_lines(app);
    let h = (lines.len() as u16 + 2).min(area.height);
    let hint = "↑↓ scroll · any other key closes";
    let inner = frame(&app.theme, area, (96, h), "hive · keys", hint, buf);
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .scroll((app.help_scroll, 0))
        .render(inner, buf);
}

/// Ctrl+Q's dialog: detach (the default) or stop everything, with the
/// turns a stop would cut short counted first.
pub(crate) fn draw_leave(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let key = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(t.dim);
    let n = app.running_turns();
    let mut text = Vec::with_capacity(4);
    if n > 0 {
        text.push(Line::from(Span::styled(
            format!(
                "{n} turn{} still running.",
                if n == 1 { " is" } else { "s are" }
            ),
            Style::new().fg(t.warning),
        )));
    }
    text.push(Line::from(vec![
        Span::styled("[d]", key),
        Span::raw(" detach: the agents keep running "),
        Span::styled("(Enter)", dim),
    ]));
    text.push(Line::from(Span::styled(
        "    `hive attach` comes back",
        dim,
    )));
    text.push(Line::from(vec![
        Span::styled("[s]", key),
        Span::raw(" stop every agent and the server"),
    ]));
    let border = if n > 0 { t.warning } else { t.accent };
    let rect = centered(area, 48, text.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(text)
        .block(
            titled_box(border, " leave hive ".into())
                .title_bottom(Line::from(Span::styled(" Esc cancels ", dim)).right_aligned()),
        )
        .render(rect, buf);
}

/// `Ctrl+B x` on a pane whose turn runs: close it anyway?
pub(crate) fn draw_close(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let key = Style::new().fg(t.accent).add_modifier(Modifier::BOLD);
    let dim = Style::new().fg(t.dim);
    let name = app
        .focused()
        .map(|p| p.name().to_owned())
        .unwrap_or_default();
    let text = vec![
        Line::from(Span::styled(
            format!("{name} is running a turn."),
            Style::new().fg(t.warning),
        )),
        Line::from(vec![
            Span::styled("[y]", key),
            Span::raw(" close it: its agent stops "),
            Span::styled("(Enter)", dim),
        ]),
        Line::from(Span::styled("    its history and worktree stay", dim)),
    ];
    let rect = centered(area, 48, text.len() as u16 + 2);
    Clear.render(rect, buf);
    Paragraph::new(text)
        .block(titled_box(t.warning, " close pane ".into()).title_bottom(
            Line::from(Span::styled(" any other key keeps it ", dim)).right_aligned(),
        ))
        .render(rect, buf);
}
