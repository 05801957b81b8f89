//! A terminal pane's screen as text (`Verb::Screen`, issue 47): what the web
//! page shows of a terminal pane, the rows its program drew as the server
//! last heard them (the pane log's latest `Terminal`), one string a row
//! with its trailing blanks cut. The rows are the emulator's cells, so no
//! escape sequence is in them; the page still inserts them as text only.

use serde_json::{Value, json};

use super::door::Reply;
use super::serve::Server;
use crate::control::protocol::{CtlError, ErrorCode};
use crate::protocol::screen::ScreenUpdate;

impl Server {
    /// `Verb::Screen`: pane `id`'s screen, to a `hive ctl`-shaped door
    /// (the web page); refused where there is none.
    pub(super) fn screen_verb(&mut self, id: &str, reply: Reply) {
        let screen = self
            .panes
            .find(id)
            .and_then(|slot| self.panes.get(slot))
            .map(|p| p.log.screen().map(|s| screen_json(id, s)));
        let answer = match screen {
            None => Err(CtlError::new(
                ErrorCode::SessionNotFound,
                format!("no pane `{id}`"),
            )),
            Some(None) => Err(CtlError::new(
                ErrorCode::InvalidState,
                format!("`{id}` is not a terminal pane (or its program drew nothing yet)"),
            )),
            Some(Some(v)) => Ok(v),
        };
        match reply {
            Reply::Ctl { reply, .. } => {
                let _ = reply.send(answer);
            }
            other => other.refuse("a terminal's screen is read through the web page"),
        }
    }
}

/// `screen` as the page reads it.
fn screen_json(pane: &str, screen: &ScreenUpdate) -> Value {
    let lines: Vec<&str> = screen.lines.iter().map(|r| r.text.trim_end()).collect();
    json!({
        "pane": pane,
        "rows": screen.rows,
        "cols": screen.cols,
        "cursor": [screen.cursor.0, screen.cursor.1],
        "alternate": screen.alternate,
        "scroll": screen.scroll,
        "history": screen.history,
        "lines": lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::screen::ScreenRow;

    #[test]
    fn a_screen_is_its_rows_as_text_without_trailing_blanks() {
        let row = |t: &str| ScreenRow {
            text: t.into(),
            ..ScreenRow::default()
        };
        let screen = ScreenUpdate {
            rows: 3,
            cols: 20,
            cursor: (1, 2),
            lines: vec![row("$ echo hi   "), row("hi"), row("")],
            ..ScreenUpdate::default()
        };
        let v = screen_json("sh", &screen);
        assert_eq!(v["lines"], json!(["$ echo hi", "hi", ""]));
        assert_eq!(v["cols"], 20);
        assert_eq!(v["cursor"], json!([1, 2]));
        assert_eq!(v["alternate"], false);
    }
}
