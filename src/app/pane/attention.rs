//! The attention part of a pane: whether something happened while the
//! user looked elsewhere (the border marker), the tally of what
//! (`unread`), and that tally as a digest once the pane is focused.

use crate::app::unread::Unread;

#[derive(Default)]
pub struct Attention {
    /// Something happened while unfocused (turn ended, failed, asks, bell).
    pub flagged: bool,
    /// What happened since the user last looked (`crate::app::unread`).
    pub unread: Unread,
    /// That tally, shown as a one-line digest once the pane is focused.
    pub digest: Option<Unread>,
    /// `/mute`: its inbox entries ring, flash and run nothing.
    pub muted: bool,
    /// Every event of this pane's server up to this one has come (its
    /// snapshot's, then each `Events` batch's seq): a dismissal counts up
    /// to it, so an entry still on its way is not dismissed unseen (#46).
    pub heard: u64,
}
