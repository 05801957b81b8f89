//! Lazy layout of long answers (issue 15 item 4): a megabyte answer is laid
//! out only where the view is, its other pieces keep estimated heights, and
//! the view must not jump as those estimates become exact.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

mod support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use hive::app::frame;
use hive::app::state::App;
use hive::event::Origin;
use hive::provider::Capabilities;
use hive::ui::ViewState;
use hive::upsert::UpsertKind;
use support::console::{Console, complete, pane_event};

const AREA: Rect = Rect::new(0, 0, 100, 30);

/// Markdown of `parts` numbered sections: a heading, a paragraph that wraps,
/// a highlighted code block and, every fifth part, a table.
fn long_answer(parts: usize) -> String {
    let mut s = String::new();
    for i in 0..parts {
        s.push_str(&format!("### Part {i}\n\nParagraph {i}: "));
        s.push_str(&"words that wrap across the width of the pane, ".repeat(1 + i % 4));
        s.push_str(&format!(
            "\n\n```rust\nfn part_{i}() -> usize {{\n    {i}\n}}\n```\n\n"
        ));
        if i % 5 == 0 {
            s.push_str(&format!(
                "| part | value |\n|---|---|\n| {i} | {} |\n\n",
                i * 7
            ));
        }
    }
    s
}

/// A console holding `items` (origin, text), complete.
fn console(items: &[(Origin, String)]) -> (App, ViewState) {
    let Console { mut app, view } = Console::one(Capabilities::default());
    for (n, (origin, text)) in items.iter().enumerate() {
        let content = text.as_str().into();
        let kind = UpsertKind::Message {
            content,
            origin: *origin,
        };
        app.apply(pane_event(complete("turn-1", &format!("i{n}"), kind)));
    }
    (app, view)
}

/// Two long answers, each after a question, and a last question.
fn two_answers() -> (App, ViewState) {
    let big = long_answer(3000);
    console(&[
        (Origin::User, "first".into()),
        (Origin::Agent, big.clone()),
        (Origin::User, "second".into()),
        (Origin::Agent, big),
        (Origin::User, "third".into()),
    ])
}

fn draw(app: &mut App, view: &mut ViewState) -> Buffer {
    let mut buf = Buffer::empty(AREA);
    frame(app, view, AREA, &mut buf);
    buf
}

/// The transcript's rows as text.
fn rows(app: &App, buf: &Buffer) -> Vec<String> {
    let r = app.geometry.pane(0).transcript;
    (r.top()..r.bottom())
        .map(|y| {
            (r.left()..r.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
        })
        .collect()
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::CONTROL));
}

fn page(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

/// (chunks laid out, chunks) of entry `i`.
fn laid_out(view: &ViewState, i: usize) -> (usize, usize) {
    view.pane(0)
        .unwrap()
        .held()
        .find(|(n, _)| *n == i)
        .map_or((0, 0), |(_, c)| c.chunks_laid_out())
}

#[test]
fn a_huge_answer_is_laid_out_only_where_the_view_is() {
    let big = long_answer(6000); // about 1.2 MB
    assert!(big.len() > 1_000_000);
    let (mut app, mut view) = console(&[
        (Origin::User, "write it all".into()),
        (Origin::Agent, big),
        (Origin::User, "and a short one".into()),
        (Origin::Agent, "Short.".into()),
    ]);
    let buf = draw(&mut app, &mut view);
    assert!(rows(&app, &buf).iter().any(|r| r.contains("Short.")));
    let (shown, all) = laid_out(&view, 1);
    assert!(all > 100, "{all} chunks");
    assert!(shown <= 2, "{shown} of {all} chunks laid out at the bottom");

    // Scrolled to the top and back: the top is dropped again.
    press(&mut app, KeyCode::Home);
    let top = draw(&mut app, &mut view);
    assert!(rows(&app, &top).iter().any(|r| r.contains("Part 0")));
    let (shown, _) = laid_out(&view, 1);
    assert!(shown <= 3, "{shown} chunks laid out at the top");
    press(&mut app, KeyCode::End);
    let back = draw(&mut app, &mut view);
    assert_eq!(rows(&app, &back), rows(&app, &buf));
    let held: Vec<usize> = view.pane(0).unwrap().held().map(|(i, _)| i).collect();
    assert!(
        !held.contains(&0),
        "the first message is far above: {held:?}"
    );
    let (shown, _) = laid_out(&view, 1);
    assert!(shown <= 2, "{shown} chunks still held after End");
}

#[test]
fn the_top_of_a_huge_restored_answer_shows_its_first_lines() {
    let big = long_answer(6000);
    let (mut app, mut view) = console(&[(Origin::Agent, big)]);
    draw(&mut app, &mut view);
    press(&mut app, KeyCode::Home);
    let buf = draw(&mut app, &mut view);
    let top = rows(&app, &buf);
    insta::assert_snapshot!("lazy_top_of_a_huge_answer", top.join("\n"));

    // The same first screen as an answer holding only its first parts,
    // which is laid out whole.
    let (mut small, mut small_view) = console(&[(Origin::Agent, long_answer(40))]);
    draw(&mut small, &mut small_view);
    press(&mut small, KeyCode::Home);
    let whole = draw(&mut small, &mut small_view);
    assert_eq!(top, rows(&small, &whole));
    assert_eq!(app.panes[0].scroll, app.geometry.pane(0).max_scroll);
}

/// Moving the view by `d` rows moves what it shows by exactly `d` rows, in
/// parts of the answer laid out for the first time.
fn assert_moved(before: &[String], after: &[String], d: isize) {
    let h = before.len() as isize;
    assert!(d.abs() < h, "nothing left to compare");
    for y in 0..h {
        let from = y + d;
        if (0..h).contains(&from) {
            assert_eq!(
                after[y as usize], before[from as usize],
                "row {y} after moving {d} rows"
            );
        }
    }
}

#[test]
fn the_view_stays_put_as_estimates_become_exact() {
    let (mut app, mut view) = two_answers();
    draw(&mut app, &mut view);
    // Down from the top, a few rows and then pages at a time.
    press(&mut app, KeyCode::Home);
    let buf = draw(&mut app, &mut view);
    let mut before = rows(&app, &buf);
    for step in 0..60 {
        let d: isize = if step < 20 { 3 } else { 20 };
        let max = app.geometry.pane(0).max_scroll;
        app.panes[0].scroll_by(-d, max);
        let buf = draw(&mut app, &mut view);
        let after = rows(&app, &buf);
        assert_moved(&before, &after, d);
        before = after;
    }
    // Up from the bottom of the second answer.
    press(&mut app, KeyCode::End);
    let buf = draw(&mut app, &mut view);
    let mut before = rows(&app, &buf);
    for _ in 0..30 {
        page(&mut app, KeyCode::PageUp);
        let buf = draw(&mut app, &mut view);
        let after = rows(&app, &buf);
        let d = -(app.geometry.pane(0).view_rows as isize - 2);
        assert_moved(&before, &after, d);
        before = after;
    }
    // Whatever was laid out on the way, only about a screen is held.
    let held: usize = [1, 3].iter().map(|&i| laid_out(&view, i).0).sum();
    assert!(held <= 4, "{held} chunks held");
}

#[test]
fn a_search_jump_puts_the_answer_at_the_top_of_the_view() {
    let (mut app, mut view) = two_answers();
    draw(&mut app, &mut view);
    app.panes[0].reveal = Some(1);
    let buf = draw(&mut app, &mut view);
    let shown = rows(&app, &buf);
    assert!(shown[0].starts_with("● Part 0"), "{:?}", &shown[..3]);
    // The next frame keeps it there.
    let buf = draw(&mut app, &mut view);
    let again = rows(&app, &buf);
    assert_eq!(again, shown);
}

#[test]
fn a_streamed_long_answer_looks_like_the_same_answer_restored() {
    let text = long_answer(400); // about 80 KB: past the size laid out whole
    let (mut live, mut live_view) = console(&[(Origin::User, "stream it".into())]);
    let mut buffer = hive::text::TextBuffer::new();
    let pieces: Vec<&str> = text.split_inclusive(' ').collect();
    for (n, piece) in pieces.iter().enumerate() {
        buffer.push_str(piece);
        if n % 50 == 0 || n + 1 == pieces.len() {
            let kind = UpsertKind::Message {
                content: buffer.snapshot(),
                origin: Origin::Agent,
            };
            live.apply(pane_event(complete("turn-1", "answer", kind)));
            draw(&mut live, &mut live_view);
        }
    }
    let (mut restored, mut restored_view) =
        console(&[(Origin::User, "stream it".into()), (Origin::Agent, text)]);
    for keys in [KeyCode::End, KeyCode::Home] {
        press(&mut live, keys);
        press(&mut restored, keys);
        let a = draw(&mut live, &mut live_view);
        let b = draw(&mut restored, &mut restored_view);
        assert_eq!(rows(&live, &a), rows(&restored, &b), "after {keys:?}");
    }
    // Paging down from the top shows the same rows all the way.
    for _ in 0..40 {
        page(&mut live, KeyCode::PageDown);
        page(&mut restored, KeyCode::PageDown);
        let a = draw(&mut live, &mut live_view);
        let b = draw(&mut restored, &mut restored_view);
        assert_eq!(rows(&live, &a), rows(&restored, &b));
    }
}
