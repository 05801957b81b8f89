//! Typed notifications leaving hive: the terminal's (bell, OSC 9, OSC 777,
//! written by each console) and `[ui] notify_command` for desktop or phone
//! bridges (run by the server, once, attached consoles or not:
//! src/server/notifier.rs), each asked for per reason, silenced per pane
//! or per type with `/mute`, and the command rate-limited so a burst of
//! finished turns cannot flood a phone.

pub mod mutes;
pub mod reason;

pub use mutes::{Mute, Mutes};
pub use reason::Reason;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::config::ReasonKind;

/// The window `[ui] notify_per_minute` counts in.
const WINDOW: Duration = Duration::from_secs(60);

/// The command's sliding-window limit.
#[derive(Debug, Default)]
pub struct Limiter {
    sent: VecDeque<Instant>,
    /// Notifications dropped since the last one that went out.
    pub dropped: usize,
}

impl Limiter {
    /// Whether one more may go out at `now`: `Some(dropped before it)`,
    /// or `None` (counted as dropped).
    pub fn admit(&mut self, now: Instant, per_minute: u32) -> Option<usize> {
        while self
            .sent
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) >= WINDOW)
        {
            self.sent.pop_front();
        }
        if self.sent.len() >= per_minute as usize {
            self.dropped += 1;
            return None;
        }
        self.sent.push_back(now);
        Some(std::mem::take(&mut self.dropped))
    }
}

/// `ui`'s `notify_command` for `note` at `now`, through `limiter`: none
/// when no command is set, the type is not asked for, or it is over the
/// rate (then counted, and the next one that runs says how many).
pub fn command_line(
    ui: &crate::config::UiSettings,
    limiter: &mut Limiter,
    mut note: Note,
    now: Instant,
) -> Option<Vec<String>> {
    if ui.notify_command.is_empty() || !ui.notify_on.wants(note.kind) {
        return None;
    }
    let dropped = limiter.admit(now, ui.notify_per_minute)?;
    if dropped > 0 {
        note.body = format!("{} (+{dropped} more held back)", note.body);
    }
    Some(note.argv(&ui.notify_command))
}

/// One notification: what `{title}`, `{body}`, `{pane}` and `{type}` are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub kind: ReasonKind,
    pub pane: String,
    pub title: String,
    pub body: String,
}

impl Note {
    /// `template` with the fields put in, one argument each (no shell: a
    /// field is never split or interpreted). Control characters are taken
    /// out: tool arguments come from the agent.
    pub fn argv(&self, template: &[String]) -> Vec<String> {
        let clean = |s: &str| -> String { s.chars().filter(|c| !c.is_control()).collect() };
        let (title, body, pane) = (clean(&self.title), clean(&self.body), clean(&self.pane));
        let fields = [
            ("{title}", title.as_str()),
            ("{body}", body.as_str()),
            ("{pane}", pane.as_str()),
            ("{type}", self.kind.name()),
        ];
        template.iter().map(|arg| fill(arg, &fields)).collect()
    }

    /// OSC 777's `notify;title;body` (`;` would end a field).
    pub fn osc777(&self) -> String {
        let clean =
            |s: &str| -> String { s.chars().filter(|c| !c.is_control() && *c != ';').collect() };
        format!(
            "\x1b]777;notify;{};{}\x07",
            clean(&self.title),
            clean(&self.body)
        )
    }
}

/// `arg` with each field's name replaced in one pass: a value that holds
/// `{pane}` (an agent's text can) stays as it is.
fn fill(arg: &str, fields: &[(&str, &str)]) -> String {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match fields.iter().find(|(name, _)| rest.starts_with(name)) {
            Some((name, value)) => {
                out.push_str(value);
                rest = &rest[name.len()..];
            }
            None => {
                out.push('{');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Runs a notify command without waiting for it: no shell, no terminal,
/// and reaped (killed when hive's runtime stops) so none outlives hive.
pub fn run(argv: Vec<String>) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("notify_command: no runtime to run `{program}` on");
        return;
    };
    let _guard = rt.enter();
    match cmd.spawn() {
        Ok(mut child) => {
            rt.spawn(async move {
                let _ = child.wait().await;
            });
        }
        Err(e) => tracing::warn!("notify_command: cannot run `{program}`: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note() -> Note {
        Note {
            kind: ReasonKind::Permission,
            pane: "api".into(),
            title: "hive: API".into(),
            body: "asks to run Bash: rm\x1b[2J -rf {pane}".into(),
        }
    }

    #[test]
    fn fields_fill_whole_arguments_without_control_characters() {
        let t = [
            "ntfy",
            "publish",
            "--title={title}",
            "hive",
            "{body} [{type} {pane}]",
        ];
        let t: Vec<String> = t.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            note().argv(&t),
            [
                "ntfy",
                "publish",
                "--title=hive: API",
                "hive",
                "asks to run Bash: rm[2J -rf {pane} [permission api]"
            ]
        );
        assert_eq!(
            note().osc777(),
            "\x1b]777;notify;hive: API;asks to run Bash: rm[2J -rf {pane}\x07"
        );
    }

    #[test]
    fn the_limit_counts_a_sliding_minute_and_what_it_dropped() {
        let mut l = Limiter::default();
        let t0 = Instant::now();
        assert_eq!(l.admit(t0, 2), Some(0));
        assert_eq!(l.admit(t0, 2), Some(0));
        assert_eq!(l.admit(t0 + Duration::from_secs(30), 2), None);
        assert_eq!(l.admit(t0 + Duration::from_secs(59), 2), None);
        assert_eq!(l.admit(t0 + WINDOW, 2), Some(2));
    }

    #[tokio::test]
    async fn the_command_runs_with_its_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = format!("printf '%s|%s' \"$1\" \"$2\" > '{}'", out.display());
        let argv = note().argv(&[
            "sh".into(),
            "-c".into(),
            script,
            "sh".into(),
            "{title}".into(),
            "{body}".into(),
        ]);
        run(argv);
        let mut text = String::new();
        for _ in 0..200 {
            text = std::fs::read_to_string(&out).unwrap_or_default();
            if text.contains('|') {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(text, "hive: API|asks to run Bash: rm[2J -rf {pane}");
    }
}
