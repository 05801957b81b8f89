//! A console's forge requests (issue 48, docs/forge.md): `/issue N`, `/pr`,
//! `/checks` and the checks view's keys arrive as `ClientMsg::Forge`, named
//! by the console's pane number. The server names the pane, and the ask
//! goes in by the same front door as `hive ctl pr …` (`Verb::Forge`); its
//! answer comes back to that console alone, for that pane, as
//! `ServerMsg::Forge` (a checks view, a log's tail, or how it went) or, for
//! an issue's new pane, a `Notice` that focuses it. A console looking at a
//! checks view gets it again after each poll of the watcher.

use super::clients::ClientId;
use super::door::Reply;
use super::forge::{Answer, Done};
use super::forge_types::{Kind, ToConsole};
use super::serve::Server;
use crate::protocol::ServerMsg;
use crate::protocol::forge::{ForgeAsk, ForgeNews, PrView};
use crate::protocol::verb::{Caller, Request, Verb};

impl Server {
    /// `ClientMsg::Forge`: asked in the console's pane `pane`.
    pub(super) fn console_forge(&mut self, client: ClientId, pane: usize, mut ask: ForgeAsk) {
        let Some(slot) = self.panes.order.get(pane).copied() else {
            return;
        };
        if !matches!(ask, ForgeAsk::Issue { .. }) {
            let Some(p) = self.panes.get(slot) else {
                return;
            };
            ask.set_pane(&p.record.agent.id.clone());
        }
        // Read at once by `answer_for`, within this same call.
        self.forges.asking = Some(slot);
        let request = Request::new(self.console_caller(client), Verb::Forge(ask));
        let _ = self.request(request, Reply::Console);
        self.forges.asking = None;
    }

    /// How a forge verb is answered: a console's on the loop, for its pane
    /// (the one asked in: [`Server::console_forge`]); the others by their
    /// door.
    pub(super) fn answer_for(&mut self, caller: &Caller, ask: &ForgeAsk, reply: Reply) -> Answer {
        let client = match (caller, &reply) {
            (Caller::Console { id: client, .. }, Reply::Console) => Some(*client),
            _ => None,
        };
        let (Some(client), Some(slot)) = (client, self.forges.asking.take()) else {
            return super::forge_verbs::answer_of(reply);
        };
        let (tx, kind) = (self.forges.tx.clone(), Kind::of(ask));
        Box::new(move |outcome| {
            let _ = tx.send(Done::Console(Box::new(ToConsole {
                client,
                slot,
                kind,
                outcome,
            })));
        })
    }

    /// A console's answer, sent to it alone.
    pub(super) fn tell_console(&mut self, to: ToConsole) {
        let ToConsole {
            client,
            slot,
            kind,
            outcome,
        } = to;
        let Some(pane) = self.panes.order.iter().position(|&s| s == slot) else {
            return;
        };
        let said = |text: String, failed| ForgeNews::Said { text, failed };
        let news = match (kind, outcome) {
            (_, Err(e)) => said(e.message, true),
            (Kind::Issue, Ok(v)) => {
                let id = v["pane"].as_str().unwrap_or_default().to_owned();
                let focus = self
                    .panes
                    .find(&id)
                    .and_then(|s| self.panes.order.iter().position(|&o| o == s));
                let text = format!(
                    "pane {id}: issue #{} on branch {}",
                    v["issue"],
                    v["branch"].as_str().unwrap_or_default()
                );
                let notice = ServerMsg::Notice {
                    text: text.clone(),
                    focus,
                };
                self.clients.send(client, &notice);
                said(text, false)
            }
            (Kind::Open, Ok(v)) => said(opened_text(&v), false),
            (Kind::Watch, Ok(v)) => said(
                format!(
                    "watching pull request #{}: {}",
                    v["number"],
                    v["url"].as_str().unwrap_or_default()
                ),
                false,
            ),
            (Kind::Merge, Ok(v)) => said(
                format!(
                    "merged the pull request: {}",
                    v["said"].as_str().unwrap_or_default()
                ),
                false,
            ),
            (Kind::Log, Ok(v)) => ForgeNews::Log {
                check: v["check"].as_str().unwrap_or_default().to_owned(),
                text: v["log"].as_str().unwrap_or_default().to_owned(),
            },
            (Kind::Status, Ok(v)) => match serde_json::from_value::<PrView>(v) {
                Ok(view) => {
                    // Told again after each poll while it looks.
                    let parts = self.forges.watched.iter_mut();
                    for (_, w) in parts.filter(|((s, _), _)| *s == slot) {
                        w.viewers.insert(client);
                    }
                    ForgeNews::View(Box::new(view))
                }
                Err(e) => said(format!("the pull request's status: {e}"), true),
            },
        };
        self.clients.send(client, &ServerMsg::Forge { pane, news });
    }

    /// The pull request's view, to each console that asked for it.
    pub(super) fn tell_viewers(&mut self, slot: usize) {
        let parts = self.forges.of_pane(slot);
        let Some(w) = parts.first() else {
            return;
        };
        let viewers: Vec<ClientId> = w.viewers.iter().copied().collect();
        let Some(pane) = self.panes.order.iter().position(|&s| s == slot) else {
            return;
        };
        let Some(view) = self.pr_view(slot) else {
            return;
        };
        let msg = ServerMsg::Forge {
            pane,
            news: ForgeNews::View(Box::new(view)),
        };
        for client in viewers {
            self.clients.send(client, &msg);
        }
    }
}

/// What `/pr` says of the pull requests it opened: one, or a workspace's
/// one per repository (and why the rest were not, if they were not).
fn opened_text(v: &serde_json::Value) -> String {
    let prs = v["prs"].as_array().cloned().unwrap_or_default();
    let follow = "the watcher follows their checks and reviews; /checks shows them";
    if prs.len() <= 1 {
        return format!(
            "opened pull request #{}: {} ({})",
            v["number"],
            v["url"].as_str().unwrap_or_default(),
            follow.replace("their", "its")
        );
    }
    let each: Vec<String> = (prs.iter())
        .map(|p| {
            format!(
                "{} #{} {}",
                p["repo"].as_str().unwrap_or_default(),
                p["number"],
                p["url"].as_str().unwrap_or_default()
            )
        })
        .collect();
    let failed = v["failed"]
        .as_str()
        .map(|f| format!("; not opened: {f}"))
        .unwrap_or_default();
    format!(
        "opened {} pull requests: {}{failed} ({follow})",
        prs.len(),
        each.join(", ")
    )
}
