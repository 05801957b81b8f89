//! The watcher's memory of one pull request (issue 48): each poll of `gh pr
//! view` is compared with what it saw before, and only what is new becomes
//! a message to the pane that owns the branch: a check that failed (each
//! failed run once), a review or comment from an allowed author, the branch
//! starting to conflict with its base. A poll that finds nothing new costs
//! no model turn. Automatic messages per pull request are capped, and
//! watching ends when it is merged or closed. No I/O here: the server polls
//! and sends (src/server/forge.rs).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::{Check, Mergeable, Outcome, PrState, PullRequest, Remark};

/// Who may reach the agent through the pull request, and how often.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// Messages the watcher sends by itself, at most.
    pub max_attempts: u32,
    /// Author associations whose remarks are passed on (the repository's
    /// writers by default: `OWNER`, `MEMBER`, `COLLABORATOR`).
    pub associations: Vec<String>,
    /// Logins passed on whatever their association.
    pub authors: Vec<String>,
}

impl Rules {
    /// The rules of the config's `[forge]` table.
    pub fn of(settings: &crate::config::ForgeSettings) -> Self {
        Self {
            max_attempts: settings.max_attempts,
            associations: settings.allowed_associations.clone(),
            authors: settings.allowed_authors.clone(),
        }
    }

    /// Whether `r` reaches the agent: its login or its association is
    /// allowed.
    pub fn allows(&self, r: &Remark) -> bool {
        self.authors
            .iter()
            .any(|a| a.eq_ignore_ascii_case(&r.author))
            || self
                .associations
                .iter()
                .any(|a| a.eq_ignore_ascii_case(&r.association))
    }
}

/// Something new the pane should hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    Failed(Check),
    Remark(Remark),
    /// The branch now conflicts with its base.
    Conflict {
        base: String,
    },
}

/// What one poll comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Nothing new: nothing is sent.
    Quiet,
    /// Send these, as one queued message (one attempt).
    Send(Vec<Finding>),
    /// There was something new, but the cap is reached: the user decides.
    Capped(Vec<Finding>),
    /// Merged or closed: watching stops.
    Ended(PrState),
}

/// One pull request's watch.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Watch {
    /// Failed checks already reported, by name and run page (a new run
    /// after a push has a new page).
    #[serde(skip)]
    failed: HashSet<(String, String)>,
    /// Remarks already seen (passed on or not).
    #[serde(skip)]
    remarks: HashSet<String>,
    conflicted: bool,
    /// Messages sent so far.
    pub attempts: u32,
    /// Remarks not passed on: their authors are not allowed.
    pub ignored: u32,
    /// The last poll's pull request.
    pub last: Option<PullRequest>,
}

/// What a watch has seen and sent, kept across a server restart (the
/// last poll is not: the next one asks again).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// Failed checks reported, as (name, run page).
    pub failed: Vec<(String, String)>,
    /// Remarks seen, by id.
    pub remarks: Vec<String>,
    pub conflicted: bool,
    pub attempts: u32,
    pub ignored: u32,
}

impl Watch {
    /// What to keep of it.
    pub fn memory(&self) -> Memory {
        let mut failed: Vec<_> = self.failed.iter().cloned().collect();
        failed.sort();
        let mut remarks: Vec<_> = self.remarks.iter().cloned().collect();
        remarks.sort();
        Memory {
            failed,
            remarks,
            conflicted: self.conflicted,
            attempts: self.attempts,
            ignored: self.ignored,
        }
    }

    /// A watch that has seen and sent what `m` says.
    pub fn remembering(m: Memory) -> Self {
        Self {
            failed: m.failed.into_iter().collect(),
            remarks: m.remarks.into_iter().collect(),
            conflicted: m.conflicted,
            attempts: m.attempts,
            ignored: m.ignored,
            last: None,
        }
    }

    /// Compares `pr` with what was seen, and remembers it.
    pub fn step(&mut self, pr: PullRequest, rules: &Rules) -> Step {
        if pr.state != PrState::Open {
            let state = pr.state;
            self.last = Some(pr);
            return Step::Ended(state);
        }
        let mut found = Vec::new();
        for c in &pr.checks {
            if c.outcome == Outcome::Failed && self.failed.insert((c.name.clone(), c.url.clone())) {
                found.push(Finding::Failed(c.clone()));
            }
        }
        for r in &pr.remarks {
            if !self.remarks.insert(r.id.clone()) {
                continue;
            }
            // An approval without words asks nothing of the agent.
            if r.body.trim().is_empty() {
                continue;
            }
            if rules.allows(r) {
                found.push(Finding::Remark(r.clone()));
            } else {
                self.ignored += 1;
            }
        }
        let conflicting = pr.mergeable == Mergeable::Conflicting;
        if conflicting && !self.conflicted {
            found.push(Finding::Conflict {
                base: pr.base.clone(),
            });
        }
        // Unknown is not an answer: a conflict is resolved only when the
        // forge says it merges.
        if pr.mergeable != Mergeable::Unknown {
            self.conflicted = conflicting;
        }
        self.last = Some(pr);
        if found.is_empty() {
            Step::Quiet
        } else if self.attempts >= rules.max_attempts {
            Step::Capped(found)
        } else {
            self.attempts += 1;
            Step::Send(found)
        }
    }
}

/// Whether a config rule may merge `pr` without the user's word: open,
/// every check passed, mergeable, and approved by an allowed reviewer whose
/// latest review it is, with no allowed reviewer's latest review asking for
/// changes.
pub fn ready_to_merge(pr: &PullRequest, rules: &Rules) -> bool {
    if pr.state != PrState::Open || !pr.green() || pr.mergeable != Mergeable::Mergeable {
        return false;
    }
    // Each allowed reviewer's latest verdict (reviews come oldest first).
    let mut latest: Vec<(&str, &str)> = Vec::new();
    for r in pr.remarks.iter().filter(|r| rules.allows(r)) {
        let Some(verdict) = r.review.as_deref() else {
            continue;
        };
        if verdict == "COMMENTED" {
            continue;
        }
        match latest.iter_mut().find(|(a, _)| *a == r.author) {
            Some(entry) => entry.1 = verdict,
            None => latest.push((&r.author, verdict)),
        }
    }
    latest.iter().any(|(_, v)| *v == "APPROVED")
        && !latest.iter().any(|(_, v)| *v == "CHANGES_REQUESTED")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::forge::PrState;

    fn rules() -> Rules {
        Rules {
            max_attempts: 2,
            associations: vec!["OWNER".into(), "MEMBER".into(), "COLLABORATOR".into()],
            authors: vec!["trusted-bot".into()],
        }
    }

    fn pr() -> PullRequest {
        PullRequest {
            number: 1,
            url: "u".into(),
            state: PrState::Open,
            draft: true,
            mergeable: Mergeable::Mergeable,
            head: "hive/1-x".into(),
            base: "main".into(),
            cross_repository: false,
            checks: vec![],
            remarks: vec![],
        }
    }

    fn check(name: &str, outcome: Outcome, run: &str) -> Check {
        Check {
            name: name.into(),
            outcome,
            url: format!("https://x/runs/{run}"),
            run_id: Some(run.into()),
        }
    }

    fn remark(id: &str, author: &str, association: &str) -> Remark {
        Remark {
            id: id.into(),
            author: author.into(),
            association: association.into(),
            body: format!("a remark by {author}"),
            review: None,
            when: String::new(),
        }
    }

    #[test]
    fn the_same_pull_request_twice_sends_nothing_the_second_time() {
        let mut w = Watch::default();
        let mut p = pr();
        p.checks = vec![
            check("test", Outcome::Failed, "1"),
            check("lint", Outcome::Passed, "1"),
        ];
        p.remarks = vec![remark("c1", "octo", "OWNER")];
        let Step::Send(found) = w.step(p.clone(), &rules()) else {
            panic!("a failure and a remark are news");
        };
        assert_eq!(found.len(), 2);
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        assert_eq!(w.step(p, &rules()), Step::Quiet);
        assert_eq!(w.attempts, 1);
    }

    #[test]
    fn a_new_run_failing_again_is_news_and_a_passing_one_is_not() {
        let mut w = Watch::default();
        let mut p = pr();
        p.checks = vec![check("test", Outcome::Failed, "1")];
        assert!(matches!(w.step(p.clone(), &rules()), Step::Send(_)));
        p.checks = vec![check("test", Outcome::Pending, "2")];
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        p.checks = vec![check("test", Outcome::Passed, "2")];
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        p.checks = vec![check("test", Outcome::Failed, "3")];
        assert!(matches!(w.step(p, &rules()), Step::Send(_)));
    }

    #[test]
    fn only_allowed_authors_reach_the_agent() {
        let mut w = Watch::default();
        let mut p = pr();
        p.remarks = vec![
            remark("a", "stranger", "NONE"),
            remark("b", "someone", "CONTRIBUTOR"),
            remark("c", "trusted-bot", "NONE"),
            remark("d", "maintainer", "member"),
        ];
        let Step::Send(found) = w.step(p, &rules()) else {
            panic!("two allowed remarks");
        };
        let authors: Vec<_> = found
            .iter()
            .map(|f| match f {
                Finding::Remark(r) => r.author.as_str(),
                _ => "?",
            })
            .collect();
        assert_eq!(authors, ["trusted-bot", "maintainer"]);
        assert_eq!(w.ignored, 2);
    }

    #[test]
    fn the_attempt_cap_holds_and_watching_ends_at_merge() {
        let mut w = Watch::default();
        let mut p = pr();
        for run in 1..=4 {
            p.checks = vec![check("test", Outcome::Failed, &run.to_string())];
            let step = w.step(p.clone(), &rules());
            if run <= 2 {
                assert!(matches!(step, Step::Send(_)), "{run}: {step:?}");
            } else {
                assert!(matches!(step, Step::Capped(_)), "{run}: {step:?}");
            }
        }
        assert_eq!(w.attempts, 2);
        p.state = PrState::Merged;
        assert_eq!(w.step(p, &rules()), Step::Ended(PrState::Merged));
    }

    #[test]
    fn only_green_approved_mergeable_pull_requests_merge_by_rule() {
        let review = |id: &str, author: &str, assoc: &str, verdict: &str| Remark {
            review: Some(verdict.into()),
            ..remark(id, author, assoc)
        };
        let mut p = pr();
        p.checks = vec![check("test", Outcome::Passed, "1")];
        assert!(!ready_to_merge(&p, &rules()), "not approved");
        p.remarks = vec![review("r1", "stranger", "NONE", "APPROVED")];
        assert!(
            !ready_to_merge(&p, &rules()),
            "a stranger's approval counts for nothing"
        );
        p.remarks
            .push(review("r2", "octo", "OWNER", "CHANGES_REQUESTED"));
        p.remarks.push(review("r3", "mia", "MEMBER", "APPROVED"));
        assert!(
            !ready_to_merge(&p, &rules()),
            "a writer still asks for changes"
        );
        p.remarks.push(review("r4", "octo", "OWNER", "APPROVED"));
        assert!(ready_to_merge(&p, &rules()));
        p.mergeable = Mergeable::Conflicting;
        assert!(!ready_to_merge(&p, &rules()));
        p.mergeable = Mergeable::Mergeable;
        p.checks.push(check("lint", Outcome::Pending, "1"));
        assert!(!ready_to_merge(&p, &rules()), "a check still runs");
    }

    #[test]
    fn a_remembered_watch_sends_nothing_it_sent_before() {
        let mut w = Watch::default();
        let mut p = pr();
        p.checks = vec![check("test", Outcome::Failed, "1")];
        p.remarks = vec![remark("c1", "octo", "OWNER")];
        p.mergeable = Mergeable::Conflicting;
        assert!(matches!(w.step(p.clone(), &rules()), Step::Send(_)));
        let kept = serde_json::to_string(&w.memory()).unwrap();
        let mut again = Watch::remembering(serde_json::from_str(&kept).unwrap());
        assert_eq!(again.step(p.clone(), &rules()), Step::Quiet);
        assert_eq!(again.attempts, 1);
        // What is new after the restart is still news, and counts on.
        p.checks = vec![check("test", Outcome::Failed, "2")];
        assert!(matches!(again.step(p, &rules()), Step::Send(_)));
        assert_eq!(again.attempts, 2);
    }

    #[test]
    fn a_conflict_is_said_once_until_it_is_resolved() {
        let mut w = Watch::default();
        let mut p = pr();
        p.mergeable = Mergeable::Conflicting;
        let Step::Send(found) = w.step(p.clone(), &rules()) else {
            panic!("a conflict is news");
        };
        assert_eq!(
            found,
            [Finding::Conflict {
                base: "main".into()
            }]
        );
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        p.mergeable = Mergeable::Unknown;
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        p.mergeable = Mergeable::Conflicting;
        assert_eq!(
            w.step(p.clone(), &rules()),
            Step::Quiet,
            "unknown resolved nothing"
        );
        p.mergeable = Mergeable::Mergeable;
        assert_eq!(w.step(p.clone(), &rules()), Step::Quiet);
        p.mergeable = Mergeable::Conflicting;
        assert!(matches!(w.step(p, &rules()), Step::Send(_)));
    }
}
