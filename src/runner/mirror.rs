//! How a door that sends messages to a pane learns which turn answers
//! each: the control hub (`hive ctl send`) and the operations host (an
//! agent's `agent.send`) bind their sends by one rule. (A pane's state,
//! queue, turn and approvals are the registry's: `crate::panes`.)
//!
//! The rule: a sent message is bound to the turn of the first completed user
//! message that shows its text, exactly or followed by the names of images
//! attached to it (`session::with_image_names`); sends are matched in the
//! order they were made.
//!
//! (The rule for streaming an item's growing text to a reader is
//! `protocol::delta::TextSent`'s, one per reader.)

use std::collections::VecDeque;

use super::PaneEvent;
use crate::event::Origin;
use crate::upsert::{UpsertKind, UpsertStatus};

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

/// The messages a door sent to one pane and not yet bound to a turn.
#[derive(Debug)]
pub(crate) struct Sends<K> {
    sends: VecDeque<Sent<K>>,
}

impl<K> Default for Sends<K> {
    fn default() -> Self {
        Self {
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

impl<K> Sends<K> {
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
    pub(crate) fn take(&mut self, pick: impl Fn(&Sent<K>) -> bool) -> Vec<K> {
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
            PaneEvent::Queue(q) => {
                for s in &mut self.sends {
                    let there = q.contains(&s.text);
                    s.left_queue |= s.queued && !there;
                    s.queued |= there;
                }
                None
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
                Some((sent.key, u.turn_id.clone()))
            }
            _ => None,
        }
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
