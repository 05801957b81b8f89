//! What `/mute` silenced: panes (by id) and types in every pane. The server
//! keeps it (it runs `notify_command` whether or not a console is attached,
//! and saves it with the layout, so a mute survives a detach and a
//! restart); each console gets it to silence its own bell and OSC
//! notifications and to mark muted panes' titles.

use crate::config::ReasonKind;
pub use crate::protocol::mutes::{Mute, Mutes};

impl Mutes {
    /// Whether a notification of `kind` for pane `id` stays silent.
    pub fn silences(&self, id: &str, kind: ReasonKind) -> bool {
        self.panes.contains(id) || self.kinds.contains(&kind)
    }

    pub fn apply(&mut self, change: &Mute) {
        match change {
            Mute::Pane { id, on: true } => {
                self.panes.insert(id.clone());
            }
            Mute::Pane { id, on: false } => {
                self.panes.remove(id);
            }
            Mute::Kind { kind, on: true } => {
                self.kinds.insert(*kind);
            }
            Mute::Kind { kind, on: false } => {
                self.kinds.remove(kind);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.panes.is_empty() && self.kinds.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_or_a_type_silences_and_unmuting_hears_again() {
        let mut m = Mutes::default();
        m.apply(&Mute::Pane {
            id: "api".into(),
            on: true,
        });
        m.apply(&Mute::Kind {
            kind: ReasonKind::Finished,
            on: true,
        });
        assert!(m.silences("api", ReasonKind::Permission));
        assert!(m.silences("web", ReasonKind::Finished));
        assert!(!m.silences("web", ReasonKind::Permission));
        m.apply(&Mute::Pane {
            id: "api".into(),
            on: false,
        });
        assert!(!m.silences("api", ReasonKind::Permission));
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(json, r#"{"kinds":["finished"]}"#);
        assert_eq!(
            serde_json::from_str::<Mutes>("{}").unwrap(),
            Mutes::default()
        );
    }
}
