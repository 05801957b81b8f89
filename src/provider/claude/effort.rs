//! `/effort` for Claude Code (issue 34 item 2). Its stdin protocol has no
//! effort request: `set_max_thinking_tokens` changes the thinking budget,
//! not the `effort` a request carries. A level (`low` … `max`) is Claude
//! Code's `--effort` flag, taken at start; so the process starts again on
//! its session with the new flag once no turn runs (a conversation not yet
//! begun starts fresh). A budget (a number, `off`) still changes live.

use super::*;

impl Session {
    pub(super) async fn set_effort(&mut self, effort: String) -> std::io::Result<()> {
        self.agent.thinking = Some(effort.clone());
        if let Some(r) = self.resuming.as_mut() {
            r.agent.thinking = Some(effort.clone());
        }
        match Thinking::parse(&effort) {
            Thinking::Budget(tokens) => {
                let id = self.next_id("thinking");
                self.write(&control::set_max_thinking_tokens(&id, tokens))
                    .await?;
                self.note(format!("thinking budget set to {tokens} tokens"));
            }
            Thinking::Effort(level) => {
                self.respawn = true;
                let when = if self.translator.has_turn() {
                    "once this turn ends"
                } else {
                    "now"
                };
                self.note(format!(
                    "effort set to {level}: Claude Code takes it only at start (--effort), so it starts again on its session {when}"
                ));
            }
        }
        self.emit(ProviderEvent::EffortTaken(effort));
        Ok(())
    }

    fn note(&self, message: String) {
        self.emit(ProviderEvent::Diagnostic {
            level: DiagnosticLevel::Info,
            message,
        });
    }

    /// Ends the process and starts it again with the agent as it now is,
    /// on the same Claude session. False: it could not be started.
    pub(super) async fn respawn(&mut self) -> bool {
        self.respawn = false;
        self.process.terminate(KILL_GRACE).await;
        let resume = self.translator.resume_handle().map(str::to_owned);
        let cmd = command_spec(&self.agent, resume.as_deref());
        let (process, stdout) = match AgentProcess::spawn(&cmd, &self.events) {
            Ok(p) => p,
            Err(e) => {
                self.emit(ProviderEvent::Diagnostic {
                    level: DiagnosticLevel::Error,
                    message: format!("Claude Code could not be started again: {e}"),
                });
                return false;
            }
        };
        self.process = process;
        self.stdout = stdout;
        self.translator = Translator::new(resume.as_deref());
        self.cancel_deadline = None;
        self.permissions.clear();
        // The same probation as any resume: a conversation Claude no longer
        // has falls back to a new session.
        self.resuming = resume.map(|id| Resuming {
            agent: self.agent.clone(),
            id,
            stale: false,
            sent: Vec::new(),
        });
        true
    }
}
