//! The console's transcript stays within its byte bound whatever a server
//! (or a hostile remote) streams into it.

use super::*;
use crate::protocol::text::SharedText;
use crate::protocol::upsert::UpsertStatus;

fn answer(item: &str, bytes: usize) -> Upsert {
    Upsert::test_message(
        item,
        UpsertStatus::Complete,
        SharedText::from("x".repeat(bytes).as_str()),
    )
}

/// Issue 53 item 13: a remote flooding 20 answers of 30 MB took a console
/// to 920 MB; it keeps about `KEEP_BYTES` of text, the newest answers whole.
#[test]
fn twenty_answers_of_30_mb_are_kept_within_the_byte_bound() {
    let mut t = Transcript::default();
    t.notice(DiagnosticLevel::Info, "restored");
    for n in 0..20 {
        t.upsert(answer(&format!("a{n}"), 30 << 20));
        assert!(
            t.text_bytes() <= KEEP_BYTES + KEEP_BYTES / 4 + (30 << 20),
            "{n}: {} bytes kept",
            t.text_bytes()
        );
    }
    assert!(
        t.text_bytes() <= KEEP_BYTES + (30 << 20),
        "{}",
        t.text_bytes()
    );
    let kept: Vec<&str> = t
        .entries
        .iter()
        .filter_map(|e| match &e.kind {
            EntryKind::Item(u) => Some(u.item_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(kept.last(), Some(&"a19"));
    assert!(kept.len() < 20, "{kept:?}");
    let EntryKind::Notice { text, .. } = &t.entries[0].kind else {
        panic!("no notice at the top: {:?}", t.entries[0]);
    };
    assert!(
        text.starts_with(&format!("{} earlier items", 20 - kept.len())),
        "{text}"
    );
    // The index follows the entries that moved: an upsert of a kept item
    // replaces it in place.
    let before = t.len();
    t.upsert(answer("a19", 10));
    assert_eq!(t.len(), before);
    assert_eq!(t.slot("a19"), before - 1);
}

#[test]
fn one_answer_over_the_bound_alone_stays() {
    let mut t = Transcript::default();
    t.upsert(answer("big", KEEP_BYTES * 2));
    assert_eq!(t.len(), 1);
    assert_eq!(t.text_bytes(), KEEP_BYTES * 2);
}

#[test]
fn a_growing_item_is_counted_once() {
    let mut t = Transcript::default();
    for n in 1..=100 {
        t.upsert(answer("grows", n * 1000));
    }
    assert_eq!(t.text_bytes(), 100_000);
    t.reset();
    assert_eq!(t.text_bytes(), 0);
}
