//! The checks view's model (`/checks`, issue 48): which pane's pull
//! request it shows, as the server last told it, and where the user is in
//! it. The keys and the asks are src/app/forge.rs; drawing src/ui/checks.rs.

use crate::protocol::forge::PrView;

/// The checks view of one pane's pull request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChecksView {
    /// The pane it is of.
    pub pane: usize,
    /// As the server last told it; `None` until it answers.
    pub view: Option<PrView>,
    /// The selected check.
    pub sel: usize,
    /// The failed log shown: (check, its tail), neutralised.
    pub log: Option<(String, String)>,
    /// Lines scrolled up from the log's end.
    pub log_scroll: usize,
    /// `m` was pressed: `y` merges.
    pub confirm_merge: bool,
}

impl ChecksView {
    pub(crate) fn checks_len(&self) -> usize {
        self.view
            .as_ref()
            .and_then(|v| v.checks.as_ref())
            .map_or(0, Vec::len)
    }
}
