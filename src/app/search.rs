//! The app side of search (`Ctrl+B /`): the query, the results the search
//! worker sent back, the selection, and jumping to a hit. Items go to the
//! worker as `Request::Docs` when they are new or changed since the last
//! sync; the event loop drains the app's `outbox` into the worker and feeds its
//! `SearchEvent`s back through `search_event`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::state::{App, Overlay};
use super::transcript::{Entry, EntryKind};
use crate::protocol::event::Origin;
use crate::protocol::pane::RunnerCommand;
use crate::protocol::text::SharedText;
use crate::protocol::upsert::UpsertKind;
use crate::search::{Doc, Request, SearchEvent};

/// The search document of a terminal pane's text (after its transcript's
/// entries, which are notices).
const TERMINAL_ENTRY: usize = usize::MAX;

/// The searchable text of an entry and its label; `None` for footers.
fn doc_text(e: &Entry) -> Option<(String, SharedText, Option<chrono::DateTime<chrono::Utc>>)> {
    match &e.kind {
        EntryKind::Item(u) => {
            let time = Some(u.source_timestamp);
            match &u.kind {
                UpsertKind::Message { content, origin } => {
                    let label = match origin {
                        Origin::User => "you",
                        Origin::Agent => "agent",
                        Origin::System => "system",
                    };
                    Some((label.into(), content.clone(), time))
                }
                UpsertKind::Thinking { content, .. } => {
                    Some(("thinking".into(), content.clone(), time))
                }
                UpsertKind::ToolCall {
                    tool_name,
                    arguments,
                    output,
                    ..
                } => {
                    let args = super::inbox::summarize_args(arguments);
                    let out = output.as_deref().unwrap_or_default();
                    let text = format!("{args}\n{out}").into();
                    Some((format!("tool {tool_name}"), text, time))
                }
            }
        }
        EntryKind::TurnError { code, message } => {
            Some(("error".into(), format!("{code}: {message}").into(), None))
        }
        EntryKind::Notice { text, .. } => Some(("notice".into(), text.as_str().into(), None)),
        EntryKind::Footer { .. } => None,
    }
}

impl App {
    /// Sends the worker every item new or changed since the last sync.
    fn sync_search_docs(&mut self) {
        let s = &mut self.search;
        s.synced.resize_with(self.panes.len(), Vec::new);
        let mut docs = Vec::new();
        for (pane, (p, synced)) in self.panes.iter().zip(&mut s.synced).enumerate() {
            let entries = &p.conversation.transcript.entries;
            synced.resize(entries.len(), None);
            for (entry, (e, seen)) in entries.iter().zip(synced.iter_mut()).enumerate() {
                if *seen == Some(e.rev) {
                    continue;
                }
                *seen = Some(e.rev);
                if let Some((label, text, time)) = doc_text(e) {
                    docs.push(Doc {
                        pane,
                        entry,
                        rev: e.rev,
                        label,
                        time,
                        text,
                    });
                }
            }
        }
        if !docs.is_empty() {
            self.outbox.search(Request::Docs(docs));
        }
    }

    /// Asks each terminal pane's runner for its text (scrollback and
    /// screen: only the runner has the scrollback); `search_terminal`
    /// indexes the answer.
    fn ask_terminal_text(&mut self) {
        let asks: Vec<(usize, RunnerCommand)> = (self.panes.iter().enumerate())
            .filter_map(|(i, p)| {
                let s = p.terminal.screen.as_ref()?;
                let last = (s.history + usize::from(s.rows)).checked_sub(1)?;
                let to = (last, s.cols.saturating_sub(1));
                Some((i, RunnerCommand::CopyTerminal { from: (0, 0), to }))
            })
            .collect();
        for (i, cmd) in asks {
            self.search.term_asked.insert(i);
            self.send(i, cmd);
        }
    }

    /// A terminal pane's text, asked for the index: one document (entry
    /// [`TERMINAL_ENTRY`]), and the open query runs again to find it.
    /// False when `pane`'s text was not asked for search (a copy).
    pub(super) fn search_terminal(&mut self, pane: usize, text: &str) -> bool {
        if !self.search.term_asked.remove(&pane) {
            return false;
        }
        let same = (self.search.term_text.get(&pane)).is_some_and(|t| t.with_str(|t| t == text));
        if same {
            return true;
        }
        let text = SharedText::from(text);
        self.search.term_text.insert(pane, text.clone());
        self.search.term_rev += 1;
        self.outbox.search(Request::Docs(vec![Doc {
            pane,
            entry: TERMINAL_ENTRY,
            rev: self.search.term_rev,
            label: "terminal".into(),
            time: None,
            text,
        }]));
        if self.overlay == Overlay::Search && !self.search.query.is_empty() {
            self.run_search();
        }
        true
    }

    pub(crate) fn open_search(&mut self) {
        self.overlay = Overlay::Search;
        self.search.active = false;
        self.search.selected = !self.search.query.is_empty();
        self.ask_terminal_text();
        self.sync_search_docs();
        if !self.search.query.is_empty() {
            self.run_search();
        }
    }

    fn run_search(&mut self) {
        self.sync_search_docs();
        let s = &mut self.search;
        s.generation += 1;
        s.done = false;
        s.sel = 0;
        if s.query.is_empty() {
            s.hits.clear();
            s.done = true;
            return;
        }
        let query = Request::Query {
            generation: s.generation,
            text: s.query.clone(),
        };
        self.outbox.search(query);
    }

    /// Results from the worker (older generations are dropped).
    pub fn search_event(&mut self, ev: SearchEvent) {
        match ev {
            SearchEvent::Results {
                generation,
                hits,
                done,
            } => {
                if generation != self.search.generation {
                    return;
                }
                self.search.hits = hits;
                self.search.done = done;
                self.search.sel = self
                    .search
                    .sel
                    .min(self.search.hits.len().saturating_sub(1));
            }
        }
    }

    /// Typing edits the query; ↑/↓ select; Enter jumps; Esc closes.
    pub(super) fn search_key(&mut self, ev: KeyEvent) {
        let s = &mut self.search;
        let replace = std::mem::take(&mut s.selected);
        match ev.code {
            KeyCode::Esc => self.overlay = Overlay::None,
            KeyCode::Up => s.sel = s.sel.saturating_sub(1),
            KeyCode::Down => s.sel = (s.sel + 1).min(s.hits.len().saturating_sub(1)),
            KeyCode::PageUp => s.sel = s.sel.saturating_sub(10),
            KeyCode::PageDown => s.sel = (s.sel + 10).min(s.hits.len().saturating_sub(1)),
            KeyCode::Enter if !s.hits.is_empty() => {
                self.overlay = Overlay::None;
                self.search.active = true;
                self.jump_to_hit();
            }
            KeyCode::Backspace if replace => {
                s.query.clear();
                self.run_search();
            }
            KeyCode::Backspace => {
                s.query.pop();
                self.run_search();
            }
            KeyCode::Char('u') if ev.modifiers.contains(KeyModifiers::CONTROL) => {
                s.query.clear();
                self.run_search();
            }
            KeyCode::Char(c)
                if !ev
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                if replace {
                    s.query.clear();
                }
                s.query.push(c);
                self.run_search();
            }
            _ => {}
        }
    }

    /// Next (`dir` 1) or previous (-1) hit after a jump.
    pub(crate) fn search_step(&mut self, dir: isize) {
        let n = self.search.hits.len();
        if !self.search.active || n == 0 {
            self.set_status("no search: Ctrl+B / to search");
            return;
        }
        self.search.sel = (self.search.sel as isize + dir).rem_euclid(n as isize) as usize;
        self.jump_to_hit();
    }

    /// Focuses the selected hit's pane, scrolls its entry into view (the
    /// next frame measures where) and highlights the query there.
    fn jump_to_hit(&mut self) {
        let Some(h) = self.search.hits.get(self.search.sel).cloned() else {
            return;
        };
        let n = self.search.hits.len();
        let query = self.search.query.clone();
        self.set_focus(h.pane);
        if h.entry == TERMINAL_ENTRY {
            self.scroll_terminal_to(&h);
            let sel = self.search.sel + 1;
            self.set_status(format!(
                "match {sel}/{n} · terminal · Alt+N / Alt+Shift+N next/prev"
            ));
            return;
        }
        let hidden = !h.label.starts_with("you") && !h.label.starts_with("agent");
        if hidden && !self.full_view {
            self.toggle_full_view();
        }
        if let Some(p) = self.panes.get_mut(h.pane) {
            if hidden && !p.expanded {
                p.expanded = true;
                p.conversation.transcript.invalidate();
            }
            p.reveal = Some(h.entry);
            p.highlight = Some(query);
        }
        let sel = self.search.sel + 1;
        self.set_status(format!(
            "match {sel}/{n} · {} · Alt+N / Alt+Shift+N next/prev",
            h.label
        ));
    }
}

impl App {
    /// Scrolls a terminal pane's view so the hit's line is on it: lines
    /// are counted from the end of the text, as the view scrolls up from
    /// the live screen (a line the terminal wrapped counts once).
    fn scroll_terminal_to(&mut self, h: &crate::search::Hit) {
        let Some(text) = self.search.term_text.get(&h.pane) else {
            return;
        };
        let below = text.with_str(|t| {
            t.get(h.offset..)
                .map_or(0, |rest| rest.matches('\n').count())
        });
        let Some(p) = self.panes.get_mut(h.pane) else {
            return;
        };
        let Some(rows) = p.terminal.screen.as_ref().map(|s| usize::from(s.rows)) else {
            return;
        };
        // The hit's line at the middle of the view, or the live screen.
        let scroll = below.saturating_sub(rows / 2);
        let now = p.terminal.scroll;
        p.terminal.scroll_by(scroll as isize - now as isize);
    }
}
