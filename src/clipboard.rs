//! Copying text out of hive: an OSC 52 sequence for the terminal (works over
//! SSH and, wrapped for passthrough, inside tmux), and where this machine
//! has a desktop clipboard tool (`wl-copy`, `xclip`, `xsel`, `pbcopy`) that
//! too. The sequence is written by the app loop after a frame; the tool runs
//! on its own thread so the UI never waits for it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine;

/// The OSC 52 "set clipboard" sequences for `text`: the plain one, and
/// inside tmux also the DCS-passthrough form (tmux passes it on to the
/// outer terminal when `allow-passthrough` is on; the plain one works when
/// `set-clipboard` is on).
pub(crate) fn osc52(text: &str, in_tmux: bool) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let plain = format!("\x1b]52;c;{b64}\x07");
    if in_tmux {
        format!("{plain}\x1bPtmux;\x1b\x1b]52;c;{b64}\x07\x1b\\")
    } else {
        plain
    }
}

/// A desktop clipboard tool on PATH for this session, with its arguments:
/// none over SSH (the clipboard there is the far terminal's) or without a
/// display.
pub(crate) fn system_tool() -> Option<(PathBuf, &'static [&'static str])> {
    let env = |k: &str| std::env::var_os(k).is_some_and(|v| !v.is_empty());
    if env("SSH_CONNECTION") || env("SSH_TTY") {
        return None;
    }
    let candidates: &[(&str, &[&str], bool)] = &[
        ("wl-copy", &[], env("WAYLAND_DISPLAY")),
        ("xclip", &["-selection", "clipboard"], env("DISPLAY")),
        ("xsel", &["--clipboard", "--input"], env("DISPLAY")),
        ("pbcopy", &[], cfg!(target_os = "macos")),
    ];
    candidates
        .iter()
        .filter(|(_, _, usable)| *usable)
        .find_map(|(name, args, _)| which(name).map(|p| (p, *args)))
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Hands `text` to the system tool on a thread of its own.
pub(crate) fn copy_with(tool: PathBuf, args: &'static [&'static str], text: String) {
    std::thread::spawn(move || {
        let child = Command::new(&tool)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        match child {
            Ok(mut c) => {
                if let Some(mut stdin) = c.stdin.take() {
                    let _ = stdin.write_all(text.as_bytes());
                }
                let _ = c.wait();
            }
            Err(e) => tracing::warn!("clipboard: cannot run {}: {e}", tool.display()),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_carries_base64_and_wraps_for_tmux() {
        assert_eq!(osc52("hi\n", false), "\x1b]52;c;aGkK\x07");
        let t = osc52("hi\n", true);
        assert!(t.starts_with("\x1b]52;c;aGkK\x07\x1bPtmux;\x1b\x1b]52;c;aGkK\x07"));
        assert!(t.ends_with("\x1b\\"));
    }
}
