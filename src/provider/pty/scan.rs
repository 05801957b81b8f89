//! Watches the child's output for the few things vt100 does not handle for us:
//! the bell (vt100's callback is unreachable through the shared `Parser<()>`)
//! and terminal queries a real terminal would answer. Programs such as
//! crossterm apps, fish or vim wait for these answers (some for seconds), so a
//! pane that ignores them looks hung.
//!
//! The scanner is a small escape-sequence state machine that survives chunk
//! boundaries; it only classifies, the caller feeds the same bytes to vt100.

use tui_term::vt100;

/// Longest parameter string kept for a CSI sequence; longer ones are no query
/// we answer and must not grow memory.
const MAX_PARAMS: usize = 32;

/// A query the child sent that expects a reply on its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Query {
    /// DSR 6 (`ESC[6n`): where is the cursor?
    CursorPosition,
    /// DECXCPR (`ESC[?6n`).
    ExtCursorPosition,
    /// DSR 5 (`ESC[5n`): are you OK?
    Status,
    /// DA1 (`ESC[c`).
    PrimaryAttributes,
    /// DA2 (`ESC[>c`).
    SecondaryAttributes,
}

impl Query {
    /// The reply a VT100/xterm-like terminal sends, given the screen state
    /// right after the query was parsed.
    pub fn answer(self, screen: &vt100::Screen) -> Vec<u8> {
        match self {
            Query::CursorPosition => {
                let (row, col) = screen.cursor_position();
                format!("\x1b[{};{}R", row + 1, col + 1).into_bytes()
            }
            Query::ExtCursorPosition => {
                let (row, col) = screen.cursor_position();
                format!("\x1b[?{};{};1R", row + 1, col + 1).into_bytes()
            }
            Query::Status => b"\x1b[0n".to_vec(),
            // VT100 with advanced video: the most conservative answer.
            Query::PrimaryAttributes => b"\x1b[?1;2c".to_vec(),
            Query::SecondaryAttributes => b"\x1b[>1;10;0c".to_vec(),
        }
    }
}

/// Something found in the output, located just after its last byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    Bell,
    Query(Query),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    Esc,
    Csi,
    /// OSC: ends with BEL or ST; a BEL here is a terminator, not a bell.
    Osc,
    OscEsc,
    /// DCS, SOS, PM, APC: end with ST.
    Str,
    StrEsc,
}

/// Incremental scanner; feed it every output chunk in order.
#[derive(Debug, Default)]
pub struct Scanner {
    state: State,
    params: Vec<u8>,
    intermediate: bool,
}

impl Scanner {
    /// Appends `(offset just past the sequence, what)` for each finding in
    /// `bytes` to `out`.
    pub fn scan(&mut self, bytes: &[u8], out: &mut Vec<(usize, Found)>) {
        for (i, &b) in bytes.iter().enumerate() {
            if let Some(found) = self.step(b) {
                out.push((i + 1, found));
            }
        }
    }

    fn step(&mut self, b: u8) -> Option<Found> {
        // CAN and SUB abort any sequence.
        if matches!(b, 0x18 | 0x1a) {
            self.state = State::Ground;
            return None;
        }
        match self.state {
            State::Ground => match b {
                0x07 => return Some(Found::Bell),
                0x1b => self.state = State::Esc,
                _ => {}
            },
            State::Esc => self.escape(b),
            State::Csi => return self.csi(b),
            State::Osc => match b {
                0x07 => self.state = State::Ground,
                0x1b => self.state = State::OscEsc,
                _ => {}
            },
            State::Str => {
                if b == 0x1b {
                    self.state = State::StrEsc;
                }
            }
            State::OscEsc | State::StrEsc => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    self.escape(b);
                }
            }
        }
        None
    }

    fn escape(&mut self, b: u8) {
        self.state = match b {
            b'[' => {
                self.params.clear();
                self.intermediate = false;
                State::Csi
            }
            b']' => State::Osc,
            b'P' | b'X' | b'^' | b'_' => State::Str,
            0x1b => State::Esc,
            _ => State::Ground,
        };
    }

    fn csi(&mut self, b: u8) -> Option<Found> {
        match b {
            0x30..=0x3f if self.params.len() < MAX_PARAMS => self.params.push(b),
            0x20..=0x2f => self.intermediate = true,
            0x40..=0x7e => {
                self.state = State::Ground;
                return self.dispatch(b).map(Found::Query);
            }
            0x1b => self.state = State::Esc,
            // Controls inside a CSI are executed as usual.
            0x07 => return Some(Found::Bell),
            _ => {}
        }
        None
    }

    fn dispatch(&self, fin: u8) -> Option<Query> {
        if self.intermediate {
            return None;
        }
        match (fin, self.params.as_slice()) {
            (b'n', b"6") => Some(Query::CursorPosition),
            (b'n', b"?6") => Some(Query::ExtCursorPosition),
            (b'n', b"5") => Some(Query::Status),
            (b'c', b"" | b"0") => Some(Query::PrimaryAttributes),
            (b'c', b">" | b">0") => Some(Query::SecondaryAttributes),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_all(chunks: &[&[u8]]) -> Vec<Found> {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        for c in chunks {
            s.scan(c, &mut out);
        }
        out.into_iter().map(|(_, f)| f).collect()
    }

    #[test]
    fn bell_in_text_but_not_as_osc_terminator() {
        assert_eq!(
            scan_all(&[b"ding\x07 \x1b]0;title\x07done"]),
            vec![Found::Bell]
        );
        assert_eq!(scan_all(&[b"\x1b]2;t\x1b\\\x07"]), vec![Found::Bell]);
    }

    #[test]
    fn queries_are_found_across_chunk_boundaries() {
        assert_eq!(
            scan_all(&[b"abc\x1b", b"[", b"6", b"n"]),
            vec![Found::Query(Query::CursorPosition)]
        );
        assert_eq!(
            scan_all(&[b"\x1b[c\x1b[>c\x1b[5n\x1b[?6n"]),
            vec![
                Found::Query(Query::PrimaryAttributes),
                Found::Query(Query::SecondaryAttributes),
                Found::Query(Query::Status),
                Found::Query(Query::ExtCursorPosition),
            ]
        );
    }

    #[test]
    fn similar_sequences_are_not_queries() {
        // Colour SGR, device-status with another code, a DCS carrying "[6n".
        assert!(scan_all(&[b"\x1b[31m\x1b[16n\x1b[ 6n\x1bP[6n\x1b\\"]).is_empty());
    }

    #[test]
    fn offsets_point_past_the_sequence() {
        let mut s = Scanner::default();
        let mut out = Vec::new();
        s.scan(b"ab\x1b[6nc\x07", &mut out);
        assert_eq!(
            out,
            vec![(6, Found::Query(Query::CursorPosition)), (8, Found::Bell)]
        );
    }

    #[test]
    fn cursor_position_answer_is_one_based() {
        let mut p = vt100::Parser::new(24, 80, 0);
        p.process(b"\x1b[5;10Hx");
        assert_eq!(
            Query::CursorPosition.answer(p.screen()),
            b"\x1b[5;11R".to_vec()
        );
    }
}
