//! Key routing as a stack of layers, as helix's compositor does it.
//!
//! Which layers exist follows from the state when the key arrives (an open
//! overlay, the armed prefix, copy mode, a picker, the completion menu, a
//! queue selection, an approval card, a search…). `App::layers` lists them
//! top first; the key goes to the top layer, and each layer either consumes
//! it or passes it down. Adding a mode means adding a layer and the line
//! that says where it sits, instead of threading another `if` through
//! `on_key`. The keys themselves stay one table (`crate::keymap`).

use crossterm::event::{KeyCode, KeyEvent};

use super::state::{App, Overlay};
use crate::keymap::{Action, Chord, Scope};

/// What a layer did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    Consumed,
    Pass,
}

impl From<bool> for Flow {
    fn from(consumed: bool) -> Self {
        if consumed { Flow::Consumed } else { Flow::Pass }
    }
}

/// One layer of the stack, top to bottom in the order they can stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// An open overlay takes every key.
    Overlay(Overlay),
    /// The key after the prefix key.
    Prefix,
    /// Copy mode keeps every key from a terminal pane's child (global
    /// actions still work).
    CopyMode,
    /// A picker opened by a command takes every key.
    Picker,
    /// The completion menu: its navigation keys.
    Menu,
    /// hive's actions; in terminal panes only the global ones.
    Global,
    /// A terminal pane: what no global action took goes to the child.
    Terminal,
    /// Queue selection mode takes every key.
    Queue,
    /// Digits pick an approval card's option (composer empty).
    Permission,
    /// n/N step through search hits (composer empty).
    Search,
    /// Conversation-pane actions.
    Pane,
    /// The composer types whatever is left.
    Composer,
}

/// A key and what the keymap makes of it, read once for all layers.
pub(crate) struct Key<'a> {
    ev: &'a KeyEvent,
    chord: Chord,
    /// The bound action, unless the key is text the composer (or the
    /// child) should get.
    action: Option<Action>,
    composer_empty: bool,
}

impl App {
    /// The layers that take keys now, top first.
    pub(crate) fn layers(&self) -> Vec<Layer> {
        if self.overlay != Overlay::None {
            return vec![Layer::Overlay(self.overlay)];
        }
        if self.prefix_armed {
            return vec![Layer::Prefix];
        }
        let pane = self.focused();
        if pane.is_some_and(|p| p.is_terminal()) {
            if pane.is_some_and(|p| p.terminal.copy.is_some()) {
                return vec![Layer::CopyMode];
            }
            return vec![Layer::Global, Layer::Terminal];
        }
        if pane.is_some_and(|p| p.composer.picker.is_some()) {
            return vec![Layer::Picker];
        }
        let mut stack = Vec::with_capacity(6);
        if pane.is_some_and(|p| p.composer.menu.is_some()) {
            stack.push(Layer::Menu);
        }
        stack.push(Layer::Global);
        if pane.is_some_and(|p| p.pending.selected.is_some()) {
            stack.push(Layer::Queue);
            return stack;
        }
        if pane.is_none_or(|p| p.composer.is_empty()) {
            stack.push(Layer::Permission);
            if self.search.active && pane.is_some_and(|p| p.pending.permissions.is_empty()) {
                stack.push(Layer::Search);
            }
        }
        stack.extend([Layer::Pane, Layer::Composer]);
        stack
    }

    /// Reads `ev` against the keymap for the focused pane.
    pub(crate) fn read_key<'a>(&self, ev: &'a KeyEvent) -> Key<'a> {
        let chord = Chord::from_event(ev);
        let terminal = self.focused().is_some_and(|p| p.is_terminal());
        let composer_empty = self.focused().is_none_or(|p| p.composer.is_empty());
        let action = self.keymap.lookup(&chord).filter(|a| {
            let typed = chord.is_text_key() && (terminal || !composer_empty);
            let allowed = a.scope() == Scope::Global || !terminal;
            allowed && !typed
        });
        Key {
            ev,
            chord,
            action,
            composer_empty,
        }
    }

    /// Offers the key to one layer.
    pub(crate) fn layer_key(&mut self, layer: Layer, key: &Key) -> Flow {
        let ev = key.ev;
        match layer {
            Layer::Overlay(o) => self.overlay_key(o, *ev),
            Layer::Prefix => {
                self.prefix_armed = false;
                self.prefix_key(*ev);
            }
            Layer::CopyMode => {
                if !self.copy_mode_key(ev)
                    && let Some(a) = self.keymap.lookup(&key.chord)
                    && a.scope() == Scope::Global
                {
                    self.global_action(a);
                }
            }
            Layer::Picker => self.picker_key(ev),
            Layer::Menu => return self.menu_key(ev).into(),
            Layer::Global => return key.action.is_some_and(|a| self.global_action(a)).into(),
            Layer::Terminal if self.read_only => self.refuse_typing(),
            Layer::Terminal => self.terminal_pane_key(&key.chord, ev),
            Layer::Queue => self.queue_key(ev),
            Layer::Permission => return self.permission_option_key(ev).into(),
            Layer::Search => match crate::keymap::search_step_action(&key.chord) {
                Some(a) => {
                    self.pane_action(a);
                }
                None => return Flow::Pass,
            },
            Layer::Pane => return key.action.is_some_and(|a| self.pane_action(a)).into(),
            Layer::Composer if self.read_only => self.refuse_typing(),
            Layer::Composer => self.composer_key(key),
        }
        Flow::Consumed
    }

    /// A key while an overlay is open goes to that overlay only.
    fn overlay_key(&mut self, overlay: Overlay, ev: KeyEvent) {
        match overlay {
            Overlay::Help => self.help_key(ev),
            Overlay::Leave => self.leave_key(ev),
            Overlay::Inbox => self.inbox_key(ev),
            Overlay::Search => self.search_key(ev),
            Overlay::Overview => self.overview_key(ev),
            Overlay::Diff => self.diff_key(ev),
            Overlay::FanOut => self.fanout_key(ev),
            Overlay::Compare => self.compare_key(ev),
            Overlay::Close => self.close_key(ev),
            Overlay::Checks => self.checks_key(ev),
            Overlay::None => {}
        }
    }

    /// The bottom layer: Backspace on an empty composer takes back the last
    /// attachment; anything else is typed.
    fn composer_key(&mut self, key: &Key) {
        if key.composer_empty && key.ev.code == KeyCode::Backspace && self.detach_last() {
            return;
        }
        if let Some(p) = self.focused_mut() {
            p.composer.forget_history_walk();
            p.composer.area.input(*key.ev);
            p.refresh_completion();
        }
        self.refresh_mention();
    }
}
