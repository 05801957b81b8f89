//! Panes made, closed, renamed and moved from the console (issue 32):
//! `/new` (or `Ctrl+B c`: a picker of the config's agents and of the
//! providers, then the command line to adjust), `/close` (`Ctrl+B x`, which
//! asks while a turn runs), `/rename`, `/move`, `/window`. The app only
//! asks ([`PaneEdit`] through the outbox); the server decides, and every
//! console gets the new panes in a fresh snapshot.

use super::menu::{Menu, MenuItem, MenuKind};
use super::state::{App, Overlay};
use crate::protocol::edit::{NewPane, PaneEdit};

/// How `/new` reads its arguments.
const NEW_USAGE: &str = "/new TEMPLATE|PROVIDER [ID] [--cwd DIR] [--model M] [--worktree] [--repo DIR]… [--name N] [--window N] [--host H]";

impl App {
    /// `Ctrl+B c` and a bare `/new`: the config's agents (copied under a
    /// new id) and the providers (their defaults).
    pub(crate) fn open_new_pane_picker(&mut self) {
        let mut items: Vec<MenuItem> = self
            .templates
            .iter()
            .map(|a| {
                let model = a
                    .model
                    .as_deref()
                    .map(|m| format!(" · {m}"))
                    .unwrap_or_default();
                MenuItem::new(
                    a.id.clone(),
                    format!("{}{model} (the config's)", a.provider),
                )
            })
            .collect();
        for &name in crate::protocol::agent::PROVIDER_NAMES {
            if !self.templates.iter().any(|a| a.id == name) {
                items.push(MenuItem::new(name, "provider, its defaults"));
            }
        }
        self.open_picker(Menu::picker(MenuKind::NewPane, "new pane", items, None));
    }

    /// A template or provider picked: the command to adjust and send.
    pub(crate) fn new_pane_picked(&mut self, base: &str) {
        let id = self.free_id(base);
        let mut line = format!("/new {base} {id}");
        if let Some(cwd) = self.focused().and_then(|p| p.agent.cwd.clone()) {
            line.push_str(&format!(
                " --cwd {}",
                shlex::try_quote(&cwd.to_string_lossy()).unwrap_or_default()
            ));
        }
        line.push(' ');
        if let Some(p) = self.focused_mut() {
            p.composer.set(&line);
        }
        self.set_status("Enter adds it · also --model M, --worktree, --name N");
    }

    /// `base`, or `base-2`, `base-3`… whichever no pane has.
    fn free_id(&self, base: &str) -> String {
        crate::config::free_id(base, |id| self.panes.iter().any(|p| p.agent.id == id))
    }

    /// `/new ARGS`.
    pub(crate) fn new_pane(&mut self, arg: &str) {
        match self.parse_new(arg) {
            Ok(new) => {
                self.set_status(format!("adding pane {}…", new.id));
                self.outbox
                    .push(super::command::AppCommand::Edit(PaneEdit::New(new)));
            }
            Err(why) => self.refuse(why),
        }
    }

    fn parse_new(&self, arg: &str) -> Result<NewPane, String> {
        let words = shlex::split(arg).ok_or_else(|| format!("unbalanced quotes; {NEW_USAGE}"))?;
        let mut words = words.into_iter();
        let mut positional = Vec::new();
        let mut new = NewPane::default();
        while let Some(w) = words.next() {
            let mut value = |flag: &str| {
                words
                    .next()
                    .ok_or_else(|| format!("{flag} needs a value; {NEW_USAGE}"))
            };
            match w.as_str() {
                "--cwd" => new.cwd = Some(self.absolute(&value("--cwd")?)?),
                "--model" => new.model = Some(value("--model")?),
                "--name" => new.name = Some(value("--name")?),
                "--window" => {
                    let v = value("--window")?;
                    new.window = Some(v.parse().map_err(|_| format!("--window {v}: a number"))?);
                }
                "--worktree" => new.worktree = true,
                "--host" => new.host = Some(value("--host")?),
                "--repo" => new.repos.push(self.absolute(&value("--repo")?)?),
                flag if flag.starts_with("--") => {
                    return Err(format!("no option {flag}; {NEW_USAGE}"));
                }
                _ => positional.push(w),
            }
        }
        let mut positional = positional.into_iter();
        let base = positional.next().ok_or_else(|| NEW_USAGE.to_owned())?;
        new.id = positional.next().unwrap_or_else(|| self.free_id(&base));
        if let Some(extra) = positional.next() {
            return Err(format!("`{extra}`: too many words; {NEW_USAGE}"));
        }
        if self.templates.iter().any(|a| a.id == base) {
            new.template = Some(base);
        } else {
            new.provider = Some(base);
        }
        if new.window.is_none() {
            new.window = self.focused().map(|p| p.window);
        }
        Ok(new)
    }

    /// A directory the server can use: absolute, or relative to the
    /// focused pane's own directory.
    fn absolute(&self, dir: &str) -> Result<std::path::PathBuf, String> {
        let path = std::path::PathBuf::from(dir);
        if path.is_absolute() {
            return Ok(path);
        }
        match self.focused().and_then(|p| p.agent.cwd.clone()) {
            Some(base) if base.is_absolute() => Ok(base.join(path)),
            _ => Err(format!("--cwd {dir}: give an absolute path")),
        }
    }

    /// `/close` and `Ctrl+B x`: while a turn runs, asks first. `/close
    /// team` closes the pane's helpers with it.
    pub(crate) fn close_command(&mut self, arg: &str) {
        match arg.trim() {
            "" => self.close_focused(false),
            "team" => {
                if let Some(p) = self.focused() {
                    let edit = PaneEdit::Close {
                        pane: p.agent.id.clone(),
                        team: true,
                        discard: false,
                    };
                    self.outbox.push(super::command::AppCommand::Edit(edit));
                }
            }
            other => self.refuse(format!(
                "/close, or /close team (with its helpers), not `{other}`"
            )),
        }
    }

    pub(crate) fn close_focused(&mut self, confirmed: bool) {
        let Some(p) = self.focused() else {
            return;
        };
        if p.is_busy() && !confirmed {
            self.overlay = Overlay::Close;
            return;
        }
        let pane = p.agent.id.clone();
        self.overlay = Overlay::None;
        self.set_status(format!("closing {pane}…"));
        let edit = PaneEdit::Close {
            pane,
            team: false,
            discard: false,
        };
        self.outbox.push(super::command::AppCommand::Edit(edit));
    }

    /// `/rename NAME`.
    pub(crate) fn rename_focused(&mut self, arg: &str) {
        let Some(p) = self.focused() else {
            return;
        };
        if arg.trim().is_empty() {
            return self.refuse("/rename NAME: the pane's new title".into());
        }
        let pane = p.agent.id.clone();
        let edit = PaneEdit::Rename {
            pane,
            name: arg.trim().to_owned(),
        };
        self.outbox.push(super::command::AppCommand::Edit(edit));
    }

    /// `/repo add DIR` (issue 52): the repository of DIR joins the focused
    /// pane's workspace. A relative DIR is the server's to read (beside
    /// the workspace's first repository), which says how it went.
    pub(crate) fn repo_command(&mut self, arg: &str) {
        const USAGE: &str = "/repo add DIR: a repository joins this pane's workspace";
        let Some(p) = self.focused() else {
            return;
        };
        let words = shlex::split(arg).unwrap_or_default();
        let [verb, dir] = words.as_slice() else {
            return self.refuse(USAGE.into());
        };
        if verb != "add" || dir.is_empty() {
            return self.refuse(USAGE.into());
        }
        let edit = PaneEdit::AddRepo {
            pane: p.agent.id.clone(),
            repo: dir.into(),
        };
        self.outbox.push(super::command::AppCommand::Edit(edit));
    }

    /// `/move N`: to place N (1 is first) among the panes.
    pub(crate) fn move_focused(&mut self, arg: &str) {
        let Some(p) = self.focused() else {
            return;
        };
        // `/move @HOST`: the live pane goes to another host's server.
        if let Some(host) = arg.trim().strip_prefix('@') {
            if host.is_empty() {
                return self.refuse("/move @HOST: a [[host]] of the config".into());
            }
            let step = crate::protocol::carry::Relocate::Go {
                pane: p.agent.id.clone(),
                host: host.to_owned(),
            };
            let edit = PaneEdit::Relocate(step);
            return self.outbox.push(super::command::AppCommand::Edit(edit));
        }
        let Some(to) = arg.trim().parse::<usize>().ok().filter(|&n| n >= 1) else {
            return self.refuse(format!(
                "/move N: a place from 1 to {}; /move @HOST: to another host",
                self.panes.len()
            ));
        };
        let edit = PaneEdit::Move {
            pane: p.agent.id.clone(),
            to: to - 1,
        };
        self.outbox.push(super::command::AppCommand::Edit(edit));
    }

    /// `/window N` (or `new`): the focused pane into another window.
    pub(crate) fn window_focused(&mut self, arg: &str) {
        let Some(p) = self.focused() else {
            return;
        };
        let last = self.windows().last().copied().unwrap_or(1);
        let window = match arg.trim() {
            "new" => Some(last + 1),
            n => n.parse::<usize>().ok().filter(|&n| n >= 1 && n <= last + 1),
        };
        let Some(window) = window else {
            return self.refuse(format!("/window N: 1 to {last}, or new"));
        };
        let edit = PaneEdit::Window {
            pane: p.agent.id.clone(),
            window,
        };
        self.outbox.push(super::command::AppCommand::Edit(edit));
    }
}
