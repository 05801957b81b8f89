//! What `hive init` finds: each agent CLI as `hive doctor` sees it (PATH,
//! version, auth: the checks are doctor's own, run on a stand-in agent),
//! and the built-in `openai` agent's ways in (an API key in the
//! environment, or an OpenAI-compatible server on loopback).

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use crate::config::{AgentConfig, Config};
use crate::doctor::{self, AgentReport, Env, Level};

/// The agent CLIs hive drives, with the name people know them by.
pub(crate) const CLIS: &[(&str, &str)] = &[
    ("claude", "Claude Code"),
    ("codex", "Codex"),
    ("gemini", "Gemini CLI"),
    ("pi", "pi"),
];

/// The usual ports of local OpenAI-compatible servers (loopback only).
pub(crate) const LOCAL_PORTS: &[(u16, &str)] = &[
    (11434, "Ollama"),
    (8080, "llama.cpp"),
    (1234, "LM Studio"),
    (8000, "vLLM"),
];

/// How long a local server may take to connect and to answer.
const PROBE_CONNECT: Duration = Duration::from_millis(250);
const PROBE_READ: Duration = Duration::from_millis(800);

/// One agent CLI as doctor found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Cli {
    /// The provider, which is also the program's name.
    pub provider: &'static str,
    pub label: &'static str,
    /// Where it is on PATH (`~/…`), `None` when not found.
    pub path: Option<String>,
    /// Doctor's advice when it is not found (how to install it).
    pub install: Option<String>,
    pub version: Option<String>,
    /// Doctor's auth check passed (a key set or a login file).
    pub logged_in: bool,
    /// Doctor's word on auth, or its fix when not logged in.
    pub auth: String,
    /// Doctor found nothing that stops it from starting.
    pub can_start: bool,
}

impl Cli {
    pub fn found(&self) -> bool {
        self.path.is_some()
    }
}

/// One way to run the built-in `openai` agent.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAi {
    /// The pane id (and what the user is asked about).
    pub id: String,
    pub label: String,
    pub base_url: String,
    pub model: String,
    /// The variable holding the key (`None`: a local server needs none).
    pub api_key_env: Option<&'static str>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    pub(crate) clis: Vec<Cli>,
    pub openai: Vec<OpenAi>,
    /// The directory is inside a git repository.
    pub git: bool,
    /// It has a commit for worktrees to start from.
    pub head: bool,
}

impl Detected {
    /// Something hive could run besides a shell.
    pub fn any(&self) -> bool {
        self.clis.iter().any(Cli::found) || !self.openai.is_empty()
    }
}

/// Everything in `dir`, with `env`'s PATH, HOME and variables; `ports`
/// are probed on 127.0.0.1.
pub fn detect(env: &Env, dir: &Path, ports: &[(u16, &str)]) -> Detected {
    let env = Env {
        cwd: dir.to_owned(),
        ..env.clone()
    };
    let (clis, local) = std::thread::scope(|s| {
        let local = s.spawn(|| probe_all(ports));
        (clis(&env), local.join().unwrap_or_default())
    });
    let mut openai = keys(&env);
    openai.extend(local);
    let git = crate::worktree::find_repo(dir).is_ok();
    let head = git
        && crate::worktree::git::Git::at(dir).succeeds(&[
            "rev-parse",
            "--verify",
            "--quiet",
            "HEAD",
        ]);
    Detected {
        clis,
        openai,
        git,
        head,
    }
}

/// Doctor's report on a stand-in agent per CLI, read back as facts.
fn clis(env: &Env) -> Vec<Cli> {
    let mut config = Config::builtin();
    config.agents = CLIS.iter().map(|(p, _)| AgentConfig::new(p, p)).collect();
    let report = doctor::diagnose(&config, Vec::new(), env);
    CLIS.iter()
        .zip(&report.agents)
        .map(|(&(provider, label), r)| from_report(provider, label, r))
        .collect()
}

fn from_report(provider: &'static str, label: &'static str, r: &AgentReport) -> Cli {
    let check = |name: &str| r.checks.iter().find(|c| c.name == name);
    let program = check("program");
    let path = program
        .filter(|c| c.level != Level::Fail)
        .map(|c| c.detail.clone());
    let install = program
        .filter(|c| c.level == Level::Fail)
        .and_then(|c| c.fix.clone());
    // "2.1.330 (the version hive was tested with)": the first word, if a version.
    let version = check("version")
        .and_then(|c| c.detail.split_whitespace().next())
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned);
    let auth = check("auth");
    let logged_in = auth.is_some_and(|c| c.level == Level::Ok);
    let auth = auth
        .map(|c| match (&c.fix, logged_in) {
            (Some(fix), false) => fix.clone(),
            _ => c.detail.clone(),
        })
        .unwrap_or_default();
    Cli {
        provider,
        label,
        path,
        install,
        version,
        logged_in,
        auth,
        can_start: r.can_start,
    }
}

/// API keys in the environment (names only; values are never read out).
fn keys(env: &Env) -> Vec<OpenAi> {
    let set = |name: &str| env.vars.get(name).is_some_and(|v| !v.is_empty());
    let mut found = Vec::new();
    if set("OPENAI_API_KEY") {
        found.push(OpenAi {
            id: "openai".into(),
            label: "OpenAI (OPENAI_API_KEY)".into(),
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4.1".into(),
            api_key_env: Some("OPENAI_API_KEY"),
        });
    }
    if set("OPENROUTER_API_KEY") {
        found.push(OpenAi {
            id: "openrouter".into(),
            label: "OpenRouter (OPENROUTER_API_KEY)".into(),
            base_url: "https://openrouter.ai/api/v1".into(),
            model: "openai/gpt-4.1".into(),
            api_key_env: Some("OPENROUTER_API_KEY"),
        });
    }
    found
}

/// Every port at once: a closed port answers at once, a silent one costs
/// the timeout, once.
fn probe_all(ports: &[(u16, &str)]) -> Vec<OpenAi> {
    std::thread::scope(|s| {
        let probes: Vec<_> = ports
            .iter()
            .map(|&(port, name)| s.spawn(move || probe(port, name)))
            .collect();
        probes
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .collect()
    })
}

/// `GET /v1/models` on 127.0.0.1:`port`: a server that lists a model.
pub fn probe(port: u16, name: &str) -> Option<OpenAi> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let mut stream = TcpStream::connect_timeout(&addr, PROBE_CONNECT).ok()?;
    stream.set_read_timeout(Some(PROBE_READ)).ok()?;
    stream.set_write_timeout(Some(PROBE_READ)).ok()?;
    // HTTP/1.0: the server closes after its answer, not chunked.
    let request =
        format!("GET /v1/models HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = Vec::new();
    let _ = stream.take(1 << 20).read_to_end(&mut answer);
    let model = first_model(&String::from_utf8_lossy(&answer))?;
    let id: String = name
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    Some(OpenAi {
        id: if id.is_empty() { "local".into() } else { id },
        label: format!("{name} on 127.0.0.1:{port} ({model})"),
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model,
        api_key_env: None,
    })
}

/// The longest model id taken from a server (ids run to a few dozen
/// characters: `hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M`).
const MODEL_ID_MAX: usize = 256;

/// Whether a server's model id can be one: a line of printable text, not
/// a page. Anything else is the server's attempt at hive's terminal or
/// config (#53 item 2) and is refused, not cleaned up and used.
fn plausible_model_id(id: &str) -> bool {
    !id.trim().is_empty()
        && id.chars().count() <= MODEL_ID_MAX
        && crate::sanitize::neutralize(id) == id
        && !id.contains(['\n', '\t'])
}

/// The first plausible model id of a 200 answer to `/v1/models`.
fn first_model(answer: &str) -> Option<String> {
    let (head, body) = answer.split_once("\r\n\r\n")?;
    let status = head.lines().next()?;
    if status.split_whitespace().nth(1) != Some("200") {
        return None;
    }
    // Tolerates a single chunk of chunked encoding around the object.
    let json = &body[body.find('{')?..=body.rfind('}')?];
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get("data")?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("id")?.as_str())
        .find(|id| plausible_model_id(id))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_answer() {
        let ok = "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{\"object\":\"list\",\"data\":[{\"id\":\"qwen3:8b\"}]}";
        assert_eq!(first_model(ok).as_deref(), Some("qwen3:8b"));
        let chunked = "HTTP/1.1 200 OK\r\n\r\n2a\r\n{\"data\":[{\"id\":\"m\"}]}\r\n0\r\n\r\n";
        assert_eq!(first_model(chunked).as_deref(), Some("m"));
        assert_eq!(first_model("HTTP/1.0 404 Not Found\r\n\r\n{}"), None);
        assert_eq!(first_model("HTTP/1.0 200 OK\r\n\r\n{\"data\":[]}"), None);
    }
}
