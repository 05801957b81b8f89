//! The `@` file finder: every file under a pane's working directory,
//! listed by the pane's server off its loop ([`list`]: git-aware,
//! `.gitignore`, `.ignore`, hidden files skipped, symlinks not followed,
//! never outside the directory), here or on another machine, and handed to
//! a console's finder that waits for them ([`FileFinder::awaiting`],
//! [`FileFinder::fill`]): a `nucleo` matcher, which scores them on its own
//! threads. The UI thread only sets the query and reads the top matches, so
//! 100k files never stall a keypress.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nucleo::pattern::{CaseMatching, Normalization};
use nucleo::{Config, Injector, Nucleo, Utf32String};

/// Wakes the UI when there is something new to show. Called from other
/// threads; cheap, and may be called often.
pub(crate) type Wake = Arc<dyn Fn() + Send + Sync>;

pub(crate) struct FileFinder {
    matcher: Nucleo<String>,
    root: PathBuf,
    query: String,
    walked: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
}

impl std::fmt::Debug for FileFinder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileFinder")
            .field("root", &self.root)
            .field("query", &self.query)
            .finish_non_exhaustive()
    }
}

impl FileFinder {
    /// A finder of files listed elsewhere: none until [`Self::fill`].
    pub(crate) fn awaiting(wake: Wake) -> Self {
        Self {
            matcher: Nucleo::new(
                Config::DEFAULT.match_paths(),
                Arc::new(move || wake()),
                None,
                1,
            ),
            root: PathBuf::new(),
            query: String::new(),
            walked: Arc::new(AtomicBool::new(false)),
            count: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The files listed elsewhere (relative paths), all of them: the
    /// listing is complete.
    pub(crate) fn fill(&mut self, paths: Vec<String>) {
        if self.walked.swap(true, Ordering::SeqCst) {
            return;
        }
        self.count.store(paths.len(), Ordering::SeqCst);
        let injector = self.matcher.injector();
        for p in paths {
            push(&injector, p);
        }
    }

    /// Narrows the matches to `query` (fuzzy, smart case).
    pub(crate) fn set_query(&mut self, query: &str) {
        if query == self.query {
            return;
        }
        let append = query.starts_with(&self.query);
        self.matcher
            .pattern
            .reparse(0, query, CaseMatching::Smart, Normalization::Smart, append);
        self.query = query.to_owned();
    }

    /// Takes in what the matcher's threads found; `timeout_ms` 0 never
    /// blocks. True while the list may still change.
    pub(crate) fn tick(&mut self, timeout_ms: u64) -> bool {
        let status = self.matcher.tick(timeout_ms);
        status.running || !self.walked.load(Ordering::SeqCst)
    }

    /// The best `n` matches (paths relative to the root, `/`-separated).
    pub(crate) fn top(&self, n: usize) -> Vec<String> {
        let snap = self.matcher.snapshot();
        let end = snap.matched_item_count().min(n as u32);
        snap.matched_items(..end).map(|i| i.data.clone()).collect()
    }

    /// Files listed so far, and whether the listing is complete.
    pub(crate) fn listed(&self) -> (usize, bool) {
        (
            self.count.load(Ordering::SeqCst),
            self.walked.load(Ordering::SeqCst),
        )
    }
}

fn push(injector: &Injector<String>, rel: String) {
    injector.push(rel, |path, cols| {
        cols[0] = Utf32String::from(path.as_str());
    });
}

/// The files under `root` as the finder lists them (relative,
/// `/`-separated), at most `max`; and whether that is all of them. For a
/// server to send a console on another machine.
pub(crate) fn list(root: &Path, max: usize) -> (Vec<String>, bool) {
    let found = std::sync::Mutex::new(Vec::new());
    let count = AtomicUsize::new(0);
    walk(root, &count, max, &|rel| {
        if let Ok(mut f) = found.lock() {
            f.push(rel);
        }
    });
    let mut found = found.into_inner().unwrap_or_default();
    found.sort();
    let all = count.load(Ordering::SeqCst) <= max;
    found.truncate(max);
    (found, all)
}

/// Lists the files under `root` into `sink`, at most `max` (parallel,
/// git-aware).
fn walk(root: &Path, count: &AtomicUsize, max: usize, sink: &(dyn Fn(String) + Sync)) {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(true)
        .follow_links(false)
        // `.gitignore` counts even where the directory is not (yet) a repo.
        .require_git(false)
        .build_parallel();
    walker.run(|| {
        Box::new(|entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            if count.fetch_add(1, Ordering::Relaxed) >= max {
                return ignore::WalkState::Quit;
            }
            if let Ok(rel) = entry.path().strip_prefix(root) {
                sink(rel.to_string_lossy().replace('\\', "/"));
            }
            ignore::WalkState::Continue
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finder(dir: &Path) -> FileFinder {
        let mut f = FileFinder::awaiting(Arc::new(|| {}));
        f.fill(list(dir, 500_000).0);
        while f.tick(50) {}
        f
    }

    #[test]
    fn lists_files_respecting_gitignore_and_matches_fuzzily() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("src/ui")).unwrap();
        std::fs::create_dir_all(d.join("target/debug")).unwrap();
        std::fs::write(d.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(d.join("src/ui/markdown.rs"), "").unwrap();
        std::fs::write(d.join("src/main.rs"), "").unwrap();
        std::fs::write(d.join("target/debug/markdown.d"), "").unwrap();
        std::fs::write(d.join(".secret"), "").unwrap();
        let mut f = finder(d);
        let mut all = f.top(100);
        all.sort();
        assert_eq!(all, ["src/main.rs", "src/ui/markdown.rs"]);
        f.set_query("mkdn");
        while f.tick(50) {}
        assert_eq!(f.top(10), ["src/ui/markdown.rs"]);
        assert_eq!(f.listed(), (2, true));
    }
}
