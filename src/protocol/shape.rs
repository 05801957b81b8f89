//! The protocol's shape, pinned (issue 44): a sample of every message a
//! console and a server exchange, serialized, is kept as a fixture named
//! for its version (tests/fixtures/protocol/v<N>.json). A change of shape
//! (a field, a variant, a rename) fails here until `PROTOCOL_VERSION` is
//! bumped and the new version's fixture written; a version's fixture is
//! never rewritten, so the shape a version names stays what it was.
//!
//! New message variant: the `match`es below stop compiling; add the
//! variant's name to the list beside its match and a sample of it.

use std::path::PathBuf;
use std::time::Duration;

use super::agent::Capabilities;
use super::delta::WireEvent;
use super::edit::{NewPane, PaneEdit};
use super::event::Usage;
use super::git::{
    BringMode, Conflict, ConflictedFile, DiffLine, DiffScope, FileDiff, FileStatus, HandOff, Hunk,
    LineKind, MergeOutcome, Overlap, OverlapFile, Prediction, Worktree, WorktreeEvent,
    WorktreeRequest,
};
use super::history::{OlderPage, Outcome, SessionSummary, Totals, TurnEnd};
use super::mutes::{Mute, Mutes, ReasonKind};
use super::pane::{PaneEvent, RunnerCommand};
use super::samples::{sample_commands, sample_events, upsert};
use super::snapshot::{LayoutPane, Logged, PaneCard, PaneSnapshot, Restored, ServerInfo};
use super::{ClientMsg, Hello, PROTOCOL_VERSION, PaneWire, ServerMsg};

const CLIENT_VARIANTS: &[&str] = &[
    "Attach", "Command", "Focus", "Draft", "Resync", "Edit", "Detach", "Stop", "Worktree", "Files",
    "Sessions", "Mute", "Resume", "Forge", "Identify", "Dismiss", "ReadOnly",
];

fn client_variant(m: &ClientMsg) -> &'static str {
    match m {
        ClientMsg::Attach => "Attach",
        ClientMsg::Command { .. } => "Command",
        ClientMsg::Focus(_) => "Focus",
        ClientMsg::Draft { .. } => "Draft",
        ClientMsg::Resync => "Resync",
        ClientMsg::Edit(_) => "Edit",
        ClientMsg::Detach => "Detach",
        ClientMsg::Stop => "Stop",
        ClientMsg::Worktree(_) => "Worktree",
        ClientMsg::Files { .. } => "Files",
        ClientMsg::Sessions { .. } => "Sessions",
        ClientMsg::Mute(_) => "Mute",
        ClientMsg::Resume { .. } => "Resume",
        ClientMsg::Forge { .. } => "Forge",
        ClientMsg::Identify(_) => "Identify",
        ClientMsg::Dismiss { .. } => "Dismiss",
        ClientMsg::ReadOnly => "ReadOnly",
    }
}

const SERVER_VARIANTS: &[&str] = &[
    "SnapshotStart",
    "SnapshotPane",
    "SnapshotEvents",
    "SnapshotEnd",
    "Events",
    "Reset",
    "Layout",
    "Notice",
    "Bye",
    "Worktree",
    "Files",
    "Mutes",
    "Sessions",
    "Forge",
];

fn server_variant(m: &ServerMsg) -> &'static str {
    match m {
        ServerMsg::SnapshotStart { .. } => "SnapshotStart",
        ServerMsg::SnapshotPane(_) => "SnapshotPane",
        ServerMsg::SnapshotEvents(_) => "SnapshotEvents",
        ServerMsg::SnapshotEnd => "SnapshotEnd",
        ServerMsg::Events(..) => "Events",
        ServerMsg::Reset { .. } => "Reset",
        ServerMsg::Layout(_) => "Layout",
        ServerMsg::Notice { .. } => "Notice",
        ServerMsg::Bye { .. } => "Bye",
        ServerMsg::Worktree(_) => "Worktree",
        ServerMsg::Files { .. } => "Files",
        ServerMsg::Mutes(_) => "Mutes",
        ServerMsg::Sessions { .. } => "Sessions",
        ServerMsg::Forge { .. } => "Forge",
    }
}

const COMMAND_VARIANTS: usize = 19;

fn command_variant(c: &RunnerCommand) -> usize {
    match c {
        RunnerCommand::Submit { .. } => 0,
        RunnerCommand::Interrupt => 1,
        RunnerCommand::InterruptFrom(_) => 2,
        RunnerCommand::Queue(_) => 3,
        RunnerCommand::DrainQueue => 4,
        RunnerCommand::Permission { .. } => 5,
        RunnerCommand::Restart => 6,
        RunnerCommand::Budget(_) => 7,
        RunnerCommand::Input(_) => 8,
        RunnerCommand::Resize { .. } => 9,
        RunnerCommand::SetModel(_) => 10,
        RunnerCommand::SetEffort(_) => 11,
        RunnerCommand::Attach(_) => 12,
        RunnerCommand::SwitchSession { .. } => 13,
        RunnerCommand::Focused(_) => 14,
        RunnerCommand::TermView { .. } => 15,
        RunnerCommand::CopyTerminal { .. } => 16,
        RunnerCommand::Shutdown => 17,
        RunnerCommand::SwitchAccount(_) => 18,
    }
}

const EVENT_VARIANTS: usize = 22;

fn event_variant(e: &PaneEvent) -> usize {
    match e {
        PaneEvent::Upsert(_) => 0,
        PaneEvent::Live(_) => 1,
        PaneEvent::Turn(_) => 2,
        PaneEvent::State(_) => 3,
        PaneEvent::Queue(_) => 4,
        PaneEvent::Notice { .. } => 5,
        PaneEvent::Permission(_) => 6,
        PaneEvent::PermissionSettled { .. } => 7,
        PaneEvent::Session(_) => 8,
        PaneEvent::Recalled(_) => 9,
        PaneEvent::Attached { .. } => 10,
        PaneEvent::Terminal(_) => 11,
        PaneEvent::TerminalText(_) => 12,
        PaneEvent::Bell => 13,
        PaneEvent::Models(_) => 14,
        PaneEvent::Effort(_) => 15,
        PaneEvent::SessionSwitched { .. } => 16,
        PaneEvent::HistoryNotSaved(_) => 17,
        PaneEvent::Held(_) => 18,
        PaneEvent::Process(_) => 19,
        PaneEvent::Stalled(_) => 20,
        PaneEvent::Idle => 21,
    }
}

fn file_diff() -> FileDiff {
    FileDiff {
        path: "src/a.rs".into(),
        old_path: Some("src/old.rs".into()),
        status: FileStatus::Renamed,
        binary: false,
        hunks: vec![Hunk {
            header: "@@ -1,2 +1,2 @@".into(),
            old_start: 1,
            old_len: 2,
            new_start: 1,
            new_len: 2,
            lines: vec![
                DiffLine {
                    kind: LineKind::Removed,
                    text: "a".into(),
                },
                DiffLine {
                    kind: LineKind::Added,
                    text: "b".into(),
                },
            ],
        }],
        head: vec!["diff --git a/src/old.rs b/src/a.rs".into()],
        repo: "api".into(),
    }
}

fn worktree() -> Worktree {
    let base = Worktree {
        agent_id: "a".into(),
        repo: "/api".into(),
        path: "/ws/api".into(),
        cwd: "/ws/api".into(),
        branch: "hive/a".into(),
        created: true,
        setup_output: None,
        name: String::new(),
        repos: Vec::new(),
    };
    Worktree {
        agent_id: "a".into(),
        repo: "/repo".into(),
        path: "/repo/.hive/a".into(),
        cwd: "/repo/.hive/a/sub".into(),
        branch: "hive/a".into(),
        created: true,
        setup_output: None,
        name: String::new(),
        repos: vec![Worktree {
            name: "api".into(),
            repos: Vec::new(),
            ..base
        }],
    }
}

fn usage() -> Usage {
    Usage {
        input_tokens: 10,
        output_tokens: 20,
        cost_usd: Some(0.5),
        ..Usage::default()
    }
}

fn pane() -> PaneSnapshot {
    let mut card = PaneCard::new("a", "claude");
    card.name = Some("Architect".into());
    card.model = Some("m".into());
    card.effort = Some("high".into());
    card.cwd = Some("/repo".into());
    card.context_window = Some(200_000);
    card.max_cpu_percent = Some(90.0);
    card.max_rss_mb = Some(512);
    card.try_words = vec!["slow".into()];
    PaneSnapshot {
        worktree: Some(worktree()),
        failed: Some("no such program".into()),
        restored: Restored {
            items: vec![upsert()],
            ends: vec![TurnEnd {
                after: 1,
                turn_id: "t".into(),
                model: Some("m".into()),
                duration: Some(Duration::from_millis(1500)),
                usage: Some(usage()),
                outcome: Outcome::Failed {
                    code: "e".into(),
                    message: "broke".into(),
                },
            }],
            took: vec![("i".into(), 20)],
            totals: Some(Totals {
                usage: usage(),
                turns: 3,
            }),
            model: Some("m".into()),
            queue: vec!["later".into()],
            warnings: vec!["torn line".into()],
            session: "s".into(),
            older: Some(OlderPage {
                path: "/h/s.jsonl".into(),
                before: 4096,
            }),
        },
        events: vec![Logged {
            seq: 7,
            at: None,
            event: PaneEvent::Bell,
        }],
        draft: "half".into(),
        window: 2,
        parent: Some("lead".into()),
        host: None,
        seen: Some(5),
        dismissed: vec![super::snapshot::Dismissed {
            kind: ReasonKind::Bell,
            what: "rang the bell".into(),
            up_to: 6,
        }],
        ..PaneSnapshot::empty(card)
    }
}

fn client_samples() -> Vec<ClientMsg> {
    let mut out = vec![ClientMsg::Attach];
    out.extend(
        sample_commands()
            .into_iter()
            .map(|cmd| ClientMsg::Command { pane: 1, cmd }),
    );
    out.extend([
        ClientMsg::Focus(2),
        ClientMsg::Draft {
            pane: 0,
            text: "half".into(),
        },
        ClientMsg::Resync,
    ]);
    out.extend(edit_samples().into_iter().map(ClientMsg::Edit));
    out.extend([ClientMsg::Detach, ClientMsg::Stop]);
    out.extend(git_requests().into_iter().map(ClientMsg::Worktree));
    out.extend([
        ClientMsg::Files { pane: 0 },
        ClientMsg::Sessions { pane: 0 },
        ClientMsg::Mute(Mute::Pane {
            id: "a".into(),
            on: true,
        }),
        ClientMsg::Mute(Mute::Kind {
            kind: ReasonKind::Finished,
            on: false,
        }),
        ClientMsg::Resume {
            pane: 0,
            session: "s".into(),
        },
        ClientMsg::Identify("alice@box:/dev/pts/3:4242".into()),
        ClientMsg::Dismiss {
            pane: 1,
            kind: ReasonKind::Finished,
            what: "turn finished".into(),
            up_to: 41,
        },
        ClientMsg::ReadOnly,
    ]);
    out.extend(
        super::forge::samples::asks()
            .into_iter()
            .map(|ask| ClientMsg::Forge { pane: 0, ask }),
    );
    out
}

/// Every kind of pane edit, as `client_samples` sends them.
fn edit_samples() -> Vec<PaneEdit> {
    vec![
        PaneEdit::New(NewPane {
            id: "b".into(),
            template: Some("a".into()),
            provider: Some("codex".into()),
            cwd: Some("/repo".into()),
            model: Some("m".into()),
            worktree: true,
            repos: vec!["/api".into(), "/web".into()],
            name: Some("B".into()),
            window: Some(2),
            host: Some("ctr".into()),
        }),
        PaneEdit::Close {
            pane: "b".into(),
            team: true,
            discard: false,
        },
        PaneEdit::Rename {
            pane: "b".into(),
            name: "C".into(),
        },
        PaneEdit::Move {
            pane: "b".into(),
            to: 0,
        },
        PaneEdit::Window {
            pane: "b".into(),
            window: 3,
        },
        PaneEdit::Handoff(super::carry::Handoff {
            from: "b".into(),
            to: super::carry::HandoffTarget::Pane("c".into()),
            tree: super::carry::HandoffTree::Shared,
        }),
        PaneEdit::Handoff(super::carry::Handoff {
            from: "b".into(),
            to: super::carry::HandoffTarget::New {
                template: None,
                provider: Some("codex".into()),
            },
            tree: super::carry::HandoffTree::Branched,
        }),
        PaneEdit::Relocate(super::carry::Relocate::Go {
            pane: "b".into(),
            host: "box".into(),
        }),
        PaneEdit::AddRepo {
            pane: "b".into(),
            repo: "../lib".into(),
        },
    ]
}

fn git_requests() -> Vec<WorktreeRequest> {
    vec![
        WorktreeRequest::TurnStarted { pane: 0 },
        WorktreeRequest::TurnEnded { pane: 0 },
        WorktreeRequest::Diff {
            pane: 0,
            scope: DiffScope::LastTurn,
        },
        WorktreeRequest::Bring {
            pane: 0,
            mode: BringMode::CherryPick,
            message: Some("wip".into()),
            repos: vec!["api".into()],
        },
        WorktreeRequest::Commit {
            pane: 0,
            message: "done".into(),
        },
        WorktreeRequest::CheckOverlaps,
        WorktreeRequest::Reject {
            pane: 0,
            scope: DiffScope::Overall,
            file: Box::new(file_diff()),
            hunk: Some(0),
        },
        WorktreeRequest::Reset { pane: 0 },
        WorktreeRequest::HandOff {
            pane: 0,
            message: None,
        },
    ]
}

fn git_events() -> Vec<WorktreeEvent> {
    vec![
        WorktreeEvent::Diff {
            pane: 0,
            scope: DiffScope::Overall,
            result: Ok(vec![file_diff()]),
        },
        WorktreeEvent::Diff {
            pane: 0,
            scope: DiffScope::Overall,
            result: Err("not a repository".into()),
        },
        WorktreeEvent::Overlaps(vec![Overlap {
            a: "a".into(),
            b: "b".into(),
            files: vec![OverlapFile {
                path: "f".into(),
                same_hunk: true,
            }],
        }]),
        WorktreeEvent::Brought {
            pane: 0,
            result: Ok(MergeOutcome {
                mode: BringMode::Merge,
                branch: "hive/a".into(),
                commits: 2,
                committed_first: true,
                files: vec!["f".into()],
            }),
            conflicted: vec!["g".into()],
        },
        WorktreeEvent::Changed(vec![(0, vec![("f".into(), 3, 1)])]),
        WorktreeEvent::Conflicts(Prediction {
            conflicts: vec![Conflict {
                a: "a".into(),
                b: None,
                files: vec!["f".into()],
            }],
            pending: vec!["a".into()],
        }),
        WorktreeEvent::Rejected {
            pane: 0,
            result: Ok("f".into()),
        },
        WorktreeEvent::Reset {
            pane: 0,
            result: Err("dirty".into()),
        },
        WorktreeEvent::HandedOff {
            pane: 0,
            result: Ok(HandOff {
                branch: "hive/a".into(),
                target: "main".into(),
                onto: "abc".into(),
                files: vec![ConflictedFile {
                    path: "f".into(),
                    code: "UU".into(),
                    regions: vec![(3, 9)],
                }],
            }),
        },
        WorktreeEvent::Committed {
            pane: 0,
            result: Ok(Some("abc".into())),
        },
    ]
}

fn snapshot_samples() -> Vec<ServerMsg> {
    vec![
        ServerMsg::SnapshotStart {
            server: ServerInfo {
                pid: 42,
                config: "~/.config/hive/config.toml".into(),
                config_path: Some(PathBuf::from("/home/u/.config/hive/config.toml")),
                socket: "/run/hive/main.sock".into(),
                started: 1_795_867_200,
            },
            focus: 1,
            away_since: Some(3),
            panes: 1,
        },
        ServerMsg::SnapshotPane(Box::new(pane())),
        ServerMsg::SnapshotEvents(vec![Logged {
            seq: 8,
            at: None,
            event: PaneEvent::Recalled("x".into()),
        }]),
        ServerMsg::SnapshotEnd,
    ]
}

fn server_samples() -> Vec<ServerMsg> {
    let mut out = snapshot_samples();
    out.extend(sample_events().into_iter().map(|e| {
        ServerMsg::Events(
            vec![PaneWire {
                pane: 0,
                event: WireEvent::Whole(e),
            }],
            Some(41),
        )
    }));
    out.extend([
        // A batch's first part: not yet all sent.
        ServerMsg::Events(
            vec![PaneWire {
                pane: 0,
                event: WireEvent::Grown {
                    live: true,
                    upsert: upsert(),
                    base: 3,
                },
            }],
            None,
        ),
        ServerMsg::Reset {
            pane: 0,
            snapshot: Box::new(pane()),
        },
        ServerMsg::Layout(vec![
            LayoutPane::Kept {
                id: "a".into(),
                name: Some("A".into()),
                window: 1,
                parent: None,
            },
            LayoutPane::New(Box::new(pane())),
        ]),
        ServerMsg::Notice {
            text: "made b".into(),
            focus: Some(1),
        },
        ServerMsg::Bye {
            reason: "hive kill".into(),
        },
    ]);
    out.extend(git_events().into_iter().map(ServerMsg::Worktree));
    out.extend([
        ServerMsg::Files {
            pane: 0,
            paths: vec!["src/a.rs".into()],
            complete: false,
        },
        ServerMsg::Mutes(Mutes {
            panes: ["a".to_owned()].into(),
            kinds: [ReasonKind::Bell].into(),
        }),
        ServerMsg::Sessions {
            pane: 0,
            list: vec![SessionSummary {
                session: "s".into(),
                path: PathBuf::new(),
                started: Some(1),
                updated: Some(2),
                first_prompt: "hi".into(),
                turns: 3,
                model: Some("m".into()),
            }],
        },
    ]);
    out.extend(
        super::forge::samples::news()
            .into_iter()
            .map(|news| ServerMsg::Forge { pane: 0, news }),
    );
    out
}

/// Every message's sample as the fixture holds it.
fn shape() -> String {
    let json = serde_json::json!({
        "protocol": PROTOCOL_VERSION,
        "hello": Hello {
            protocol: PROTOCOL_VERSION,
            hive: "<version>".into(),
        },
        "capabilities": Capabilities::structured(),
        "client": client_samples(),
        "server": server_samples(),
    });
    serde_json::to_string_pretty(&json).unwrap_or_default() + "\n"
}

fn fixture(version: u32) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/protocol")
        .join(format!("v{version}.json"))
}

#[test]
fn the_samples_hold_every_message() {
    let client: Vec<_> = client_samples().iter().map(client_variant).collect();
    let server: Vec<_> = server_samples().iter().map(server_variant).collect();
    for name in CLIENT_VARIANTS {
        assert!(client.contains(name), "no sample of ClientMsg::{name}");
    }
    for name in SERVER_VARIANTS {
        assert!(server.contains(name), "no sample of ServerMsg::{name}");
    }
    let mut commands = [false; COMMAND_VARIANTS];
    for c in sample_commands() {
        commands[command_variant(&c)] = true;
    }
    assert!(
        commands.iter().all(|&c| c),
        "a RunnerCommand without a sample"
    );
    let mut events = [false; EVENT_VARIANTS];
    for e in sample_events() {
        events[event_variant(&e)] = true;
    }
    assert!(events.iter().all(|&e| e), "a PaneEvent without a sample");
}

#[test]
fn every_sample_crosses_a_frame_and_back() {
    for m in client_samples() {
        let bytes = super::frame::encode(&m).expect("encodes");
        let back: ClientMsg = super::frame::decode(&bytes[4..]).expect("decodes");
        assert_eq!(back, m);
    }
    for m in server_samples() {
        let bytes = super::frame::encode(&m).expect("encodes");
        let back: ServerMsg = super::frame::decode(&bytes[4..]).expect("decodes");
        assert_eq!(back, m);
    }
}

/// The shape of every message is the one its version's fixture holds.
/// `HIVE_BLESS_PROTOCOL=1` writes the fixture of a version that has none
/// yet, never over one that exists.
#[test]
fn the_shape_is_pinned_to_the_protocol_version() {
    let now = shape();
    let path = fixture(PROTOCOL_VERSION);
    let pinned = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::env::var_os("HIVE_BLESS_PROTOCOL").is_some() {
                std::fs::write(&path, &now).expect("writes the fixture");
                return;
            }
            panic!(
                "no fixture for protocol {PROTOCOL_VERSION}: HIVE_BLESS_PROTOCOL=1 cargo test \
                 --lib protocol::shape writes {}",
                path.display()
            );
        }
        Err(e) => panic!("{}: {e}", path.display()),
    };
    if pinned != now {
        let line = pinned
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| pinned.lines().count().min(now.lines().count()));
        let at = |t: &str| t.lines().nth(line).unwrap_or("<end>").to_owned();
        panic!(
            "the protocol changed shape without a version bump: {} line {}\n  pinned: {}\n  now:    {}\n\
             bump PROTOCOL_VERSION (src/protocol/mod.rs), then HIVE_BLESS_PROTOCOL=1 writes \
             the new version's fixture",
            path.display(),
            line + 1,
            at(&pinned),
            at(&now)
        );
    }
}
