//! The runner's side of the agent: starting and replacing its provider,
//! turning what it says into pane events, and failing the turn in flight
//! when its process ends.

use tokio::time::Instant;

use super::{PaneEvent, Runner, TurnState};
use crate::provider::{DiagnosticLevel, EventReceiver, ProviderError, ProviderEvent};
use crate::upsert::{Output, TurnEvent};

impl Runner {
    pub(super) fn start_provider(&mut self) -> Result<(), ProviderError> {
        self.spec
            .agent
            .check_cwd()
            .map_err(|message| ProviderError::config(&self.spec.agent.id, message))?;
        let (tx, rx) = crate::provider::channel::channel();
        self.read_pace = self
            .live_every()
            .map(crate::provider::channel::ReadPace::new);
        let tx = tx.paced(self.read_pace.clone());
        let handle = self.factory.spawn(self.spec.clone(), tx)?;
        self.terminal = handle.terminal.clone().map(super::screen::TermOwner::new);
        let terminal = self.terminal.as_mut().map(|t| Box::new(t.update()));
        self.emit(PaneEvent::Attached {
            capabilities: self.capabilities,
            terminal,
        });
        self.provider = Some(handle);
        self.provider_rx = Some(rx);
        self.idle.stopped = false;
        self.idle.arm();
        Ok(())
    }

    pub(super) fn provider_event(&mut self, ev: ProviderEvent) {
        self.activity();
        match ev {
            ProviderEvent::Stream(mut ev) => {
                if self.turn.as_deref() != Some(ev.turn_id.as_str()) {
                    tracing::debug!(turn = %ev.turn_id, "event for a turn no longer running dropped");
                    return;
                }
                if ev.session_id != self.turn_session {
                    ev.session_id.clone_from(&self.turn_session);
                }
                let outs = self.processor.process(&ev, Instant::now());
                self.forward(outs);
                self.schedule_live();
            }
            ProviderEvent::Session(info) => {
                if let Some(h) = &info.resume_handle {
                    self.spec.resume = Some(h.clone());
                    self.session_id = h.clone();
                }
                if !info.commands.is_empty() {
                    self.meter.compacts = info
                        .commands
                        .iter()
                        .any(|c| c.trim_start_matches('/') == "compact");
                }
                self.emit(PaneEvent::Session(info));
            }
            ProviderEvent::Permission(req) => self.permission(req),
            ProviderEvent::Diagnostic { level, message } => self.notice(level, message),
            ProviderEvent::Exited { code, message } => self.provider_gone(code, message),
            ProviderEvent::Unresponsive { reason } => self.replace_agent(&reason),
            ProviderEvent::TerminalUpdated => {
                if let Some(t) = self.terminal.as_mut() {
                    let update = t.update();
                    self.emit(PaneEvent::Terminal(Box::new(update)));
                }
            }
            ProviderEvent::Bell => self.emit(PaneEvent::Bell),
            ProviderEvent::Models(list) => self.emit(PaneEvent::Models(list)),
            ProviderEvent::EffortTaken(effort) => self.take_effort(effort),
        }
    }

    pub(super) fn forward(&mut self, outs: Vec<Output>) {
        for out in outs {
            match out {
                Output::Upsert(u) => self.emit(PaneEvent::Upsert(u)),
                Output::Turn(mut t) => {
                    let warnings = self.account(&mut t);
                    let terminal = t.is_terminal();
                    if let TurnEvent::TurnError { error_message, .. } = &t {
                        self.last_error = Some(error_message.clone());
                    }
                    let limited = self.limit_hit(&t);
                    if matches!(t, TurnEvent::TurnStarted { .. })
                        && self.state == TurnState::Starting
                    {
                        self.set_state(TurnState::Streaming);
                    }
                    self.emit(PaneEvent::Turn(t));
                    for text in warnings {
                        self.notice(crate::provider::DiagnosticLevel::Warn, text);
                    }
                    if let Some(held) = limited {
                        if self.next_account_on_limit(held.at) {
                            // Sent again at once under the next account.
                            self.requeue_failed(held.hold.resend);
                        } else {
                            self.hold_queue(held);
                        }
                    }
                    // A budget just spent shows its card.
                    self.publish_hold();
                    if terminal {
                        self.end_turn();
                    }
                }
            }
        }
    }

    /// The agent said something: a stall (if any) is over.
    pub(super) fn activity(&mut self) {
        if self.turn.is_some() {
            self.last_output = Some(Instant::now());
        }
        if self.stalled {
            self.stalled = false;
            self.emit(PaneEvent::Stalled(None));
        }
    }

    pub(super) fn provider_gone(&mut self, code: Option<i32>, message: String) {
        self.provider = None;
        self.provider_rx = None;
        self.cancel_deadline = None;
        if let Some(steer) = self.steer_next.take() {
            self.queue.push_front(steer);
            self.queue_changed();
        }
        let mut detail = match code {
            Some(c) if !message.contains(&format!("status {c}")) => {
                format!("exit status {c}: {message}")
            }
            _ => message,
        };
        // A message the agent never started on is not lost: it goes back to
        // the front of the queue (a dying agent's last turn may have drained
        // it a moment before the exit was known).
        if self.state == TurnState::Starting
            && let Some(text) = self.turn_text.take()
        {
            self.undelivered = Some(text.clone());
            self.queue.push_front(text);
            self.queue_changed();
            detail.push_str("\n(the message was not delivered; it is back in the queue)");
        }
        if let Some(turn_id) = self.turn.clone() {
            let outs =
                self.processor
                    .fail_turn((&turn_id, &self.turn_session), "agent_exited", &detail);
            self.forward(outs);
        }
        self.set_state(TurnState::Dead);
        // The turn's error already says it (the provider's own report, or
        // the one just made): one error line per crash.
        let told = self
            .last_error
            .as_ref()
            .zip(detail.lines().next().filter(|l| !l.trim().is_empty()))
            .is_some_and(|(e, first)| e.contains(first));
        if !told {
            self.notice(DiagnosticLevel::Error, format!("agent stopped: {detail}"));
        }
    }
}

pub(super) async fn recv_opt(rx: &mut Option<EventReceiver>) -> Option<ProviderEvent> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}
