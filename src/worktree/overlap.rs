//! Overlap warnings: two agents' pending changes touch the same file, and
//! maybe the same lines, before anyone merges. Pure functions over parsed
//! diffs; the service feeds them and the app shows the result.

use super::diff::FileDiff;
pub use crate::protocol::git::{Overlap, OverlapFile};

impl Overlap {
    pub(crate) fn involves(&self, agent: &str) -> bool {
        self.a == agent || self.b == agent
    }

    /// The other agent, seen from `agent`.
    pub fn other(&self, agent: &str) -> &str {
        if self.a == agent { &self.b } else { &self.a }
    }

    /// `src/lib.rs (same lines), README.md`.
    pub fn describe_files(&self) -> String {
        self.files
            .iter()
            .map(|f| {
                if f.same_hunk {
                    format!("{} (same lines)", f.path)
                } else {
                    f.path.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every pair of agents whose changes share a file, in input order.
pub fn overlaps(changes: &[(String, Vec<FileDiff>)]) -> Vec<Overlap> {
    let mut out = Vec::new();
    for (i, (a, da)) in changes.iter().enumerate() {
        for (b, db) in &changes[i + 1..] {
            let files: Vec<OverlapFile> = da
                .iter()
                .filter_map(|fa| {
                    let fb = db.iter().find(|fb| touches_same_file(fa, fb))?;
                    Some(OverlapFile {
                        path: fa.path.clone(),
                        same_hunk: hunks_meet(fa, fb),
                    })
                })
                .collect();
            if !files.is_empty() {
                out.push(Overlap {
                    a: a.clone(),
                    b: b.clone(),
                    files,
                });
            }
        }
    }
    out
}

fn touches_same_file(a: &FileDiff, b: &FileDiff) -> bool {
    let names = |f: &FileDiff| [Some(f.path.clone()), f.old_path.clone()];
    names(a)
        .into_iter()
        .flatten()
        .any(|n| names(b).into_iter().flatten().any(|m| m == n))
}

/// Old-side line ranges intersect (an insertion counts as touching its line),
/// or either side replaces the file wholesale (binary, added, deleted).
fn hunks_meet(a: &FileDiff, b: &FileDiff) -> bool {
    if a.hunks.is_empty() || b.hunks.is_empty() {
        return true;
    }
    let span = |h: &super::Hunk| (h.old_start, h.old_start + h.old_len.max(1));
    a.hunks.iter().any(|ha| {
        let (s1, e1) = span(ha);
        b.hunks.iter().any(|hb| {
            let (s2, e2) = span(hb);
            s1 < e2 && s2 < e1
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worktree::diff::parse_unified;

    fn edit(path: &str, old_start: u32, old_len: u32) -> Vec<FileDiff> {
        parse_unified(&format!(
            "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{old_start},{old_len} +{old_start},{old_len} @@\n-x\n+y\n"
        ))
    }

    #[test]
    fn same_file_and_same_lines_are_told_apart() {
        let changes = vec![
            (
                "a".to_owned(),
                [edit("f.rs", 10, 3), edit("only_a", 1, 1)].concat(),
            ),
            ("b".to_owned(), edit("f.rs", 12, 2)),
            ("c".to_owned(), edit("f.rs", 40, 2)),
        ];
        let found = overlaps(&changes);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!((found[0].a.as_str(), found[0].b.as_str()), ("a", "b"));
        assert!(found[0].files[0].same_hunk);
        assert_eq!(found[1].b, "c");
        assert!(!found[1].files[0].same_hunk);
        assert_eq!(found[1].describe_files(), "f.rs");
        assert_eq!(found[0].other("b"), "a");
    }

    #[test]
    fn disjoint_files_do_not_overlap() {
        let changes = vec![
            ("a".to_owned(), edit("x", 1, 1)),
            ("b".to_owned(), edit("y", 1, 1)),
        ];
        assert!(overlaps(&changes).is_empty());
    }
}
