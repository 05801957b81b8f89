//! The attachment chips above a composer: one `[image name · size]` per image
//! the next message carries, and how to remove them.

use ratatui::style::{Modifier, Style};
use ratatui::text::Span;

use super::theme::Theme;
use super::wrap::Logical;
use crate::app::pane::Pane;

/// One logical line of chips (wrapped by the caller), or nothing.
pub(crate) fn lines(p: &Pane, t: &Theme) -> Vec<Logical> {
    if p.attachments.is_empty() {
        return Vec::new();
    }
    let mut spans = Vec::new();
    for img in &p.attachments {
        // The name is the user's file name: shown, never interpreted.
        let label = img.label();
        let label = crate::sanitize::neutralize(&label);
        spans.push(Span::styled(
            format!("[image {label}]"),
            Style::new().fg(t.accent).add_modifier(Modifier::BOLD),
        ));
        spans.push(Span::raw(" "));
    }
    spans.push(Span::styled(
        "· sent with the next message · Backspace on an empty composer removes",
        Style::new().fg(t.dim),
    ));
    vec![Logical::new(spans)]
}
