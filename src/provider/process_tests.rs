//! LineReader against hostile output: lone surrogates, endless lines.

use super::*;

async fn lines(input: &[u8], max: usize) -> Vec<String> {
    let mut r = LineReader::with_max(input, max);
    let mut out = Vec::new();
    while let Some(l) = r.next_line().await.unwrap() {
        out.push(l);
    }
    out
}

#[test]
fn lone_surrogates_become_replacement_characters() {
    let line = r#"{"text":"half an emoji \ud83d"}"#.to_owned();
    let fixed = repair_surrogates(line);
    assert_eq!(fixed, r#"{"text":"half an emoji \ufffd"}"#);
    let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
    assert_eq!(v["text"], "half an emoji \u{fffd}");
    // A trailing half alone, and one at the very end of the line.
    assert_eq!(
        repair_surrogates(r#""\udc00x\ud83d""#.into()),
        r#""\ufffdx\ufffd""#
    );
    // Pairs, other escapes and escaped backslashes are left alone.
    for ok in [
        r#""\ud83d\ude00""#,
        r#""\\ud83d is text""#,
        r#""\u00e9\n\"""#,
        r#""\ud83""#,
    ] {
        assert_eq!(repair_surrogates(ok.into()), ok);
    }
}

#[tokio::test]
async fn lines_are_split_trimmed_and_repaired() {
    let got = lines(b"one\r\ntwo\n{\"t\":\"\\ud83d\"}\nlast", 1024).await;
    assert_eq!(got, ["one", "two", "{\"t\":\"\\ufffd\"}", "last"]);
}

#[tokio::test]
async fn an_over_long_line_becomes_a_notice_and_the_next_line_survives() {
    let mut input = b"before\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 200_000));
    input.extend(b"\nafter\n");
    let got = lines(&input, 4096).await;
    assert_eq!(
        got.len(),
        3,
        "{:?}",
        got.iter().map(|l| l.len()).collect::<Vec<_>>()
    );
    assert_eq!(got[0], "before");
    assert!(got[1].starts_with("hive: the agent wrote a line longer than 4096 bytes"));
    assert!(serde_json::from_str::<serde_json::Value>(&got[1]).is_err());
    assert_eq!(got[2], "after");
}

#[tokio::test]
async fn an_endless_line_is_reported_without_waiting_for_its_end() {
    // A reader that never ends the line: the notice comes once the cap is passed.
    let (mut tx, rx) = tokio::io::duplex(1 << 16);
    let writer = tokio::spawn(async move {
        let chunk = vec![b'y'; 8192];
        loop {
            if tx.write_all(&chunk).await.is_err() {
                break;
            }
        }
    });
    let mut r = LineReader::with_max(rx, 100_000);
    let notice = r.next_line().await.unwrap().unwrap();
    assert!(
        notice.starts_with("hive: the agent wrote a line longer"),
        "{notice}"
    );
    writer.abort();
}

#[tokio::test]
async fn a_gated_reader_reads_nothing_while_its_runner_is_behind() {
    use crate::provider::channel::{HIGH_WATER, channel};
    use crate::provider::{DiagnosticLevel, ProviderEvent};
    let (events, mut rx) = channel();
    for _ in 0..HIGH_WATER {
        events
            .send(ProviderEvent::diagnostic(DiagnosticLevel::Info, "queued"))
            .unwrap();
    }
    let mut r = LineReader::new(&b"one\ntwo\n"[..]);
    r.gate(&events);
    let early = tokio::time::timeout(std::time::Duration::from_millis(100), r.next_line()).await;
    assert!(
        early.is_err(),
        "read a line with {HIGH_WATER} events queued"
    );
    // The runner catches up: the reader goes on, and no line was lost.
    while rx.try_recv().is_ok() {}
    assert_eq!(r.next_line().await.unwrap().as_deref(), Some("one"));
    assert_eq!(r.next_line().await.unwrap().as_deref(), Some("two"));
}
