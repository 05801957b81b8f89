//! Key, paste and mouse encoding for terminal panes: the bytes xterm would
//! send to the child for a crossterm event, given the modes the child set
//! (application cursor keys, bracketed paste, mouse reporting).

use crate::protocol::screen::{InputModes, MouseEncoding, MouseMode, ScreenUpdate};
use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

const ESC: u8 = 0x1b;

/// The modes of the child's terminal that change what keys send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyModes {
    pub application_cursor: bool,
}

impl KeyModes {
    pub fn of(modes: &InputModes) -> Self {
        Self {
            application_cursor: modes.application_cursor,
        }
    }
}

/// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl (+ 8·meta).
fn modifier_param(m: KeyModifiers) -> u8 {
    let mut p = 1;
    if m.contains(KeyModifiers::SHIFT) {
        p += 1;
    }
    if m.contains(KeyModifiers::ALT) {
        p += 2;
    }
    if m.contains(KeyModifiers::CONTROL) {
        p += 4;
    }
    if m.contains(KeyModifiers::META) || m.contains(KeyModifiers::SUPER) {
        p += 8;
    }
    p
}

/// Cursor-style keys (arrows, Home, End, F1–F4): `CSI x` / `SS3 x`
/// unmodified, `CSI 1;m x` with modifiers.
fn cursor_key(fin: u8, mods: KeyModifiers, ss3: bool) -> Vec<u8> {
    let m = modifier_param(mods);
    if m > 1 {
        format!("\x1b[1;{m}{}", fin as char).into_bytes()
    } else if ss3 {
        vec![ESC, b'O', fin]
    } else {
        vec![ESC, b'[', fin]
    }
}

/// Editing and function keys of the `CSI n ~` family.
fn tilde_key(n: u8, mods: KeyModifiers) -> Vec<u8> {
    let m = modifier_param(mods);
    if m > 1 {
        format!("\x1b[{n};{m}~").into_bytes()
    } else {
        format!("\x1b[{n}~").into_bytes()
    }
}

/// The C0 control a Ctrl+char chord produces, if any.
fn control_byte(c: char) -> Option<u8> {
    Some(match c {
        'a'..='z' => c as u8 - b'a' + 1,
        'A'..='Z' => c as u8 - b'A' + 1,
        '@' | ' ' | '2' | '`' => 0x00,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' | '~' => 0x1e,
        '_' | '7' | '-' | '/' => 0x1f,
        '8' | '?' => 0x7f,
        _ => return None,
    })
}

/// Bytes for a key press; `None` for releases and keys without an encoding.
pub(crate) fn encode(key: &KeyEvent, modes: KeyModes) -> Option<Vec<u8>> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    let mods = key.modifiers;
    let alt = mods.contains(KeyModifiers::ALT);
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    // Keys whose Alt variant is "ESC + the plain encoding".
    let with_alt = |bytes: Vec<u8>| {
        if alt {
            let mut v = Vec::with_capacity(bytes.len() + 1);
            v.push(ESC);
            v.extend(bytes);
            v
        } else {
            bytes
        }
    };
    let app = modes.application_cursor;
    let bytes = match key.code {
        KeyCode::Char(c) => {
            let plain = if ctrl {
                match control_byte(c) {
                    Some(b) => vec![b],
                    None => c.to_string().into_bytes(),
                }
            } else {
                c.to_string().into_bytes()
            };
            with_alt(plain)
        }
        KeyCode::Enter => with_alt(vec![b'\r']),
        KeyCode::Backspace => with_alt(vec![if ctrl { 0x08 } else { 0x7f }]),
        KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => b"\x1b[Z".to_vec(),
        KeyCode::Tab => with_alt(vec![b'\t']),
        KeyCode::BackTab => b"\x1b[Z".to_vec(),
        KeyCode::Esc => with_alt(vec![ESC]),
        KeyCode::Up => cursor_key(b'A', mods, app),
        KeyCode::Down => cursor_key(b'B', mods, app),
        KeyCode::Right => cursor_key(b'C', mods, app),
        KeyCode::Left => cursor_key(b'D', mods, app),
        KeyCode::Home => cursor_key(b'H', mods, app),
        KeyCode::End => cursor_key(b'F', mods, app),
        KeyCode::Insert => tilde_key(2, mods),
        KeyCode::Delete => tilde_key(3, mods),
        KeyCode::PageUp => tilde_key(5, mods),
        KeyCode::PageDown => tilde_key(6, mods),
        KeyCode::F(n @ 1..=4) => cursor_key(b'P' + (n - 1), mods, true),
        KeyCode::F(n @ 5..=12) => {
            const CODES: [u8; 8] = [15, 17, 18, 19, 20, 21, 23, 24];
            tilde_key(CODES[usize::from(n - 5)], mods)
        }
        KeyCode::Null => vec![0x00],
        _ => return None,
    };
    Some(bytes)
}

/// Pasted text: newlines become CR (as terminals send them) and the whole is
/// bracketed when the child asked for it. A `ESC[201~` inside the text would
/// end the bracket early and let the rest run as typed input, so it is cut.
pub(crate) fn paste(text: &str, bracketed: bool) -> Vec<u8> {
    let text = text.replace("\r\n", "\r").replace('\n', "\r");
    if bracketed {
        let inner = text.replace("\x1b[201~", "");
        let mut v = Vec::with_capacity(inner.len() + 12);
        v.extend_from_slice(b"\x1b[200~");
        v.extend_from_slice(inner.as_bytes());
        v.extend_from_slice(b"\x1b[201~");
        v
    } else {
        text.into_bytes()
    }
}

/// A mouse event as the child asked to receive it; `col`/`row` are 0-based
/// within the pane. `None` when the child's mode does not report this event.
pub(crate) fn mouse(ev: &MouseEvent, col: u16, row: u16, modes: &InputModes) -> Option<Vec<u8>> {
    let mode = modes.mouse;
    let (button, release, motion) = match ev.kind {
        MouseEventKind::Down(b) => (button_code(b), false, false),
        MouseEventKind::Up(b) => (button_code(b), true, false),
        MouseEventKind::Drag(b) => (button_code(b), false, true),
        MouseEventKind::Moved => (3, false, true),
        MouseEventKind::ScrollUp => (64, false, false),
        MouseEventKind::ScrollDown => (65, false, false),
        MouseEventKind::ScrollLeft => (66, false, false),
        MouseEventKind::ScrollRight => (67, false, false),
    };
    let reported = match mode {
        MouseMode::None => false,
        MouseMode::Press => !release && !motion,
        MouseMode::PressRelease => !motion,
        MouseMode::ButtonMotion => !matches!(ev.kind, MouseEventKind::Moved),
        MouseMode::AnyMotion => true,
    };
    if !reported {
        return None;
    }
    let mut code = button;
    if motion {
        code += 32;
    }
    if ev.modifiers.contains(KeyModifiers::SHIFT) {
        code += 4;
    }
    if ev.modifiers.contains(KeyModifiers::ALT) {
        code += 8;
    }
    if ev.modifiers.contains(KeyModifiers::CONTROL) {
        code += 16;
    }
    let (x, y) = (u32::from(col) + 1, u32::from(row) + 1);
    match modes.encoding {
        MouseEncoding::Sgr => {
            let fin = if release { 'm' } else { 'M' };
            Some(format!("\x1b[<{code};{x};{y}{fin}").into_bytes())
        }
        enc => {
            // Legacy encodings cannot say which button went up.
            let code = if release { 3 | (code & !3) } else { code };
            let mut v = b"\x1b[M".to_vec();
            for n in [u32::from(code), x, y] {
                let value = n + 32;
                if enc == MouseEncoding::Utf8 {
                    let ch = char::from_u32(value.min(2047))?;
                    let mut tmp = [0u8; 4];
                    v.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                } else {
                    v.push(u8::try_from(value.min(255)).ok()?);
                }
            }
            Some(v)
        }
    }
}

fn button_code(b: MouseButton) -> u8 {
    match b {
        MouseButton::Left => 0,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
    }
}

/// The bytes a terminal would send for `key` to the child behind `screen`
/// (application cursor mode and the like come from the screen's state).
/// `None`: the key has no terminal encoding.
pub fn encode_key(key: &crossterm::event::KeyEvent, screen: &ScreenUpdate) -> Option<Vec<u8>> {
    let modes = KeyModes::of(&screen.modes);
    encode(key, modes)
}

/// `encode_key` with the modes given directly (tests, or a caller that has
/// already read them).
pub fn encode_key_with(key: &crossterm::event::KeyEvent, modes: KeyModes) -> Option<Vec<u8>> {
    encode(key, modes)
}

/// Pasted text as the child expects it (bracketed when it asked for that).
pub fn encode_paste(text: &str, screen: &ScreenUpdate) -> Vec<u8> {
    let bracketed = screen.modes.bracketed_paste;
    paste(text, bracketed)
}

/// True when the child asked for mouse reporting (the wheel then goes to it).
pub fn wants_mouse(screen: &ScreenUpdate) -> bool {
    screen.modes.mouse != MouseMode::None
}

/// A mouse event for the child, `col`/`row` 0-based inside the pane's
/// terminal area; `None` when the child's mouse mode does not report it.
pub fn encode_mouse(
    event: &crossterm::event::MouseEvent,
    col: u16,
    row: u16,
    screen: &ScreenUpdate,
) -> Option<Vec<u8>> {
    mouse(event, col, row, &screen.modes)
}
