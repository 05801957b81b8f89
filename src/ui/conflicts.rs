//! The overview's footer of predicted merge conflicts (issue 31): which
//! agents' work would conflict with whose (or with the main branch), in
//! which files, and a merge order that avoids them. Its own file so the
//! overview table's columns stay another change's business.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

use super::wrap::{Logical, wrap};
use crate::app::state::App;

/// The footer's lines at `width` (none while nothing would conflict and
/// there is no order to suggest).
pub(crate) fn footer(app: &App, width: u16) -> Vec<Line<'static>> {
    let t = &app.theme;
    let name = |id: &str| {
        app.panes
            .iter()
            .find(|p| p.agent.id == id)
            .map_or_else(|| id.to_owned(), |p| p.name().to_owned())
    };
    let mut out = Vec::new();
    for c in &app.conflicts.conflicts {
        let other =
            c.b.as_deref()
                .map_or_else(|| "the main branch".to_owned(), name);
        let text = format!(
            "✗ {} and {other} would conflict in {}",
            name(&c.a),
            c.files.join(", ")
        );
        out.extend(wrap(
            &Logical::raw(clean(&text), Style::new().fg(t.error)),
            width,
        ));
    }
    if let Some(plan) = app.merge_plan().describe_named(name) {
        out.extend(wrap(&Logical::raw(clean(&plan), t.fg(t.heading)), width));
    }
    out
}

/// Draws `lines` at the bottom of `area`.
pub(crate) fn draw_footer(lines: &[Line<'static>], area: Rect, buf: &mut Buffer) {
    let n = (lines.len() as u16).min(area.height);
    for (i, line) in lines.iter().take(usize::from(n)).enumerate() {
        let y = area.bottom() - n + i as u16;
        buf.set_line(area.x, y, line, area.width);
    }
}

/// Agent ids and file names on screen: no control characters.
fn clean(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}
