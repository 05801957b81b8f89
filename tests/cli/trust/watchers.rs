//! A `watch` client that reads nothing while a long turn streams: the
//! server must not queue its events without bound, nor cut it off. The
//! hub's side is played by the test, by the hub's rule (src/backlog.rs:
//! each line admitted by its bytes, skipped once the watcher is behind);
//! the client subscribes and reads nothing. What is queued stays under the
//! bound, and once the client reads everything the stream says it drained
//! (the hub's cue to send a `lagged` line and whole texts).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use hive::backlog::{Admit, MAX_BYTES};

const MIB: usize = 1 << 20;

#[test]
fn a_watcher_that_never_reads_is_bounded_by_bytes_and_not_cut_off() {
    let tmp = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, mut requests, _consoles) = rt
        .block_on(async { hive::control::server::Server::start(tmp.path(), "watch") })
        .unwrap();
    let mut client = UnixStream::connect(server.path()).unwrap();
    writeln!(client, r#"{{"id":1,"method":"watch"}}"#).unwrap();
    let line: Arc<str> = "x".repeat(MIB / 4).into();
    let (events, admitted, skipped) = rt.block_on(async {
        let req = requests.recv().await.unwrap();
        let events = req.events.unwrap();
        req.reply.send(Ok(serde_json::json!({}))).unwrap();
        // 256 MiB of events for a client that reads none of them.
        let (mut admitted, mut skipped) = (0, 0);
        for _ in 0..1024 {
            match events.backlog.admit(line.len()) {
                Admit::Queue => {
                    admitted += line.len();
                    events.tx.send(line.clone()).unwrap();
                }
                Admit::Skip { .. } => skipped += 1,
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        (events, admitted, skipped)
    });
    assert!(events.backlog.is_behind());
    assert!(
        events.backlog.queued() <= MAX_BYTES,
        "{} MiB queued for a watcher that reads nothing",
        events.backlog.queued() / MIB
    );
    assert!(admitted < 64 * MIB, "{} MiB taken", admitted / MIB);
    assert!(skipped > 700, "only {skipped} lines skipped");
    assert!(!events.tx.is_closed(), "the watcher was cut off");
    // The client reads everything at last: the stream says it drained.
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = vec![0; 1 << 20];
    let mut read = 0;
    while read < admitted {
        match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => read += n,
        }
    }
    assert!(read >= admitted, "read {read} of {admitted}");
    let drained = rt.block_on(async {
        for _ in 0..200 {
            if events.backlog.drained() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    });
    assert!(drained, "a watcher that read everything is not told so");
    drop(server);
}
