//! The GitHub CLI as a [`Forge`]: `gh issue view`, `gh pr create`, `gh pr
//! view`, `gh run view --log-failed`, `gh pr merge`, read as gh 2.x
//! documents them (`gh help exit-codes`: 4 means authentication is needed;
//! the `--json` fields of `gh pr view`, whose `statusCheckRollup` holds
//! `CheckRun`s with `status`/`conclusion`/`detailsUrl` and
//! `StatusContext`s with `state`/`targetUrl`). The parsing is kept free of
//! processes so captured answers replay through it in tests.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::run::{Ran, describe, run};
use super::{
    Check, Forge, ForgeError, Issue, MergeMethod, Mergeable, NewPr, Outcome, PrState, PullRequest,
    Remark, Run,
};

/// `gh issue view --json` fields hive reads.
pub const ISSUE_FIELDS: &str = "number,title,body,url,labels";
/// `gh pr view --json` fields hive reads.
pub const PR_FIELDS: &str = "number,url,state,isDraft,mergeable,headRefName,baseRefName,\
                             isCrossRepository,statusCheckRollup,reviews,comments";

/// `gh run list --json` fields hive reads.
pub const RUN_FIELDS: &str = "databaseId,displayTitle,workflowName,headBranch,headSha,url";

/// gh's documented exit status for "authentication required".
const EXIT_AUTH: i32 = 4;

/// The GitHub CLI at `program`.
#[derive(Debug, Clone)]
pub struct Gh {
    program: String,
    timeout: Duration,
}

impl Gh {
    pub fn new(program: &str, timeout: Duration) -> Self {
        Self {
            program: program.to_owned(),
            timeout,
        }
    }

    /// `gh args` in `cwd`, its stdout when it succeeded.
    fn call(&self, cwd: &Path, args: &[&str]) -> Result<String, ForgeError> {
        let ran = run(&self.program, args, cwd, self.timeout)?;
        self.judge(args, ran)
    }

    fn judge(&self, args: &[&str], ran: Ran) -> Result<String, ForgeError> {
        if ran.code == 0 {
            return Ok(ran.stdout);
        }
        let stderr = ran.stderr.trim();
        // Older gh versions say so with exit 1; the words are stable.
        if ran.code == EXIT_AUTH
            || stderr.contains("gh auth login")
            || stderr.contains("not logged into any")
        {
            return Err(ForgeError::LoggedOut {
                program: self.program.clone(),
                login: "gh auth login".into(),
            });
        }
        let message = if stderr.is_empty() {
            format!("exit status {}", ran.code)
        } else {
            last_lines(stderr, 6)
        };
        Err(ForgeError::Failed {
            command: describe(&self.program, args),
            message: crate::sanitize::neutralize(&message).into_owned(),
        })
    }
}

impl Forge for Gh {
    fn name(&self) -> &str {
        &self.program
    }

    fn issue(&self, cwd: &Path, number: u64) -> Result<Issue, ForgeError> {
        let n = number.to_string();
        let args = ["issue", "view", &n, "--json", ISSUE_FIELDS];
        let out = self.call(cwd, &args)?;
        parse_issue(&out).map_err(|message| self.bad(&args, message))
    }

    fn open_pr(&self, cwd: &Path, pr: &NewPr) -> Result<(u64, String), ForgeError> {
        // `--flag=value`: a title or body that starts with `-` stays a value.
        let (head, title, body) = (
            format!("--head={}", pr.head),
            format!("--title={}", pr.title),
            format!("--body={}", pr.body),
        );
        let base = pr.base.as_ref().map(|b| format!("--base={b}"));
        let mut args = vec!["pr", "create", head.as_str(), title.as_str(), body.as_str()];
        if let Some(base) = &base {
            args.push(base);
        }
        if pr.draft {
            args.push("--draft");
        }
        let out = self.call(cwd, &args)?;
        // gh prints the new pull request's address, last.
        let url = out
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| l.starts_with("http"))
            .ok_or_else(|| self.bad(&args, "no pull request address in its output".into()))?;
        let number =
            number_of_url(url).ok_or_else(|| self.bad(&args, format!("no number in `{url}`")))?;
        Ok((number, url.to_owned()))
    }

    fn pr(&self, cwd: &Path, head: &str) -> Result<PullRequest, ForgeError> {
        let args = ["pr", "view", head, "--json", PR_FIELDS];
        let out = self.call(cwd, &args)?;
        parse_pr(&out).map_err(|message| self.bad(&args, message))
    }

    fn failed_log(&self, cwd: &Path, run_id: &str) -> Result<String, ForgeError> {
        self.call(cwd, &["run", "view", run_id, "--log-failed"])
    }

    fn edit_body(&self, cwd: &Path, number: u64, body: &str) -> Result<(), ForgeError> {
        let body = format!("--body={body}");
        self.call(cwd, &["pr", "edit", &number.to_string(), &body])
            .map(drop)
    }

    fn ready(&self, cwd: &Path, number: u64) -> Result<(), ForgeError> {
        self.call(cwd, &["pr", "ready", &number.to_string()])
            .map(drop)
    }

    fn merge(&self, cwd: &Path, number: u64, method: MergeMethod) -> Result<String, ForgeError> {
        let n = number.to_string();
        let flag = match method {
            MergeMethod::Squash => "--squash",
            MergeMethod::Merge => "--merge",
            MergeMethod::Rebase => "--rebase",
        };
        let out = self.call(cwd, &["pr", "merge", &n, flag])?;
        Ok(crate::sanitize::neutralize(out.trim()).into_owned())
    }

    fn labeled(&self, cwd: &Path, label: &str, limit: usize) -> Result<Vec<Issue>, ForgeError> {
        let (label, limit) = (format!("--label={label}"), format!("--limit={limit}"));
        let args = [
            "issue",
            "list",
            &label,
            "--state=open",
            &limit,
            "--json",
            ISSUE_FIELDS,
        ];
        let out = self.call(cwd, &args)?;
        parse_issues(&out).map_err(|message| self.bad(&args, message))
    }

    fn failed_runs(&self, cwd: &Path, branch: &str, limit: usize) -> Result<Vec<Run>, ForgeError> {
        let (branch, limit) = (format!("--branch={branch}"), format!("--limit={limit}"));
        let args = [
            "run",
            "list",
            &branch,
            "--status=failure",
            &limit,
            "--json",
            RUN_FIELDS,
        ];
        let out = self.call(cwd, &args)?;
        parse_runs(&out).map_err(|message| self.bad(&args, message))
    }
}

impl Gh {
    fn bad(&self, args: &[&str], message: String) -> ForgeError {
        ForgeError::BadOutput {
            command: describe(&self.program, args),
            message,
        }
    }
}

fn last_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join(" / ")
}

/// `…/pull/12` → 12.
fn number_of_url(url: &str) -> Option<u64> {
    url.trim_end_matches('/').rsplit('/').next()?.parse().ok()
}

#[derive(Deserialize)]
struct GhIssue {
    number: u64,
    #[serde(default)]
    title: String,
    #[serde(default)]
    body: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    labels: Vec<GhLabel>,
}

#[derive(Deserialize)]
struct GhLabel {
    name: String,
}

/// `gh issue view --json number,title,body,url,labels`.
pub fn parse_issue(json: &str) -> Result<Issue, String> {
    let i: GhIssue = serde_json::from_str(json).map_err(|e| e.to_string())?;
    Ok(Issue {
        number: i.number,
        title: i.title,
        body: i.body,
        url: i.url,
        labels: i.labels.into_iter().map(|l| l.name).collect(),
    })
}

/// `gh issue list --json number,title,body,url,labels`.
pub fn parse_issues(json: &str) -> Result<Vec<Issue>, String> {
    let list: Vec<serde_json::Value> = serde_json::from_str(json).map_err(|e| e.to_string())?;
    list.into_iter()
        .map(|v| parse_issue(&v.to_string()))
        .collect()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhRun {
    database_id: u64,
    #[serde(default)]
    display_title: String,
    #[serde(default)]
    workflow_name: String,
    #[serde(default)]
    head_branch: String,
    #[serde(default)]
    head_sha: String,
    #[serde(default)]
    url: String,
}

/// `gh run list --json` with [`RUN_FIELDS`].
pub fn parse_runs(json: &str) -> Result<Vec<Run>, String> {
    let list: Vec<GhRun> = serde_json::from_str(json).map_err(|e| e.to_string())?;
    Ok(list
        .into_iter()
        .map(|r| Run {
            id: r.database_id.to_string(),
            title: r.display_title,
            workflow: r.workflow_name,
            branch: r.head_branch,
            head_sha: r.head_sha,
            url: r.url,
        })
        .collect())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhPr {
    number: u64,
    #[serde(default)]
    url: String,
    state: String,
    #[serde(default)]
    is_draft: bool,
    #[serde(default)]
    mergeable: String,
    #[serde(default)]
    head_ref_name: String,
    #[serde(default)]
    base_ref_name: String,
    #[serde(default)]
    is_cross_repository: bool,
    /// `null` when the head has no checks at all.
    #[serde(default)]
    status_check_rollup: Option<Vec<GhCheck>>,
    #[serde(default)]
    reviews: Vec<GhRemark>,
    #[serde(default)]
    comments: Vec<GhRemark>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhCheck {
    #[serde(rename = "__typename", default)]
    typename: String,
    // CheckRun
    #[serde(default)]
    name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    conclusion: String,
    #[serde(default)]
    details_url: String,
    // StatusContext
    #[serde(default)]
    context: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    target_url: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GhRemark {
    #[serde(default)]
    id: String,
    #[serde(default)]
    author: Option<GhAuthor>,
    #[serde(default)]
    author_association: String,
    #[serde(default)]
    body: String,
    /// A review's.
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    submitted_at: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct GhAuthor {
    #[serde(default)]
    login: String,
}

/// `gh pr view --json` with [`PR_FIELDS`].
pub fn parse_pr(json: &str) -> Result<PullRequest, String> {
    let p: GhPr = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let state = match p.state.as_str() {
        "OPEN" => PrState::Open,
        "CLOSED" => PrState::Closed,
        "MERGED" => PrState::Merged,
        other => return Err(format!("unknown pull request state `{other}`")),
    };
    let mergeable = match p.mergeable.as_str() {
        "MERGEABLE" => Mergeable::Mergeable,
        "CONFLICTING" => Mergeable::Conflicting,
        _ => Mergeable::Unknown,
    };
    let checks = p
        .status_check_rollup
        .unwrap_or_default()
        .into_iter()
        .map(check)
        .collect();
    let reviews = p.reviews.into_iter().map(|r| remark(r, true));
    let comments = p.comments.into_iter().map(|c| remark(c, false));
    Ok(PullRequest {
        number: p.number,
        url: p.url,
        state,
        draft: p.is_draft,
        mergeable,
        head: p.head_ref_name,
        base: p.base_ref_name,
        cross_repository: p.is_cross_repository,
        checks,
        remarks: reviews.chain(comments).collect(),
    })
}

fn check(c: GhCheck) -> Check {
    if c.typename == "StatusContext" {
        let outcome = match c.state.as_str() {
            "SUCCESS" => Outcome::Passed,
            "FAILURE" | "ERROR" => Outcome::Failed,
            "PENDING" | "EXPECTED" => Outcome::Pending,
            _ => Outcome::Other,
        };
        return Check {
            name: c.context,
            outcome,
            url: c.target_url,
            run_id: None,
        };
    }
    let outcome = if c.status != "COMPLETED" {
        Outcome::Pending
    } else {
        match c.conclusion.as_str() {
            "SUCCESS" => Outcome::Passed,
            "FAILURE" | "TIMED_OUT" | "STARTUP_FAILURE" | "ACTION_REQUIRED" => Outcome::Failed,
            _ => Outcome::Other,
        }
    };
    Check {
        run_id: run_of_url(&c.details_url),
        name: c.name,
        outcome,
        url: c.details_url,
    }
}

/// `https://github.com/o/r/actions/runs/123/job/456` → `123`.
fn run_of_url(url: &str) -> Option<String> {
    let mut parts = url.split('/');
    parts.by_ref().find(|p| *p == "runs")?;
    let id = parts.next()?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.to_owned())
}

fn remark(r: GhRemark, is_review: bool) -> Remark {
    let author = r.author.map(|a| a.login).unwrap_or_default();
    let when = r.submitted_at.or(r.created_at).unwrap_or_default();
    let id = if r.id.is_empty() {
        // Older gh gives no id: author, time and text name it as well.
        use sha2::Digest;
        let digest = sha2::Sha256::digest(format!("{author}\0{when}\0{}", r.body));
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    } else {
        r.id
    };
    Remark {
        id,
        author,
        association: r.author_association,
        body: r.body,
        review: if is_review { r.state } else { None },
        when,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/forge")
            .join(name);
        std::fs::read_to_string(&path).unwrap()
    }

    #[test]
    fn an_issue_reads_with_its_labels() {
        let issue = parse_issue(&fixture("issue_view.json")).unwrap();
        assert_eq!(issue.number, 7);
        assert_eq!(issue.labels, ["bug", "good first issue"]);
        assert!(
            issue.body.contains('\u{1b}'),
            "kept raw; quoting is text's job"
        );
    }

    #[test]
    fn a_pull_request_reads_its_checks_reviews_and_comments() {
        let pr = parse_pr(&fixture("pr_view_failing.json")).unwrap();
        assert_eq!((pr.number, pr.state, pr.draft), (1, PrState::Open, true));
        assert_eq!(pr.mergeable, Mergeable::Mergeable);
        let outcomes: Vec<_> = pr
            .checks
            .iter()
            .map(|c| (c.name.as_str(), c.outcome))
            .collect();
        assert_eq!(
            outcomes,
            [
                ("test", Outcome::Failed),
                ("lint", Outcome::Passed),
                ("build", Outcome::Pending),
                ("ci/legacy", Outcome::Failed),
            ]
        );
        assert_eq!(pr.checks[0].run_id.as_deref(), Some("4242"));
        assert_eq!(pr.checks[3].run_id, None);
        assert_eq!(pr.remarks.len(), 2);
        let review = &pr.remarks[0];
        assert_eq!(review.review.as_deref(), Some("CHANGES_REQUESTED"));
        assert_eq!(
            (review.author.as_str(), review.association.as_str()),
            ("octo", "OWNER")
        );
        assert_eq!(pr.remarks[1].review, None);
        assert!(
            !pr.remarks[1].id.is_empty(),
            "an id is made when gh gives none"
        );
    }

    #[test]
    fn issue_and_run_lists_read_as_gh_prints_them() {
        let issues = parse_issues(&fixture("issue_list.json")).unwrap();
        assert_eq!(issues.len(), 2);
        assert_eq!(
            (issues[0].number, issues[0].labels[0].as_str()),
            (9, "hive")
        );
        let runs = parse_runs(&fixture("run_list.json")).unwrap();
        assert_eq!(runs[0].id, "12345678");
        assert_eq!(runs[0].workflow, "CI");
        assert_eq!(runs[0].branch, "main");
        assert!(parse_runs("{}").is_err());
    }

    #[test]
    fn no_checks_at_all_is_null_and_reads_as_none() {
        let json = r#"{"number":3,"url":"u","state":"MERGED","isDraft":false,
            "mergeable":"UNKNOWN","statusCheckRollup":null,"reviews":[],"comments":[]}"#;
        let pr = parse_pr(json).unwrap();
        assert!(pr.checks.is_empty());
        assert_eq!(pr.state, PrState::Merged);
        assert!(parse_pr(r#"{"number":3,"state":"WEIRD"}"#).is_err());
    }

    #[test]
    fn exit_status_4_is_a_login_and_others_quote_stderr_safely() {
        let gh = Gh::new("gh", Duration::from_secs(1));
        let ran = |code, stderr: &str| Ran {
            code,
            stdout: String::new(),
            stderr: stderr.into(),
        };
        let err = gh.judge(&["pr", "view"], ran(4, "")).unwrap_err();
        assert!(err.to_string().contains("gh auth login"), "{err}");
        let err = gh
            .judge(
                &["pr", "view"],
                ran(1, "no pull requests found \u{1b}]52;c;x\u{7}"),
            )
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("no pull requests found"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert_eq!(
            number_of_url("https://github.com/o/r/pull/12\n".trim()),
            Some(12)
        );
    }
}
