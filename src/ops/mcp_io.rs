//! `hive mcp`'s stdio with a cap on requests. rmcp drops a line over its
//! own limit without a word, so its caller waits forever; here stdin is
//! read first with [`CappedLines`]: an over-long request is answered with
//! a JSON-RPC error carrying its id (when its first bytes name one), and
//! every other line goes on to rmcp. Replies from rmcp and these errors
//! reach stdout as whole lines, one at a time.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use crate::lines::{CappedLines, Line, id_in};

/// Longest request `hive mcp` reads: under rmcp's own 16 MiB, so no line
/// is ever dropped there unanswered.
pub(super) const MAX_MCP_REQUEST: usize = 15 << 20;

/// The two ends rmcp serves on (its input, its output); pumps between them
/// and stdin/stdout run until stdin ends. The returned handle ends when
/// every reply has been written.
pub(super) fn capped_stdio() -> ((DuplexStream, DuplexStream), tokio::task::JoinHandle<()>) {
    let (to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (errors_tx, errors) = mpsc::unbounded_channel();
    tokio::spawn(pump_in(to_rmcp, errors_tx));
    let out = tokio::spawn(pump_out(from_rmcp, errors));
    ((rmcp_in, rmcp_out), out)
}

/// stdin to rmcp, answering over-long lines itself.
async fn pump_in(mut to_rmcp: DuplexStream, errors: mpsc::UnboundedSender<String>) {
    let mut lines = CappedLines::new(tokio::io::stdin(), MAX_MCP_REQUEST);
    while let Ok(Some(line)) = lines.next().await {
        match line {
            Line::Text(text) => {
                let sent = async {
                    to_rmcp.write_all(text.as_bytes()).await?;
                    to_rmcp.write_all(b"\n").await?;
                    to_rmcp.flush().await
                };
                if sent.await.is_err() {
                    return;
                }
            }
            Line::TooLong { head } => {
                let reply = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id_in(&head),
                    "error": {
                        "code": -32600,
                        "message": format!(
                            "request larger than {} bytes; hive mcp did not read it",
                            lines.max()
                        ),
                    },
                });
                let _ = errors.send(reply.to_string());
            }
        }
    }
    // Dropping `to_rmcp` is rmcp's end of input.
}

/// rmcp's replies and the pump's errors to stdout, line by line.
async fn pump_out(from_rmcp: DuplexStream, mut errors: mpsc::UnboundedReceiver<String>) {
    let mut stdout = tokio::io::stdout();
    let mut replies = BufReader::new(from_rmcp).lines();
    let mut errors_open = true;
    loop {
        let line = tokio::select! {
            r = replies.next_line() => match r {
                Ok(Some(l)) => l,
                _ => break,
            },
            e = errors.recv(), if errors_open => match e {
                Some(l) => l,
                None => {
                    errors_open = false;
                    continue;
                }
            },
        };
        let written = async {
            stdout.write_all(line.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
            stdout.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
}
