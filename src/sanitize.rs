//! Agent text is untrusted: a model can write OSC 52 (clipboard writes),
//! window-title or cursor-moving sequences into its answer. The console
//! never passes them to the terminal; text hive prints itself (`hive run`,
//! `hive history show`, Markdown export) goes through [`neutralize`] first.
//!
//! Control characters become visible stand-ins rather than vanishing, so
//! nothing is silently lost: C0 controls show as their Unicode control
//! pictures (ESC as `␛`), DEL as `␡`, C1 controls and bidirectional
//! overrides as `<U+009B>`. Newlines and tabs are kept.

use std::borrow::Cow;

/// Would `c` be changed by [`neutralize`]?
fn is_unsafe(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        // Bidi embeddings/overrides/isolates: reorder what is displayed.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `s` with every control character (but `\n` and `\t`) made visible.
pub(crate) fn neutralize(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            c if !is_unsafe(c) => out.push(c),
            // U+2400.. are the control pictures of 0x00..0x1f.
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("<U+{:04X}>", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// The longest [`peer_line`] in characters: a hostile peer's reason is
/// not a page of text.
const PEER_LINE_CHARS: usize = 300;

/// What another machine or a socket peer said (a remote's version, its
/// `Bye` reason, a serde error naming its variant, a path it reported), for
/// a one-line message hive prints: [`neutralize`]d, newlines and tabs too
/// (a peer must not forge lines of hive's own), at most 300 characters.
pub(crate) fn peer_line(s: &str) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == PEER_LINE_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push('␊'),
            '\t' => out.push(' '),
            c => out.push_str(&neutralize(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// [`neutralize`] when `to_terminal`, else `s` unchanged (a file or pipe
/// gets the agent's exact bytes).
pub(crate) fn for_output(s: &str, to_terminal: bool) -> Cow<'_, str> {
    if to_terminal {
        neutralize(s)
    } else {
        Cow::Borrowed(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_are_made_visible() {
        let osc52 = "copy \x1b]52;c;cm0gLXJmIH4=\x07 done";
        assert_eq!(neutralize(osc52), "copy ␛]52;c;cm0gLXJmIH4=␇ done");
        assert_eq!(neutralize("\x1b[2J\r\x7f"), "␛[2J␍␡");
        assert_eq!(neutralize("8-bit CSI \u{9b}31m"), "8-bit CSI <U+009B>31m");
        assert_eq!(neutralize("abc\u{202e}fed"), "abc<U+202E>fed");
    }

    #[test]
    fn plain_text_newlines_and_tabs_pass_unchanged() {
        let s = "line 1\n\tindented — ünïcödé 🐝\n";
        assert!(matches!(neutralize(s), Cow::Borrowed(_)));
        assert_eq!(neutralize(s), s);
        assert_eq!(for_output("\x1b[31m", false), "\x1b[31m");
        assert_eq!(for_output("\x1b[31m", true), "␛[31m");
    }

    #[test]
    fn a_peer_line_is_one_short_line_of_visible_characters() {
        assert_eq!(
            peer_line("bye\x1b]0;pwned\x07\nhive: forged\tline"),
            "bye␛]0;pwned␇␊hive: forged line"
        );
        let long = peer_line(&"é".repeat(10_000));
        assert_eq!(long.chars().count(), PEER_LINE_CHARS + 1);
        assert!(long.ends_with('…'));
        assert_eq!(peer_line("0.9.1"), "0.9.1");
    }
}
