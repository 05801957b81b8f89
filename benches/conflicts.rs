//! Conflict prediction (issue 31): a repository of 2,000 files, 10 agent
//! worktrees, each with 1,000 changed files (uncommitted, overlapping the
//! others' files on other lines, a few on the same lines). Measured: the
//! refresh after one pane's turn, its 9 pairs with the other worktrees and
//! its pair with the main branch (the others' snapshots are cached), which
//! must take ≤ 1 s; and, for scale, the first refresh of all 45 pairs and
//! 10 main pairs. The service runs it on the blocking pool, never on the
//! UI thread.
//!
//! Run: `cargo bench --bench conflicts` (HIVE_BENCH_FILES overrides 2,000
//! files in the repository, HIVE_BENCH_CHANGED 1,000 changed per worktree).

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use hive::config::{AgentConfig, WorktreeSetting};
use hive::worktree::predict::Predictor;
use hive::worktree::{self, Worktree};

const WORKTREES: usize = 10;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn file_text(i: usize, edit: Option<(usize, &str)>) -> String {
    (0..20)
        .map(|l| match edit {
            Some((at, text)) if at == l => format!("{text}\n"),
            _ => format!("file {i} line {l}: some code that an agent may change\n"),
        })
        .collect()
}

/// The repository and its worktrees, each with `changed` files edited.
fn setup(root: &Path, files: usize, changed: usize) -> Vec<Worktree> {
    std::fs::create_dir_all(root.join("src")).unwrap();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "user.name", "Bench"]);
    git(root, &["config", "user.email", "bench@example.com"]);
    for i in 0..files {
        std::fs::write(root.join(format!("src/f{i:05}.rs")), file_text(i, None)).unwrap();
    }
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "initial"]);
    (0..WORKTREES)
        .map(|w| {
            let mut a = AgentConfig::new(&format!("agent{w}"), "script");
            a.cwd = Some(root.to_owned());
            a.worktree = Some(WorktreeSetting::Enabled(true));
            let wt = worktree::ensure(root, &a.worktree_spec(None).unwrap()).unwrap();
            // Windows of files shifted by worktree: neighbours share most
            // files; each edits its own line, and line 0 of its first file
            // (which the previous worktree also edits: a conflict).
            for k in 0..changed {
                let i = (w * files / WORKTREES + k) % files;
                let line = if k == 0 { 0 } else { 1 + w % 19 };
                let text = format!("agent {w} was here");
                std::fs::write(
                    wt.path.join(format!("src/f{i:05}.rs")),
                    file_text(i, Some((line, &text))),
                )
                .unwrap();
            }
            wt
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let files = env("HIVE_BENCH_FILES", 2_000);
    let changed = env("HIVE_BENCH_CHANGED", 1_000).min(files);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let t0 = Instant::now();
    let wts = setup(&root, files, changed);
    println!(
        "setup: {files} files, {WORKTREES} worktrees × {changed} changed files: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let panes: Vec<((usize, usize), &Worktree)> =
        wts.iter().enumerate().map(|(i, w)| ((i, 0), w)).collect();
    let mut p = Predictor::new();
    let t0 = Instant::now();
    let first = p.refresh(&panes, None).unwrap();
    println!(
        "first refresh, all {} pairs + {WORKTREES} with main: {:.0} ms ({} conflicts)",
        WORKTREES * (WORKTREES - 1) / 2,
        t0.elapsed().as_secs_f64() * 1e3,
        first.conflicts.len()
    );
    // Each turn of pane 0 edits one more file, so nothing is cached for it.
    let mut turn = 0usize;
    let mut worst = Duration::ZERO;
    let mut g = c.benchmark_group("conflicts");
    g.sample_size(10);
    g.bench_function("refresh after one pane's turn (10 worktrees)", |b| {
        b.iter(|| {
            turn += 1;
            let i = files - 1 - turn % files;
            std::fs::write(
                wts[0].path.join(format!("src/f{i:05}.rs")),
                file_text(i, Some((19, &format!("turn {turn}")))),
            )
            .unwrap();
            let t = Instant::now();
            let found = p.refresh(&panes, Some(&[0])).unwrap();
            worst = worst.max(t.elapsed());
            found
        });
    });
    g.finish();
    println!(
        "worst refresh after one pane's turn: {:.0} ms (target ≤ 1000 ms)",
        worst.as_secs_f64() * 1e3
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
