//! Keeping the conversation within the model's context window
//! (`context_window`, in tokens): before a step whose request would pass
//! three quarters of it, the outputs of older tool calls — the bulk of a
//! coding session — are cleared, the latest ones kept; if that is not
//! enough, the conversation before the current turn is replaced by the
//! model's summary of it. The pane says which.
//! Past that the running turn's newest outputs are cut too, each tool
//! output is capped to a quarter of the window as it arrives, and a
//! request the estimate still puts over the window is not sent (issue 46
//! item 6).
//! Tokens are estimated (4 bytes of JSON a token): servers count
//! differently, and the estimate only has to err early.

use tokio_util::sync::CancellationToken;

use super::step::{self, StepError};
use super::wire::ChatMessage;
use super::{Agent, done};
use crate::event::{ErrorInfo, Payload, Usage};
use crate::provider::{DiagnosticLevel, Sink};

/// Tool results kept whole, counted from the newest.
const KEEP_RECENT: usize = 2;
/// Outputs shorter than this are not worth clearing.
const MIN_CLEARED: usize = 200;
/// What a cleared output reads as.
pub(crate) const CLEARED: &str =
    "[cleared: an earlier tool output, to keep the conversation within the model's context window]";

/// What the model is asked for when the conversation is summarised.
pub(crate) const SUMMARY_REQUEST: &str = "The conversation is nearing your context window. \
Summarise it for yourself so you can continue the work: the user's goals and instructions, \
what was done (files changed, commands run and their results), what is left, and any \
facts you will need. Answer with the summary only.";

/// The summary as the start of the conversation that replaces the old one.
pub(crate) fn summary_messages(summary: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user(
            format!(
                "[The earlier conversation, summarised to fit the context window]\n\n{summary}"
            ),
            &[],
        ),
        ChatMessage::Assistant {
            content: Some("Understood; I will continue from this summary.".into()),
            tool_calls: Vec::new(),
        },
    ]
}

/// The tokens a request may reach before older outputs are cleared.
pub(crate) fn budget(window: u64) -> u64 {
    window / 4 * 3
}

/// One tool output as the conversation keeps it: at most a quarter of the
/// window (`window` tokens × 4 bytes / 4), its head kept and the cut said,
/// so that one big read cannot fill the window by itself.
pub(crate) fn cap_output(output: String, window: u64) -> String {
    let max = usize::try_from(window).unwrap_or(usize::MAX);
    if output.len() <= max {
        return output;
    }
    let whole = output.len();
    let mut s = output;
    cut_to(&mut s, max.saturating_sub(CUT_NOTE_ROOM), whole, window);
    s
}

/// Room left for the note a cut output ends with.
const CUT_NOTE_ROOM: usize = 160;

/// Cuts `s` (of `whole` bytes originally) to at most `keep` bytes, on a
/// character boundary, and says so.
fn cut_to(s: &mut String, keep: usize, whole: usize, window: u64) {
    let mut at = keep.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    s.truncate(at);
    s.push_str(&format!(
        "\n[output cut to {at} of {whole} bytes to fit the model's {window}-token context window; ask for less: a range, a narrower pattern]"
    ));
}

/// The running turn's newest tool outputs, cut from the newest back when
/// the request still passes the budget after clearing and summarising;
/// `None` when it fits or nothing could be cut.
pub(crate) fn cut_newest(
    messages: &mut [ChatMessage],
    system: u64,
    window: u64,
) -> Option<Compacted> {
    let before = system + estimate(messages);
    let over = before.checked_sub(budget(window)).filter(|&n| n > 0)?;
    // Bytes to lose, with room for each cut's note.
    let mut excess = usize::try_from(over.saturating_mul(4)).unwrap_or(usize::MAX);
    let mut cut = 0;
    for m in messages.iter_mut().rev() {
        if excess == 0 {
            break;
        }
        let ChatMessage::Tool { content, .. } = m else {
            continue;
        };
        let len = content.len();
        if len < MIN_CLEARED + CUT_NOTE_ROOM || content == CLEARED {
            continue;
        }
        let lose = (excess + CUT_NOTE_ROOM).min(len - MIN_CLEARED);
        cut_to(content, len - lose, len, window);
        excess = excess.saturating_sub(lose.saturating_sub(CUT_NOTE_ROOM));
        cut += 1;
    }
    (cut > 0).then(|| Compacted {
        cleared: cut,
        before,
        after: system + estimate(messages),
    })
}

/// The estimated tokens of these messages.
pub(crate) fn estimate(messages: &[ChatMessage]) -> u64 {
    let bytes: usize = messages
        .iter()
        .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
        .sum();
    (bytes / 4) as u64
}

/// What a compaction did, for the pane.
#[derive(Debug, PartialEq)]
pub(crate) struct Compacted {
    pub cleared: usize,
    pub before: u64,
    pub after: u64,
}

/// Clears older tool outputs of `messages` (the conversation, `system` the
/// prompt's tokens) when the request would pass 3/4 of `window`; `None`
/// when it fits or nothing could be cleared.
pub(crate) fn compact(messages: &mut [ChatMessage], system: u64, window: u64) -> Option<Compacted> {
    let before = system + estimate(messages);
    if before <= budget(window) {
        return None;
    }
    let tools: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, ChatMessage::Tool { .. }))
        .map(|(i, _)| i)
        .collect();
    let older = tools.len().saturating_sub(KEEP_RECENT);
    let mut cleared = 0;
    for &i in &tools[..older] {
        if let ChatMessage::Tool { content, .. } = &mut messages[i]
            && content.len() >= MIN_CLEARED
        {
            *content = CLEARED.to_owned();
            cleared += 1;
        }
    }
    (cleared > 0).then(|| Compacted {
        cleared,
        before,
        after: system + estimate(messages),
    })
}

impl Agent {
    /// Keeps the next request within the model's context window
    /// (`context_window`): older tool outputs are cleared first; if that is
    /// not enough the conversation before this turn is summarised, then
    /// this turn's newest outputs are cut. The pane says which. `Err` (the
    /// turn's error) when the request would still pass the window: it is
    /// not sent.
    pub(super) async fn fit(&mut self, cancel: &CancellationToken) -> Result<(), ErrorInfo> {
        let Some(window) = self.settings.context_window else {
            return Ok(());
        };
        let system = self.system_tokens();
        if let Some(c) = compact(&mut self.messages, system, window) {
            self.events.diagnostic(
                DiagnosticLevel::Info,
                format!(
                    "context: cleared {} earlier tool output(s), ~{} → ~{} tokens of the {window}-token window",
                    c.cleared, c.before, c.after
                ),
            );
        }
        if system + estimate(&self.messages) > budget(window) {
            // The current turn (from its user message on) stays whole.
            let start = self
                .messages
                .iter()
                .rposition(|m| matches!(m, ChatMessage::User { .. }))
                .unwrap_or(0);
            self.summarise(start, cancel).await;
        }
        if let Some(c) = cut_newest(&mut self.messages, system, window) {
            self.events.diagnostic(
                DiagnosticLevel::Info,
                format!(
                    "context: cut {} of this turn's newest tool output(s), ~{} → ~{} tokens of the {window}-token window",
                    c.cleared, c.before, c.after
                ),
            );
        }
        let need = system + estimate(&self.messages);
        if need > window {
            return Err(ErrorInfo::new(
                "context_window",
                format!(
                    "the next request (~{need} tokens) would pass the model's {window}-token context window even after compaction, so it was not sent; raise `context_window` if the model has more, or start a new conversation"
                ),
            ));
        }
        Ok(())
    }

    /// What a request carries besides the conversation, in (estimated)
    /// tokens: the system prompt and the tools' definitions.
    pub(super) fn system_tokens(&self) -> u64 {
        let prompt = self.settings.system_prompt.as_ref().map_or(0, String::len);
        let tools = serde_json::to_string(&self.tools).map_or(0, |s| s.len());
        ((prompt + tools) / 4) as u64
    }

    /// A tool's output as the conversation keeps it: capped against the
    /// window when there is one.
    pub(super) fn kept_output(&self, output: String) -> String {
        match self.settings.context_window {
            Some(window) => cap_output(output, window),
            None => output,
        }
    }

    /// `/compact`: the whole conversation summarised now, as a turn of its
    /// own; its end carries the context the summary leaves, so the gauge
    /// shows it at once.
    pub(super) async fn compact_now(&mut self, turn_id: &str, cancel: &CancellationToken) {
        if self.messages.is_empty() {
            self.events
                .diagnostic(DiagnosticLevel::Info, "context: nothing to compact yet");
        } else {
            self.summarise(self.messages.len(), cancel).await;
        }
        if cancel.is_cancelled() {
            self.emit(turn_id, Payload::interrupted(None));
        } else {
            let usage = Usage {
                context_tokens: Some(self.system_tokens() + estimate(&self.messages)),
                context_window: self.settings.context_window,
                ..Usage::default()
            };
            self.emit(turn_id, done(Some("stop".into()), Some(usage)));
        }
    }

    /// Replaces the first `start` messages by the model's summary of them
    /// (a request of its own, shown nowhere); a summary that would not
    /// make the conversation smaller is dropped and said so.
    async fn summarise(&mut self, start: usize, cancel: &CancellationToken) {
        if start == 0 {
            return;
        }
        let system = self.system_tokens();
        let before = system + estimate(&self.messages);
        let Some(summary) = self.summary_of(start, cancel).await else {
            return;
        };
        let mut kept = summary_messages(&summary);
        kept.extend(self.messages[start..].iter().cloned());
        let after = system + estimate(&kept);
        let window = self
            .settings
            .context_window
            .map(|w| format!(" of the {w}-token window"))
            .unwrap_or_default();
        if after >= before {
            self.events.diagnostic(
                DiagnosticLevel::Warn,
                format!(
                    "context: a summary of {start} earlier message(s) would save nothing (~{before} → ~{after} tokens{window}); the conversation is kept as it was"
                ),
            );
            return;
        }
        self.messages = kept;
        self.events.diagnostic(
            DiagnosticLevel::Info,
            format!(
                "context: summarised {start} earlier message(s), ~{before} → ~{after} tokens{window}"
            ),
        );
    }

    /// The model's summary of the first `start` messages; `None` when the
    /// user interrupted or it failed (which the pane is told).
    async fn summary_of(&mut self, start: usize, cancel: &CancellationToken) -> Option<String> {
        let mut request = self.request_messages();
        request.truncate(request.len() - (self.messages.len() - start));
        request.push(ChatMessage::user(SUMMARY_REQUEST.into(), &[]));
        // Its events go nowhere: a closed sink never waits.
        let (quiet, _) = crate::provider::channel::channel();
        let ctx = step::StepCtx {
            events: &quiet,
            turn_id: "compact",
            session_id: &self.session,
            cancel,
        };
        let req = step::StepRequest {
            client: &self.client,
            settings: &self.settings,
            messages: &request,
            tools: &[],
        };
        match step::run(&req, &ctx).await {
            Ok(out) if !out.content.trim().is_empty() => Some(out.content),
            Err(StepError::Cancelled) => None,
            Ok(_) | Err(StepError::Fatal(_)) => {
                self.events.diagnostic(
                    DiagnosticLevel::Warn,
                    "context: the conversation nears the model's window and could not be summarised",
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(n: usize, len: usize) -> ChatMessage {
        ChatMessage::Tool {
            tool_call_id: format!("c{n}"),
            content: "x".repeat(len),
        }
    }

    #[test]
    fn older_big_outputs_are_cleared_past_three_quarters_of_the_window() {
        let mut m = vec![tool(1, 4000), tool(2, 100), tool(3, 4000), tool(4, 4000)];
        // Fits: nothing happens.
        assert_eq!(compact(&mut m, 0, 1_000_000), None);
        let done = compact(&mut m, 0, 2000).unwrap();
        // The small one and the two newest stay.
        assert_eq!(done.cleared, 1);
        assert!(done.after < done.before);
        assert!(matches!(&m[0], ChatMessage::Tool { content, .. } if content == CLEARED));
        assert!(matches!(&m[1], ChatMessage::Tool { content, .. } if content.len() == 100));
        assert!(matches!(&m[3], ChatMessage::Tool { content, .. } if content.len() == 4000));
        // Nothing more to clear.
        assert_eq!(compact(&mut m, 0, 2000), None);
    }

    #[test]
    fn a_big_output_is_capped_to_a_quarter_of_the_window() {
        let small = "é".repeat(100);
        assert_eq!(cap_output(small.clone(), 1000), small);
        let capped = cap_output("é".repeat(5000), 1000);
        assert!(capped.len() <= 1000, "{}", capped.len());
        assert!(capped.contains("[output cut to") && capped.contains("of 10000 bytes"));
    }

    #[test]
    fn the_newest_outputs_are_cut_when_clearing_the_older_is_not_enough() {
        // Three big outputs of the running turn: clearing keeps the two
        // newest whole, which alone pass three quarters of the window.
        let mut m = vec![tool(1, 4000), tool(2, 4000), tool(3, 4000)];
        assert!(compact(&mut m, 0, 2400).is_some());
        assert!(estimate(&m) > budget(2400));
        let done = cut_newest(&mut m, 0, 2400).unwrap();
        assert!(done.after <= budget(2400), "{done:?}");
        assert!(
            matches!(&m[2], ChatMessage::Tool { content, .. } if content.contains("[output cut to"))
        );
        // Fits now: nothing more is cut.
        assert_eq!(cut_newest(&mut m, 0, 2400), None);
    }
}
