//! hive's own slash commands and the lists they open: what `/model`,
//! `/effort`, `/copy`… do to the focused pane, and the keys of the
//! completion menu and of pickers. A command the agent cannot take is
//! refused in the pane with the reason.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::commands::{EFFORT_LEVELS, HiveCommand};
use super::copy::{self, CopyKind};
use super::menu::{Menu, MenuItem, MenuKind};
use super::state::{App, Overlay};
use crate::clipboard;
use crate::keymap::{Chord, Scope};
use crate::protocol::agent::DiagnosticLevel;
use crate::protocol::pane::RunnerCommand;

impl App {
    /// Runs one of hive's commands typed in the focused pane.
    pub(crate) fn run_command(&mut self, cmd: HiveCommand, arg: &str) {
        let Some(p) = self.focused() else {
            return;
        };
        let caps = p.conversation.capabilities.unwrap_or_default();
        let who = format!("{} ({})", p.name(), p.agent.provider);
        match cmd {
            HiveCommand::Model if !caps.set_model => {
                self.refuse(format!("{who} cannot switch models from hive"))
            }
            HiveCommand::Model if arg.is_empty() => self.open_model_picker(),
            HiveCommand::Model => self.send(self.focus, RunnerCommand::SetModel(arg.into())),
            HiveCommand::Account => {
                self.send(self.focus, RunnerCommand::SwitchAccount(arg.into()));
            }
            HiveCommand::Effort if !caps.set_effort => {
                self.refuse(format!("{who} has no effort setting hive can change"))
            }
            HiveCommand::Effort if arg.is_empty() => {
                let items = EFFORT_LEVELS
                    .iter()
                    .map(|l| MenuItem::new(*l, ""))
                    .collect();
                let current = p.conversation.effort.clone();
                self.open_picker(Menu::picker(
                    MenuKind::Effort,
                    "effort",
                    items,
                    current.as_deref(),
                ));
            }
            HiveCommand::Effort => self.send(self.focus, RunnerCommand::SetEffort(arg.into())),
            HiveCommand::Compact => self.refuse(format!("{who} has no /compact command")),
            HiveCommand::Copy => self.copy_command(arg),
            HiveCommand::Clear => self.clear_session(),
            HiveCommand::Resume if arg.is_empty() => self.open_session_picker(),
            HiveCommand::Resume => self.resume_session(arg),
            HiveCommand::Diff => self.open_diff(),
            HiveCommand::Handoff => self.handoff(arg),
            HiveCommand::Mute => self.mute(arg),
            HiveCommand::New if arg.is_empty() => self.open_new_pane_picker(),
            HiveCommand::New => self.new_pane(arg),
            HiveCommand::Close => self.close_command(arg),
            HiveCommand::Rename => self.rename_focused(arg),
            HiveCommand::Move => self.move_focused(arg),
            HiveCommand::Window => self.window_focused(arg),
            HiveCommand::Fanout => self.best_of_command(arg),
            HiveCommand::Issue => self.issue_command(arg),
            HiveCommand::Pr => self.pr_command(arg),
            HiveCommand::Checks => self.open_checks(),
            HiveCommand::Repo => self.repo_command(arg),
            HiveCommand::Help => {
                self.overlay = Overlay::Help;
                self.help_scroll = 0;
            }
        }
    }

    /// A command the focused pane cannot run: the reason, in the pane.
    pub fn refuse(&mut self, why: String) {
        if let Some(p) = self.focused_mut() {
            p.conversation.transcript.notice(DiagnosticLevel::Warn, why);
            p.scroll = 0;
        }
    }

    fn open_model_picker(&mut self) {
        let Some(p) = self.focused() else {
            return;
        };
        if p.conversation.models.is_empty() {
            let name = p.name().to_owned();
            return self.refuse(format!("{name} did not list its models: type /model NAME"));
        }
        let items = p
            .conversation
            .models
            .iter()
            .map(|m| MenuItem::new(m.clone(), ""))
            .collect();
        let current = p.conversation.model.clone();
        self.open_picker(Menu::picker(
            MenuKind::Model,
            "model",
            items,
            current.as_deref(),
        ));
    }

    pub(crate) fn open_picker(&mut self, menu: Menu) {
        if let Some(p) = self.focused_mut() {
            p.composer.menu = None;
            p.composer.picker = Some(menu);
        }
    }

    /// Keys while a picker is open: ↑↓ choose, typing filters, Enter picks,
    /// Esc closes. Global keys (quit, focus…) still work.
    pub(super) fn picker_key(&mut self, ev: &KeyEvent) {
        let chord = Chord::from_event(ev);
        if let Some(a) = self.keymap.lookup(&chord)
            && a.scope() == Scope::Global
            && !chord.is_text_key()
        {
            self.close_picker();
            self.on_key(*ev);
            return;
        }
        let Some(menu) = self.focused_mut().and_then(|p| p.composer.picker.as_mut()) else {
            return;
        };
        let plain = !ev
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match ev.code {
            KeyCode::Up => menu.step(-1),
            KeyCode::Down | KeyCode::Tab => menu.step(1),
            KeyCode::BackTab => menu.step(-1),
            KeyCode::PageUp => menu.step(-8),
            KeyCode::PageDown => menu.step(8),
            KeyCode::Esc => self.close_picker(),
            KeyCode::Enter => {
                let picked = menu.selected().map(|i| i.value.clone());
                let kind = menu.kind;
                self.close_picker();
                if let Some(value) = picked {
                    self.picked(kind, value);
                }
            }
            KeyCode::Backspace => {
                let mut f = menu.filter.clone();
                f.pop();
                menu.set_filter(f);
            }
            KeyCode::Char(c) if plain => {
                let f = format!("{}{c}", menu.filter);
                menu.set_filter(f);
            }
            _ => {}
        }
    }

    fn close_picker(&mut self) {
        if let Some(p) = self.focused_mut() {
            p.composer.picker = None;
        }
    }

    /// An entry of a picker was chosen.
    fn picked(&mut self, kind: MenuKind, value: String) {
        let focus = self.focus;
        match kind {
            MenuKind::Model => self.send(focus, RunnerCommand::SetModel(value)),
            MenuKind::Effort => self.send(focus, RunnerCommand::SetEffort(value)),
            MenuKind::Copy => self.copy(&value, "selection"),
            MenuKind::Session => self.resume_session(&value),
            MenuKind::NewPane => self.new_pane_picked(&value),
            MenuKind::Commands | MenuKind::Files => {}
        }
    }

    /// `/copy`: a picker of what can be copied; `/copy code` (message,
    /// tool, turn) the newest of that kind.
    fn copy_command(&mut self, arg: &str) {
        let Some(p) = self.focused() else {
            return;
        };
        if arg.is_empty() {
            let list = copy::copyables(&p.conversation.transcript, 40);
            if list.is_empty() {
                return self.set_status("nothing to copy yet");
            }
            let menu = Menu::picker(MenuKind::Copy, "copy", copy::menu_items(list), None);
            return self.open_picker(menu);
        }
        let Some(kind) = CopyKind::parse(arg) else {
            return self.refuse(format!(
                "/copy takes message, code, tool or turn, not `{arg}`"
            ));
        };
        match copy::latest(&p.conversation.transcript, kind) {
            Some(c) => self.copy(&c.text, kind.label()),
            None => self.set_status(format!("no {} to copy", kind.label())),
        }
    }

    /// Puts `text` on the clipboard: OSC 52 to the terminal after the next
    /// frame, and the desktop tool where there is one. Says so in the
    /// status bar.
    pub fn copy(&mut self, text: &str, what: &str) {
        self.outbox.terminal(clipboard::osc52(text, self.in_tmux));
        let mut via = "terminal (OSC 52)".to_owned();
        if let Some((tool, args)) = self.system_clipboard.clone() {
            via.push_str(&format!(
                " + {}",
                tool.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
            ));
            clipboard::copy_with(tool, args, text.to_owned());
        }
        let lines = text.lines().count().max(1);
        let s = if lines == 1 { "" } else { "s" };
        self.set_status(format!(
            "✓ copied {what}: {lines} line{s}, {} chars · {via}",
            text.chars().count()
        ));
    }

    /// Mouse capture off lets the terminal select text (and on again).
    pub(crate) fn toggle_mouse(&mut self) {
        self.mouse_capture = !self.mouse_capture;
        let key = self.keymap.short(crate::keymap::Action::ToggleMouse);
        if self.mouse_capture {
            self.outbox.terminal(super::tty::MOUSE_ON);
            self.set_status(format!(
                "mouse on: click focuses, wheel scrolls · {key} to select text"
            ));
        } else {
            self.outbox.terminal(super::tty::MOUSE_OFF);
            self.set_status(format!(
                "mouse off: select text with the terminal · {key} turns it back on"
            ));
        }
    }

    /// Keys while the completion menu is open: ↑↓ walk it like Shift+Tab /
    /// Tab, Esc closes it. False: the key is not the menu's.
    pub(super) fn menu_key(&mut self, ev: &KeyEvent) -> bool {
        let Some(p) = self.focused_mut() else {
            return false;
        };
        if !ev.modifiers.is_empty() {
            return false;
        }
        let files = p
            .composer
            .menu
            .as_ref()
            .is_some_and(|m| m.kind == MenuKind::Files);
        match ev.code {
            KeyCode::Up => p.composer.complete(-1),
            KeyCode::Down => p.composer.complete(1),
            // Enter takes the highlighted (or best) file instead of sending.
            KeyCode::Enter if files => {
                let menu = p.composer.menu.as_ref();
                let pick = menu.and_then(|m| m.selected().or(m.visible().first().copied()));
                match pick.map(|i| i.value.clone()) {
                    Some(path) => {
                        p.composer.insert_mention(&path, true);
                        true
                    }
                    None => false,
                }
            }
            KeyCode::Esc => {
                p.composer.dismiss_completion();
                true
            }
            _ => false,
        }
    }
}
