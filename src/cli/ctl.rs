//! `hive ctl`: drive a running hive from scripts, editors or a second
//! terminal through its control socket (README "Scripting a running hive").
//! Each error code has its own exit status (`ErrorCode::exit_code`).

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;

use super::ctl_text::{enum_name, list_text, one_line, outcome_text, status_text};
use crate::config::HostConfig;
use crate::control::client::{Client, ClientError, Prefer, discover};
use crate::control::protocol::{
    ApprovalEvent, ApprovalLine, Call, DeltaLine, EventLine, PaneInfo, TurnOutcome, WaitResult,
};
use crate::sanitize::{for_output, neutralize};
use crate::upsert::{Output, TurnEvent, Upsert, UpsertKind};

#[derive(Debug, Args)]
pub struct CtlArgs {
    /// The hive to talk to: a socket path, or a name in the socket dir
    /// (`$XDG_RUNTIME_DIR/hive`). Default: the only one running.
    #[arg(long, env = "HIVE_SOCKET", value_name = "NAME|PATH", global = true)]
    pub socket: Option<String>,
    /// Print the hive's JSON instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Clone, Subcommand)]
pub enum Verb {
    /// Every pane: state, model, queue.
    List,
    /// One pane in detail.
    Status { pane: String },
    /// Send a message; prints its turn id once the message is bound to a
    /// turn (for a busy pane: when the queue reaches it).
    Send {
        pane: String,
        /// Deliver now: into the running turn, or interrupt it and send.
        #[arg(long)]
        steer: bool,
        /// The message (several words are joined by spaces).
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Wait for a turn to end and print the agent's answer; exit 1 when
    /// the turn failed or was cancelled.
    Wait { turn_id: String },
    /// Interrupt the pane's running turn.
    Cancel { pane: String },
    /// Start a pane's agent again after it stopped.
    Restart { pane: String },
    /// Stream upserts and turn events (of one pane, or all) until Ctrl-C.
    Watch { pane: Option<String> },
    /// The pane's current conversation from the history store.
    History { pane: String },
    /// Allow the tool call the pane waits on (`state: awaiting_approval`).
    Approve {
        pane: String,
        /// Allow it from now on: with a policy, a learned rule of the
        /// project (`approvals --rules`); without, the agent's own always.
        #[arg(long, conflicts_with = "confirm")]
        always: bool,
        /// Run a destructive request: the confirm of its second card
        /// (a plain approve of the first card brings that card).
        #[arg(long)]
        confirm: bool,
        /// Which approval, when several wait (`status` lists them); default
        /// the oldest.
        #[arg(long, value_name = "ID")]
        request: Option<String>,
    },
    /// The approvals waiting across panes; `--log` what was decided,
    /// `--rules` the rules, `--forget RULE` a learned rule removed.
    Approvals(super::ctl_approvals::ApprovalsArgs),
    /// Deny the tool call the pane waits on; the reason reaches the agent.
    Deny {
        pane: String,
        #[arg(long, value_name = "TEXT")]
        reason: Option<String>,
        #[arg(long, value_name = "ID")]
        request: Option<String>,
    },
    /// A new pane, a copy of one of the config's agents or a provider with
    /// its defaults; it stays after a restart (`hive --fresh` forgets it).
    New(super::ctl_panes::NewArgs),
    /// Close a pane: its agent stops; its history and worktree stay.
    Close {
        pane: String,
        /// With the helpers it spawned (`agent.spawn`), and theirs.
        #[arg(long)]
        team: bool,
        /// Remove its worktree and `hive/` branch too (unmerged work goes).
        #[arg(long)]
        discard: bool,
    },
    /// Retitle a pane (its id stays).
    Rename { pane: String, name: String },
    /// Hand a pane's work to another pane or a new one (docs/move.md).
    Handoff(super::ctl_carry::HandoffArgs),
    /// A pane's workspace: `repo add PANE DIR` (docs/workspaces.md).
    Repo {
        #[command(subcommand)]
        repo: super::ctl_panes::RepoVerb,
    },
    /// Go on under another `[[account]]` of the pane's provider, with the
    /// conversation (now, or when its turn ends; docs/config.md).
    Account { pane: String, name: String },
    /// A pane's pull request: open, status, merge (docs/forge.md).
    Pr {
        #[command(subcommand)]
        pr: super::ctl_forge::PrVerb,
    },
    /// Move a pane to another place (`--to`, 1 is first) or window, or
    /// (`--host`) the live pane to a `[[host]]`'s hive server, with its
    /// worktree, history and settings (`host:pane --host local`: back).
    #[command(group(clap::ArgGroup::new("where").required(true).args(["to", "window", "host"])))]
    Move {
        pane: String,
        #[arg(long, value_name = "PLACE", value_parser = clap::value_parser!(u64).range(1..))]
        to: Option<u64>,
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        window: Option<u64>,
        #[arg(long, value_name = "HOST")]
        host: Option<String>,
    },
}

pub(super) fn ctl(cli: &super::Cli, args: &CtlArgs) -> anyhow::Result<ExitCode> {
    match run(cli, args) {
        Ok(code) => Ok(code),
        Err(ClientError::OutputClosed) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!(
                "hive ctl: {} [{}]",
                neutralize(&e.to_string()),
                code_name(&e)
            );
            Ok(ExitCode::from(e.exit_code()))
        }
    }
}

/// A failed write to stdout: a closed reader ends ctl quietly.
fn output_error(e: std::io::Error) -> ClientError {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        ClientError::OutputClosed
    } else {
        ClientError::Unreachable(format!("writing output: {e}"))
    }
}

fn code_name(e: &ClientError) -> String {
    serde_json::to_value(e.code())
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// The socket of the hive meant (`--socket` names it outright).
fn socket_path(cli: &super::Cli, args: &CtlArgs) -> Result<std::path::PathBuf, ClientError> {
    socket_for(cli, args.socket.as_deref())
}

/// [`socket_path`] for any command that names a hive by `--socket`.
pub(super) fn socket_for(
    cli: &super::Cli,
    socket: Option<&str>,
) -> Result<std::path::PathBuf, ClientError> {
    // The hive of the config `hive` would load here is the one meant: a
    // project's config names it outright (`hive ctl` in one project never
    // drives another's server); the user's config or the built-in one
    // settles a choice between several.
    let config =
        crate::config::Config::load(cli.config.as_deref(), &crate::provider::Registry::builtin())
            .ok();
    let label = config
        .as_ref()
        .map(|c| crate::control::socket_name(&crate::control::socket_dir(), &c.source));
    let project_config = cli.config.is_some()
        || config.as_ref().is_some_and(|c| {
            matches!(&c.source, crate::config::ConfigSource::File(p)
                if Some(p) != crate::paths::user_config_file().as_ref())
        });
    let prefer = match &label {
        Some(l) if project_config => Prefer::Only(l),
        Some(l) => Prefer::IfSeveral(l),
        None => Prefer::None,
    };
    discover(socket, &crate::control::socket_dir(), prefer)
}

/// The request a verb makes.
fn to_call(verb: &Verb) -> Call {
    match verb {
        Verb::List => Call::List,
        Verb::Status { pane } => Call::Status { pane: pane.clone() },
        Verb::Send { pane, steer, text } => Call::Send {
            pane: pane.clone(),
            text: text.join(" "),
            steer: *steer,
        },
        Verb::Wait { turn_id } => Call::Wait {
            turn_id: turn_id.clone(),
        },
        Verb::Cancel { pane } => Call::Cancel { pane: pane.clone() },
        Verb::Restart { pane } => Call::Restart { pane: pane.clone() },
        Verb::Watch { pane } => Call::Watch { pane: pane.clone() },
        Verb::History { pane } => Call::History { pane: pane.clone() },
        Verb::Approve {
            pane,
            always,
            confirm,
            request,
        } => Call::Approve {
            pane: pane.clone(),
            request_id: request.clone(),
            always: *always,
            confirm: *confirm,
        },
        Verb::Approvals(args) => args.to_call(),
        Verb::Deny {
            pane,
            reason,
            request,
        } => Call::Deny {
            pane: pane.clone(),
            request_id: request.clone(),
            reason: reason.clone(),
        },
        Verb::New(args) => args.to_call(),
        Verb::Close {
            pane,
            team,
            discard,
        } => Call::Close {
            pane: pane.clone(),
            team: *team,
            discard: *discard,
        },
        Verb::Rename { pane, name } => Call::Rename {
            pane: pane.clone(),
            name: name.clone(),
        },
        Verb::Pr { pr } => pr.to_call(),
        Verb::Handoff(args) => args.to_call(),
        Verb::Account { pane, name } => Call::Account {
            pane: pane.clone(),
            name: name.clone(),
        },
        Verb::Repo { repo } => repo.to_call(),
        Verb::Move {
            pane,
            host: Some(host),
            ..
        } => Call::Relocate(crate::protocol::carry::Relocate::Go {
            pane: pane.clone(),
            host: host.trim_start_matches('@').to_owned(),
        }),
        Verb::Move {
            pane, to, window, ..
        } => Call::Move {
            pane: pane.clone(),
            to: to.map(|t| t.saturating_sub(1) as usize),
            window: window.map(|w| w as usize),
        },
    }
}

/// `(host, the verb as that host sees it)` when the verb addresses a host.
fn on_host<'a>(verb: &Verb, hosts: &'a [HostConfig]) -> Option<(&'a HostConfig, Verb)> {
    let split = |id: &str| -> Option<(&'a HostConfig, String)> {
        let (h, rest) = id.split_once(':')?;
        let host = hosts.iter().find(|x| x.name == h && x.serves())?;
        Some((host, rest.to_owned()))
    };
    let (host, verb) = match verb {
        // A directory of this machine's: a repository joins a local pane.
        Verb::List
        | Verb::Pr { .. }
        | Verb::Approvals(_)
        | Verb::Handoff(_)
        | Verb::Repo { .. } => return None,
        Verb::Wait { turn_id } => split(turn_id).map(|(h, turn_id)| (h, Verb::Wait { turn_id }))?,
        Verb::Watch { pane } => {
            let (h, pane) = split(pane.as_deref()?)?;
            (h, Verb::Watch { pane: Some(pane) })
        }
        Verb::New(args) => split(&args.id).map(|(h, id)| (h, Verb::New(args.on_host(id))))?,
        // A move to a host is the local server's to drive, both ways.
        Verb::Move { host: Some(_), .. } => return None,
        // The rest name one pane: `host:pane` becomes `pane` there.
        _ => {
            let mut there = verb.clone();
            let pane = pane_of(&mut there)?;
            let (h, id) = split(pane)?;
            *pane = id;
            (h, there)
        }
    };
    Some((host, verb))
}

/// The one pane a verb names, to be renamed as its host knows it.
fn pane_of(verb: &mut Verb) -> Option<&mut String> {
    match verb {
        Verb::Status { pane }
        | Verb::Send { pane, .. }
        | Verb::Cancel { pane }
        | Verb::Restart { pane }
        | Verb::History { pane }
        | Verb::Close { pane, .. }
        | Verb::Rename { pane, .. }
        | Verb::Account { pane, .. }
        | Verb::Move { pane, .. }
        | Verb::Approve { pane, .. }
        | Verb::Deny { pane, .. } => Some(pane),
        _ => None,
    }
}

/// The hive a verb is for, with the verb as it sees it: a `[[host]]`'s for
/// `host:pane` (its name third), else the local one; and where that is,
/// for messages.
fn open(
    cli: &super::Cli,
    args: &CtlArgs,
    config: Option<&crate::config::Config>,
) -> Result<(Client, Verb, Option<String>, String), ClientError> {
    let hosts = config.map(|c| c.hosts.as_slice()).unwrap_or_default();
    Ok(match on_host(&args.verb, hosts) {
        Some((host, verb)) => (
            super::ctl_hosts::connect(host)?,
            verb,
            Some(host.name.clone()),
            host.name.clone(),
        ),
        None => {
            let path = socket_path(cli, args)?;
            (
                Client::connect(&path)?,
                args.verb.clone(),
                None,
                path.display().to_string(),
            )
        }
    })
}

fn run(cli: &super::Cli, args: &CtlArgs) -> Result<ExitCode, ClientError> {
    let config =
        crate::config::Config::load(cli.config.as_deref(), &crate::provider::Registry::builtin())
            .ok();
    // `host:pane` of a `[[host]]`: that host's hive answers.
    let (mut client, verb, host, place) = open(cli, args, config.as_ref())?;
    let mut out = std::io::stdout().lock();
    let tty = std::io::stdout().is_terminal();
    let io = output_error;
    let mut result = client.call(to_call(&verb))?;
    if let Some(h) = &host {
        result = super::ctl_hosts::prefix_turn(result, h);
    } else if matches!(verb, Verb::List) && args.socket.is_none() {
        result = super::ctl_hosts::list_all(result, config.as_ref());
    }
    if let Verb::Watch { pane } = &verb {
        // On stderr, so scripts reading events are undisturbed; it also
        // says the subscription is live.
        eprintln!("hive ctl: watching {place} (Ctrl-C stops)");
        return watch(&mut client, &mut out, args.json, pane.is_some());
    }
    let mut code = ExitCode::SUCCESS;
    let text = if args.json {
        serde_json::to_string(&result).unwrap_or_default()
    } else {
        match &args.verb {
            Verb::List => list_text(&field::<Vec<PaneInfo>>(&result, "panes")?),
            Verb::Status { .. } => status_text(&parse(&result)?),
            Verb::Send { .. } | Verb::Cancel { .. } => str_field(&result, "turn_id"),
            Verb::Restart { pane } => format!("restarting {pane}"),
            Verb::New(_) => super::ctl_panes::new_text(&result),
            Verb::Close { .. } => {
                let closed: Vec<String> = field(&result, "closed").unwrap_or_default();
                format!("closed {}", closed.join(", "))
            }
            Verb::Rename { pane, name } => format!("renamed {pane} to {name}"),
            Verb::Move { host: Some(_), .. } => {
                result["text"].as_str().unwrap_or("moved").to_owned()
            }
            Verb::Move { pane, .. } => format!("moved {pane}"),
            Verb::Pr { pr } => pr.text(&result),
            Verb::Approvals(a) => a.text(&result),
            Verb::Handoff(_) => super::ctl_carry::handoff_text(&result),
            Verb::Repo { .. } => super::ctl_panes::repo_text(&result),
            Verb::Account { .. } => super::ctl_carry::account_text(&result),
            Verb::Approve { .. } | Verb::Deny { .. } => answered_text(&result),
            Verb::Wait { .. } => {
                let w: WaitResult = parse(&result)?;
                if w.status != TurnOutcome::Completed {
                    code = ExitCode::FAILURE;
                    eprintln!(
                        "hive ctl: turn {} {}",
                        neutralize(&w.turn_id),
                        outcome_text(&w)
                    );
                }
                printable(&w.text, tty).into_owned()
            }
            Verb::History { .. } => {
                let items: Vec<Upsert> = field(&result, "items")?;
                printable(&crate::history::render::plain(&items), tty).into_owned()
            }
            Verb::Watch { .. } => String::new(),
        }
    };
    if let (true, Verb::Wait { .. }) = (args.json, &args.verb) {
        let w: WaitResult = parse(&result)?;
        if w.status != TurnOutcome::Completed {
            code = ExitCode::FAILURE;
        }
    }
    if !text.is_empty() {
        writeln!(out, "{}", text.trim_end_matches('\n')).map_err(io)?;
    }
    Ok(code)
}

fn watch(
    client: &mut Client,
    out: &mut impl Write,
    json: bool,
    one_pane: bool,
) -> Result<ExitCode, ClientError> {
    let io = output_error;
    while let Some(line) = client.next_line()? {
        let text = if let Ok(ev) = serde_json::from_str::<EventLine>(&line) {
            if json {
                watch_json(&ev.pane, &ev.event, one_pane)
            } else {
                watch_line(&ev)
            }
        } else if let Ok(d) = serde_json::from_str::<DeltaLine>(&line) {
            if json {
                watch_json(&d.pane, &d.event, one_pane)
            } else {
                delta_line(&d)
            }
        } else if let Ok(a) = serde_json::from_str::<ApprovalLine>(&line) {
            if json {
                watch_json(&a.pane, &a.approval, one_pane)
            } else {
                approval_line(&a)
            }
        } else {
            // Not an event: the reply that ends the stream.
            if let Ok(reply) = serde_json::from_str::<crate::control::protocol::Reply>(&line)
                && let Some(e) = reply.error
            {
                return Err(ClientError::Ctl(e));
            }
            continue;
        };
        writeln!(out, "{text}").map_err(io)?;
        out.flush().map_err(io)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `hive run --json`'s line (or a delta of one); with every pane watched,
/// plus a `pane` field.
fn watch_json(pane: &str, event: &impl serde::Serialize, one_pane: bool) -> String {
    let mut v = serde_json::to_value(event).unwrap_or(Value::Null);
    if !one_pane && let Value::Object(map) = &mut v {
        map.insert("pane".into(), Value::String(pane.to_owned()));
    }
    v.to_string()
}

/// An update's appended text as it comes, after a `…` for the text before.
fn delta_line(d: &DeltaLine) -> String {
    let e = &d.event;
    let what = match e.origin {
        Some(origin) => format!("{} message", enum_name(&origin)),
        None => neutralize(&e.kind).into_owned(),
    };
    let text = tail_line(&e.delta);
    let text = if text.starts_with('…') {
        text
    } else {
        format!("…{text}")
    };
    format!(
        "{}  {:<13}  {what}: {text}",
        neutralize(&d.pane),
        enum_name(&e.status)
    )
}

fn watch_line(ev: &EventLine) -> String {
    let p = neutralize(&ev.pane);
    match &ev.event {
        Output::Turn(TurnEvent::TurnStarted {
            turn_id, model_id, ..
        }) => format!(
            "{p}  turn_started   {}  {}",
            neutralize(turn_id),
            neutralize(model_id)
        ),
        Output::Turn(TurnEvent::TurnComplete {
            turn_id, status, ..
        }) => format!(
            "{p}  turn_complete  {}  {}",
            neutralize(turn_id),
            enum_name(status)
        ),
        Output::Turn(TurnEvent::TurnError {
            turn_id,
            error_code,
            error_message,
            ..
        }) => format!(
            "{p}  turn_error     {}  [{}] {}",
            neutralize(turn_id),
            neutralize(error_code),
            one_line(error_message)
        ),
        Output::Upsert(u) => {
            // An update carries everything so far: its end is what is new.
            let text = |s: &str| {
                if u.status == crate::upsert::UpsertStatus::Update {
                    tail_line(s)
                } else {
                    one_line(s)
                }
            };
            let what = match &u.kind {
                UpsertKind::Message { content, origin } => {
                    format!("{} message: {}", enum_name(origin), content.with_str(text))
                }
                UpsertKind::Thinking { content, .. } => {
                    format!("thinking: {}", content.with_str(text))
                }
                UpsertKind::ToolCall {
                    tool_name, output, ..
                } => format!(
                    "tool {}{}",
                    one_line(tool_name),
                    output
                        .as_deref()
                        .map(|o| format!(" → {}", one_line(o)))
                        .unwrap_or_default()
                ),
            };
            format!("{p}  {:<13}  {what}", enum_name(&u.status))
        }
    }
}

/// `allow_once perm_1 (Bash)`: what `approve` / `deny` answered.
fn answered_text(result: &Value) -> String {
    let f = |name| str_field(result, name);
    format!("{} {} ({})", f("decision"), f("request_id"), f("tool"))
}

fn approval_line(a: &ApprovalLine) -> String {
    let p = neutralize(&a.pane);
    match &a.approval {
        ApprovalEvent::ApprovalRequested(r) => format!(
            "{p}  awaiting_approval  {}  {} {}",
            neutralize(&r.request_id),
            one_line(&r.tool),
            one_line(&r.arguments.to_string())
        ),
        ApprovalEvent::ApprovalSettled { request_id } => {
            format!("{p}  approval_settled   {}", neutralize(request_id))
        }
    }
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, ClientError> {
    serde_json::from_value(v.clone())
        .map_err(|e| ClientError::Unreachable(format!("unreadable answer from hive: {e}")))
}

fn field<T: serde::de::DeserializeOwned>(v: &Value, name: &str) -> Result<T, ClientError> {
    parse(v.get(name).unwrap_or(&Value::Null))
}

fn str_field(v: &Value, name: &str) -> String {
    v.get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Agent text: on a terminal through the one sanitizer (escape sequences
/// made visible, newlines and tabs kept); a pipe gets the exact text.
fn printable(s: &str, tty: bool) -> Cow<'_, str> {
    for_output(s, tty)
}

/// The last 100 characters, folded to one line.
fn tail_line(s: &str) -> String {
    let folded = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let n = folded.chars().count();
    let mut short: String = if n > 100 { "…".into() } else { String::new() };
    short.extend(folded.chars().skip(n.saturating_sub(100)));
    neutralize(&short).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upsert(status: &str, content: &str) -> EventLine {
        serde_json::from_value(serde_json::json!({
            "pane": "demo",
            "event": {
                "turn_id": "t1", "session_id": "s", "item_id": "i",
                "source_timestamp": "2026-01-01T00:00:00Z",
                "emitted_at": "2026-01-01T00:00:00Z",
                "status": status, "type": "message", "content": content, "origin": "agent",
            },
        }))
        .unwrap()
    }

    #[test]
    fn watch_lines_for_people_and_for_scripts() {
        let long = "word ".repeat(40);
        assert_eq!(
            watch_line(&upsert("create", "Hello\nthere")),
            "demo  create         agent message: Hello there"
        );
        let update = watch_line(&upsert("update", &format!("{long}end")));
        assert!(
            update.starts_with("demo  update         agent message: …"),
            "{update}"
        );
        assert!(update.ends_with("word end"), "{update}");
        let ev = upsert("complete", "x");
        let one: Value = serde_json::from_str(&watch_json(&ev.pane, &ev.event, true)).unwrap();
        assert_eq!(
            one,
            serde_json::to_value(&ev.event).unwrap(),
            "hive run --json's line"
        );
        let all: Value = serde_json::from_str(&watch_json(&ev.pane, &ev.event, false)).unwrap();
        assert_eq!(all["pane"], "demo");
        assert_eq!(all["status"], "complete");
    }

    #[test]
    fn deltas_print_as_they_come_and_pass_through_as_json() {
        let line = serde_json::json!({
            "pane": "demo",
            "event": {
                "turn_id": "t1", "session_id": "s", "item_id": "i",
                "source_timestamp": "2026-01-01T00:00:00Z",
                "emitted_at": "2026-01-01T00:00:00Z",
                "status": "update", "type": "message", "delta": " more\u{1b}]0;x\u{7}",
                "origin": "agent",
            },
        })
        .to_string();
        let d: DeltaLine = serde_json::from_str(&line).unwrap();
        assert!(
            serde_json::from_str::<EventLine>(&line).is_err(),
            "no content"
        );
        assert_eq!(
            delta_line(&d),
            "demo  update         agent message: …more␛]0;x␇"
        );
        let v: Value = serde_json::from_str(&watch_json(&d.pane, &d.event, false)).unwrap();
        assert_eq!(v["delta"], " more\u{1b}]0;x\u{7}");
        assert_eq!(v["pane"], "demo");
        assert!(v.get("content").is_none());
    }

    #[test]
    fn escape_sequences_never_reach_a_terminal() {
        assert_eq!(printable("a\u{1b}[2Jb\nc", true), "a␛[2Jb\nc");
        assert_eq!(printable("a\u{1b}[2Jb", false), "a\u{1b}[2Jb");
        assert_eq!(one_line("x\n  y\u{7}"), "x y␇");
        assert_eq!(one_line("x\u{7}"), "x␇");
    }
}
