//! The compare view acts (issue 31): `t` takes the selected answer — its
//! pane's worktree is merged into the main checkout (after a `y`) — and
//! then offers to reset the other runs' worktrees to the main checkout, so
//! the answers not taken are cleaned up in one step; `d` marks the words
//! each answer has that the selected one lacks. Git runs in the worktree
//! service; this file holds the keys and the steps.

use crossterm::event::{KeyCode, KeyEvent};
use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use super::overlay::Take;
use super::state::App;
use crate::protocol::git::{BringMode, WorktreeRequest};

impl App {
    /// Keys of the compare view's actions; true when the key was one.
    pub(super) fn take_key(&mut self, ev: KeyEvent) -> bool {
        let yes = matches!(ev.code, KeyCode::Char('y' | 'Y') | KeyCode::Enter);
        match self.fanout.take.clone() {
            Some(Take::Confirm(pane)) => {
                if yes {
                    self.fanout.take = Some(Take::Merging(pane));
                    let message = self.suggested_message(pane);
                    self.outbox.git(WorktreeRequest::Bring {
                        pane,
                        mode: BringMode::Merge,
                        message,
                        repos: Vec::new(),
                    });
                } else {
                    self.fanout.take = None;
                }
                true
            }
            Some(Take::ResetOthers(others)) => {
                let text = if yes {
                    for &pane in &others {
                        self.outbox.git(WorktreeRequest::Reset { pane });
                    }
                    format!("resetting {}…", self.names(&others))
                } else {
                    format!("kept the work of {}", self.names(&others))
                };
                self.fanout.take = Some(Take::Done(true, text));
                true
            }
            Some(Take::DiscardOthers(others)) => {
                let text = if yes {
                    let names = self.names(&others);
                    for &pane in &others {
                        if let Some(p) = self.panes.get(pane) {
                            let edit = crate::protocol::edit::PaneEdit::Close {
                                pane: p.agent.id.clone(),
                                team: false,
                                discard: true,
                            };
                            self.outbox.push(super::command::AppCommand::Edit(edit));
                        }
                    }
                    self.fanout.best_of.clear();
                    format!("closing {names} and removing their worktrees and branches…")
                } else {
                    format!("kept {}", self.names(&others))
                };
                self.fanout.take = Some(Take::Done(true, text));
                true
            }
            Some(Take::Merging(_)) => true,
            Some(Take::Done(..)) | None => match ev.code {
                KeyCode::Char('t') => {
                    self.start_take();
                    true
                }
                KeyCode::Char('d') => {
                    self.fanout.words = !self.fanout.words;
                    true
                }
                _ => false,
            },
        }
    }

    fn start_take(&mut self) {
        let f = &self.fanout;
        let Some(pane) = f.runs.get(f.compare_sel).map(|r| r.pane) else {
            return;
        };
        self.fanout.take = Some(match self.panes.get(pane) {
            Some(p) if p.worktree.is_some() => Take::Confirm(pane),
            _ => Take::Done(
                false,
                "this answer's pane has no worktree: nothing to merge".into(),
            ),
        });
    }

    /// The taken pane's merge finished: on success, offer to reset the
    /// other runs' worktrees.
    pub(super) fn take_brought(&mut self, pane: usize, result: Result<&str, &str>) {
        if self.fanout.take != Some(Take::Merging(pane)) {
            return;
        }
        let others: Vec<usize> = self
            .fanout
            .runs
            .iter()
            .map(|r| r.pane)
            .filter(|&i| i != pane && self.panes.get(i).is_some_and(|p| p.worktree.is_some()))
            .collect();
        // The copies of a best-of-N go: closed, worktree and branch removed.
        let best_of = &self.fanout.best_of;
        let copies = !others.is_empty()
            && others
                .iter()
                .all(|&i| best_of.iter().any(|id| *id == self.panes[i].agent.id));
        self.fanout.take = Some(match result {
            Ok(_) if copies => Take::DiscardOthers(others),
            Ok(_) if !others.is_empty() => Take::ResetOthers(others),
            Ok(text) => Take::Done(true, text.to_owned()),
            Err(e) => Take::Done(false, e.to_owned()),
        });
    }

    /// A reset finished (for the compare view's last line).
    pub(super) fn take_reset(&mut self, pane: usize, result: Result<(), String>) {
        let name = self.names(&[pane]);
        let (ok, text) = match result {
            Ok(()) => (true, format!("reset {name} to the main checkout")),
            Err(e) => (false, format!("{name}: {e}")),
        };
        if let Some(p) = self.panes.get_mut(pane) {
            let level = if ok {
                crate::protocol::agent::DiagnosticLevel::Info
            } else {
                crate::protocol::agent::DiagnosticLevel::Warn
            };
            p.conversation.transcript.notice(level, text.clone());
        }
        if matches!(self.fanout.take, Some(Take::Done(..))) {
            self.fanout.take = Some(Take::Done(ok, text));
        }
    }

    fn names(&self, panes: &[usize]) -> String {
        panes
            .iter()
            .filter_map(|&i| self.panes.get(i).map(|p| p.name().to_owned()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Longest commit subject suggested (git's customary width).
const SUBJECT_CHARS: usize = 72;

/// A commit subject from an answer in markdown: the first line of its
/// first block with words, as plain text (`**Done.** Fixed `x`` reads
/// `Done. Fixed x`: emphasis, code spans and links lose their marks; code
/// blocks are skipped), cut to 72 characters. `None`: no words.
pub(crate) fn commit_subject(markdown: &str) -> Option<String> {
    let mut line = String::new();
    let mut in_code_block = false;
    for event in Parser::new(markdown) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => in_code_block = true,
            Event::End(TagEnd::CodeBlock) => in_code_block = false,
            Event::Text(t) | Event::Code(t) if !in_code_block => line.push_str(&t),
            // The first line of the block is the subject.
            Event::SoftBreak | Event::HardBreak if !line.trim().is_empty() => break,
            Event::End(
                TagEnd::Paragraph | TagEnd::Heading(_) | TagEnd::Item | TagEnd::TableCell,
            ) if !line.trim().is_empty() => break,
            _ => {}
        }
    }
    let subject: String = line
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(SUBJECT_CHARS)
        .collect();
    (!subject.is_empty()).then_some(subject)
}

#[cfg(test)]
mod tests {
    use super::commit_subject;

    /// Issue 46 item 19: a merge commit was named `Done.** Fixed …` (the
    /// leading marks trimmed, the rest kept). Failed before: stray `**`.
    #[test]
    fn a_commit_subject_is_plain_text() {
        let cases = [
            ("**Done.** Fixed the greeting.", "Done. Fixed the greeting."),
            ("## Renamed `old()` to *new()*", "Renamed old() to new()"),
            (
                "- Fixed [the link](http://x) in __README__",
                "Fixed the link in README",
            ),
            (
                "```rust\nfn x() {}\n```\nThen **tests** pass",
                "Then tests pass",
            ),
            ("First line\nsecond line", "First line"),
            ("> quoted **reply**", "quoted reply"),
        ];
        for (answer, want) in cases {
            assert_eq!(commit_subject(answer).as_deref(), Some(want), "{answer}");
        }
        assert_eq!(commit_subject("  \n```\n```"), None);
        assert_eq!(commit_subject(&"x".repeat(100)).map(|s| s.len()), Some(72));
    }
}
