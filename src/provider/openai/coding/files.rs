//! The file tools (`read`, `write`, `edit`, `glob`, `grep`), confined to the
//! agent's cwd by the ACP file system's own code (`acp::fs::FsRoot`: no `..`
//! out, no symlink out, regular files only, size caps), so both kinds of
//! agent meet the same rules (docs/security.md §1). Blocking: the caller
//! runs these on tokio's blocking pool.

use std::path::Path;

use serde::Deserialize;

use crate::provider::acp::fs::FsRoot;

/// Lines a `read` returns when it names no `limit`.
const DEFAULT_LINES: u32 = 2000;
/// The most text a `read` hands the model.
const MAX_READ: usize = 256 * 1024;
/// Paths a `glob` lists, matches a `grep` lists.
const MAX_HITS: usize = 500;
/// Files larger than this are not searched by `grep`.
const MAX_GREP_FILE: u64 = 4 << 20;
/// A `grep` line longer than this is cut.
const MAX_LINE: usize = 300;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadArgs {
    pub path: String,
    /// 1-based first line.
    #[serde(default)]
    pub offset: Option<u32>,
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct WriteArgs {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Replacement {
    pub old_text: String,
    pub new_text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EditArgs {
    pub path: String,
    pub edits: Vec<Replacement>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GlobArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GrepArgs {
    pub pattern: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub glob: Option<String>,
}

/// A text file's whole content, or why the model cannot have it.
fn text_of(
    root: &FsRoot,
    path: &str,
    offset: Option<u32>,
    limit: Option<u32>,
) -> Result<String, String> {
    let text = root.read(path, offset, limit).map_err(|e| match e {
        // The ACP wording names ACP's `line`; this tool's argument is
        // `offset` (#53 item 14).
        crate::provider::acp::fs::FsError::TooLarge { path, limit } => format!(
            "{path}: the requested range is larger than {limit} bytes; read it in parts with `offset` and `limit`"
        ),
        e => e.to_string(),
    })?;
    if text.contains('\0') {
        return Err(format!(
            "{path} is a binary file; it cannot be read as text"
        ));
    }
    Ok(text)
}

pub(crate) fn read(root: &FsRoot, a: ReadArgs) -> Result<String, String> {
    let offset = a.offset.unwrap_or(1).max(1);
    let limit = a.limit.unwrap_or(DEFAULT_LINES).max(1);
    // One line more than asked tells whether the file goes on.
    let text = text_of(root, &a.path, Some(offset), Some(limit.saturating_add(1)))?;
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let more = lines.len() > limit as usize;
    lines.truncate(limit as usize);
    let mut out: String = lines.concat();
    if out.len() > MAX_READ {
        return Err(format!(
            "{}: these lines are more than {MAX_READ} bytes; read fewer with `offset` and `limit`",
            a.path
        ));
    }
    if more {
        let next = offset as usize + lines.len();
        out.push_str(&format!("\n[the file goes on; read on with offset={next}]"));
    } else if out.is_empty() && offset > 1 {
        return Err(format!(
            "{}: the file has fewer than {offset} lines",
            a.path
        ));
    }
    Ok(out)
}

/// Whether `path` is one the root lets the tools touch (issue 46 item 20:
/// a write it will refuse must not ask the user first).
pub(crate) fn confined(root: &FsRoot, path: String) -> Result<String, String> {
    root.resolve(&path).map_err(|e| e.to_string())?;
    Ok(String::new())
}

pub(crate) fn write(root: &FsRoot, a: WriteArgs) -> Result<String, String> {
    root.write(&a.path, &a.content).map_err(|e| e.to_string())?;
    Ok(format!("wrote {} bytes to {}", a.content.len(), a.path))
}

/// The file's text after every replacement, or the first one that fails
/// (then nothing is written).
pub(crate) fn apply_edits(text: &str, path: &str, edits: &[Replacement]) -> Result<String, String> {
    if edits.is_empty() {
        return Err("`edits` is empty".into());
    }
    let mut out = text.to_owned();
    for (i, e) in edits.iter().enumerate() {
        let n = i + 1;
        if e.old_text.is_empty() {
            return Err(format!("edit {n}: `old_text` is empty"));
        }
        match out.matches(e.old_text.as_str()).count() {
            0 => {
                return Err(format!(
                    "edit {n}: `old_text` was not found in {path}; nothing was changed"
                ));
            }
            1 => out = out.replacen(e.old_text.as_str(), &e.new_text, 1),
            k => {
                return Err(format!(
                    "edit {n}: `old_text` occurs {k} times in {path}; add surrounding lines to make it unique; nothing was changed"
                ));
            }
        }
    }
    Ok(out)
}

pub(crate) fn edit(root: &FsRoot, a: EditArgs) -> Result<String, String> {
    let text = text_of(root, &a.path, None, None)?;
    let new = apply_edits(&text, &a.path, &a.edits)?;
    root.write(&a.path, &new).map_err(|e| e.to_string())?;
    Ok(format!("applied {} edit(s) to {}", a.edits.len(), a.path))
}

/// The directory a search starts from: the cwd, or a path inside it.
fn search_root(root: &FsRoot, path: Option<&str>) -> Result<std::path::PathBuf, String> {
    match path {
        None => Ok(root.root().to_path_buf()),
        Some(p) => {
            let dir = root.resolve(p).map_err(|e| e.to_string())?;
            if !dir.exists() {
                return Err(format!("{p}: no such file or directory"));
            }
            Ok(dir)
        }
    }
}

/// Walks `dir` the way git sees it (`.gitignore`, hidden files skipped,
/// symlinks not followed), keeping the files `glob` matches.
fn walk(dir: &Path, glob: Option<&str>) -> Result<ignore::Walk, String> {
    let mut b = ignore::WalkBuilder::new(dir);
    b.require_git(false).follow_links(false);
    if let Some(g) = glob {
        let mut o = ignore::overrides::OverrideBuilder::new(dir);
        o.add(g).map_err(|e| format!("bad glob `{g}`: {e}"))?;
        b.overrides(o.build().map_err(|e| format!("bad glob `{g}`: {e}"))?);
    }
    Ok(b.build())
}

fn relative(root: &FsRoot, p: &Path) -> String {
    p.strip_prefix(root.root())
        .unwrap_or(p)
        .display()
        .to_string()
}

pub(crate) fn glob(root: &FsRoot, a: GlobArgs) -> Result<String, String> {
    let dir = search_root(root, a.path.as_deref())?;
    let mut hits: Vec<String> = walk(&dir, Some(&a.pattern))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .map(|e| relative(root, e.path()))
        .collect();
    hits.sort();
    Ok(listing(hits, "files"))
}

fn listing(mut hits: Vec<String>, what: &str) -> String {
    if hits.is_empty() {
        return format!("no {what} found");
    }
    let more = hits.len().saturating_sub(MAX_HITS);
    hits.truncate(MAX_HITS);
    let mut out = hits.join("\n");
    if more > 0 {
        out.push_str(&format!(
            "\n[{more} more {what} not shown; narrow the search]"
        ));
    }
    out
}

pub(crate) fn grep(root: &FsRoot, a: GrepArgs) -> Result<String, String> {
    let re = regex::Regex::new(&a.pattern).map_err(|e| format!("bad pattern: {e}"))?;
    let dir = search_root(root, a.path.as_deref())?;
    let mut hits = Vec::new();
    for entry in walk(&dir, a.glob.as_deref())?.filter_map(Result::ok) {
        if !entry.file_type().is_some_and(|t| t.is_file())
            || entry.metadata().map_or(true, |m| m.len() > MAX_GREP_FILE)
        {
            continue;
        }
        let rel = relative(root, entry.path());
        // Read through the confined root: the same refusals as `read`.
        let Ok(text) = root.read(&rel, None, None) else {
            continue;
        };
        if text.contains('\0') {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                hits.push(format!("{rel}:{}: {}", i + 1, cut(line)));
                if hits.len() > MAX_HITS {
                    return Ok(listing(hits, "matches"));
                }
            }
        }
    }
    Ok(listing(hits, "matches"))
}

fn cut(line: &str) -> &str {
    if line.len() <= MAX_LINE {
        return line;
    }
    let mut end = MAX_LINE;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(old: &str, new: &str) -> Replacement {
        Replacement {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    #[test]
    fn edits_apply_all_or_none_and_need_unique_text() {
        assert_eq!(
            apply_edits("a b c", "f", &[r("a", "x"), r("c", "z")]).unwrap(),
            "x b z"
        );
        let e = apply_edits("a a", "f", &[r("a", "x")]).unwrap_err();
        assert!(e.contains("occurs 2 times"), "{e}");
        let e = apply_edits("a b", "f", &[r("b", "y"), r("q", "x")]).unwrap_err();
        assert!(e.contains("edit 2") && e.contains("not found"), "{e}");
        assert!(apply_edits("a", "f", &[]).is_err());
        assert!(apply_edits("a", "f", &[r("", "x")]).is_err());
    }

    /// #53 item 14: the refusal of a range too large names this tool's
    /// arguments (`offset`, `limit`), not ACP's `line`. Failed before.
    #[test]
    fn a_range_too_large_names_offset_and_limit() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = std::fs::File::create(dir.path().join("big")).expect("create");
        f.set_len(17 << 20).expect("sparse file");
        let root = FsRoot::new(dir.path(), crate::provider::acp::fs::MissingFile::Error);
        let args = ReadArgs {
            path: "big".into(),
            offset: None,
            limit: None,
        };
        let e = read(&root, args).expect_err("too large");
        assert!(e.contains("`offset` and `limit`"), "{e}");
        assert!(!e.contains("`line`"), "{e}");
    }

    #[test]
    fn long_lines_are_cut_at_a_char_boundary() {
        let s = "é".repeat(400);
        assert!(cut(&s).len() <= MAX_LINE);
    }
}
