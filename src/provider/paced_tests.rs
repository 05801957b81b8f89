//! The paced pipe against a writer on the other end: what one read returns
//! while the pipe rests, after a quiet spell, under a flood, and at EOF.
//! A rest is made far longer than any test waits, so no test depends on
//! how fast this machine is.

use std::io::Write;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::AgentStdout;
use crate::provider::channel::ReadPace;

/// Longer than any test runs: a read that waits for it never comes.
const LONG: Duration = Duration::from_secs(600);
const SOON: Duration = Duration::from_secs(20);

fn pipe(pace: Option<Duration>) -> (AgentStdout, std::io::PipeWriter) {
    let (r, w) = std::io::pipe().expect("pipe");
    let pace = pace.map(ReadPace::new);
    (
        AgentStdout::from_fd(r.into(), pace).expect("agent stdout"),
        w,
    )
}

async fn read(out: &mut AgentStdout, buf: &mut [u8]) -> Option<usize> {
    tokio::time::timeout(SOON, out.read(buf))
        .await
        .ok()
        .map(|r| r.expect("read"))
}

#[tokio::test]
async fn a_quiet_pipes_first_line_is_read_at_once() {
    let (mut out, mut w) = pipe(Some(LONG));
    let reader = tokio::spawn(async move {
        let mut buf = [0u8; 64];
        let n = read(&mut out, &mut buf).await;
        (n.map(|n| buf[..n].to_vec()), out)
    });
    tokio::task::yield_now().await;
    w.write_all(b"first\n").unwrap();
    let (got, mut out) = reader.await.unwrap();
    assert_eq!(got.as_deref(), Some(&b"first\n"[..]));

    // That read drained the pipe: the next line waits for the rest to end.
    w.write_all(b"second\n").unwrap();
    let mut buf = [0u8; 64];
    let waited = tokio::time::timeout(Duration::from_millis(300), out.read(&mut buf)).await;
    assert!(waited.is_err(), "read during the rest: {waited:?}");
}

#[tokio::test]
async fn lines_written_during_a_rest_come_in_one_read() {
    let pace = Duration::from_secs(2);
    let (mut out, mut w) = pipe(Some(pace));
    w.write_all(b"0\n").unwrap();
    let mut buf = vec![0u8; 4096];
    assert_eq!(read(&mut out, &mut buf).await, Some(2));
    // The next read is under way while the lines come one by one;
    // unpaced, it would return the first alone.
    let reader = tokio::spawn(async move {
        let n = read(&mut out, &mut buf).await.expect("the burst");
        buf.truncate(n);
        buf
    });
    let writer = std::thread::spawn(move || {
        for i in 1..=9 {
            writeln!(w, "{i}").unwrap();
            std::thread::sleep(Duration::from_millis(5));
        }
        w
    });
    assert_eq!(reader.await.unwrap(), b"1\n2\n3\n4\n5\n6\n7\n8\n9\n");
    drop(writer.join());
}

#[tokio::test]
async fn a_full_read_is_not_paced() {
    let (mut out, mut w) = pipe(Some(LONG));
    // Four reads' worth, in the pipe before the first: a read that fills
    // the buffer leaves more behind, so the next does not wait.
    w.write_all(&[b'x'; 4 * 4096]).unwrap();
    let mut buf = vec![0u8; 4096];
    for _ in 0..4 {
        let n = read(&mut out, &mut buf).await;
        assert_eq!(n, Some(4096), "a flood is read without resting");
    }
}

#[tokio::test]
async fn unpaced_every_write_is_read_as_it_comes() {
    let (mut out, mut w) = pipe(None);
    let mut buf = [0u8; 64];
    for line in [&b"a\n"[..], b"b\n", b"c\n"] {
        w.write_all(line).unwrap();
        assert_eq!(read(&mut out, &mut buf).await, Some(2));
        assert_eq!(&buf[..2], line);
    }
}

#[tokio::test]
async fn eof_ends_a_resting_pipe() {
    let (mut out, mut w) = pipe(Some(Duration::from_millis(50)));
    w.write_all(b"last\n").unwrap();
    drop(w);
    let mut all = Vec::new();
    tokio::time::timeout(SOON, out.read_to_end(&mut all))
        .await
        .expect("EOF is seen")
        .unwrap();
    assert_eq!(all, b"last\n");
}

#[tokio::test]
async fn the_pace_is_read_before_each_rest() {
    let (r, mut w) = std::io::pipe().expect("pipe");
    let pace = ReadPace::new(LONG);
    let mut out = AgentStdout::from_fd(r.into(), Some(pace.clone())).expect("agent stdout");
    // The runner shortened it (the pane got the focus): no long rest.
    pace.set(Duration::ZERO);
    let mut buf = [0u8; 64];
    for line in [&b"a\n"[..], b"b\n"] {
        w.write_all(line).unwrap();
        assert_eq!(
            read(&mut out, &mut buf).await,
            Some(2),
            "no rest of {LONG:?}"
        );
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_paced_pipe_holds_a_megabyte_between_reads() {
    use std::os::fd::AsRawFd;
    let (r, _w) = std::io::pipe().expect("pipe");
    let raw = r.as_raw_fd();
    // SAFETY: fcntl on a descriptor `r`'s owner keeps open; no memory involved.
    let size = || unsafe { libc::fcntl(raw, libc::F_GETPIPE_SZ) };
    let _out = AgentStdout::from_fd(r.into(), Some(ReadPace::new(LONG))).expect("agent stdout");
    assert_eq!(size(), super::PIPE_SIZE);
}

/// Issue 45 item 2: two panes' pipes drained at different moments of a
/// tick rest until the same instant, so their next reads (and what their
/// runners send every console) come in one wake-up; before, each rested a
/// whole tick from its own read, and thirty streaming panes woke the
/// server thirty times a tick.
#[tokio::test]
async fn pipes_drained_within_one_tick_are_read_again_together() {
    let (mut a, mut wa) = pipe(Some(LONG));
    let (mut b, mut wb) = pipe(Some(LONG));
    let mut buf = [0u8; 64];
    wa.write_all(b"a\n").unwrap();
    assert_eq!(read(&mut a, &mut buf).await, Some(2));
    tokio::time::sleep(Duration::from_millis(30)).await;
    wb.write_all(b"b\n").unwrap();
    assert_eq!(read(&mut b, &mut buf).await, Some(2));
    let (Some(at_a), Some(at_b)) = (a.rest_until, b.rest_until) else {
        panic!("both drained their pipe and rest");
    };
    assert_eq!(at_a, at_b, "the two rests end apart");
    let now = tokio::time::Instant::now();
    assert!(at_a > now + LONG / 4 - Duration::from_secs(1) && at_a <= now + LONG + LONG / 4);
}
