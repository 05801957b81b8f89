//! A workspace pane's pull requests (issue 52): one change across several
//! repositories is one pull request per repository that has commits to
//! bring, each on the pane's branch in its own repository's forge, each
//! body saying which part it is and naming the others ("Part 1 of 2 …
//! web: <address>"). They are opened one after the other, then each body
//! is set again once every address is known; the watcher follows them
//! together (src/server/forge_watch.rs) and `pr merge` merges them in
//! order, stopping at the first the forge refuses.

use std::path::PathBuf;

use super::forge::{Opened, OpenedPr, default_title, push, unpushed};
use crate::config::ForgeSettings;
use crate::forge::{ForgeError, Issue, MergeMethod, NewPr};

/// One repository of the workspace, where its pull request comes from.
#[derive(Debug, Clone)]
pub(super) struct Part {
    /// Its name in the workspace (`api`).
    pub(super) repo: String,
    /// Its worktree.
    pub(super) cwd: PathBuf,
    pub(super) branch: String,
}

/// What a pull request's text says, given or made.
pub(super) struct Wording {
    pub(super) pane: String,
    pub(super) issue: Option<Issue>,
    pub(super) title: Option<String>,
    pub(super) body: Option<String>,
    pub(super) ready: bool,
}

/// Pushes each part with commits the remote lacks and opens its pull
/// request; then names the others in each body. A part with nothing to
/// bring gets none; none at all is refused.
pub(super) fn open_parts(
    settings: &ForgeSettings,
    parts: &[Part],
    words: &Wording,
) -> Result<Opened, ForgeError> {
    let mut bring = Vec::new();
    for p in parts {
        let commits = unpushed(settings, &p.cwd)?;
        if !commits.trim().is_empty() {
            bring.push((p, commits));
        }
    }
    if bring.is_empty() {
        return Err(ForgeError::Failed {
            command: "git log".into(),
            message: "no repository of the workspace has commits its remote lacks: commit the \
                      work first"
                .into(),
        });
    }
    let names: Vec<&str> = bring.iter().map(|(p, _)| p.repo.as_str()).collect();
    let forge = crate::forge::open(settings);
    let mut opened = Opened::default();
    for (i, (p, commits)) in bring.iter().enumerate() {
        let made = push(settings, &p.cwd, &p.branch).and_then(|()| {
            let title = words
                .title
                .clone()
                .unwrap_or_else(|| default_title(words.issue.as_ref(), commits, &p.branch));
            let pr = NewPr {
                head: p.branch.clone(),
                base: None,
                title: format!("{title} ({}, {} of {})", p.repo, i + 1, names.len()),
                body: body(words, commits, i, &names, &[]),
                draft: !words.ready,
            };
            forge.open_pr(&p.cwd, &pr)
        });
        match made {
            Ok((number, url)) => opened.prs.push(OpenedPr {
                repo: p.repo.clone(),
                number,
                url,
            }),
            // What was opened stays opened (and watched); the rest is said.
            Err(e) if !opened.prs.is_empty() => {
                opened.failed = Some(format!("{}: {e}", p.repo));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let links: Vec<(&str, &str)> = (opened.prs.iter())
        .map(|o| (o.repo.as_str(), o.url.as_str()))
        .collect();
    for (i, o) in opened.prs.iter().enumerate() {
        let (p, commits) = &bring[i];
        let text = body(words, commits, i, &names, &links);
        if let Err(e) = forge.edit_body(&p.cwd, o.number, &text) {
            tracing::warn!(repo = %o.repo, "cannot link the pull requests of a workspace: {e}");
        }
    }
    Ok(opened)
}

/// The body of part `i` of `names`: which part it is and the others (by
/// address once `links` has them), then the user's text or the commits.
fn body(
    words: &Wording,
    commits: &str,
    i: usize,
    names: &[&str],
    links: &[(&str, &str)],
) -> String {
    let mut out = format!(
        "Part {} of {} of one change across repositories ({}):\n",
        i + 1,
        names.len(),
        names.join(", ")
    );
    for (j, name) in names.iter().enumerate() {
        let what = if j == i {
            "this pull request".to_owned()
        } else {
            links.iter().find(|(n, _)| n == name).map_or_else(
                || "opened with this one".to_owned(),
                |(_, u)| (*u).to_owned(),
            )
        };
        out.push_str(&format!("- {name}: {what}\n"));
    }
    out.push('\n');
    match &words.body {
        Some(b) => out.push_str(b),
        None => {
            if let Some(issue) = &words.issue {
                out.push_str(&format!("Closes #{}.\n\n", issue.number));
            }
            out.push_str(commits);
            out.push_str(&format!("\nOpened by hive from pane `{}`.", words.pane));
        }
    }
    out
}

/// The open pull request of `branch` in `cwd`, to watch.
pub(super) fn open_pr_of(
    settings: &ForgeSettings,
    cwd: &std::path::Path,
    branch: &str,
) -> Result<(u64, String), ForgeError> {
    let pr = crate::forge::open(settings).pr(cwd, branch)?;
    if pr.state != crate::forge::PrState::Open {
        return Err(ForgeError::Failed {
            command: format!("gh pr view {branch}"),
            message: format!("pull request #{} is {}, not open", pr.number, pr.summary()),
        });
    }
    Ok((pr.number, pr.url))
}

/// `pr watch` of a workspace: the open pull request of each repository's
/// branch that has one (opened by hand); none at all is the first
/// repository's answer.
pub(super) fn watch_parts(settings: &ForgeSettings, parts: &[Part]) -> Result<Opened, ForgeError> {
    let mut opened = Opened::default();
    let mut first_error = None;
    for p in parts {
        match open_pr_of(settings, &p.cwd, &p.branch) {
            Ok((number, url)) => opened.prs.push(OpenedPr {
                repo: p.repo.clone(),
                number,
                url,
            }),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) if opened.prs.is_empty() => Err(e),
        _ => Ok(opened),
    }
}

/// Merges each pull request in order (a draft is marked ready first),
/// stopping at the first the forge refuses; what was merged before it
/// is said with the refusal.
pub(super) fn merge_parts(
    settings: &ForgeSettings,
    prs: &[(String, PathBuf, u64)],
    method: MergeMethod,
) -> Result<String, ForgeError> {
    let mut said = Vec::new();
    for (repo, cwd, number) in prs {
        match super::forge::merge_job(settings, cwd, *number, method) {
            Ok(s) if repo.is_empty() => said.push(s),
            Ok(s) => said.push(format!("{repo} #{number}: {s}")),
            Err(e) if said.is_empty() => return Err(e),
            Err(e) => {
                return Err(ForgeError::Failed {
                    command: format!("merging {repo} #{number}"),
                    message: format!("{e} (merged before it: {})", said.join("; ")),
                });
            }
        }
    }
    Ok(said.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words() -> Wording {
        Wording {
            pane: "fs".into(),
            issue: None,
            title: None,
            body: None,
            ready: false,
        }
    }

    #[test]
    fn each_part_names_the_others_by_address_once_known() {
        let names = ["api", "web"];
        let before = body(&words(), "- add x\n", 0, &names, &[]);
        assert!(
            before.starts_with("Part 1 of 2 of one change across repositories (api, web):\n"),
            "{before}"
        );
        assert!(before.contains("- api: this pull request\n- web: opened with this one\n"));
        let links = [
            ("api", "https://f/api/pull/1"),
            ("web", "https://f/web/pull/3"),
        ];
        let second = body(&words(), "- use x\n", 1, &names, &links);
        assert!(second.starts_with("Part 2 of 2"), "{second}");
        assert!(second.contains("- api: https://f/api/pull/1\n- web: this pull request\n"));
        assert!(second.contains("- use x\n"));
        assert!(second.ends_with("Opened by hive from pane `fs`."));
        let mine = Wording {
            body: Some("mine".into()),
            ..words()
        };
        assert!(body(&mine, "", 0, &names, &links).ends_with("\nmine"));
    }
}
