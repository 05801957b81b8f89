//! The live recorder: a `runner::Recorder` that turns one pane's events into
//! canonical records and keeps its session state current.
//!
//! The user's message is appended as soon as it is complete (a typed prompt is
//! never lost). The agent's side of a turn is kept in memory — latest upsert
//! per item — and written in one append when the turn ends: a crash loses at
//! most the turn in flight, and a torn write can only hit the last line. A
//! graceful stop mid-turn (quit, runner dropped) writes what the turn had, as
//! `interrupted`; a killed one leaves the checkpoint of `history::cut`,
//! which the next start appends, as `cut`. No fsync on appends: the page cache survives a crash of
//! hive; only the small state file is synced, on change.

use indexmap::IndexMap;

use super::Recorder;
use super::assemble::TurnAssembler;
use super::held::Held;
use super::record::{Block, Meta, Record, Role, UsageMeta, now_ms};
use super::state::PaneState;
use super::store::SessionWriter;
use crate::event::Origin;
use crate::protocol::pane::PaneEvent;
use crate::upsert::{ToolClock, TurnEvent, TurnStatus, Upsert, UpsertKind, UpsertStatus};

/// A turn whose agent side is not written yet.
#[derive(Default)]
struct LiveTurn {
    /// When the turn started (its footer's duration).
    started: Option<tokio::time::Instant>,
    model: Option<String>,
    provider: Option<String>,
    /// Every agent item, in first-seen order: an open one's latest
    /// upsert, a closed call only as its records need it (`Held`).
    items: IndexMap<String, Held>,
    /// Times the tool calls.
    clock: ToolClock,
}

impl LiveTurn {
    /// A tool call's upsert: its first sight starts its clock, its result
    /// stops it (tokio's clock, which tests can pause); the milliseconds it
    /// ran, when `u` closes it.
    fn time(&mut self, u: &Upsert) -> Option<u64> {
        let now = tokio::time::Instant::now().into_std();
        let d = self.clock.time(u, now)?;
        Some(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

pub(crate) struct HistoryRecorder {
    agent_id: String,
    session: String,
    writer: SessionWriter,
    state: PaneState,
    state_path: std::path::PathBuf,
    /// `hive run` leaves the stored queue alone (it never drains it).
    track_queue: bool,
    turns: IndexMap<String, LiveTurn>,
    /// A write failed and the user has not been told yet.
    failure: Option<String>,
    /// Kinds of write (append, state) the user was told about; quiet until
    /// one of that kind succeeds again.
    failing: std::collections::HashSet<&'static str>,
    /// The open turns on disk (`history::cut`), and when last written.
    cut: super::cut::Checkpoint,
    checkpointed: Option<tokio::time::Instant>,
    /// Items started or finished since the checkpoint was last written.
    unsaved: usize,
}

/// How often a streaming turn's checkpoint is rewritten at most.
const CHECKPOINT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Each rewrite holds the whole open turn, so a finished item alone
/// rewrites it only once the items changed since the last one are this
/// share of the turn's (one in ten): a turn of n tool calls then costs
/// O(n) records written, not O(n²) (3,000 calls took minutes to record).
const CHECKPOINT_SHARE: usize = 10;

/// A turn of this many items gives the memory it held back to the system
/// when it ends (see `crate::heap`).
const BIG_TURN: usize = 1_000;

/// Why the checkpoint may be rewritten.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A turn started or ended: at once.
    Turn,
    /// An item started or finished: once enough of them did, or a second on.
    Item,
    /// Text streamed into an item: at most once a second.
    Stream,
}

impl HistoryRecorder {
    pub(crate) fn new(
        writer: SessionWriter,
        state: PaneState,
        state_path: std::path::PathBuf,
        track_queue: bool,
    ) -> Self {
        let cut = super::cut::Checkpoint::of(writer.path());
        Self {
            agent_id: state.agent_id.clone(),
            session: state.session.clone(),
            writer,
            state,
            state_path,
            track_queue,
            turns: IndexMap::new(),
            failure: None,
            failing: Default::default(),
            cut,
            checkpointed: None,
            unsaved: 0,
        }
    }

    /// Rewrites the open turns' checkpoint as `change` calls for (see
    /// `Change`); removed when no turn is open.
    fn checkpoint(&mut self, change: Change) {
        if self.turns.is_empty() {
            self.checkpointed = None;
            self.unsaved = 0;
            self.cut.clear();
            return;
        }
        if change == Change::Item {
            self.unsaved += 1;
        }
        let due = self
            .checkpointed
            .is_none_or(|at| at.elapsed() >= CHECKPOINT_EVERY);
        let held: usize = self.turns.values().map(|t| t.items.len()).sum();
        let enough = self.unsaved * CHECKPOINT_SHARE >= held;
        let now = match change {
            Change::Turn => true,
            Change::Item => enough || due,
            Change::Stream => due,
        };
        if !now {
            return;
        }
        let cut = Meta {
            stop_reason: Some(super::cut::STOP_CUT.into()),
            ..Meta::default()
        };
        let records: Vec<Record> = self
            .turns
            .iter()
            .flat_map(|(id, turn)| self.assemble(id, turn, cut.clone()))
            .collect();
        let result = self.cut.write(&records);
        self.outcome(result, "checkpoint");
        self.checkpointed = Some(tokio::time::Instant::now());
        self.unsaved = 0;
    }

    fn outcome(&mut self, result: Result<(), super::StoreError>, what: &'static str) {
        match result {
            Ok(()) => {
                self.failing.remove(what);
            }
            Err(e) => {
                tracing::warn!(error = %e, "history: {what} failed");
                if self.failing.insert(what) {
                    self.failure = Some(e.to_string());
                }
            }
        }
    }

    fn append(&mut self, records: &[Record]) {
        let result = self.writer.append(records);
        self.outcome(result, "append");
    }

    fn save_state(&mut self) {
        let result = self.state.save(&self.state_path);
        self.outcome(result, "saving the session state");
    }

    fn upsert(&mut self, u: &Upsert) {
        if let UpsertKind::Message {
            origin: Origin::User,
            content,
        } = &u.kind
        {
            if u.status == UpsertStatus::Complete {
                let mut r = Record::new(
                    &self.agent_id,
                    &self.session,
                    u.source_timestamp.timestamp_millis(),
                    Role::User,
                );
                r.turn_id = Some(u.turn_id.clone());
                r.content = vec![Block::Text {
                    text: content.to_string(),
                }];
                self.append(&[r]);
            }
            return;
        }
        let turn = self.turns.entry(u.turn_id.clone()).or_default();
        let took = if matches!(u.kind, UpsertKind::ToolCall { .. }) {
            turn.time(u)
        } else {
            None
        };
        turn.items.insert(u.item_id.clone(), Held::of(u, took));
        self.checkpoint(if u.status == UpsertStatus::Update {
            Change::Stream
        } else {
            Change::Item
        });
    }

    fn turn_event(&mut self, t: &TurnEvent) {
        match t {
            TurnEvent::TurnStarted {
                turn_id,
                model_id,
                provider_id,
                ..
            } => {
                let turn = self.turns.entry(turn_id.clone()).or_default();
                turn.started = Some(tokio::time::Instant::now());
                turn.model = Some(model_id.clone());
                turn.provider = Some(provider_id.clone());
                self.checkpoint(Change::Turn);
            }
            TurnEvent::TurnComplete {
                turn_id,
                status,
                usage,
                finish_reason,
                ..
            } => {
                let meta = Meta {
                    usage: usage.as_ref().map(UsageMeta::from),
                    stop_reason: Some(match status {
                        TurnStatus::Cancelled => "cancelled".into(),
                        TurnStatus::Completed => {
                            finish_reason.clone().unwrap_or_else(|| "completed".into())
                        }
                    }),
                    ..Meta::default()
                };
                self.add_to_totals(usage.as_ref());
                if let Some(model) = usage.as_ref().and_then(|u| u.model.clone())
                    && let Some(turn) = self.turns.get_mut(turn_id)
                {
                    turn.model = Some(model);
                }
                self.end_turn(turn_id, meta);
            }
            TurnEvent::TurnError {
                turn_id,
                error_code,
                error_message,
                ..
            } => {
                let meta = Meta {
                    stop_reason: Some("error".into()),
                    error_code: Some(error_code.clone()),
                    error_message: Some(error_message.clone()),
                    ..Meta::default()
                };
                self.end_turn(turn_id, meta);
            }
        }
    }

    /// A turn ended as the pane counts it (completed or cancelled): its
    /// usage joins the session's totals.
    fn add_to_totals(&mut self, usage: Option<&crate::event::Usage>) {
        let totals = self.state.totals.get_or_insert_default();
        totals.turns += 1;
        if let Some(u) = usage {
            totals.usage.accumulate(u);
        }
        self.save_state();
    }

    fn end_turn(&mut self, turn_id: &str, mut meta: Meta) {
        let turn = self.turns.shift_remove(turn_id).unwrap_or_default();
        meta.duration_ms = turn
            .started
            .map(|t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX));
        let records = self.assemble(turn_id, &turn, meta);
        self.append(&records);
        self.checkpoint(Change::Turn);
        let big = turn.items.len() >= BIG_TURN;
        drop((turn, records));
        if big {
            // What a long turn held in flight is free now; without this a
            // server keeps the RSS of its longest turn (9 panes of 10,000
            // tool calls: 364 MB held at rest in a debug build).
            crate::heap::give_back_freed();
        }
    }

    fn assemble(&self, turn_id: &str, turn: &LiveTurn, mut meta: Meta) -> Vec<Record> {
        let mut a = TurnAssembler::new(
            &self.agent_id,
            &self.session,
            Some(turn_id.to_owned()),
            now_ms(),
        );
        a.timestamp = 0;
        for item in turn.items.values() {
            item.add_to(&mut a);
        }
        if a.timestamp == 0 {
            a.timestamp = now_ms();
        }
        meta.provider = turn
            .provider
            .clone()
            .or_else(|| self.state.provider.clone())
            .filter(|p| !p.is_empty());
        meta.model = turn
            .model
            .clone()
            .or_else(|| self.state.model.clone())
            .filter(|m| !m.is_empty());
        a.meta = meta;
        a.finish()
    }
}

impl HistoryRecorder {
    /// From now on records go to `session`'s file; the state remembers the
    /// handle of the session left behind (`PaneState::switch_to`).
    fn switch(&mut self, session: &str, resume: &Option<String>) {
        // A turn left open (its end never came) stays with its session.
        self.flush_open_turns();
        let dir = self
            .writer
            .path()
            .parent()
            .map(std::path::Path::to_path_buf)
            .unwrap_or_default();
        let name = format!("{}.jsonl", super::store::safe_name(session));
        self.writer = SessionWriter::new(dir.join(name));
        self.cut = super::cut::Checkpoint::of(self.writer.path());
        session.clone_into(&mut self.session);
        self.state.switch_to(session, resume.clone());
        self.save_state();
    }

    /// Writes what open turns produced, as `interrupted`.
    fn flush_open_turns(&mut self) {
        let turns: Vec<(String, LiveTurn)> = self.turns.drain(..).collect();
        for (turn_id, turn) in turns {
            if turn.items.is_empty() {
                continue;
            }
            let meta = Meta {
                stop_reason: Some("interrupted".into()),
                ..Meta::default()
            };
            let records = self.assemble(&turn_id, &turn, meta);
            self.append(&records);
        }
        self.checkpoint(Change::Turn);
    }
}

impl Recorder for HistoryRecorder {
    fn chose(&mut self, chosen: &super::Chosen) {
        if self.state.chosen != *chosen {
            self.state.chosen = chosen.clone();
            self.save_state();
        }
    }

    fn chosen(&self) -> Option<super::Chosen> {
        Some(self.state.chosen.clone())
    }

    fn take_failure(&mut self) -> Option<String> {
        self.failure.take()
    }

    /// A live tail shows an item before its first upsert: keep the place it
    /// has on screen (its upserts bring the content).
    fn shown(&mut self, u: &Upsert) {
        if let UpsertKind::Message {
            origin: Origin::User,
            ..
        } = u.kind
        {
            return;
        }
        let turn = self.turns.entry(u.turn_id.clone()).or_default();
        if !turn.items.contains_key(&u.item_id) {
            turn.items.insert(u.item_id.clone(), Held::of(u, None));
        }
    }

    fn record(&mut self, event: &PaneEvent) {
        match event {
            PaneEvent::Upsert(u) => self.upsert(u),
            PaneEvent::Turn(t) => self.turn_event(t),
            PaneEvent::Session(info) => {
                let mut changed = false;
                if let Some(h) = &info.resume_handle
                    && self.state.resume.as_ref() != Some(h)
                {
                    self.state.resume = Some(h.clone());
                    changed = true;
                }
                if info.model.is_some() && info.model != self.state.model {
                    self.state.model = info.model.clone();
                    changed = true;
                }
                if changed {
                    self.save_state();
                }
            }
            PaneEvent::SessionSwitched { session, resume } => self.switch(session, resume),
            PaneEvent::Queue(queue) if self.track_queue && *queue != self.state.queue => {
                self.state.queue = queue.clone();
                self.save_state();
            }
            _ => {}
        }
    }
}

impl Drop for HistoryRecorder {
    /// The pane is going away mid-turn (quit, restart of the runner): keep
    /// what the turn produced rather than lose it.
    fn drop(&mut self) {
        self.flush_open_turns();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::pane::PaneEvent;

    /// A recorder writing into `dir`, its turn `t` started; and the
    /// session file it writes.
    fn recording(dir: &std::path::Path) -> (HistoryRecorder, std::path::PathBuf) {
        let session = dir.join("s.jsonl");
        let mut rec = HistoryRecorder::new(
            SessionWriter::new(session.clone()),
            PaneState::default(),
            dir.join("state.json"),
            false,
        );
        rec.record(&PaneEvent::Turn(TurnEvent::TurnStarted {
            turn_id: "t".into(),
            session_id: "s".into(),
            model_id: "m".into(),
            provider_id: "p".into(),
        }));
        (rec, session)
    }

    fn call(i: usize, status: UpsertStatus) -> Upsert {
        let mut u = Upsert::test_message(&format!("c{i}"), status, Default::default());
        u.kind = UpsertKind::ToolCall {
            tool_name: "Read".into(),
            arguments: serde_json::json!({ "file_path": format!("src/f{i}.rs") }),
            call_id: format!("call{i}"),
            output: (status == UpsertStatus::Complete).then(|| format!("line of {i}")),
            output_is_error: None,
            display: None,
        };
        u
    }

    /// A turn of 2,000 tool calls: the checkpoint rewrites cost records in
    /// proportion to the turn (each finished item rewrote the whole turn:
    /// 4,004,001 records), and what it holds is never more than a tenth
    /// behind the turn.
    #[tokio::test(start_paused = true)]
    async fn a_long_turn_checkpoints_in_linear_writes() {
        let dir = tempfile::tempdir().unwrap();
        let (mut rec, session) = recording(dir.path());
        let n = 2_000;
        for i in 0..n {
            rec.record(&PaneEvent::Upsert(call(i, UpsertStatus::Create)));
            rec.record(&PaneEvent::Upsert(call(i, UpsertStatus::Complete)));
        }
        let written = rec.cut.written;
        assert!(written <= 30 * n, "{written} records written for {n} calls");
        let held = std::fs::read_to_string(super::super::cut::path_of(&session)).unwrap();
        let results = held.matches("line of ").count();
        assert!(
            results * 10 >= n * 9,
            "{results} of {n} results checkpointed"
        );
        assert!(written > 0);
    }

    /// A closed call is kept only as its records need it (`Held`): the
    /// turn's records still say how each call ended — a result, a failure
    /// with its reason, an interrupt, a call its turn cut — and how long each
    /// call seen running took, in first-seen order.
    #[tokio::test(start_paused = true)]
    async fn folded_calls_write_the_records_the_upserts_did() {
        let dir = tempfile::tempdir().unwrap();
        let (mut rec, session) = recording(dir.path());
        for i in 0..4 {
            rec.record(&PaneEvent::Upsert(call(i, UpsertStatus::Create)));
        }
        tokio::time::advance(std::time::Duration::from_millis(1500)).await;
        rec.record(&PaneEvent::Upsert(call(0, UpsertStatus::Complete)));
        let mut failed = call(1, UpsertStatus::Error);
        failed.error_message = Some("refused".into());
        rec.record(&PaneEvent::Upsert(failed));
        let mut cut = call(2, UpsertStatus::Interrupted);
        if let UpsertKind::ToolCall { output, .. } = &mut cut.kind {
            *output = Some("half".into());
        }
        rec.record(&PaneEvent::Upsert(cut));
        rec.record(&PaneEvent::Turn(TurnEvent::TurnComplete {
            turn_id: "t".into(),
            session_id: "s".into(),
            status: TurnStatus::Cancelled,
            usage: None,
            finish_reason: None,
        }));
        let records: Vec<_> = crate::history::store::read_all(&session)
            .unwrap()
            .records
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        /// A result: its call, text, failure and time.
        type Result = (Option<String>, String, Option<bool>, Option<u64>);
        let results: Vec<Result> = records
            .iter()
            .filter(|r| r.role == super::Role::ToolResult)
            .map(|r| {
                let text = match r.content.first() {
                    Some(Block::Text { text }) => text.clone(),
                    other => panic!("{other:?}"),
                };
                (r.tool_call_id.clone(), text, r.is_error, r.duration_ms)
            })
            .collect();
        assert_eq!(
            results,
            vec![
                (
                    Some("call0".into()),
                    "line of 0".into(),
                    Some(false),
                    Some(1500)
                ),
                (
                    Some("call1".into()),
                    "refused".into(),
                    Some(true),
                    Some(1500)
                ),
                (Some("call2".into()), "half".into(), Some(true), Some(1500)),
            ]
        );
        let calls: Vec<String> = records
            .iter()
            .filter(|r| r.role == super::Role::Assistant)
            .flat_map(|r| &r.content)
            .filter_map(|b| match b {
                Block::ToolCall { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(calls, ["call0", "call1", "call2", "call3"]);
    }
}
