//! Inputs without end: a control-socket client that never sends a newline,
//! a model server whose SSE line never ends, an oversized MCP request, a
//! scenario file that is `/dev/zero` or a FIFO. Each is capped: refused
//! with a reason, never buffered without bound, never left unanswered.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::hive;

const MIB: usize = 1 << 20;

#[test]
fn a_control_line_without_end_is_refused_and_the_connection_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, _requests, _consoles) = rt
        .block_on(async { hive::control::server::Server::start(tmp.path(), "caps") })
        .unwrap();
    let mut s = UnixStream::connect(server.path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut reader = BufReader::new(s.try_clone().unwrap());
    // 64 MiB in blocks, no newline: a capped server answers and hangs up.
    let block = vec![b'x'; MIB];
    let mut sent = 0;
    while sent < 64 * MIB && s.write_all(&block).is_ok() {
        sent += MIB;
    }
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .expect("no answer to an endless line");
    let reply: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(reply["error"]["code"], "BAD_REQUEST", "{line}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than"),
        "{line}"
    );
    line.clear();
    assert_eq!(reader.read_line(&mut line).unwrap_or(0), 0, "closed");
    drop(server);
}

#[test]
fn an_endless_sse_line_from_the_model_server_is_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && conn.read(&mut b).unwrap_or(0) == 1 {
                    head.push(b[0]);
                }
                let _ = conn
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: ");
                // Up to 48 MiB of one line; a capped reader hangs up before.
                let block = vec![b'x'; MIB];
                let mut sent = 0;
                while sent < 48 * MIB && conn.write_all(&block).is_ok() {
                    sent += MIB;
                }
                let _ = tx.send(sent);
            });
        }
    });
    let config = tmp.path().join("hive.toml");
    std::fs::write(
        &config,
        format!(
            "[limits]\nmax_line_bytes = 1048576\n\n\
             [[agent]]\nid = \"o\"\nprovider = \"openai\"\nmodel = \"m\"\n\
             base_url = \"http://127.0.0.1:{port}/v1\"\n"
        ),
    )
    .unwrap();
    let mut child = hive(tmp.path())
        .args([
            "--config",
            config.to_str().unwrap(),
            "run",
            "--agent",
            "o",
            "hi",
        ])
        .env("OPENAI_API_KEY", "test")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sent = rx.recv_timeout(Duration::from_secs(120));
    let _ = child.kill();
    let _ = child.wait();
    let sent = sent.expect("the server never finished a response");
    // 1 MiB allowed; what is in flight in socket buffers comes on top.
    assert!(
        sent < 16 * MIB,
        "hive read {} MiB of one SSE line",
        sent / MIB
    );
}

#[test]
fn an_oversized_mcp_request_gets_an_error_reply() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hive"))
        .args(["mcp", "--socket", "/nonexistent/hive.sock"])
        .env_remove("HIVE_AGENT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            let _ = tx.send(line);
        }
    });
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    writeln!(stdin, "{init}").unwrap();
    let first = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    assert!(first.contains("\"id\":1"), "{first}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let pad = "x".repeat(20 * MIB);
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{{"pad":"{pad}"}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let reply = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("no reply to an oversized request");
        let v: Value = serde_json::from_str(&line).unwrap();
        if v["id"] == 7 {
            break v;
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(reply["error"]["message"].as_str().is_some(), "{reply}");
}

/// `hive run` on a scenario `script`: exits (with the reason) in time.
fn run_script(script: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("hive.toml");
    std::fs::write(
        &config,
        format!("[[agent]]\nid = \"a\"\nprovider = \"script\"\nscript = {script:?}\n"),
    )
    .unwrap();
    if script == "fifo" {
        let fifo = std::ffi::CString::new(tmp.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    }
    let mut child = hive(tmp.path())
        .args([
            "--config",
            config.to_str().unwrap(),
            "run",
            "--agent",
            "a",
            "hi",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hive still reading scenario `{script}` after 20 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    err
}

#[test]
fn a_scenario_that_never_ends_is_refused() {
    // The FIFO first: without the cap, /dev/zero would eat memory for 20 s.
    for script in ["fifo", "/dev/zero"] {
        let err = run_script(script);
        assert!(err.contains("not a regular file"), "{script}: {err}");
    }
}
