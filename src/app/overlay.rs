//! What each overlay shows: the search, the overview, the fan-out and the
//! diff view. The state (`App`) holds these and the feature files drive
//! them, so they sit in a leaf module of their own: the features import
//! the state, the state imports this, and nothing points back.

use std::collections::{BTreeSet, HashMap};
use std::time::Instant;

use crate::protocol::git::{BringMode, DiffScope, FileDiff};
use crate::search::Hit;

/// The search overlay: the query, its hits and what the worker has seen.
#[derive(Debug, Default)]
pub struct Search {
    pub query: String,
    pub hits: Vec<Hit>,
    pub sel: usize,
    /// Bumped per query; results of older ones are dropped.
    pub generation: u64,
    /// The results for `generation` are complete.
    pub done: bool,
    /// Jumped to a hit: the step keys move through `hits`.
    pub(crate) active: bool,
    /// The search was reopened on its last query, shown selected: typing
    /// replaces it (as a browser's find box does), other keys keep it.
    pub selected: bool,
    /// Per pane, the revision of each entry last sent to the worker.
    pub(super) synced: Vec<Vec<Option<u64>>>,
    /// Terminal panes whose text was asked of their runner for the index
    /// (its `TerminalText` answer is indexed, not copied).
    pub(super) term_asked: std::collections::HashSet<usize>,
    /// Each terminal pane's text as last indexed (to find a hit's line).
    pub(super) term_text: HashMap<usize, crate::protocol::text::SharedText>,
    /// Revision of the terminal documents sent.
    pub(super) term_rev: u64,
}

/// The overview table: its selection and when each pane changed state.
#[derive(Debug, Default)]
pub struct Overview {
    /// The selected row (in `sort` order).
    pub sel: usize,
    /// When each pane entered its current turn state.
    pub(crate) state_since: HashMap<usize, Instant>,
    /// The column the rows are sorted by (`s` cycles).
    pub sort: OverviewSort,
}

/// What the overview's rows are sorted by: pane order, or the most first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OverviewSort {
    #[default]
    Pane,
    Cpu,
    Memory,
    Cost,
}

impl OverviewSort {
    pub(crate) fn next(self) -> Self {
        match self {
            Self::Pane => Self::Cpu,
            Self::Cpu => Self::Memory,
            Self::Memory => Self::Cost,
            Self::Cost => Self::Pane,
        }
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Self::Pane => "pane",
            Self::Cpu => "cpu",
            Self::Memory => "memory",
            Self::Cost => "cost",
        }
    }
}

/// The chooser's state and the last fan-out's runs.
#[derive(Debug, Default)]
pub struct FanOut {
    /// Chosen panes, by index.
    pub chosen: BTreeSet<usize>,
    pub sel: usize,
    /// The prompt being typed (`Some` once the panes are chosen).
    pub prompt: Option<String>,
    /// The last fan-out: its prompt and one run per pane.
    pub sent: String,
    pub runs: Vec<Run>,
    /// The compare view's selected run and scroll of the answers.
    pub(crate) compare_sel: usize,
    pub scroll: u16,
    /// Mark the words each answer has that the selected one lacks.
    pub words: bool,
    /// "Take this one": where that stands.
    pub take: Option<Take>,
    /// The copies of the last best-of-N, by id (their runs are the ones
    /// a take cleans up by closing them).
    pub best_of: Vec<String>,
    /// A best-of-N whose copies the server is still making.
    pub pending: Option<PendingBestOf>,
}

/// `/fanout N`: the copies asked for and the prompt they get once all are
/// there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingBestOf {
    pub ids: Vec<String>,
    pub prompt: Option<String>,
}

/// Taking one answer of a fan-out: merge its worktree, then maybe reset
/// the others'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Take {
    /// Waiting for `y` to merge this pane's worktree.
    Confirm(usize),
    /// The merge is out.
    Merging(usize),
    /// Merged; waiting for `y` to reset these panes' worktrees.
    ResetOthers(Vec<usize>),
    /// Merged a best-of-N run; waiting for `y` to close these copies and
    /// remove their worktrees and branches.
    DiscardOthers(Vec<usize>),
    /// What happened: (succeeded, text).
    Done(bool, String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub pane: usize,
    /// The pane's transcript length when the prompt went out.
    pub from: usize,
    pub(crate) sent_at: Instant,
}

/// The diff view: one pane's changes, overall or for its last turn.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffView {
    pub pane: usize,
    pub scope: DiffScope,
    pub files: Vec<FileDiff>,
    /// A request is out; the files shown may be stale.
    pub loading: bool,
    pub error: Option<String>,
    /// The selected file.
    pub selected: usize,
    /// Lines of the selected file's diff scrolled past.
    pub scroll: u16,
    /// Result of the last merge / cherry-pick: (succeeded, text).
    pub message: Option<(bool, String)>,
    /// Waiting for `y` before doing this.
    pub confirm: Option<Confirm>,
    /// A merge was refused for conflicts in these files: `h` hands them to
    /// the agent, `a` aborts.
    pub conflict: Option<Vec<String>>,
    /// Hunks accepted, comments, the selected hunk.
    pub review: Review,
}

/// What the diff view asks to confirm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirm {
    /// Bring work home: every repository (`None`), or one of a workspace.
    Bring(BringMode, Option<String>),
    /// Commit the worktree on its branch with this message.
    Commit(String),
    /// Revert this hunk of the selected file (`None`: the whole file).
    Reject(Option<usize>),
}

impl DiffView {
    pub(super) fn new(pane: usize, scope: DiffScope) -> Self {
        Self {
            pane,
            scope,
            files: Vec::new(),
            loading: true,
            error: None,
            selected: 0,
            scroll: 0,
            message: None,
            confirm: None,
            conflict: None,
            review: Review::default(),
        }
    }

    pub(crate) fn selected_file(&self) -> Option<&FileDiff> {
        self.files.get(self.selected)
    }

    /// Selects file `i` at its top: its first hunk, no line picked (a line
    /// picked with `J` belongs to the file it was picked in).
    pub(crate) fn select_file(&mut self, i: usize) {
        self.selected = i;
        self.scroll = 0;
        self.review.hunk = 0;
        self.review.line = None;
    }
}

/// What the user decided in this view: hunks accepted, comments written,
/// the comment being typed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Review {
    /// The selected hunk of the selected file.
    pub hunk: usize,
    /// The selected line of that hunk (an index into its lines), once
    /// `J`/`K` moved to one: `C` comments on it instead of the hunk.
    pub line: Option<usize>,
    /// (path, hunk index) accepted.
    pub accepted: BTreeSet<(String, usize)>,
    pub comments: Vec<crate::app::comment::ReviewComment>,
    /// A comment being typed on the selected hunk.
    pub composing: Option<String>,
}

impl Review {
    pub fn is_accepted(&self, path: &str, hunk: usize) -> bool {
        self.accepted.contains(&(path.to_owned(), hunk))
    }

    /// Every hunk of `f` accepted (a file with no hunks: never).
    pub fn file_accepted(&self, f: &crate::protocol::git::FileDiff) -> bool {
        !f.hunks.is_empty() && (0..f.hunks.len()).all(|i| self.is_accepted(&f.shown(), i))
    }

    pub fn comments_on(&self, path: &str) -> usize {
        self.comments.iter().filter(|c| c.path == path).count()
    }

    /// The comments on hunk `index` of `path`.
    pub fn comments_at<'a>(
        &'a self,
        path: &'a str,
        index: usize,
    ) -> impl Iterator<Item = &'a crate::app::comment::ReviewComment> + 'a {
        self.comments
            .iter()
            .filter(move |c| c.path == path && c.index == index)
    }
}
