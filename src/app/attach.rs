//! Image attachments in a composer (issue 14 item 8): a pasted image path
//! (bracketed paste, including files dropped on the terminal) becomes a chip
//! above the composer; image paths typed in a message are attached when it
//! is sent. The next message carries them to agents that take images; for
//! one that cannot, the message is refused with the reason and the draft
//! and chips stay. Backspace on an empty composer removes the last chip.

use std::path::PathBuf;

use super::state::App;
use crate::protocol::image::{self, Image};
use crate::protocol::pane::{RunnerCommand, SubmitMode};

impl App {
    /// A paste that is nothing but image paths (one per line) attaches
    /// them. False: not such a paste, it goes into the composer as text.
    pub(super) fn paste_images(&mut self, text: &str) -> bool {
        let Some(p) = self.focused() else {
            return false;
        };
        let cwd = pane_cwd(&p.agent);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let paths: Vec<PathBuf> = lines
            .iter()
            .filter_map(|l| image::image_path(l, &cwd))
            .collect();
        if paths.is_empty() || paths.len() != lines.len() {
            return false;
        }
        for path in paths {
            self.attach_image(&path);
        }
        true
    }

    /// Reads `path` and adds it as a chip; a file too large or not an
    /// image is refused in the pane.
    pub(crate) fn attach_image(&mut self, path: &std::path::Path) {
        match Image::load(path) {
            Ok(img) => {
                let label = img.label();
                if let Some(p) = self.focused_mut()
                    && !p.attachments.iter().any(|a| a.path == img.path)
                {
                    p.attachments.push(img);
                }
                self.set_status(format!(
                    "attached {label} · Backspace on an empty composer removes it"
                ));
            }
            Err(e) => self.refuse(format!("image not attached: {e}")),
        }
    }

    /// Backspace on an empty composer: the last chip goes. False: no chip.
    pub(super) fn detach_last(&mut self) -> bool {
        let Some(p) = self.focused_mut() else {
            return false;
        };
        let Some(img) = p.attachments.pop() else {
            return false;
        };
        let name = img.name();
        self.set_status(format!("removed {name}"));
        true
    }

    /// Sends a message with the pane's chips (and image paths typed in
    /// it). Refused, keeping the draft, when the agent takes no images or
    /// a turn runs (the images would wait in the queue without their
    /// message).
    pub(super) fn submit_with_images(&mut self, text: String, mode: SubmitMode) {
        let focus = self.focus;
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        let takes_images = p.conversation.capabilities.is_some_and(|c| c.images);
        let cwd = pane_cwd(&p.agent);
        let typed: Vec<PathBuf> = text
            .split_whitespace()
            .filter_map(|w| typed_image(w, &cwd))
            .filter(|path| !p.attachments.iter().any(|a| &a.path == path))
            .collect();
        if takes_images {
            for path in typed {
                self.attach_image(&path);
            }
        } else if !typed.is_empty() && p.attachments.is_empty() {
            // Not silently: the agent gets the path, never the picture.
            let names: Vec<String> = typed
                .iter()
                .filter_map(|t| t.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            let text = format!(
                "{} sent as text: {} ({}) takes no images, so it gets the path, not the picture",
                names.join(", "),
                p.name(),
                p.agent.provider
            );
            p.conversation
                .transcript
                .notice(crate::protocol::agent::DiagnosticLevel::Warn, text);
        }
        let Some(p) = self.panes.get_mut(focus) else {
            return;
        };
        if p.attachments.is_empty() {
            return self.submit_text(focus, text, mode);
        }
        let why = if !takes_images {
            Some(format!(
                "{} ({}) takes no images: not sent. Backspace on an empty composer removes the image.",
                p.name(),
                p.agent.provider
            ))
        } else if p.is_busy() || !p.pending.queue.is_empty() {
            Some(
                "a message with images goes when the agent is idle: not sent, the draft is kept"
                    .into(),
            )
        } else {
            None
        };
        if let Some(why) = why {
            p.composer.set(&text);
            return self.refuse(why);
        }
        let images = std::mem::take(&mut p.attachments);
        self.send(focus, RunnerCommand::Attach(images));
        self.submit_text(focus, text, mode);
    }
}

/// The image a typed word names, also when the sentence's punctuation
/// touches it (`what is in shot.png?`, `(see "a.png").`): the exact word
/// first, so a file whose name ends in `?` is still found.
fn typed_image(word: &str, cwd: &std::path::Path) -> Option<PathBuf> {
    image::image_path(word, cwd).or_else(|| {
        let bare = word
            .trim_start_matches(['(', '[', '"', '\'', '`'])
            .trim_end_matches(['?', '!', '.', ',', ';', ':', ')', ']', '"', '\'', '`']);
        (bare != word)
            .then(|| image::image_path(bare, cwd))
            .flatten()
    })
}

/// Where a pane's relative paths start: the agent's directory.
fn pane_cwd(agent: &crate::config::AgentConfig) -> PathBuf {
    agent
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_default()
}
