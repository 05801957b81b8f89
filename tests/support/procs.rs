//! Process liveness and the fakes' own records (JSON lines they append, the
//! crash time they print): what lifecycle tests read to see that a fake ran
//! with the right command line and left nothing behind.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// Running (a zombie nobody reaped in this container counts as gone).
pub fn alive(pid: impl Into<i64>) -> bool {
    let pid = pid.into();
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim().to_owned()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

/// Waits (hang guard, not a speed assertion) for `pid` to go.
pub async fn gone(pid: impl Into<i64>) -> bool {
    let pid = pid.into();
    for _ in 0..100 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Some process of group `pgid` still exists.
pub fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Waits (up to `bound`) for every process of group `pgid` to go; false if
/// one outlived it.
pub async fn group_gone(pgid: i32, bound: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + bound;
    while group_alive(pgid) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !group_alive(pgid)
}

/// Processes may take a moment to be reaped after their group was killed.
pub async fn assert_all_dead(pids: &[i32]) {
    assert!(!pids.is_empty(), "the fake recorded its pids");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "orphans left: {:?}",
            pids.iter().filter(|p| alive(**p)).collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Seconds from the fake's crash (the time it printed to stderr) to now.
pub fn since_crash(message: &str) -> Option<f64> {
    let at: f64 = message
        .split("crash at ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some(now - at)
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// The JSON lines a fake appended to `path` (none if it never wrote).
pub fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The command line a fake recorded (`{"argv": [...]}`).
pub fn argv(run: &Value) -> Vec<String> {
    run["argv"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The value after flag `name` in a recorded command line.
pub fn flag(run: &Value, name: &str) -> Option<String> {
    let args = argv(run);
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `python3 tests/fake/<script>`: the command of a fake agent.
pub fn fake_command(script: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fake")
        .join(script);
    vec!["python3".into(), path.display().to_string()]
}

/// A capture copied into tests/fixtures/<dir>/<name>.
pub fn fixture(dir: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(dir)
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Two stdio MCP servers of the project's own (tests/fake/fake_mcp.py) for
/// a pane's `[[mcp_server]]`s (issue 51): `good` answers, `broken` exits
/// at once, as a server that cannot start.
pub fn fake_mcp_servers() -> Vec<hive::config::McpServerConfig> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_mcp.py");
    let script = script.display().to_string();
    vec![
        hive::config::McpServerConfig::stdio("good", "python3", &[&script]),
        hive::config::McpServerConfig::stdio("broken", "python3", &[&script, "--crash"]),
    ]
}

/// The project's MCP server over streamable HTTP (tests/fake/fake_mcp.py
/// `--http`) on a free port of 127.0.0.1, stopped when dropped; `require`
/// is a header (`Name: value`) it wants on every request.
pub struct HttpMcp {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    _dir: tempfile::TempDir,
    /// Where it logs each request (`{"http", "path", "rpc", "session"}`).
    pub log: std::path::PathBuf,
}

impl HttpMcp {
    pub fn start(require: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake/fake_mcp.py");
        let port_file = dir.path().join("port");
        let log = dir.path().join("requests.jsonl");
        let mut cmd = std::process::Command::new("python3");
        cmd.arg(&script)
            .arg("--http")
            .arg(&port_file)
            .env("FAKE_MCP_LOG", &log);
        if let Some(header) = require {
            cmd.args(["--require-header", header]);
        }
        let child = cmd.spawn().expect("start fake_mcp.py --http");
        let start = std::time::Instant::now();
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(20),
                "fake_mcp.py --http did not listen"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        Self {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port.trim()),
            _dir: dir,
            log,
        }
    }

    /// The JSON-RPC methods it was asked, in order.
    pub fn methods(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["rpc"].as_str().map(str::to_owned))
            .collect()
    }
}

impl Drop for HttpMcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
