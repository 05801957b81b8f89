//! The forge in a console (issue 48, docs/forge.md): `/issue N` makes a
//! pane for an issue, `/pr` opens the pane's pull request (`/pr watch`,
//! `/pr merge`), `/checks` shows it: state, each check, reviews and
//! comments, what the watcher sent and when; in that view `l` shows a
//! failed check's log tail, `r` asks again, `m` merges (after `y`). Each is
//! the server's forge verb, asked for the pane it is typed in
//! (`ClientMsg::Forge`); the answers come back for that pane
//! ([`App::on_forge`]). The forge's text is untrusted: it is neutralised
//! here before the view or the transcript holds it.

use crossterm::event::{KeyCode, KeyEvent};

use super::command::AppCommand;
use super::state::{App, Overlay};
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::forge::{ForgeAsk, ForgeNews};

use super::forge_view::ChecksView;

const ISSUE_USAGE: &str = "/issue N [TEMPLATE|PROVIDER] [ID]";
const PR_USAGE: &str = "/pr [--ready] [--title T] [--body B] · /pr watch · \
                        /pr merge [squash|merge|rebase] [--close [--discard]]";

impl App {
    /// Asks the server of pane `pane` for `ask`.
    fn forge(&mut self, pane: usize, ask: ForgeAsk) {
        self.outbox.push(AppCommand::Forge { pane, ask });
    }

    /// `/issue N [TEMPLATE|PROVIDER] [ID]`: a new pane for issue N, in its
    /// own worktree; by default the focused pane's agent (its template,
    /// else its provider in its directory), id `issue-N`.
    pub(crate) fn issue_command(&mut self, arg: &str) {
        match self.parse_issue(arg) {
            Ok(ask) => {
                if let ForgeAsk::Issue { number, .. } = &ask {
                    self.set_status(format!("asking the forge for issue #{number}…"));
                }
                self.forge(self.focus, ask);
            }
            Err(why) => self.refuse(why),
        }
    }

    fn parse_issue(&self, arg: &str) -> Result<ForgeAsk, String> {
        let words = shlex::split(arg).ok_or_else(|| format!("unbalanced quotes; {ISSUE_USAGE}"))?;
        let mut words = words.into_iter();
        let first = words.next().ok_or_else(|| ISSUE_USAGE.to_owned())?;
        let number: u64 = first
            .trim_start_matches('#')
            .parse()
            .map_err(|_| format!("`{first}` is no issue number; {ISSUE_USAGE}"))?;
        let base = words.next();
        let id = words.next();
        if let Some(extra) = words.next() {
            return Err(format!("`{extra}`: too many words; {ISSUE_USAGE}"));
        }
        let focused = self.focused();
        let (mut template, mut provider, mut cwd, mut model) = (None, None, None, None);
        match base {
            Some(b) if self.templates.iter().any(|a| a.id == b) => template = Some(b),
            Some(b) if crate::protocol::agent::PROVIDER_NAMES.contains(&b.as_str()) => {
                provider = Some(b);
                cwd = focused.and_then(|p| p.agent.cwd.clone());
            }
            Some(b) => return Err(format!("no template or provider `{b}`; {ISSUE_USAGE}")),
            None => match focused {
                Some(p) if self.templates.iter().any(|a| a.id == p.agent.id) => {
                    template = Some(p.agent.id.clone());
                }
                Some(p) => {
                    provider = Some(p.agent.provider.clone());
                    cwd = p.agent.cwd.clone();
                    model = p.agent.model.clone();
                }
                None => return Err(format!("no pane to take the agent of; {ISSUE_USAGE}")),
            },
        }
        let pane = id.unwrap_or_else(|| {
            crate::config::free_id(&format!("issue-{number}"), |id| {
                self.panes.iter().any(|p| p.agent.id == id)
            })
        });
        Ok(ForgeAsk::Issue {
            pane,
            number,
            template,
            provider,
            cwd,
            model,
            window: focused.map(|p| p.window),
        })
    }

    /// `/pr …`: open the focused pane's pull request, watch it, merge it.
    pub(crate) fn pr_command(&mut self, arg: &str) {
        match parse_pr(arg) {
            Ok(Some(ask)) => {
                self.set_status(match &ask {
                    ForgeAsk::PrOpen { .. } => "pushing the branch, opening its pull request…",
                    ForgeAsk::PrMerge { .. } => "merging the pull request…",
                    _ => "asking the forge…",
                });
                self.forge(self.focus, ask);
            }
            Ok(None) => self.open_checks(),
            Err(why) => self.refuse(why),
        }
    }

    /// `/checks`: the focused pane's pull request, asked for now.
    pub(crate) fn open_checks(&mut self) {
        let pane = self.focus;
        self.checks = Some(ChecksView {
            pane,
            ..ChecksView::default()
        });
        self.overlay = Overlay::Checks;
        self.forge(
            pane,
            ForgeAsk::PrStatus {
                pane: String::new(),
            },
        );
    }

    /// The forge's answer for pane `pane`.
    pub fn on_forge(&mut self, pane: usize, news: ForgeNews) {
        let looking = self.overlay == Overlay::Checks;
        let view = self.checks.as_mut().filter(|c| c.pane == pane);
        match news {
            ForgeNews::View(v) => {
                if let Some(c) = view {
                    c.view = Some(*v);
                    c.sel = c.sel.min(c.checks_len().saturating_sub(1));
                }
            }
            ForgeNews::Log { check, text } => {
                if let Some(c) = view {
                    let text = crate::sanitize::neutralize(&text).into_owned();
                    c.log = Some((crate::sanitize::peer_line(&check), text));
                    c.log_scroll = 0;
                }
            }
            ForgeNews::Said { text, failed } => {
                // Asked for a view the pane does not have: the reason, in
                // the pane.
                if failed && looking && view.is_some_and(|c| c.view.is_none()) {
                    self.overlay = Overlay::None;
                    self.checks = None;
                }
                let level = if failed {
                    DiagnosticLevel::Warn
                } else {
                    DiagnosticLevel::Info
                };
                let text = format!("forge: {}", crate::sanitize::neutralize(&text));
                self.set_status(crate::sanitize::peer_line(&text));
                if let Some(p) = self.panes.get_mut(pane) {
                    p.conversation.transcript.notice(level, text);
                }
            }
        }
    }

    /// Keys of the checks view: ↑↓ a check, `l` (Enter) its failed log,
    /// `r` asks again, `m` then `y` merges, Esc closes (the log first).
    pub(super) fn checks_key(&mut self, ev: KeyEvent) {
        let Some(c) = self.checks.as_mut() else {
            self.overlay = Overlay::None;
            return;
        };
        let pane = c.pane;
        if c.log.is_some() {
            match ev.code {
                KeyCode::Up | KeyCode::Char('k') => c.log_scroll += 1,
                KeyCode::Down | KeyCode::Char('j') => c.log_scroll = c.log_scroll.saturating_sub(1),
                KeyCode::PageUp => c.log_scroll += 10,
                KeyCode::PageDown => c.log_scroll = c.log_scroll.saturating_sub(10),
                _ => c.log = None,
            }
            return;
        }
        if std::mem::take(&mut c.confirm_merge) {
            if matches!(ev.code, KeyCode::Char('y' | 'Y')) {
                self.set_status("merging the pull request…");
                let ask = pr_ask(|pane| ForgeAsk::PrMerge {
                    pane,
                    method: None,
                    close: None,
                });
                self.forge(pane, ask);
            } else {
                self.set_status("not merged");
            }
            return;
        }
        let last = c.checks_len().saturating_sub(1);
        match ev.code {
            KeyCode::Up | KeyCode::Char('k') => c.sel = c.sel.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => c.sel = (c.sel + 1).min(last),
            KeyCode::Char('l') | KeyCode::Enter => self.ask_log(),
            KeyCode::Char('r') => self.forge(pane, pr_ask(|pane| ForgeAsk::PrStatus { pane })),
            KeyCode::Char('m') if c.view.is_some() => {
                c.confirm_merge = true;
                let n = c.view.as_ref().map_or(0, |v| v.number);
                self.set_status(format!(
                    "merge pull request #{n}? y merges, any other key not"
                ));
            }
            _ => {
                self.overlay = Overlay::None;
                self.checks = None;
            }
        }
    }

    /// The selected check's failed log, asked of the server.
    fn ask_log(&mut self) {
        let Some(c) = self.checks.as_ref() else {
            return;
        };
        let check = c
            .view
            .as_ref()
            .and_then(|v| v.checks.as_ref())
            .and_then(|cs| cs.get(c.sel))
            .cloned();
        let pane = c.pane;
        match check {
            Some(check) if check.outcome == "failed" && check.run_id.is_some() => {
                self.set_status(format!("reading the failed log of {}…", check.name));
                let name = check.name;
                self.forge(
                    pane,
                    ForgeAsk::PrLog {
                        pane: String::new(),
                        check: name,
                    },
                );
            }
            Some(check) => self.set_status(format!(
                "{} has no failed log to read",
                crate::sanitize::peer_line(&check.name)
            )),
            None => self.set_status("no check selected"),
        }
    }
}

/// An ask about the pane the console asks in (the server names it).
fn pr_ask(make: impl FnOnce(String) -> ForgeAsk) -> ForgeAsk {
    make(String::new())
}

/// `/pr` words: `Ok(None)` is `/pr status` (the checks view).
fn parse_pr(arg: &str) -> Result<Option<ForgeAsk>, String> {
    let words = shlex::split(arg).ok_or_else(|| format!("unbalanced quotes; {PR_USAGE}"))?;
    let mut words = words.into_iter().peekable();
    match words.peek().map(String::as_str) {
        Some("status" | "checks") => return Ok(None),
        Some("watch") => return Ok(Some(pr_ask(|pane| ForgeAsk::PrWatch { pane }))),
        Some("merge") => {
            words.next();
            let (mut method, mut close, mut discard) = (None, false, false);
            for w in words {
                match w.as_str() {
                    "--close" => close = true,
                    "--discard" => discard = true,
                    "squash" | "merge" | "rebase" if method.is_none() => method = Some(w),
                    other => return Err(format!("`{other}`: {PR_USAGE}")),
                }
            }
            if discard && !close {
                return Err(format!("--discard goes with --close; {PR_USAGE}"));
            }
            return Ok(Some(ForgeAsk::PrMerge {
                pane: String::new(),
                method,
                close: close.then_some(discard),
            }));
        }
        _ => {}
    }
    let (mut title, mut body, mut ready) = (None, None, false);
    while let Some(w) = words.next() {
        let mut value = |flag: &str| {
            words
                .next()
                .ok_or_else(|| format!("{flag} needs a value; {PR_USAGE}"))
        };
        match w.as_str() {
            "--ready" => ready = true,
            "--title" => title = Some(value("--title")?),
            "--body" => body = Some(value("--body")?),
            other => return Err(format!("`{other}`: {PR_USAGE}")),
        }
    }
    Ok(Some(ForgeAsk::PrOpen {
        pane: String::new(),
        title,
        body,
        ready,
    }))
}

#[cfg(test)]
impl App {
    /// A plain key to the checks view.
    pub(crate) fn checks_key_for_test(&mut self, c: char) {
        use crossterm::event::KeyModifiers;
        self.checks_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pr_words_read_as_their_asks() {
        let open = parse_pr("--ready --title 'Fix it' --body '-x'").unwrap();
        assert_eq!(
            open,
            Some(ForgeAsk::PrOpen {
                pane: String::new(),
                title: Some("Fix it".into()),
                body: Some("-x".into()),
                ready: true,
            })
        );
        assert_eq!(parse_pr("status").unwrap(), None);
        assert!(matches!(
            parse_pr("merge rebase").unwrap(),
            Some(ForgeAsk::PrMerge { method: Some(m), close: None, .. }) if m == "rebase"
        ));
        assert!(matches!(
            parse_pr("merge --close --discard").unwrap(),
            Some(ForgeAsk::PrMerge {
                method: None,
                close: Some(true),
                ..
            })
        ));
        assert!(parse_pr("merge --discard").is_err());
        assert!(parse_pr("merge sideways").is_err());
        assert!(parse_pr("--title").is_err());
        assert!(parse_pr("now").is_err());
    }
}
