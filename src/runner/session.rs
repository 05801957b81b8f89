//! The runner's side of `/resume`, `/clear` and image attachments: starting
//! the agent again on another session (the recorder follows through
//! `PaneEvent::SessionSwitched`), and holding images for the next turn.

use super::{Chosen, PaneEvent, Runner, TurnState};
use crate::event::new_id;
use crate::image::Image;
use crate::provider::{DiagnosticLevel, SessionInfo};

impl Runner {
    pub(super) fn attach(&mut self, images: Vec<Image>) {
        if !self.capabilities.images {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent takes no images: the images were not sent",
            );
        }
        self.images = images;
    }

    /// Ends the agent and starts it again on another session (or a new
    /// one). A turn in flight would be lost: the app only asks while idle,
    /// and a late request is refused.
    pub(super) fn switch_session(&mut self, session: String, resume: Option<String>) {
        if self.turn.is_some() {
            return self.notice(
                DiagnosticLevel::Warn,
                "a turn is running: interrupt it before switching sessions",
            );
        }
        if let Some(p) = self.provider.take() {
            tokio::spawn(p.kill());
        }
        self.provider_rx = None;
        let resume = resume.filter(|_| self.capabilities.resume);
        self.spec.resume.clone_from(&resume);
        self.session_id = resume.clone().unwrap_or_else(|| new_id("session"));
        self.images.clear();
        self.emit(PaneEvent::SessionSwitched { session, resume });
        self.restore_choices();
        match self.start_provider() {
            Ok(()) => self.set_state(TurnState::Idle),
            Err(e) => {
                self.notice(DiagnosticLevel::Error, e.to_string());
                self.set_state(TurnState::Dead);
            }
        }
    }
}

impl Runner {
    /// The model and effort chosen for the session the recorder opened (or
    /// switched to) replace the configured ones for the agent's next start;
    /// the pane shows them.
    pub(super) fn restore_choices(&mut self) {
        let Some(chosen) = self.recorder.as_ref().and_then(|r| r.chosen()) else {
            return;
        };
        // The session's conversation is in that account's home (`/account`).
        if let Some(account) = chosen.account.clone() {
            self.use_account(&account);
        }
        let before = std::mem::replace(&mut self.chosen, chosen);
        let model = self
            .chosen
            .model
            .clone()
            .or_else(|| self.configured.model.clone());
        let effort = self
            .chosen
            .effort
            .clone()
            .or_else(|| self.configured.effort.clone());
        self.spec.agent.model.clone_from(&model);
        self.spec.agent.thinking.clone_from(&effort);
        // Told only where a choice is (or was) in play: a pane on its
        // configured settings shows them already.
        if (self.chosen.model.is_some() || before.model.is_some())
            && let Some(model) = model
        {
            self.emit(PaneEvent::Session(SessionInfo {
                model: Some(model),
                ..SessionInfo::default()
            }));
        }
        if (self.chosen.effort.is_some() || before.effort.is_some())
            && let Some(effort) = effort
        {
            self.emit(PaneEvent::Effort(effort));
        }
    }

    /// `/model`, `/effort` or `/account` took: the session keeps it.
    pub(super) fn keep_choice(&mut self, change: impl FnOnce(&mut Chosen)) {
        change(&mut self.chosen);
        if let Some(r) = self.recorder.as_mut() {
            r.chose(&self.chosen);
        }
    }
}

/// The user's message as the transcript and history show it: the images it
/// carried named below the text.
pub(super) fn with_image_names(text: &str, images: &[Image]) -> String {
    let mut shown = text.to_owned();
    for i in images {
        shown.push_str(&format!("\n[image: {}]", i.path.display()));
    }
    shown
}
