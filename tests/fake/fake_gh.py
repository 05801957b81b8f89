#!/usr/bin/env python3
"""A fake GitHub CLI for hive's forge tests (issue 48): no forge can be
reached from the test machines, so this answers the commands hive runs as
gh 2.x documents them (`gh help exit-codes`; the `--json` fields of
`gh issue view` and `gh pr view`; `statusCheckRollup` as CheckRun and
StatusContext objects), with a real bare git repository as the remote.

    fake_gh.py --state DIR ARGS...     (a test writes a wrapper named `gh`)

DIR holds the forge's state, which the test sets up and reads back:
  repo.json        {"owner", "name", "login", "remote": bare repo, "default_branch"}
  logged_out       present: every command exits 4 as gh does without a login
  hang             present: every command sleeps (a hung network)
  calls.jsonl      one line per call, appended (argv)
  issues/N.json    an issue: number, title, body, url, labels
  prs/N.json       pull requests this fake opened (or the test wrote)
  ci.json          {"checks": [{"name", "workflow", "fails_when": path, "log"}]}:
                   a check fails when the head commit has that path
  runs/ID.log      the failed log of run ID, written when a check fails
  forges.json      {"<bare remote>": "<state dir>"}: a forge per repository,
                   picked by the checkout's origin (gh finds the repository so)
`issue list --label L` lists issues/ with that label (and "state" OPEN, the
default); `run list --branch B --status failure` the ci.json checks that fail
on B's head, as gh 2.x's `run list --json` prints them.
Standard library only.
"""

import json
import os
import subprocess
import sys
import time

STATE = None


def path(*parts):
    return os.path.join(STATE, *parts)


def load(*parts, default=None):
    try:
        with open(path(*parts)) as f:
            return json.load(f)
    except FileNotFoundError:
        return default


def save(obj, *parts):
    os.makedirs(os.path.dirname(path(*parts)), exist_ok=True)
    tmp = path(*parts) + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f)
    os.replace(tmp, path(*parts))


def fail(message, code=1):
    sys.stderr.write(message + "\n")
    sys.exit(code)


def repo():
    return load("repo.json")


def git(*args, check=True):
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME="GitHub", GIT_AUTHOR_EMAIL="noreply@github.com",
               GIT_COMMITTER_NAME="GitHub", GIT_COMMITTER_EMAIL="noreply@github.com")
    out = subprocess.run(["git", "--git-dir", repo()["remote"], *args],
                         capture_output=True, text=True, env=env)
    if check and out.returncode != 0:
        fail("git " + " ".join(args) + ": " + out.stderr.strip())
    return out


def sha(ref):
    out = git("rev-parse", "--verify", "-q", ref + "^{commit}", check=False)
    return out.stdout.strip() if out.returncode == 0 else None


def base_url():
    r = repo()
    return "https://github.com/%s/%s" % (r["owner"], r["name"])


def flag(args, name, default=None):
    for a in args:
        if a.startswith(name + "="):
            return a[len(name) + 1:]
    if name in args:
        i = args.index(name)
        if i + 1 < len(args):
            return args[i + 1]
    return default


def fields(args):
    f = flag(args, "--json")
    if f is None:
        fail("hive's fake gh answers --json only")
    return f.split(",")


def pick(obj, names):
    missing = [n for n in names if n not in obj]
    if missing:
        fail('Unknown JSON field: "%s"' % missing[0])
    print(json.dumps({n: obj[n] for n in names}))


def prs():
    d = path("prs")
    if not os.path.isdir(d):
        return []
    return sorted((load("prs", n) for n in os.listdir(d) if n.endswith(".json")),
                  key=lambda p: p["number"])


def next_number():
    used = [p["number"] for p in prs()]
    d = path("issues")
    if os.path.isdir(d):
        used += [int(n[:-5]) for n in os.listdir(d) if n.endswith(".json")]
    return max(used, default=0) + 1


def find_pr(selector):
    for p in reversed(prs()):
        if str(p["number"]) == selector.lstrip("#"):
            return p
    for p in reversed(prs()):
        if p["headRefName"] == selector and p["state"] == "OPEN":
            return p
    for p in reversed(prs()):
        if p["headRefName"] == selector:
            return p
    fail('no pull requests found for branch "%s"' % selector)


def checks(pr):
    head = sha("refs/heads/" + pr["headRefName"])
    ci = load("ci.json", default={"checks": []})
    out = []
    for i, c in enumerate(ci["checks"]):
        run = int(head[:6], 16) * 10 + i if head else i
        failed = head and git("cat-file", "-e", "%s:%s" % (head, c["fails_when"]),
                              check=False).returncode == 0
        if failed:
            os.makedirs(path("runs"), exist_ok=True)
            with open(path("runs", "%d.log" % run), "w") as f:
                f.write(c.get("log", "%s\tRun\tError\n" % c["name"]))
        out.append({
            "__typename": "CheckRun", "name": c["name"],
            "workflowName": c.get("workflow", "CI"), "status": "COMPLETED",
            "conclusion": "FAILURE" if failed else "SUCCESS",
            "startedAt": "2026-12-02T10:00:00Z", "completedAt": "2026-12-02T10:01:00Z",
            "detailsUrl": "%s/actions/runs/%d/job/%d" % (base_url(), run, run + 1),
            "isRequired": True,
        })
    return out or None


def mergeable(pr):
    if pr["state"] != "OPEN":
        return "UNKNOWN"
    out = git("merge-tree", "--write-tree", "refs/heads/" + pr["baseRefName"],
              "refs/heads/" + pr["headRefName"], check=False)
    return "MERGEABLE" if out.returncode == 0 else "CONFLICTING"


def issue_view(args):
    n = args[0].lstrip("#")
    issue = load("issues", n + ".json")
    if issue is None:
        fail("GraphQL: Could not resolve to an issue or pull request with the number of %s. "
             "(repository.issue)" % n)
    pick(issue, fields(args))


def issue_list(args):
    label = flag(args, "--label")
    state = flag(args, "--state", "open")
    limit = int(flag(args, "--limit", "30"))
    d = path("issues")
    issues = []
    if os.path.isdir(d):
        issues = [load("issues", n) for n in os.listdir(d) if n.endswith(".json")]
    issues = [i for i in issues
              if (label is None or any(l["name"] == label for l in i.get("labels", [])))
              and (state == "all" or i.get("state", "OPEN").lower() == state)]
    issues.sort(key=lambda i: -i["number"])
    names = fields(args)
    print(json.dumps([{n: i[n] for n in names if n in i} for i in issues[:limit]]))


def run_list(args):
    branch = flag(args, "--branch", repo().get("default_branch", "main"))
    status = flag(args, "--status")
    limit = int(flag(args, "--limit", "20"))
    head = sha("refs/heads/" + branch)
    ci = load("ci.json", default={"checks": []})
    runs = []
    for i, c in enumerate(ci["checks"]):
        if not head:
            break
        run = int(head[:6], 16) * 10 + i
        failed = git("cat-file", "-e", "%s:%s" % (head, c["fails_when"]),
                     check=False).returncode == 0
        if failed:
            os.makedirs(path("runs"), exist_ok=True)
            with open(path("runs", "%d.log" % run), "w") as f:
                f.write(c.get("log", "%s\tRun\tError\n" % c["name"]))
        conclusion = "failure" if failed else "success"
        if status is not None and status != conclusion:
            continue
        subject = git("log", "-1", "--format=%s", head).stdout.strip()
        runs.append({"databaseId": run, "displayTitle": subject, "headBranch": branch,
                     "headSha": head, "workflowName": c.get("workflow", "CI"),
                     "conclusion": conclusion, "status": "completed", "event": "push",
                     "url": "%s/actions/runs/%d" % (base_url(), run)})
    names = fields(args)
    print(json.dumps([{n: r[n] for n in names if n in r} for r in runs[:limit]]))


def pr_create(args):
    head = flag(args, "--head")
    title = flag(args, "--title")
    body = flag(args, "--body", "")
    if not head or title is None:
        fail("must provide `--title` and `--body` (or `--fill`) when not running interactively")
    base = flag(args, "--base", repo().get("default_branch", "main"))
    if sha("refs/heads/" + head) is None:
        fail("pull request create failed: GraphQL: Head sha can't be blank, Base sha can't be "
             "blank, No commits between %s and %s, Head ref must be a branch (createPullRequest)"
             % (base, head))
    for p in prs():
        if p["headRefName"] == head and p["state"] == "OPEN":
            fail('a pull request for branch "%s" into branch "%s" already exists:\n%s'
                 % (head, base, p["url"]))
    n = next_number()
    pr = {"number": n, "title": title, "body": body, "headRefName": head,
          "baseRefName": base, "isDraft": "--draft" in args, "state": "OPEN",
          "isCrossRepository": False, "comments": [], "reviews": [],
          "url": "%s/pull/%d" % (base_url(), n)}
    save(pr, "prs", "%d.json" % n)
    print(pr["url"])


def pr_view(args):
    pr = find_pr(args[0])
    full = dict(pr)
    full["statusCheckRollup"] = checks(pr)
    full["mergeable"] = mergeable(pr)
    pick(full, fields(args))


def pr_edit(args):
    pr = find_pr(args[0])
    body = flag(args, "--body")
    if body is None:
        fail("specify at least one of --add-assignee, ..., --body, ... when not running interactively")
    pr["body"] = body
    save(pr, "prs", "%d.json" % pr["number"])
    print(pr["url"])


def pr_ready(args):
    pr = find_pr(args[0])
    pr["isDraft"] = False
    save(pr, "prs", "%d.json" % pr["number"])
    sys.stderr.write("✓ Pull request %s/%s#%d is marked as \"ready for review\"\n"
                     % (repo()["owner"], repo()["name"], pr["number"]))


def pr_merge(args):
    pr = find_pr(args[0])
    if pr["state"] != "OPEN":
        fail("Pull request %s/%s#%d was already merged or closed"
             % (repo()["owner"], repo()["name"], pr["number"]))
    if pr["isDraft"]:
        fail("GraphQL: Pull Request is still a draft (mergePullRequest)")
    if mergeable(pr) == "CONFLICTING":
        fail("Pull request %s/%s#%d is not mergeable: the merge commit cannot be cleanly created."
             % (repo()["owner"], repo()["name"], pr["number"]))
    base, head = "refs/heads/" + pr["baseRefName"], "refs/heads/" + pr["headRefName"]
    tree = git("merge-tree", "--write-tree", base, head).stdout.split()[0]
    message = "%s (#%d)" % (pr["title"], pr["number"])
    commit = git("commit-tree", tree, "-p", sha(base), "-m", message).stdout.strip()
    git("update-ref", base, commit)
    pr["state"] = "MERGED"
    save(pr, "prs", "%d.json" % pr["number"])
    print("✓ Squashed and merged pull request %s/%s#%d (%s)"
          % (repo()["owner"], repo()["name"], pr["number"], pr["title"]))


def pr_comment(args):
    pr = find_pr(args[0])
    pr["comments"].append({
        "id": "IC_%d" % (len(pr["comments"]) + 1), "author": {"login": repo()["login"]},
        "authorAssociation": "OWNER", "body": flag(args, "--body", ""),
        "createdAt": "2026-12-02T10:00:00Z", "includesCreatedEdit": False,
        "isMinimized": False, "minimizedReason": "", "reactionGroups": [],
    })
    save(pr, "prs", "%d.json" % pr["number"])
    print("%s#issuecomment-%d" % (pr["url"], len(pr["comments"])))


def run_view(args):
    if "--log-failed" not in args:
        fail("hive's fake gh answers `run view ID --log-failed` only")
    try:
        with open(path("runs", args[0] + ".log")) as f:
            sys.stdout.write(f.read())
    except FileNotFoundError:
        fail("could not find any workflow run with ID %s" % args[0])


def forge_of_cwd(state):
    """gh finds the repository from the checkout's `origin`: with
    forges.json ({"<bare remote path>": "<state dir>"}), each repository's
    remote has a forge of its own (a change across repositories)."""
    try:
        with open(os.path.join(state, "forges.json")) as f:
            forges = json.load(f)
    except FileNotFoundError:
        return state
    out = subprocess.run(["git", "config", "--get", "remote.origin.url"],
                         capture_output=True, text=True)
    url = os.path.realpath(out.stdout.strip()) if out.returncode == 0 else ""
    for remote, own in forges.items():
        if os.path.realpath(remote) == url:
            return own
    fail("none of the git remotes configured for this repository point to a known GitHub host")


COMMANDS = {
    ("issue", "view"): issue_view,
    ("issue", "list"): issue_list,
    ("run", "list"): run_list,
    ("pr", "create"): pr_create,
    ("pr", "view"): pr_view,
    ("pr", "edit"): pr_edit,
    ("pr", "ready"): pr_ready,
    ("pr", "merge"): pr_merge,
    ("pr", "comment"): pr_comment,
    ("run", "view"): run_view,
}


def main():
    global STATE
    args = sys.argv[1:]
    if len(args) < 2 or args[0] != "--state":
        fail("usage: fake_gh.py --state DIR ARGS...")
    STATE, args = args[1], args[2:]
    if args == ["--version"]:
        print("gh version 2.63.0 (2024-11-27)\nhttps://github.com/cli/cli/releases/tag/v2.63.0")
        return
    STATE = forge_of_cwd(STATE)
    with open(path("calls.jsonl"), "a") as f:
        f.write(json.dumps(args) + "\n")
    if os.path.exists(path("hang")):
        time.sleep(3600)
    if os.path.exists(path("logged_out")):
        fail("To get started with GitHub CLI, please run:  gh auth login\n"
             "Alternatively, populate the GH_TOKEN environment variable with a GitHub API "
             "authentication token.", 4)
    if args[:2] == ["auth", "status"]:
        sys.stderr.write("github.com\n  ✓ Logged in to github.com account %s\n" % repo()["login"])
        return
    command = COMMANDS.get(tuple(args[:2]))
    if command is None or len(args) < 3:
        fail('unknown command "%s" for "gh"' % " ".join(args[:2]))
    command(args[2:])


if __name__ == "__main__":
    main()
