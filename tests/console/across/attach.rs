//! A console attaching to a hive server: panes rebuilt from the server's
//! compacted log (`server::log::PaneLog` → `Snapshot` →
//! `App::load_snapshot`) draw what the live stream drew; what happened
//! while nobody was attached is unread, what was seen is not.

use std::time::Duration;

use super::console::*;
use hive::event::Origin;
use hive::provider::{Capabilities, DiagnosticLevel};
use hive::runner::{PaneEvent, TurnState};
use hive::server::log::PaneLog;
use hive::text::TextBuffer;
use hive::upsert::{UpsertKind, UpsertStatus};
use hive::wire::snapshot::{LayoutPane, PaneSnapshot, Restored, ServerInfo, Snapshot};

/// A live console and the server's logs of the same events.
struct Both {
    live: Console,
    logs: Vec<PaneLog>,
    seq: u64,
}

impl Both {
    fn new(n: usize) -> Self {
        let live = console(n, "");
        let mut logs: Vec<PaneLog> = (0..n).map(|_| PaneLog::new(Restored::default())).collect();
        let attached = PaneEvent::Attached {
            capabilities: Capabilities {
                interrupt: true,
                ..Capabilities::default()
            },
            terminal: None,
        };
        for log in &mut logs {
            log.push(0, live.app.now, &attached);
        }
        Self { live, logs, seq: 0 }
    }

    fn send(&mut self, pane: usize, event: PaneEvent) {
        self.seq += 1;
        self.logs[pane].push(self.seq, self.live.app.now, &event);
        self.live.send(pane, event);
    }

    fn snapshot(&self, focus: usize, away_since: Option<u64>) -> Snapshot {
        let panes = self
            .logs
            .iter()
            .zip(&self.live.app.panes)
            .map(|(log, p)| PaneSnapshot {
                agent: p.agent.card(),
                worktree: None,
                failed: None,
                restored: log.restored().clone(),
                events: log.events(),
                draft: String::new(),
                window: 1,
                parent: None,
                host: None,
                seen: None,
                dismissed: Vec::new(),
            })
            .collect();
        Snapshot {
            server: ServerInfo {
                pid: 1,
                config: "test".into(),
                config_path: None,
                socket: "/tmp/hive-test.sock".into(),
                started: 0,
            },
            focus,
            away_since,
            panes,
        }
    }

    /// A fresh console on the same clock, loaded from the logs.
    fn attach(&self, focus: usize, away_since: Option<u64>) -> Console {
        let mut c = console(self.live.app.panes.len(), "");
        c.app.started = self.live.app.started;
        c.app.load_snapshot(self.snapshot(focus, away_since), false);
        c.app.now = self.live.app.now;
        c
    }
}

fn tool(item: &str, done: bool) -> PaneEvent {
    let mut ev = running_tool("t1", item, "cargo test");
    if let PaneEvent::Upsert(u) = &mut ev
        && done
    {
        u.status = UpsertStatus::Complete;
        if let UpsertKind::ToolCall {
            output,
            output_is_error,
            ..
        } = &mut u.kind
        {
            *output = Some("ok".into());
            *output_is_error = Some(false);
        }
    }
    ev
}

/// A turn in `pane`: the prompt queued then sent, an answer streamed in
/// 300 updates and live tails, a tool call taking 2 s, an approval
/// answered and one waiting, a notice, the end.
fn work(b: &mut Both, pane: usize) {
    b.send(pane, PaneEvent::Queue(vec!["fix the bug".into()]));
    b.send(pane, PaneEvent::State(TurnState::Starting));
    b.send(pane, PaneEvent::Queue(Vec::new()));
    b.send(pane, started("t1"));
    b.send(pane, PaneEvent::State(TurnState::Streaming));
    b.send(pane, message("t1", "u1", Origin::User, "fix the bug"));
    let mut text = TextBuffer::new();
    for n in 0..300 {
        text.push_str(if n % 12 == 11 { "word.\n" } else { "word " });
        let mut u = match message("t1", "m1", Origin::Agent, "") {
            PaneEvent::Upsert(u) => u,
            _ => unreachable!(),
        };
        u.status = UpsertStatus::Update;
        u.kind = UpsertKind::Message {
            content: text.snapshot(),
            origin: Origin::Agent,
        };
        b.live.app.now += Duration::from_millis(10);
        b.send(
            pane,
            if n % 3 == 0 {
                PaneEvent::Upsert(u)
            } else {
                PaneEvent::Live(u)
            },
        );
    }
    b.send(pane, tool("c1", false));
    b.live.app.now += Duration::from_secs(2);
    b.send(pane, tool("c1", true));
    b.send(pane, permission("r1", "mkdir build"));
    b.send(
        pane,
        PaneEvent::PermissionSettled {
            request_id: "r1".into(),
        },
    );
    b.send(
        pane,
        message("t1", "m2", Origin::Agent, "Fixed: the test passes."),
    );
    b.send(
        pane,
        PaneEvent::Notice {
            level: DiagnosticLevel::Warn,
            text: "agent stderr: slow disk".into(),
        },
    );
    b.send(pane, PaneEvent::Queue(vec!["next".into(), "after".into()]));
    b.send(pane, completed("t1"));
    b.send(pane, PaneEvent::State(TurnState::Idle));
    b.send(pane, permission("r2", "rm -rf build"));
}

#[test]
fn a_pane_loaded_from_the_log_draws_as_the_live_one() {
    let mut b = Both::new(2);
    work(&mut b, 0);
    let seen = b.seq;
    work(&mut b, 1);
    // Pane 0 was watched (focused); pane 1's work came while away, as it
    // came to the live console's unfocused pane.
    let mut attached = b.attach(0, Some(seen));
    assert_eq!(b.logs[0].events().len(), 13, "{:#?}", b.logs[0].events());
    for (w, h) in [(120, 40), (200, 30)] {
        assert_eq!(attached.render(w, h), b.live.render(w, h));
    }
    assert_eq!(
        attached.app.inbox.entries.len(),
        b.live.app.inbox.entries.len()
    );
    // Looking at pane 1 shows the same digest in both.
    attached.alt('2');
    b.live.alt('2');
    attached.alt('z');
    b.live.alt('z');
    let screen = b.live.render(160, 20);
    assert!(screen.contains("1 tool (Bash 2.0s)"), "{screen}");
    assert_eq!(attached.render(160, 20), screen);
}

#[test]
fn an_attach_after_time_away_shows_the_digest_and_the_unread_marker() {
    let mut b = Both::new(2);
    b.send(0, started("t0"));
    b.send(0, message("t0", "u0", Origin::User, "look around"));
    let seen = b.seq;
    b.send(0, message("t0", "m0", Origin::Agent, "Done looking."));
    b.send(0, completed("t0"));
    work(&mut b, 1);
    let mut c = b.attach(1, Some(seen));
    let p = &c.app.panes[1];
    assert!(p.attention.digest.is_some(), "pane 1 focused: its digest");
    assert_eq!(c.app.panes[0].attention.unread.count, 1);
    assert!(c.app.panes[0].attention.flagged);
    let screen = c.render(160, 24);
    assert!(screen.contains("● 1 Agent 1"), "{screen}");
    assert!(screen.contains("◆ 1 turn finished"), "{screen}");
    insta::assert_snapshot!("away_attach", screen);
}

#[test]
fn events_seen_before_the_attach_count_as_history() {
    let mut b = Both::new(2);
    work(&mut b, 1);
    let mut c = b.attach(0, None);
    let p = &c.app.panes[1];
    assert!(p.attention.unread.is_empty());
    assert!(p.attention.digest.is_none() && !p.attention.flagged);
    assert!(c.app.status.is_none());
    assert!(c.app.outbox.terminal_writes().is_empty(), "no bell");
    // Only the approval still waiting is in the inbox.
    let reasons: Vec<String> = c
        .app
        .inbox
        .entries
        .iter()
        .map(|e| format!("{:?}", e.reason))
        .collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    assert!(reasons[0].contains("r2"), "{reasons:?}");
    let screen = c.render(120, 30);
    let titles = screen.lines().next().unwrap_or_default();
    let marker = titles.contains("● ");
    assert!(!marker, "no unread marker: {screen}");
}

#[test]
fn a_resync_keeps_the_view_and_a_reset_starts_one_pane_over() {
    let mut b = Both::new(3);
    work(&mut b, 2);
    let mut c = b.attach(0, None);
    c.alt('3');
    c.typ("half typed");
    c.app.zoom = true;
    c.app.load_snapshot(b.snapshot(0, None), true);
    assert_eq!((c.app.focus, c.app.zoom), (2, true));
    assert_eq!(c.app.panes[2].composer.text(), "half typed");
    let before = c.app.panes[2].conversation.transcript.len();
    assert!(before > 0);
    let mut fresh = PaneLog::new(Restored::default());
    fresh.push(
        1,
        c.app.now,
        &PaneEvent::Notice {
            level: DiagnosticLevel::Info,
            text: "new session".into(),
        },
    );
    let snap = b.snapshot(0, None).panes.swap_remove(2);
    let snap = PaneSnapshot {
        events: fresh.events(),
        ..snap
    };
    c.app.reset_pane(2, snap);
    let p = &c.app.panes[2];
    assert_eq!(p.conversation.transcript.len(), 1);
    assert!(p.pending.permissions.is_empty());
    assert_eq!(p.composer.text(), "half typed");
    assert!(c.app.inbox.entries.iter().all(|e| e.pane != 2));
}

/// A pane built again from a snapshot (here: another text in the same
/// shape, as a worktree setup's notice replaced by its output) is drawn
/// from its new transcript, not from the view's caches of the old one
/// (issue 32: they matched by entry number and revision, and the old text
/// stayed on screen until something else changed).
#[test]
fn a_reloaded_pane_is_drawn_from_its_new_text() {
    let note = |text: &str| PaneEvent::Notice {
        level: hive::provider::DiagnosticLevel::Info,
        text: text.into(),
    };
    let mut b = Both::new(1);
    b.send(0, note("running the setup"));
    let mut c = b.attach(0, None);
    assert!(c.render(80, 12).contains("running the setup"));
    let mut again = Both::new(1);
    again.send(0, note("the setup printed this"));
    c.app.load_snapshot(again.snapshot(0, None), true);
    let screen = c.render(80, 12);
    assert!(screen.contains("the setup printed this"), "{screen}");
    assert!(!screen.contains("running the setup"), "{screen}");
}

/// A console that attaches after a delegation times its wait as the live
/// one did: the log keeps the call's first sight with its time.
#[test]
fn an_attached_console_times_a_wait_it_did_not_see() {
    use super::delegation::{answered, hive_call};
    let mut b = Both::new(2);
    b.send(0, started("t1"));
    b.send(0, hive_call(None));
    b.live.app.now += Duration::from_secs(4);
    b.send(0, hive_call(Some(answered())));
    b.send(0, completed("t1"));
    let mut attached = b.attach(0, None);
    let screen = attached.render(120, 10);
    assert!(
        screen.contains("waited 4.0s for backend: Done: POST /login is in."),
        "{screen}"
    );
    assert_eq!(screen, b.live.render(120, 10));
}

/// A layout edit (a pane closed, one moved, one renamed, one new) moves
/// the panes this console has whole: their transcripts, composers and
/// inbox entries follow them by id with no replay of their history; the
/// new pane is built from its snapshot; the screen is the one a fresh
/// snapshot of the same panes draws.
#[test]
fn a_layout_moves_kept_panes_whole_and_builds_new_ones() {
    let mut b = Both::new(3);
    work(&mut b, 1);
    work(&mut b, 2);
    let mut c = b.attach(1, None);
    let entries = c.app.panes[1].conversation.transcript.len();
    let rev = c.app.panes[1].conversation.transcript.rev;
    let mut helper = PaneLog::new(Restored::default());
    helper.push(
        1,
        c.app.now,
        &message("h1", "m1", Origin::Agent, "The helper is here."),
    );
    let mut agent = c.app.panes[0].agent.card();
    agent.id = "helper".into();
    agent.name = Some("Helper".into());
    let new = PaneSnapshot {
        events: helper.events(),
        ..PaneSnapshot::empty(agent)
    };
    let kept = |id: &str, name: &str| LayoutPane::Kept {
        id: id.into(),
        name: Some(name.into()),
        window: 1,
        parent: None,
    };
    let layout = vec![
        kept("a2", "Agent 3"),
        kept("a1", "Renamed"),
        LayoutPane::New(Box::new(new.clone())),
    ];
    let mut away = b.attach(0, None);
    assert!(c.app.relayout(layout.clone()));
    let ids: Vec<&str> = c.app.panes.iter().map(|p| p.agent.id.as_str()).collect();
    assert_eq!(ids, ["a2", "a1", "helper"]);
    // A console that looked at the closed pane looks at the one in its place.
    assert!(away.app.relayout(layout));
    assert_eq!(away.app.focus, 0);
    assert_eq!(c.app.focus, 1, "the focus follows its pane");
    let p = &c.app.panes[1];
    assert_eq!(p.agent.name.as_deref(), Some("Renamed"));
    assert_eq!(p.conversation.transcript.len(), entries);
    assert_eq!(
        p.conversation.transcript.rev, rev,
        "moved whole, not replayed"
    );
    // Each kept pane's waiting approval follows it; none was a0's.
    let mut at: Vec<usize> = c.app.inbox.entries.iter().map(|e| e.pane).collect();
    at.sort_unstable();
    assert_eq!(at, [0, 1]);

    // The same panes from a fresh snapshot draw the same screen.
    let mut snap = b.snapshot(1, None);
    let mut panes = std::mem::take(&mut snap.panes);
    panes[1].agent.name = Some("Renamed".into());
    snap.panes = vec![panes.swap_remove(2), panes.swap_remove(1), new];
    let mut fresh = console(3, "");
    fresh.app.started = b.live.app.started;
    fresh.app.load_snapshot(snap, false);
    fresh.app.now = c.app.now;
    assert_eq!(fresh.app.focus, 1);
    for (w, h) in [(120, 40), (200, 30)] {
        assert_eq!(c.render(w, h), fresh.render(w, h));
    }
}

/// A layout naming a pane this console does not have (its copy went
/// wrong) is refused whole: the caller asks for a fresh snapshot.
#[test]
fn a_layout_with_a_pane_not_here_changes_nothing() {
    let mut b = Both::new(2);
    work(&mut b, 1);
    let mut c = b.attach(0, None);
    let layout = vec![LayoutPane::Kept {
        id: "nobody".into(),
        name: None,
        window: 1,
        parent: None,
    }];
    assert!(!c.app.relayout(layout));
    assert_eq!(c.app.panes.len(), 2);
    assert_eq!(c.render(100, 20), b.attach(0, None).render(100, 20));
}

/// A delegation restored from the history (a restart) says how long it
/// waited, as it did live: the tool result keeps the time.
#[test]
fn a_restored_wait_keeps_its_duration() {
    use super::delegation::{answered, hive_call};
    let PaneEvent::Upsert(call) = hive_call(Some(answered())) else {
        unreachable!()
    };
    let restored = Restored {
        took: vec![(call.item_id.clone(), 6_200)],
        items: vec![call],
        ..Restored::default()
    };
    let mut b = Both::new(1);
    b.logs[0] = PaneLog::new(restored);
    let mut c = b.attach(0, None);
    let screen = c.render(120, 10);
    assert!(
        screen.contains("waited 6.2s for backend: Done: POST /login is in."),
        "{screen}"
    );
}
