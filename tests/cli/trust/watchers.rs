//! A `watch` client that reads nothing while a long turn streams: the
//! console must not queue its events without bound. The hub's side is played
//! by the test (it hands the server event lines, as the hub does with
//! `try_send`); the client subscribes and never reads. The server cuts it
//! off once its backlog passes a byte budget, with a reason.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::error::TrySendError;

const MIB: usize = 1 << 20;

#[test]
fn a_watcher_that_never_reads_is_cut_off_by_bytes() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, mut requests, _consoles) = rt
        .block_on(async { hive::control::server::Server::start(tmp.path(), "watch") })
        .unwrap();
    let mut client = UnixStream::connect(server.path()).unwrap();
    writeln!(client, r#"{{"id":1,"method":"watch"}}"#).unwrap();
    let line: Arc<str> = "x".repeat(MIB / 4).into();
    let (pushed, end) = rt.block_on(async {
        let req = requests.recv().await.unwrap();
        let events = req.events.unwrap();
        req.reply.send(Ok(serde_json::json!({}))).unwrap();
        // Up to 256 MiB of events for a client that reads none of them.
        let mut pushed = 0;
        for _ in 0..1024 {
            match events.try_send(line.clone()) {
                Ok(()) => pushed += line.len(),
                Err(e) => return (pushed, Some(e)),
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        (pushed, None)
    });
    assert!(
        matches!(end, Some(TrySendError::Closed(_))),
        "{} MiB queued for a watcher that reads nothing",
        pushed / MIB
    );
    assert!(pushed < 128 * MIB, "{} MiB taken", pushed / MIB);
    // The client, reading at last, learns why the stream ended.
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut all = Vec::new();
    let _ = client.read_to_end(&mut all);
    let tail = String::from_utf8_lossy(&all[all.len().saturating_sub(400)..]).into_owned();
    assert!(tail.contains("behind"), "{tail}");
    drop(server);
}
