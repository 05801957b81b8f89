//! Keeping the conversation within the model's context window
//! (`context_window`, in tokens): before a step whose request would pass
//! three quarters of it, the outputs of older tool calls — the bulk of a
//! coding session — are cleared, the latest ones kept; if that is not
//! enough, the conversation before the current turn is replaced by the
//! model's summary of it. The pane says which.
//! Tokens are estimated (4 bytes of JSON a token): servers count
//! differently, and the estimate only has to err early.

use super::wire::ChatMessage;

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
    if before <= window / 4 * 3 {
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
}
