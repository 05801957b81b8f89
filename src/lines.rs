//! Lines read with a cap, for every stream a party hive does not control
//! writes: an agent's stdout (`provider::process::LineReader`), the control
//! socket's clients, `hive mcp`'s stdin. A writer that never sends a newline
//! cannot make hive buffer without bound: an over-long line is never held;
//! what follows its first bytes is dropped up to its newline.

use std::io;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Longest request line the control socket reads (16 MiB).
pub(crate) const MAX_REQUEST_BYTES: usize = 16 << 20;

/// How much of an over-long line is kept, to find its request id.
const HEAD_BYTES: usize = 4096;

/// One line read by [`CappedLines`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A whole line, without its terminator (invalid UTF-8 replaced).
    Text(String),
    /// A line longer than the cap; `head` is its beginning. The rest is
    /// skipped by the next read.
    TooLong { head: String },
}

/// Newline-delimited lines of at most `max` bytes. `next` is cancel-safe:
/// a partial line survives a lost `select!` race.
#[derive(Debug)]
pub struct CappedLines<R> {
    reader: BufReader<R>,
    buf: Vec<u8>,
    max: usize,
    /// Inside an over-long line: dropping up to its newline.
    skipping: bool,
    /// The server's socket: the unfinished line counts against the total
    /// of all connections (`budget::MAX_INPUT`).
    charge: Option<crate::budget::Charge>,
}

impl<R: AsyncRead + Unpin> CappedLines<R> {
    pub fn new(inner: R, max: usize) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, inner),
            buf: Vec::new(),
            max,
            skipping: false,
            charge: None,
        }
    }

    /// Lines whose unfinished one counts against the server's total.
    pub fn charged(inner: R, max: usize) -> Self {
        Self {
            charge: Some(crate::budget::Charge::default()),
            ..Self::new(inner, max)
        }
    }

    /// Counts the unfinished line held (`buf`).
    fn hold(&mut self) -> io::Result<()> {
        let held = self.buf.len();
        match &mut self.charge {
            Some(c) => c.hold(held).map_err(io::Error::other),
            None => Ok(()),
        }
    }

    /// The next line; `None` at end of input.
    pub async fn next(&mut self) -> io::Result<Option<Line>> {
        let line = self.read_line().await;
        self.hold()?;
        line
    }

    pub fn max(&self) -> usize {
        self.max
    }

    async fn read_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                self.skipping = false;
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Ok(Some(Line::Text(text(std::mem::take(&mut self.buf)))));
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let take = newline.map_or(chunk.len(), |i| i + 1);
            if self.skipping {
                self.reader.consume(take);
                self.skipping = newline.is_none();
                continue;
            }
            let body = newline.unwrap_or(chunk.len());
            if self.buf.len() + body > self.max {
                let mut head = std::mem::take(&mut self.buf);
                head.truncate(HEAD_BYTES);
                let more = HEAD_BYTES.saturating_sub(head.len()).min(body);
                head.extend_from_slice(&chunk[..more]);
                self.reader.consume(take);
                self.skipping = newline.is_none();
                return Ok(Some(Line::TooLong { head: text(head) }));
            }
            self.buf.extend_from_slice(&chunk[..body]);
            self.reader.consume(take);
            self.hold()?;
            if newline.is_some() {
                return Ok(Some(Line::Text(text(std::mem::take(&mut self.buf)))));
            }
        }
    }
}

fn text(mut line: Vec<u8>) -> String {
    while line.last() == Some(&b'\r') {
        line.pop();
    }
    match String::from_utf8(line) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

/// The JSON `"id"` value written near the start of a line (a number or a
/// string), if one can be read from `head`: an over-long request still gets
/// an answer its caller can match.
pub fn id_in(head: &str) -> Option<serde_json::Value> {
    let at = head.find("\"id\"")? + 4;
    let rest = head[at..].trim_start().strip_prefix(':')?.trim_start();
    let mut de = serde_json::Deserializer::from_str(rest).into_iter::<serde_json::Value>();
    match de.next()? {
        Ok(v @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => Some(v),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_cut_and_skipped() {
        let input = format!("ok\n{}\nnext\r\n", "x".repeat(100));
        let mut lines = CappedLines::new(input.as_bytes(), 10);
        assert_eq!(lines.next().await.unwrap(), Some(Line::Text("ok".into())));
        assert!(matches!(
            lines.next().await.unwrap(),
            Some(Line::TooLong { .. })
        ));
        assert_eq!(lines.next().await.unwrap(), Some(Line::Text("next".into())));
        assert_eq!(lines.next().await.unwrap(), None);
    }

    #[test]
    fn ids_are_found_at_the_start_of_a_line() {
        assert_eq!(
            id_in(r#"{"jsonrpc":"2.0","id": 7,"method":"x","params":{"#),
            Some(7.into())
        );
        assert_eq!(id_in(r#"{"id":"a-1","pad":"xxxx"#), Some("a-1".into()));
        assert_eq!(id_in(r#"{"method":"x","params":{"pad":"xxx"#), None);
    }
}
