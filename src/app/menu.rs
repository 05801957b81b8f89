//! Pop-up lists of a pane: the completion menu that follows the composer
//! (`/` commands, `@` files) and the pickers a command opens (`/model`,
//! `/effort`, `/resume`, `/copy`). Pure state; `ui::menu` draws it.

/// What a list is for, which decides what picking an entry does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MenuKind {
    /// `/` completion in the composer.
    Commands,
    /// `@` file completion in the composer.
    Files,
    Model,
    Effort,
    Session,
    Copy,
    /// `/new`'s templates and providers.
    NewPane,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MenuItem {
    /// What the list shows first (and what typing filters on).
    pub label: String,
    /// Dimmed text after the label.
    pub detail: String,
    /// What picking the entry uses (a model id, a session id, a path…).
    pub value: String,
}

impl MenuItem {
    pub fn new(label: impl Into<String>, detail: impl Into<String>) -> Self {
        let label = label.into();
        Self {
            value: label.clone(),
            label,
            detail: detail.into(),
        }
    }

    pub(crate) fn with_value(mut self, value: impl Into<String>) -> Self {
        self.value = value.into();
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Menu {
    pub kind: MenuKind,
    pub title: String,
    items: Vec<MenuItem>,
    /// Pickers: what was typed to narrow the list.
    pub filter: String,
    /// Index into `visible()`; completion menus start with none.
    pub sel: Option<usize>,
    /// Shown instead of entries when there are none.
    pub note: String,
}

impl Menu {
    /// A completion menu: nothing selected until Tab or an arrow.
    pub fn completion(kind: MenuKind, items: Vec<MenuItem>) -> Self {
        Self {
            kind,
            title: String::new(),
            items,
            filter: String::new(),
            sel: None,
            note: String::new(),
        }
    }

    /// A picker with `current` (a value) selected, else the first entry.
    pub fn picker(
        kind: MenuKind,
        title: impl Into<String>,
        items: Vec<MenuItem>,
        current: Option<&str>,
    ) -> Self {
        let sel = current
            .and_then(|c| items.iter().position(|i| i.value == c))
            .unwrap_or(0);
        Self {
            kind,
            title: title.into(),
            items,
            filter: String::new(),
            sel: Some(sel),
            note: String::new(),
        }
    }

    pub(crate) fn is_picker(&self) -> bool {
        !matches!(self.kind, MenuKind::Commands | MenuKind::Files)
    }

    /// The entries the filter lets through: its characters appear in the
    /// label in order, case-insensitively (`fxlg` finds "fix the login").
    pub fn visible(&self) -> Vec<&MenuItem> {
        let f = self.filter.to_lowercase();
        self.items
            .iter()
            .filter(|i| f.is_empty() || fuzzy_match(&i.label.to_lowercase(), &f))
            .collect()
    }

    pub fn selected(&self) -> Option<&MenuItem> {
        let v = self.visible();
        self.sel.and_then(|s| v.get(s).copied())
    }

    /// Moves the selection by `delta`, wrapping; from none, forward
    /// selects the first and backward the last.
    pub fn step(&mut self, delta: isize) {
        let n = self.visible().len();
        if n == 0 {
            self.sel = None;
            return;
        }
        self.sel = Some(match self.sel {
            None if delta < 0 => n - 1,
            None => 0,
            Some(s) => (s as isize + delta).rem_euclid(n as isize) as usize,
        });
    }

    /// Pickers: the filter changed; keep a selection inside the list.
    pub(crate) fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.sel = (!self.visible().is_empty()).then_some(0);
    }
}

/// Every character of `pattern` occurs in `text`, in order.
fn fuzzy_match(text: &str, pattern: &str) -> bool {
    let mut chars = text.chars();
    pattern
        .chars()
        .filter(|c| !c.is_whitespace())
        .all(|p| chars.any(|c| c == p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items() -> Vec<MenuItem> {
        ["alpha", "beta", "gamma"]
            .into_iter()
            .map(|l| MenuItem::new(l, ""))
            .collect()
    }

    #[test]
    fn steps_wrap_and_start_from_either_end() {
        let mut m = Menu::completion(MenuKind::Commands, items());
        assert!(m.selected().is_none());
        m.step(1);
        assert_eq!(m.selected().unwrap().label, "alpha");
        m.step(-1);
        assert_eq!(m.selected().unwrap().label, "gamma");
        let mut m = Menu::completion(MenuKind::Commands, items());
        m.step(-1);
        assert_eq!(m.selected().unwrap().label, "gamma");
    }

    #[test]
    fn picker_starts_on_current_and_filters() {
        let mut m = Menu::picker(MenuKind::Model, "model", items(), Some("beta"));
        assert_eq!(m.selected().unwrap().label, "beta");
        m.set_filter("MM".into());
        assert_eq!(m.visible().len(), 1);
        assert_eq!(m.selected().unwrap().label, "gamma");
        m.set_filter("zzz".into());
        assert!(m.selected().is_none());
        // Letters in order, not necessarily adjacent.
        m.set_filter("gma".into());
        assert_eq!(m.selected().unwrap().label, "gamma");
        m.set_filter("amg".into());
        assert!(m.selected().is_none());
    }
}
