//! `[ui] bell` / `osc9` / `osc777` / `notify_on`: `true` for every inbox
//! reason, or a list of the reasons that should ring or notify
//! (`["permission", "failed"]`).

use serde::{Deserialize, Serialize};

pub use crate::protocol::mutes::ReasonKind;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NotifyOn {
    All(bool),
    Reasons(Vec<ReasonKind>),
}

impl Default for NotifyOn {
    fn default() -> Self {
        NotifyOn::All(false)
    }
}

/// `notify_command` runs when an agent needs you or is done: approvals,
/// failed and finished turns, helpers done.
pub(crate) fn command_default() -> NotifyOn {
    NotifyOn::Reasons(vec![
        ReasonKind::Permission,
        ReasonKind::Failed,
        ReasonKind::Finished,
        ReasonKind::Spawned,
    ])
}

pub(crate) fn per_minute_default() -> u32 {
    6
}

impl ReasonKind {
    /// The type's name in config, `/mute` and `{type}`.
    pub fn name(self) -> &'static str {
        match self {
            ReasonKind::Permission => "permission",
            ReasonKind::Failed => "failed",
            ReasonKind::Finished => "finished",
            ReasonKind::Bell => "bell",
            ReasonKind::Idle => "idle",
            ReasonKind::Exited => "exited",
            ReasonKind::Stalled => "stalled",
            ReasonKind::Posted => "posted",
            ReasonKind::Spawned => "spawned",
        }
    }

    pub const ALL: [ReasonKind; 9] = [
        ReasonKind::Permission,
        ReasonKind::Failed,
        ReasonKind::Finished,
        ReasonKind::Bell,
        ReasonKind::Idle,
        ReasonKind::Exited,
        ReasonKind::Stalled,
        ReasonKind::Posted,
        ReasonKind::Spawned,
    ];

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }
}

impl NotifyOn {
    pub fn wants(&self, kind: ReasonKind) -> bool {
        match self {
            NotifyOn::All(on) => *on,
            NotifyOn::Reasons(list) => list.contains(&kind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Ui {
        bell: NotifyOn,
    }

    #[test]
    fn a_bool_or_a_list_of_reasons() {
        let all: Ui = toml::from_str("bell = true").unwrap();
        assert!(all.bell.wants(ReasonKind::Finished));
        let some: Ui = toml::from_str(r#"bell = ["permission", "failed"]"#).unwrap();
        assert!(some.bell.wants(ReasonKind::Permission));
        assert!(!some.bell.wants(ReasonKind::Finished));
        assert!(toml::from_str::<Ui>(r#"bell = ["nope"]"#).is_err());
    }
}
