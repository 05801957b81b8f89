//! The long markdown answer the stream benchmark sends (benches/stream.rs
//! includes this file too), so the byte test streams what the bench does.

/// Markdown like a long model answer: headed sections of prose, lists and
/// code, `chars` characters long.
pub fn answer(chars: usize) -> String {
    let mut s = String::new();
    let mut n = 1;
    while s.len() < chars {
        s.push_str(&format!("## Section {n} of the long answer\n\n"));
        s.push_str(
            "The **runner** owns the queue and the *processor* batches deltas into upserts; ",
        );
        s.push_str(
            "the console reads the app state and draws it, and nothing in `ui` writes back. ",
        );
        s.push_str(
            "Each paragraph wraps across several lines of a wide pane so wrapping matters.\n\n",
        );
        s.push_str("- first point, with `inline code` and a [link](https://example.com)\n");
        s.push_str(
            "- second point, a little longer so that it wraps in narrow side-by-side panes\n",
        );
        s.push_str("  1. a nested item\n\n");
        s.push_str("```rust\nfn section() -> usize {\n    let v: Vec<u32> = (0..10).collect();\n    v.iter().map(|x| *x as usize).sum()\n}\n```\n\n");
        s.push_str("> A quoted remark that closes the section, then a blank line.\n\n");
        for _ in 0..3 {
            s.push_str(
                "More prose follows here: measured, repeated and plain, as long answers are. ",
            );
        }
        s.push_str("\n\n");
        n += 1;
    }
    s.truncate(chars);
    s
}
