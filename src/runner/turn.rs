//! What the runner does with the app's commands: sending turns, the queue,
//! steering and interrupting (the seed 000 queue/steer/interrupt matrix),
//! and moving on to the next queued message when a turn ends.

use tokio::time::Instant;

use super::{PaneEvent, QueueEdit, Runner, RunnerCommand, SubmitMode, TurnState};
use crate::config::QueueMode;
use crate::event::{FinalItem, ItemType, Origin, Payload, StreamEvent, new_id};
use crate::provider::{DiagnosticLevel, ProviderCommand, ProviderHandle, SessionInfo};

impl Runner {
    pub(super) fn command(&mut self, cmd: RunnerCommand) {
        // The user did something (typed into a terminal pane, too): the
        // process figures may move again.
        self.procs.wake();
        match cmd {
            RunnerCommand::Submit { text, mode } => self.submit(text, mode),
            RunnerCommand::Interrupt => self.user_interrupt(),
            RunnerCommand::InterruptFrom(who) => {
                if self.turn.is_some() && self.capabilities.interrupt {
                    self.notice(DiagnosticLevel::Info, format!("interrupted by {who}"));
                }
                if self.turn.is_some() {
                    self.interrupt();
                }
            }
            RunnerCommand::Queue(edit) => self.edit_queue(edit),
            RunnerCommand::DrainQueue => {
                if self.state == TurnState::Idle {
                    self.send_next_held();
                }
            }
            RunnerCommand::Permission {
                request_id,
                decision,
                by,
            } => self.answer(request_id, decision, &by),
            RunnerCommand::Restart => self.restart(),
            RunnerCommand::Budget(answer) => self.answer_budget(answer),
            RunnerCommand::Input(bytes) => {
                self.to_provider(ProviderCommand::Input(bytes));
            }
            RunnerCommand::Resize { cols, rows } => {
                self.to_provider(ProviderCommand::Resize { cols, rows });
            }
            RunnerCommand::Focused(focused) => self.focused(focused),
            RunnerCommand::TermView { scroll, seen, hold } => {
                if let Some(t) = self.terminal.as_mut() {
                    let update = t.set_view(scroll, seen, hold);
                    self.emit(PaneEvent::Terminal(Box::new(update)));
                }
            }
            RunnerCommand::CopyTerminal { from, to } => {
                if let Some(t) = self.terminal.as_ref() {
                    let text = t.text(from, to);
                    self.emit(PaneEvent::TerminalText(text));
                }
            }
            RunnerCommand::SetModel(model) => self.set_model(model),
            RunnerCommand::SetEffort(effort) => self.set_effort(effort),
            RunnerCommand::SwitchAccount(name) => self.ask_account(name),
            RunnerCommand::Attach(images) => self.attach(images),
            RunnerCommand::SwitchSession { session, resume } => {
                self.switch_session(session, resume)
            }
            RunnerCommand::Shutdown => {}
        }
    }

    /// Hands the new model to the provider and keeps it for restarts; the
    /// pane's title follows (the next turn's `response_start` confirms it).
    pub(super) fn set_model(&mut self, model: String) {
        if !self.capabilities.set_model {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent cannot switch models; the model stays as it is",
            );
        }
        self.spec.agent.model = Some(model.clone());
        self.keep_choice(|c| c.model = Some(model.clone()));
        self.to_provider(ProviderCommand::SetModel {
            model: model.clone(),
        });
        self.emit(PaneEvent::Session(SessionInfo {
            model: Some(model.clone()),
            ..SessionInfo::default()
        }));
        self.notice(DiagnosticLevel::Info, format!("model set to {model}"));
    }

    pub(super) fn set_effort(&mut self, effort: String) {
        if !self.capabilities.set_effort {
            return self.notice(
                DiagnosticLevel::Warn,
                "this agent has no effort setting hive can change",
            );
        }
        let sent = self.to_provider(ProviderCommand::SetEffort {
            effort: effort.clone(),
        });
        // A provider that confirms says whether the agent took it (a refused
        // one is neither shown nor kept); without an agent running it is
        // kept for the next start.
        if !self.capabilities.confirms_effort || !sent {
            self.take_effort(effort.clone());
            self.notice(DiagnosticLevel::Info, format!("effort set to {effort}"));
        }
    }

    /// The effort is the pane's: used on the agent's next start, kept with
    /// the session, shown.
    pub(super) fn take_effort(&mut self, effort: String) {
        self.spec.agent.thinking = Some(effort.clone());
        self.keep_choice(|c| c.effort = Some(effort.clone()));
        self.emit(PaneEvent::Effort(effort));
    }

    pub(super) fn to_provider(&self, cmd: ProviderCommand) -> bool {
        self.provider.as_ref().is_some_and(|p| p.send(cmd))
    }

    pub(super) fn submit(&mut self, text: String, mode: SubmitMode) {
        if text.trim().is_empty() {
            return;
        }
        if self.state == TurnState::Dead {
            self.queue.push_back(text);
            self.queue_changed();
            self.notice(
                DiagnosticLevel::Warn,
                "the agent is not running: message queued; restart the pane to send it",
            );
            return;
        }
        if self.holding() && !self.state.is_busy() {
            // A limit or a spent budget holds the queue: it waits there.
            self.queue.push_back(text);
            self.queue_changed();
            return;
        }
        if !self.state.is_busy() {
            self.start_turn(text);
            return;
        }
        let mode = match (mode, self.queue_mode) {
            (SubmitMode::Auto, QueueMode::Queue) => SubmitMode::Queue,
            (SubmitMode::Auto, QueueMode::Interrupt) => SubmitMode::Steer,
            (m, _) => m,
        };
        match mode {
            SubmitMode::Steer => self.steer(text),
            _ => {
                self.queue.push_back(text);
                self.queue_changed();
            }
        }
    }

    /// seed 000 matrix, steer column by column.
    pub(super) fn steer(&mut self, text: String) {
        if self.capabilities.queue_while_streaming {
            let turn_id = self.turn.clone().unwrap_or_default();
            if self.to_provider(ProviderCommand::Steer { text: text.clone() }) {
                self.user_message(&turn_id, &text);
                return;
            }
        }
        if self.capabilities.interrupt {
            if let Some(previous) = self.steer_next.replace(text) {
                self.queue.push_front(previous);
                self.queue_changed();
            }
            self.interrupt();
            return;
        }
        self.queue.push_back(text);
        self.queue_changed();
        self.notice(
            DiagnosticLevel::Info,
            "this agent cannot take a message mid-turn or be interrupted: queued for after the turn",
        );
    }

    /// Esc: interrupts the turn and holds the queue behind it; between
    /// turns it clears a queue held so, or lets a limit's hold go.
    fn user_interrupt(&mut self) {
        if self.turn.is_some() {
            let stops = self.capabilities.interrupt;
            self.interrupt();
            if stops {
                self.hold_for_user();
            }
        } else if self.held_by_user() {
            self.clear_held_queue();
        } else {
            self.interrupt();
        }
    }

    pub(super) fn interrupt(&mut self) {
        if self.turn.is_none() {
            // Between turns it lets a held queue go: the next message
            // sends it.
            self.cancel_hold();
            return;
        }
        if !self.capabilities.interrupt {
            self.notice(
                DiagnosticLevel::Info,
                "this agent cannot be interrupted; the turn continues",
            );
            return;
        }
        if self.state == TurnState::Cancelling {
            return;
        }
        self.to_provider(ProviderCommand::Cancel);
        self.set_state(TurnState::Cancelling);
        self.cancel_deadline = Instant::now().checked_add(self.interrupt_timeout);
    }

    /// The agent ignored the interrupt (the runner's own deadline passed).
    pub(super) fn interrupt_expired(&mut self) {
        self.cancel_deadline = None;
        if self.turn.is_none() {
            return;
        }
        self.replace_agent("the agent did not stop when interrupted");
    }

    /// The one escalation path: end the turn in flight as cancelled, end the
    /// agent's process group and start it again on the same session.
    pub(super) fn replace_agent(&mut self, why: &str) {
        self.cancel_deadline = None;
        let outs = match self.turn.clone() {
            Some(turn_id) => self.processor.cancel_turn((&turn_id, &self.turn_session)),
            None => Vec::new(),
        };
        if let Some(p) = self.provider.take() {
            tokio::spawn(p.kill());
        }
        self.provider_rx = None;
        self.notice(
            DiagnosticLevel::Warn,
            format!("{why}: hive ended its process and started it again on the same session"),
        );
        if let Err(e) = self.start_provider() {
            self.notice(DiagnosticLevel::Error, e.to_string());
        }
        self.forward(outs);
    }

    pub(super) fn restart(&mut self) {
        if self.provider.as_ref().is_some_and(ProviderHandle::is_alive) {
            // A live agent is restarted only while a turn runs (it may hang).
            if self.turn.is_some() {
                self.replace_agent("restarted on request");
            }
            return;
        }
        match self.start_provider() {
            Ok(()) => {
                self.set_state(TurnState::Idle);
                self.notice(DiagnosticLevel::Info, "agent restarted");
                self.drain();
            }
            Err(e) => self.notice(DiagnosticLevel::Error, e.to_string()),
        }
    }

    pub(super) fn edit_queue(&mut self, edit: QueueEdit) {
        // The user touched the queue: whatever is sent next is shown anew.
        self.undelivered = None;
        self.kept_by_agent = None;
        let len = self.queue.len();
        match edit {
            QueueEdit::Remove(i) if i < len => {
                self.queue.remove(i);
            }
            QueueEdit::Replace(i, text) if i < len => self.queue[i] = text,
            QueueEdit::Move { from, to } if from < len && to < len => {
                if let Some(item) = self.queue.remove(from) {
                    self.queue.insert(to, item);
                }
            }
            QueueEdit::PopLast => {
                if let Some(text) = self.queue.pop_back() {
                    self.emit(PaneEvent::Recalled(text));
                }
            }
            QueueEdit::Clear => self.queue.clear(),
            _ => return,
        }
        self.queue_changed();
    }

    pub(super) fn start_turn(&mut self, text: String) {
        self.begin_turn(text, true, None);
    }

    /// `echo`: show (and record) the user's message; not for a message that
    /// already is, see `undelivered`. `sent`: what the agent is given
    /// instead of `text` (see `kept_by_agent`).
    pub(super) fn begin_turn(&mut self, text: String, echo: bool, sent: Option<String>) {
        if !self.wake_from_idle() {
            // Not lost: it waits in the queue for a restart.
            self.queue.push_front(text);
            return self.queue_changed();
        }
        let turn_id = new_id("turn");
        self.turn = Some(turn_id.clone());
        self.turn_session.clone_from(&self.session_id);
        self.last_error = None;
        self.last_output = Some(Instant::now());
        self.turn_text = Some(text.clone());
        self.set_state(TurnState::Starting);
        let images = std::mem::take(&mut self.images);
        if echo {
            self.user_message(&turn_id, &super::session::with_image_names(&text, &images));
        }
        if !images.is_empty() {
            self.to_provider(ProviderCommand::Attach(images));
        }
        let text = sent.unwrap_or(text);
        if !self.to_provider(ProviderCommand::Send { turn_id, text }) {
            self.provider_gone(None, "the agent is not running".into());
        }
    }

    /// The user's own message, as a `message` item with origin `user`.
    pub(super) fn user_message(&mut self, turn_id: &str, text: &str) {
        let item_id = new_id("user");
        let now = Instant::now();
        let start = StreamEvent::new(
            turn_id,
            &self.turn_session,
            Payload::ItemStart {
                item_id: item_id.clone(),
                item_type: ItemType::Message,
                initial_content: None,
                name: None,
                call_id: None,
            },
        );
        let done = StreamEvent::new(
            turn_id,
            &self.turn_session,
            Payload::ItemDone {
                item_id,
                final_item: FinalItem::Message {
                    content: text.to_owned(),
                    origin: Origin::User,
                },
            },
        );
        let mut outs = self.processor.process(&start, now);
        outs.extend(self.processor.process(&done, now));
        self.forward(outs);
    }

    pub(super) fn end_turn(&mut self) {
        self.last_output = None;
        if self.stalled {
            self.stalled = false;
            self.emit(PaneEvent::Stalled(None));
        }
        self.turn = None;
        self.turn_text = None;
        self.cancel_deadline = None;
        if self.provider.is_none() {
            self.set_state(TurnState::Dead);
            return;
        }
        if self.switch_pending_account() {
            // The queue goes on when the agent is back under the account.
            return;
        }
        self.set_state(TurnState::Idle);
        self.drain();
    }

    pub(super) fn drain(&mut self) {
        // An agent stopped for idling starts again for the next message.
        let startable = self.provider.is_some() || self.idle.stopped;
        if self.turn.is_some() || !startable || self.holding() {
            return;
        }
        if let Some(text) = self.steer_next.take() {
            self.start_turn(text);
        } else if self.held_by_user() {
            // Waits for the user's Enter or Esc.
        } else if let Some(text) = self.queue.pop_front() {
            self.queue_changed();
            let again = self.undelivered.take().is_some_and(|u| u == text);
            let kept = self.kept_by_agent.take().is_some_and(|k| k == text);
            let sent = (again && kept).then(|| super::hold::GO_ON.to_owned());
            self.begin_turn(text, !again, sent);
        }
    }
}
