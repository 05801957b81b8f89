//! `[ui] notify_command`, run by the server: once per reason, whether no
//! console is attached (the point of a phone bridge: agents keep working
//! after the terminal closed) or three are (each console ran it before, so
//! three consoles meant three pings). The reasons are the inbox's
//! (src/notify/reason.rs), read off the runner events as a console reads
//! them: an approval always; a finished or failed turn, an exit, a bell or
//! a stall when no console looks at the pane. A reason already told stays
//! told until a console looks at the pane (or the approval is answered),
//! as the inbox keeps one entry; one muted or held back by the rate was not
//! told. Mutes (`/mute`) are kept here, saved with
//! the layout. Idle terminals are the server's (src/server/idle.rs);
//! features' posts are a console's own findings: that console runs the
//! command for them.

use std::collections::HashMap;
use std::time::Instant;

use crate::config::UiSettings;
use crate::notify::{Limiter, Mute, Mutes, Note, Reason};
use crate::runner::PaneEvent;

/// The pane an event is of, as a notification names it.
pub(super) struct Of<'a> {
    pub slot: usize,
    pub id: &'a str,
    pub title: &'a str,
    /// The agent that spawned it (a helper's finished turn is `spawned`).
    pub parent: Option<&'a str>,
    /// A console looks at it now.
    pub looked_at: bool,
}

pub(super) struct Notifier {
    /// `notify_command`, the types it runs for and its rate.
    ui: UiSettings,
    limiter: Limiter,
    pub(super) mutes: Mutes,
    /// By slot: reasons told and not yet seen.
    told: HashMap<usize, Vec<Reason>>,
}

impl Notifier {
    pub(super) fn new(ui: &UiSettings, mutes: Mutes) -> Self {
        Self {
            ui: ui.clone(),
            limiter: Limiter::default(),
            mutes,
            told: HashMap::new(),
        }
    }

    /// A runner event of pane `of`: the command to run for it, if any.
    pub(super) fn event(
        &mut self,
        of: &Of<'_>,
        event: &PaneEvent,
        now: Instant,
    ) -> Option<Vec<String>> {
        if let PaneEvent::PermissionSettled { request_id } = event {
            self.forget(
                of.slot,
                |r| matches!(r, Reason::Permission { request_id: id, .. } if id == request_id),
            );
            return None;
        }
        let reason = Reason::of(event, of.parent)?;
        if of.looked_at && !matches!(reason, Reason::Permission { .. }) {
            return None;
        }
        if self.told.get(&of.slot).is_some_and(|t| t.contains(&reason)) {
            return None;
        }
        let note = Note {
            kind: reason.kind(),
            pane: of.id.to_owned(),
            title: format!("hive: {}", of.title),
            body: reason.describe(),
        };
        // Only a note that went out is told: a muted or held-back one must
        // not keep the next (after `/unmute`, or once the rate allows) quiet.
        let argv = self.command_for(note, now)?;
        self.told.entry(of.slot).or_default().push(reason);
        Some(argv)
    }

    /// A console looks at pane `slot`: what was told of it is seen, but
    /// an approval, which waits until answered.
    pub(super) fn looked_at(&mut self, slot: usize) {
        self.forget(slot, |r| !matches!(r, Reason::Permission { .. }));
    }

    fn forget(&mut self, slot: usize, seen: impl Fn(&Reason) -> bool) {
        if let Some(told) = self.told.get_mut(&slot) {
            told.retain(|r| !seen(r));
        }
    }

    /// `note`'s command, unless muted, not asked for, or over the rate.
    fn command_for(&mut self, note: Note, now: Instant) -> Option<Vec<String>> {
        if self.mutes.silences(&note.pane, note.kind) {
            return None;
        }
        crate::notify::command_line(&self.ui, &mut self.limiter, note, now)
    }

    pub(super) fn mute(&mut self, change: &Mute) {
        self.mutes.apply(change);
    }
}

#[cfg(test)]
#[path = "notifier_tests.rs"]
mod tests;
