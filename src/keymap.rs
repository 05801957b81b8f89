//! The console's keymap: action names, their default keys, and the config's
//! `[keys]` table (`action = "key"` or `["key", "key"]`) layered on top.
//!
//! Keys are written like `ctrl+q`, `alt+1`, `alt+shift+up`, `f1`, `?`,
//! `pageup`. One table lists every action once, so the help overlay, the
//! parser and the conflict check all see the same inventory.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::config::KeyBinding;

/// Where an action applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Anywhere, including terminal (PTY) panes.
    Global,
    /// Conversation panes only (terminal panes pass these keys to the child).
    Conversation,
}

macro_rules! actions {
    ($( $variant:ident = $name:literal, $scope:ident, [$($key:literal),*], $desc:literal; )*) => {
        /// Everything a key can do.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Action { $($variant),* }

        /// (action, config name, scope, default keys, description), in help order.
        pub(crate) const ACTIONS: &[(Action, &str, Scope, &[&str], &str)] = &[
            $( (Action::$variant, $name, Scope::$scope, &[$($key),*], $desc) ),*
        ];
    };
}

actions! {
    Quit = "quit", Global, ["ctrl+q"], "leave: detach (agents keep running) or stop every agent (asks)";
    Detach = "detach", Global, [], "detach: the agents keep running; `hive attach` comes back";
    Help = "help", Global, ["f1", "?"], "show this help";
    FocusNext = "focus_next", Global, ["alt+right"], "focus the next pane";
    FocusPrev = "focus_prev", Global, ["alt+left"], "focus the previous pane";
    FocusUp = "focus_up", Global, ["alt+shift+up"], "focus the pane above";
    FocusDown = "focus_down", Global, ["alt+shift+down"], "focus the pane below";
    Focus1 = "focus_1", Global, ["alt+1"], "focus pane 1";
    Focus2 = "focus_2", Global, ["alt+2"], "focus pane 2";
    Focus3 = "focus_3", Global, ["alt+3"], "focus pane 3";
    Focus4 = "focus_4", Global, ["alt+4"], "focus pane 4";
    Focus5 = "focus_5", Global, ["alt+5"], "focus pane 5";
    Focus6 = "focus_6", Global, ["alt+6"], "focus pane 6";
    Focus7 = "focus_7", Global, ["alt+7"], "focus pane 7";
    Focus8 = "focus_8", Global, ["alt+8"], "focus pane 8";
    Focus9 = "focus_9", Global, ["alt+9"], "focus pane 9";
    Zoom = "zoom", Global, ["alt+z"], "zoom the focused pane / back to the grid";
    ToggleMouse = "toggle_mouse", Global, ["alt+m"], "mouse capture off / on (off: select text with the terminal)";
    Prefix = "prefix", Global, ["ctrl+b"], "prefix (then 1-9, arrows, z, c new pane, x close, n/p window, d detach, g diff, i, /, o, f, [, ?, q, or any key verbatim to a terminal pane)";
    NewPane = "new_pane", Global, [], "a new pane: pick a template or a provider (also /new)";
    ClosePane = "close_pane", Global, [], "close the focused pane (asks while its turn runs; also /close)";
    NextWindow = "next_window", Global, ["alt+pagedown"], "the next window of panes";
    PrevWindow = "prev_window", Global, ["alt+pageup"], "the previous window of panes";
    Diff = "diff", Global, ["f3"], "the pane's worktree diff (also /diff; prefix d detaches now)";
    Inbox = "inbox", Global, ["alt+i"], "attention inbox: approvals, failures, finished turns across panes";
    Search = "search", Global, ["alt+/"], "search every pane's transcript (type, ↑↓, Enter jumps)";
    Overview = "overview", Global, ["alt+o"], "overview: every pane's state, model, activity, queue, usage";
    PageBack = "page_back", Global, ["shift+pageup"], "scroll back a page (terminal panes: the emulator's scrollback)";
    PageForward = "page_forward", Global, ["shift+pagedown"], "scroll forward a page (terminal panes: towards the live screen)";
    CopyMode = "copy_mode", Global, [], "terminal copy mode: arrows/PgUp/g/G move, v select, y copy, q quit";
    FanOut = "fan_out", Global, ["f4"], "fan-out: one prompt to chosen panes, then compare their answers";
    JumpUnread = "jump_unread", Conversation, ["alt+u"], "since you looked: jump to the first unread item";
    ToggleView = "toggle_view", Conversation, ["f2", "alt+v"], "simple / full view (hide or show thinking and tools)";
    Expand = "expand", Conversation, ["ctrl+o"], "expand / collapse thinking and tool output";
    Submit = "submit", Conversation, ["enter"], "send (queues while a turn runs; empty: send restored queue)";
    Steer = "steer", Conversation, ["alt+s", "ctrl+enter"], "send now: steer the running turn or interrupt and send";
    Newline = "newline", Conversation, ["alt+enter", "shift+enter"], "new line in the composer";
    Interrupt = "interrupt", Conversation, ["esc"], "interrupt the running turn";
    RecallQueued = "recall_queued", Conversation, ["alt+up"], "pull the last queued message back into the composer";
    ManageQueue = "manage_queue", Conversation, ["alt+q"], "select queued messages (up/down, e edit, d remove, shift+up/down move)";
    HistoryPrev = "history_prev", Conversation, ["up"], "previous input (at the composer's first line)";
    HistoryNext = "history_next", Conversation, ["down"], "next input (at the composer's last line)";
    ClearLine = "clear_line", Conversation, ["ctrl+u"], "clear the composer's line (again: the line above)";
    Complete = "complete", Conversation, ["tab"], "complete a /command or @file (again: the next one)";
    CompletePrev = "complete_prev", Conversation, ["shift+tab"], "the previous completion";
    ScrollUp = "scroll_up", Conversation, ["pageup"], "scroll the transcript up";
    ScrollDown = "scroll_down", Conversation, ["pagedown"], "scroll the transcript down";
    ScrollTop = "scroll_top", Conversation, ["home", "ctrl+home"], "scroll to the top";
    ScrollBottom = "scroll_bottom", Conversation, ["end", "ctrl+end"], "scroll to the bottom (follow)";
    SearchNext = "search_next", Conversation, ["alt+n"], "after a search jump: next match";
    SearchPrev = "search_prev", Conversation, ["alt+shift+n"], "after a search jump: previous match";
    Copy = "copy", Conversation, ["alt+c"], "copy an answer, code block, tool output or turn (picker)";
    Resume = "resume", Conversation, ["alt+r"], "resume one of the agent's past sessions (picker; also prefix s, or /resume)";
    Restart = "restart", Conversation, ["ctrl+r"], "restart a stopped agent or an exited terminal program";
    AllowOnce = "allow_once", Conversation, ["y"], "approval card: allow once";
    AllowAlways = "allow_always", Conversation, ["a"], "approval card: allow always";
    Deny = "deny", Conversation, ["n"], "approval card: deny (type a reason, Enter)";
    RaiseBudget = "raise_budget", Conversation, ["r"], "budget card: raise the agent's budget by half";
    StopBudget = "stop_budget", Conversation, ["s"], "budget card: stop (empty the queue)";
}

/// Actions also reached as the prefix key then a letter, so they work in
/// terminal panes that take every other key (`Ctrl+B i`).
pub(crate) const PREFIX_KEYS: &[(char, Action)] = &[
    ('d', Action::Detach),
    ('g', Action::Diff),
    ('i', Action::Inbox),
    ('/', Action::Search),
    ('o', Action::Overview),
    ('s', Action::Resume),
    ('[', Action::CopyMode),
    ('f', Action::FanOut),
    ('c', Action::NewPane),
    ('x', Action::ClosePane),
    ('n', Action::NextWindow),
    ('p', Action::PrevWindow),
];

/// After a search jump, these bare keys also step through the matches
/// (while the composer is empty and no approval card waits).
pub(crate) const SEARCH_STEP_KEYS: &[(&str, Action)] =
    &[("n", Action::SearchNext), ("N", Action::SearchPrev)];

/// The search step action for a bare key, if it is one.
pub(crate) fn search_step_action(chord: &Chord) -> Option<Action> {
    SEARCH_STEP_KEYS
        .iter()
        .find(|(k, _)| Chord::parse(k).is_ok_and(|c| c == *chord))
        .map(|(_, a)| *a)
}

impl Action {
    /// The letter after the prefix key for this action, if any.
    pub(crate) fn prefix_char(self) -> Option<char> {
        PREFIX_KEYS
            .iter()
            .find(|(_, a)| *a == self)
            .map(|(c, _)| *c)
    }

    pub(crate) fn from_prefix_char(c: char) -> Option<Action> {
        PREFIX_KEYS.iter().find(|(k, _)| *k == c).map(|(_, a)| *a)
    }

    pub fn name(self) -> &'static str {
        Self::info(self).1
    }

    pub fn scope(self) -> Scope {
        Self::info(self).2
    }

    pub fn description(self) -> &'static str {
        Self::info(self).4
    }

    fn info(
        self,
    ) -> &'static (
        Action,
        &'static str,
        Scope,
        &'static [&'static str],
        &'static str,
    ) {
        // The table is generated from the enum, so every variant is in it.
        ACTIONS.iter().find(|a| a.0 == self).unwrap_or(&ACTIONS[0])
    }

    pub(crate) fn from_name(name: &str) -> Option<Action> {
        ACTIONS.iter().find(|a| a.1 == name).map(|a| a.0)
    }

    /// Pane number for `focus_N`.
    pub(crate) fn focus_index(self) -> Option<usize> {
        use Action::*;
        Some(match self {
            Focus1 => 0,
            Focus2 => 1,
            Focus3 => 2,
            Focus4 => 3,
            Focus5 => 4,
            Focus6 => 5,
            Focus7 => 6,
            Focus8 => 7,
            Focus9 => 8,
            _ => return None,
        })
    }
}

/// One key with modifiers, normalised so lookups are exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Chord {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad key `{key}`: {problem}")]
pub(crate) struct KeyParseError {
    pub key: String,
    pub(crate) problem: String,
}

impl Chord {
    pub(crate) fn new(code: KeyCode, mods: KeyModifiers) -> Self {
        Self { code, mods }.normalised()
    }

    /// A key event as a chord (Shift folded into characters).
    pub(crate) fn from_event(ev: &KeyEvent) -> Self {
        Self::new(ev.code, ev.modifiers)
    }

    fn normalised(mut self) -> Self {
        self.mods &= KeyModifiers::SHIFT | KeyModifiers::CONTROL | KeyModifiers::ALT;
        match self.code {
            // `?` arrives as Shift+`?` on some terminals and bare on others.
            KeyCode::Char(c) if !c.is_ascii_lowercase() && !c.is_ascii_digit() => {
                self.mods.remove(KeyModifiers::SHIFT);
                if c.is_ascii_uppercase() && self.mods.contains(KeyModifiers::CONTROL) {
                    self.code = KeyCode::Char(c.to_ascii_lowercase());
                }
            }
            KeyCode::BackTab => {
                self.code = KeyCode::Tab;
                self.mods.insert(KeyModifiers::SHIFT);
            }
            _ => {}
        }
        self
    }

    /// Parses `ctrl+alt+x`, `shift+enter`, `f5`, `?`, `pageup`…
    pub(crate) fn parse(text: &str) -> Result<Chord, KeyParseError> {
        let err = |problem: &str| KeyParseError {
            key: text.to_owned(),
            problem: problem.to_owned(),
        };
        let lower = text.trim().to_ascii_lowercase();
        if lower.is_empty() {
            return Err(err("empty"));
        }
        // `+` itself is a key: `ctrl++` or `+`.
        let (mods_part, key_part) = if lower == "+" {
            ("", "+")
        } else if let Some(stripped) = lower.strip_suffix("++") {
            (stripped, "+")
        } else {
            match lower.rsplit_once('+') {
                Some((m, k)) => (m, k),
                None => ("", lower.as_str()),
            }
        };
        let mut mods = KeyModifiers::NONE;
        for m in mods_part.split('+').filter(|m| !m.is_empty()) {
            mods |= match m {
                "ctrl" | "control" | "c" => KeyModifiers::CONTROL,
                "alt" | "meta" | "option" | "m" => KeyModifiers::ALT,
                "shift" | "s" => KeyModifiers::SHIFT,
                _ => return Err(err(&format!("unknown modifier `{m}`"))),
            };
        }
        let code = match key_part {
            "enter" | "return" | "cr" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "space" => KeyCode::Char(' '),
            "backspace" | "bs" => KeyCode::Backspace,
            "delete" | "del" => KeyCode::Delete,
            "insert" | "ins" => KeyCode::Insert,
            "up" => KeyCode::Up,
            "down" => KeyCode::Down,
            "left" => KeyCode::Left,
            "right" => KeyCode::Right,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "pageup" | "pgup" => KeyCode::PageUp,
            "pagedown" | "pgdown" | "pgdn" => KeyCode::PageDown,
            k if k.len() > 1 && k.starts_with('f') && k[1..].parse::<u8>().is_ok() => {
                let n: u8 = k[1..].parse().unwrap_or(0);
                if !(1..=24).contains(&n) {
                    return Err(err("function keys go from f1 to f24"));
                }
                KeyCode::F(n)
            }
            k => {
                let mut chars = k.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => {
                        // Upper-case letters were lowered above; the original
                        // spelling decides Shift for single letters.
                        let orig = text.trim().chars().last().unwrap_or(c);
                        if orig.is_ascii_uppercase() {
                            mods |= KeyModifiers::SHIFT;
                            KeyCode::Char(orig)
                        } else {
                            KeyCode::Char(c)
                        }
                    }
                    _ => return Err(err(&format!("unknown key `{k}`"))),
                }
            }
        };
        Ok(Chord::new(code, mods))
    }

    /// A key a composer would take as text or cursor movement: actions bound
    /// to such keys only fire while the composer is empty.
    pub(crate) fn is_text_key(&self) -> bool {
        let plain = !self
            .mods
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        plain
            && matches!(
                self.code,
                KeyCode::Char(_)
                    | KeyCode::Home
                    | KeyCode::End
                    | KeyCode::Left
                    | KeyCode::Right
                    | KeyCode::Backspace
                    | KeyCode::Delete
            )
    }
}

impl fmt::Display for Chord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.mods.contains(KeyModifiers::CONTROL) {
            f.write_str("Ctrl+")?;
        }
        if self.mods.contains(KeyModifiers::ALT) {
            f.write_str("Alt+")?;
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            f.write_str("Shift+")?;
        }
        match self.code {
            KeyCode::Char(' ') => f.write_str("Space"),
            KeyCode::Char(c) if self.mods.is_empty() => write!(f, "{c}"),
            KeyCode::Char(c) => write!(f, "{}", c.to_ascii_uppercase()),
            KeyCode::F(n) => write!(f, "F{n}"),
            KeyCode::Enter => f.write_str("Enter"),
            KeyCode::Esc => f.write_str("Esc"),
            KeyCode::Tab => f.write_str("Tab"),
            KeyCode::Backspace => f.write_str("Backspace"),
            KeyCode::Delete => f.write_str("Delete"),
            KeyCode::Insert => f.write_str("Insert"),
            KeyCode::Up => f.write_str("↑"),
            KeyCode::Down => f.write_str("↓"),
            KeyCode::Left => f.write_str("←"),
            KeyCode::Right => f.write_str("→"),
            KeyCode::Home => f.write_str("Home"),
            KeyCode::End => f.write_str("End"),
            KeyCode::PageUp => f.write_str("PgUp"),
            KeyCode::PageDown => f.write_str("PgDn"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// The live keymap: chord → action, and action → chords for the help.
#[derive(Debug, Clone)]
pub struct Keymap {
    by_chord: HashMap<Chord, Action>,
    by_action: BTreeMap<Action, Vec<Chord>>,
    /// Each action's first key as hints show it, formatted once: the status
    /// bar and panes show several in every frame.
    hints: BTreeMap<Action, String>,
}

impl Default for Keymap {
    fn default() -> Self {
        Self::from_config(&BTreeMap::new()).0
    }
}

impl Keymap {
    /// Defaults overlaid with `keys`; problems come back as warnings (a bad
    /// key never stops hive from starting). A configured action replaces its
    /// default keys; a key taken from another action moves to this one.
    pub fn from_config(keys: &BTreeMap<String, KeyBinding>) -> (Keymap, Vec<String>) {
        let mut warnings = Vec::new();
        let mut by_action: BTreeMap<Action, Vec<Chord>> = BTreeMap::new();
        for (action, _, _, defaults, _) in ACTIONS {
            let chords = defaults.iter().filter_map(|k| Chord::parse(k).ok());
            by_action.insert(*action, chords.collect());
        }
        for (name, binding) in keys {
            let Some(action) = Action::from_name(name) else {
                warnings.push(format!(
                    "[keys]: unknown action `{name}` (see the help overlay for the list)"
                ));
                continue;
            };
            let mut chords = Vec::new();
            for k in binding.keys() {
                match Chord::parse(k) {
                    Ok(c) => chords.push(c),
                    Err(e) => warnings.push(format!("[keys] {name}: {e}")),
                }
            }
            for (other, list) in by_action.iter_mut() {
                if *other != action {
                    list.retain(|c| !chords.contains(c));
                }
            }
            by_action.insert(action, chords);
        }
        let mut by_chord = HashMap::new();
        for (action, chords) in &by_action {
            for c in chords {
                if let Some(prev) = by_chord.insert(*c, *action)
                    && prev != *action
                {
                    warnings.push(format!(
                        "[keys]: {c} is bound to both {} and {}",
                        prev.name(),
                        action.name()
                    ));
                }
            }
        }
        let hints = by_action
            .iter()
            .filter_map(|(action, chords)| Some((*action, chords.first()?.to_string())))
            .collect();
        (
            Keymap {
                by_chord,
                by_action,
                hints,
            },
            warnings,
        )
    }

    pub(crate) fn lookup(&self, chord: &Chord) -> Option<Action> {
        self.by_chord.get(chord).copied()
    }

    /// The action bound to a key event (presses and repeats only).
    #[cfg(test)]
    pub(crate) fn action_for(&self, ev: &KeyEvent) -> Option<Action> {
        if ev.kind == crossterm::event::KeyEventKind::Release {
            return None;
        }
        self.lookup(&Chord::from_event(ev))
    }

    pub(crate) fn chords(&self, action: Action) -> &[Chord] {
        self.by_action.get(&action).map_or(&[], Vec::as_slice)
    }

    /// `Ctrl+Q` / `F1, ?`: the keys of an action as shown in hints.
    pub fn label(&self, action: Action) -> String {
        let mut keys: Vec<String> = self.chords(action).iter().map(|c| c.to_string()).collect();
        if let Some(c) = action.prefix_char() {
            keys.push(format!("{} {c}", self.short(Action::Prefix)));
        }
        for (k, _) in SEARCH_STEP_KEYS.iter().filter(|(_, a)| *a == action) {
            keys.push((*k).to_owned());
        }
        if keys.is_empty() {
            "unbound".into()
        } else {
            keys.join(", ")
        }
    }

    /// The first key of an action, for short hints.
    pub fn short(&self, action: Action) -> String {
        self.hint(action).to_owned()
    }

    /// `short`, borrowed.
    pub fn hint(&self, action: Action) -> &str {
        self.hints.get(&action).map_or("unbound", String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chord(s: &str) -> Chord {
        Chord::parse(s).unwrap()
    }

    #[test]
    fn parses_modifiers_and_named_keys() {
        assert_eq!(
            chord("ctrl+q"),
            Chord::new(KeyCode::Char('q'), KeyModifiers::CONTROL)
        );
        assert_eq!(
            chord("Alt+Shift+Up"),
            Chord::new(KeyCode::Up, KeyModifiers::ALT | KeyModifiers::SHIFT)
        );
        assert_eq!(chord("f12"), Chord::new(KeyCode::F(12), KeyModifiers::NONE));
        assert_eq!(
            chord("?"),
            Chord::new(KeyCode::Char('?'), KeyModifiers::NONE)
        );
        assert_eq!(
            chord("ctrl++"),
            Chord::new(KeyCode::Char('+'), KeyModifiers::CONTROL)
        );
        assert!(Chord::parse("hyper+x").is_err());
        assert!(Chord::parse("f99").is_err());
        assert!(Chord::parse("nokey").is_err());
    }

    #[test]
    fn shifted_symbols_match_both_ways() {
        let ev = KeyEvent::new(KeyCode::Char('?'), KeyModifiers::SHIFT);
        assert_eq!(Keymap::default().action_for(&ev), Some(Action::Help));
    }

    #[test]
    fn defaults_have_no_conflicts() {
        let (_, warnings) = Keymap::from_config(&BTreeMap::new());
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn config_replaces_defaults_and_steals_keys() {
        let mut keys = BTreeMap::new();
        keys.insert("zoom".to_owned(), KeyBinding::One("alt+right".into()));
        keys.insert("bogus".to_owned(), KeyBinding::One("x".into()));
        keys.insert(
            "quit".to_owned(),
            KeyBinding::Many(vec!["ctrl+x".into(), "nope+1".into()]),
        );
        let (map, warnings) = Keymap::from_config(&keys);
        assert_eq!(map.lookup(&chord("alt+right")), Some(Action::Zoom));
        assert_eq!(map.lookup(&chord("alt+z")), None);
        assert!(map.chords(Action::FocusNext).is_empty());
        assert_eq!(map.lookup(&chord("ctrl+x")), Some(Action::Quit));
        assert_eq!(map.lookup(&chord("ctrl+q")), None);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn labels_read_like_keys() {
        let map = Keymap::default();
        assert_eq!(map.label(Action::Quit), "Ctrl+Q");
        assert_eq!(map.label(Action::Help), "F1, ?");
        assert_eq!(map.short(Action::FocusUp), "Alt+Shift+↑");
        // Prefix d detaches as in tmux; the diff view moved to prefix g.
        assert_eq!(map.label(Action::Detach), "Ctrl+B d");
        assert_eq!(map.label(Action::Diff), "F3, Ctrl+B g");
    }
}
