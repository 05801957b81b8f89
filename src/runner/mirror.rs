//! One pane's update stream as the services beside the app see it: the
//! control hub (`hive ctl`) and the operations host (agents' `hive_*` tools)
//! both keep this mirror, so both read a pane's state, queue and turn the
//! same way and bind a message they sent to its turn by one rule.
//!
//! The rule: a sent message is bound to the turn of the first completed user
//! message that shows its text, exactly or followed by the names of images
//! attached to it (`session::with_image_names`); sends are matched in the
//! order they were made.
//!
//! (The rule for streaming an item's growing text to a reader is
//! `protocol::delta::TextSent`'s, one per reader.)

use std::collections::VecDeque;

use super::{PaneEvent, TurnState};
use crate::event::Origin;
use crate::provider::PermissionRequest;
use crate::upsert::{TurnEvent, UpsertKind, UpsertStatus};

/// A message sent to the pane, not bound to a turn yet; `K` is what the
/// sender knows it by (a reply channel, a message id).
#[derive(Debug)]
pub(crate) struct Sent<K> {
    pub key: K,
    text: String,
    /// Seen in the pane's queue.
    pub queued: bool,
    /// Then gone from it: drained (its turn starts next) or taken out in
    /// the console.
    pub(crate) left_queue: bool,
}

/// A pane as its updates tell it.
#[derive(Debug)]
pub(crate) struct PaneMirror<K> {
    pub state: TurnState,
    pub queue: Vec<String>,
    /// The running turn.
    pub turn: Option<String>,
    /// Turns ended since start.
    pub turns: u64,
    /// Approvals the agent waits for, oldest first, until answered (by any
    /// client) or the turn ends.
    pub approvals: Vec<PermissionRequest>,
    sends: VecDeque<Sent<K>>,
}

impl<K> Default for PaneMirror<K> {
    fn default() -> Self {
        Self {
            state: TurnState::Idle,
            queue: Vec::new(),
            turn: None,
            turns: 0,
            approvals: Vec::new(),
            sends: VecDeque::new(),
        }
    }
}

/// Whether `content` (a user message) is the message `text` was sent as.
fn shows(content: &str, text: &str) -> bool {
    content
        .strip_prefix(text)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("\n[image: "))
}

impl<K> PaneMirror<K> {
    /// Waiting for an approval: the runner's state says streaming, but
    /// nothing moves until someone answers.
    pub(crate) fn awaiting_approval(&self) -> bool {
        !self.approvals.is_empty() && self.state.is_busy()
    }

    /// The approval `id` asks for, or the oldest one.
    pub(crate) fn approval(&self, id: Option<&str>) -> Option<&PermissionRequest> {
        match id {
            Some(id) => self.approvals.iter().find(|r| r.request_id == id),
            None => self.approvals.first(),
        }
    }

    /// `text` was submitted to the pane's runner.
    pub(crate) fn sent(&mut self, text: String, key: K) {
        self.sends.push_back(Sent {
            key,
            text,
            queued: false,
            left_queue: false,
        });
    }

    /// Takes out the sends not bound yet that `pick` chooses.
    pub(crate) fn take_sends(&mut self, pick: impl Fn(&Sent<K>) -> bool) -> Vec<K> {
        let (taken, kept) = std::mem::take(&mut self.sends)
            .into_iter()
            .partition::<Vec<_>, _>(|s| pick(s));
        self.sends = kept.into();
        taken.into_iter().map(|s| s.key).collect()
    }

    /// Follows one event; a send the event binds to its turn comes back
    /// with the turn's id.
    pub(crate) fn observe(&mut self, event: &PaneEvent) -> Option<(K, String)> {
        match event {
            PaneEvent::State(s) => {
                self.state = *s;
                if *s == TurnState::Dead {
                    self.approvals.clear();
                }
            }
            PaneEvent::Permission(req) => self.approvals.push(req.clone()),
            PaneEvent::PermissionSettled { request_id } => {
                self.approvals.retain(|r| r.request_id != *request_id);
            }
            PaneEvent::Queue(q) => {
                for s in &mut self.sends {
                    let there = q.contains(&s.text);
                    s.left_queue |= s.queued && !there;
                    s.queued |= there;
                }
                self.queue.clone_from(q);
            }
            PaneEvent::Upsert(u) => {
                let UpsertKind::Message {
                    content,
                    origin: Origin::User,
                } = &u.kind
                else {
                    return None;
                };
                if u.status != UpsertStatus::Complete {
                    return None;
                }
                let n = self
                    .sends
                    .iter()
                    .position(|s| content.with_str(|c| shows(c, &s.text)))?;
                let sent = self.sends.remove(n)?;
                return Some((sent.key, u.turn_id.clone()));
            }
            PaneEvent::Turn(TurnEvent::TurnStarted { turn_id, .. }) => {
                self.turn = Some(turn_id.clone());
            }
            PaneEvent::Turn(t) => {
                if self.turn.as_deref() == Some(t.turn_id()) {
                    self.turn = None;
                }
                // An approval cannot outlive its turn.
                self.approvals.clear();
                self.turns += 1;
            }
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::shows;

    #[test]
    fn a_message_shows_its_text_alone_or_with_image_names() {
        assert!(shows("hi", "hi"));
        assert!(shows("hi\n[image: /a.png]", "hi"));
        assert!(!shows("hi there", "hi"));
        assert!(!shows("h", "hi"));
    }
}
