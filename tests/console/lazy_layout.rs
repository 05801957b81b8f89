//! Lazy layout of long answers (issue 15 item 4): a megabyte answer is laid
//! out only where the view is, its other pieces keep estimated heights, and
//! the view must not jump as those estimates become exact.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests and benches may panic

use crate::support;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use hive::app::frame;
use hive::app::state::App;
use hive::event::Origin;
use hive::provider::Capabilities;
use hive::runner::PaneEvent;
use hive::ui::ViewState;
use hive::upsert::{UpsertKind, UpsertStatus};
use support::console::{Console, complete, pane_event, upsert};

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
    let Console { mut app, view, .. } = Console::one(Capabilities::default());
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

/// Draws until a long code block's highlighting has caught up with the
/// view (it moves on a step a frame: `ViewState::pending`).
fn draw_settled(app: &mut App, view: &mut ViewState) -> Buffer {
    let mut buf = draw(app, view);
    for _ in 0..1000 {
        if !view.pending() {
            return buf;
        }
        buf = draw(app, view);
    }
    panic!("still pending after 1000 frames");
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
    // Small updates (each piece rendered as it finishes) and large ones (a
    // long finished stretch indexed lazily, as for a pane drawn rarely).
    for every in [50, 3000] {
        streamed_equals_restored(every);
    }
}

fn streamed_equals_restored(every: usize) {
    let text = long_answer(400); // about 80 KB: past the size laid out whole
    let (mut live, mut live_view) = console(&[(Origin::User, "stream it".into())]);
    let mut buffer = hive::text::TextBuffer::new();
    let pieces: Vec<&str> = text.split_inclusive(' ').collect();
    for (n, piece) in pieces.iter().enumerate() {
        buffer.push_str(piece);
        if n % every == 0 || n + 1 == pieces.len() {
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
        assert_eq!(
            rows(&live, &a),
            rows(&restored, &b),
            "after {keys:?}, every {every}"
        );
    }
    // Paging down from the top shows the same rows all the way.
    for _ in 0..40 {
        page(&mut live, KeyCode::PageDown);
        page(&mut restored, KeyCode::PageDown);
        let a = draw(&mut live, &mut live_view);
        let b = draw(&mut restored, &mut restored_view);
        assert_eq!(rows(&live, &a), rows(&restored, &b), "every {every}");
    }
}

/// One fenced Rust block of about `bytes`, every line numbered, with block
/// comments and a raw string that run across many lines (so a range's
/// highlighting depends on the parser's state carried from the ranges above).
fn huge_code(bytes: usize) -> String {
    let mut s = String::from("Here it is:\n\n```rust\n");
    let mut n = 0;
    while s.len() < bytes {
        match n % 500 {
            100 => s.push_str(&format!("/* comment {n} opens\n")),
            400 => s.push_str(&format!("   comment {n} closes */ let c = {n};\n")),
            250 => s.push_str(&format!("let raw = r#\"string {n}\n")),
            330 => s.push_str(&format!("string {n} ends\"#; // done\n")),
            _ => s.push_str(&format!("fn line_{n}() -> usize {{ {n} }} // numbered\n")),
        }
        n += 1;
    }
    s.push_str("```\n\nThat was all.\n");
    s
}

/// The rows `text` lays out to as one agent message, all of it rendered at
/// once: the whole layout the lazy one must equal.
fn whole_layout(app: &App, text: &str) -> Vec<ratatui::text::Line<'static>> {
    let t = &app.theme;
    let width = app.geometry.pane(0).transcript.width;
    let base = ratatui::style::Style::new().fg(t.agent);
    let mut lines = hive::ui::markdown::render(text, t, base);
    hive::ui::cells::agent_gutter(&mut lines[..1], t, false);
    for l in &mut lines[1..] {
        l.prefix.insert(0, ratatui::text::Span::raw("  "));
        l.cont.insert(0, ratatui::text::Span::raw("  "));
    }
    lines
        .iter()
        .flat_map(|l| hive::ui::wrap::wrap(l, width))
        .collect()
}

/// The transcript's rows as drawn, styles included.
fn styled_rows(app: &App, buf: &Buffer) -> Vec<Vec<ratatui::buffer::Cell>> {
    let r = app.geometry.pane(0).transcript;
    (r.top()..r.bottom())
        .map(|y| (r.left()..r.right()).map(|x| buf[(x, y)].clone()).collect())
        .collect()
}

/// Asserts the view shows `reference` rows from the one its top row shows
/// (found by its text: every code line is numbered), cell for cell.
fn assert_shows_whole_layout(app: &App, buf: &Buffer, reference: &[ratatui::text::Line<'static>]) {
    let shown = styled_rows(app, buf);
    let texts = rows(app, buf);
    let r = app.geometry.pane(0).transcript;
    let top = texts[0].trim_end();
    // Where the view's rows start in it: the first place all of them match
    // (a wrapped row's text alone can repeat).
    let text: Vec<String> = reference
        .iter()
        .map(|l| l.to_string().trim_end().to_owned())
        .collect();
    let at = (0..text.len())
        .find(|&at| {
            texts
                .iter()
                .zip(&text[at..])
                .all(|(shown, want)| shown.trim_end() == want)
        })
        .unwrap_or_else(|| panic!("{top:?} is not in the whole layout"));
    let area = Rect::new(0, 0, r.width, r.height);
    let mut expect = Buffer::empty(area);
    for (y, line) in reference[at..]
        .iter()
        .take(usize::from(r.height))
        .enumerate()
    {
        if line.style.bg.is_some() {
            expect.set_style(Rect::new(0, y as u16, r.width, 1), line.style);
        }
        hive::ui::put::line(&mut expect, 0, y as u16, line, r.width);
    }
    let expect: Vec<Vec<ratatui::buffer::Cell>> = (0..r.height)
        .map(|y| (0..r.width).map(|x| expect[(x, y)].clone()).collect())
        .collect();
    // Only the answer's rows: the view may end below it.
    let n = reference.len().saturating_sub(at).min(shown.len());
    for y in 0..n {
        assert!(
            shown[y] == expect[y],
            "row {y} of the view differs from the whole layout: {:?}",
            texts[y]
        );
    }
}

#[test]
fn a_huge_restored_code_block_draws_what_its_whole_layout_draws() {
    let text = huge_code(200_000);
    let (mut app, mut view) = console(&[(Origin::Agent, text.clone())]);
    // The bottom, as a restart shows it: only the block's last ranges.
    let bottom = draw_settled(&mut app, &mut view);
    let reference = whole_layout(&app, &text);
    assert!(
        rows(&app, &bottom)
            .iter()
            .any(|r| r.contains("That was all."))
    );
    let (shown, all) = laid_out(&view, 0);
    assert!(all > 20, "{all} chunks");
    assert!(shown <= 3, "{shown} of {all} chunks laid out at the bottom");
    // The block's last code rows, highlighted as the whole block is.
    let buf = {
        app.panes[0].scroll = 3;
        draw_settled(&mut app, &mut view)
    };
    assert!(
        rows(&app, &buf)[0].contains("fn line_"),
        "{:?}",
        rows(&app, &buf)[0]
    );
    assert_shows_whole_layout(&app, &buf, &reference);

    // The middle, jumped to straight from the bottom (ranges above it not
    // laid out), and a few rows on either side.
    for scroll in [
        reference.len() / 2,
        reference.len() / 2 + 7,
        reference.len() / 3,
    ] {
        app.panes[0].scroll = scroll;
        let buf = draw_settled(&mut app, &mut view);
        assert_shows_whole_layout(&app, &buf, &reference);
    }
    let mid = {
        app.panes[0].scroll = reference.len() / 2;
        draw_settled(&mut app, &mut view)
    };
    let mid_rows = rows(&app, &mid);
    insta::assert_snapshot!("lazy_middle_of_a_huge_code_block", mid_rows.join("\n"));

    // The top.
    press(&mut app, KeyCode::Home);
    let top = draw_settled(&mut app, &mut view);
    assert!(rows(&app, &top)[0].starts_with("● Here it is:"));
    assert_shows_whole_layout(&app, &top, &reference);
    insta::assert_snapshot!("lazy_top_of_a_huge_code_block", rows(&app, &top).join("\n"));
    // Scrolled all the way, every height is exact: the scroll range is
    // the one a short answer, laid out whole, has for its rows.
    assert_eq!(app.panes[0].scroll, app.geometry.pane(0).max_scroll);
    let small_text = huge_code(2_000);
    let (mut small, mut small_view) = console(&[(Origin::Agent, small_text.clone())]);
    press(&mut small, KeyCode::Home);
    draw(&mut small, &mut small_view);
    let small_rows = whole_layout(&small, &small_text).len();
    assert_eq!(
        app.geometry.pane(0).max_scroll as isize - reference.len() as isize,
        small.geometry.pane(0).max_scroll as isize - small_rows as isize,
    );
    press(&mut app, KeyCode::End);
    let end = draw_settled(&mut app, &mut view);
    insta::assert_snapshot!(
        "lazy_bottom_of_a_huge_code_block",
        rows(&app, &end).join("\n")
    );
    assert_eq!(rows(&app, &end), rows(&app, &bottom));
}

#[test]
fn paging_through_a_huge_code_block_moves_by_whole_pages() {
    let text = huge_code(150_000);
    let (mut app, mut view) = console(&[(Origin::Agent, text)]);
    let buf = draw(&mut app, &mut view);
    let mut before = rows(&app, &buf);
    for _ in 0..60 {
        page(&mut app, KeyCode::PageUp);
        let buf = draw(&mut app, &mut view);
        let after = rows(&app, &buf);
        let d = -(app.geometry.pane(0).view_rows as isize - 2);
        assert_moved(&before, &after, d);
        before = after;
    }
    press(&mut app, KeyCode::Home);
    let buf = draw(&mut app, &mut view);
    let mut before = rows(&app, &buf);
    for _ in 0..60 {
        let max = app.geometry.pane(0).max_scroll;
        app.panes[0].scroll_by(-20, max);
        let buf = draw(&mut app, &mut view);
        let after = rows(&app, &buf);
        assert_moved(&before, &after, 20);
        before = after;
    }
}

#[test]
fn the_bottom_of_a_code_block_far_past_its_start_is_drawn_plain_then_highlighted() {
    // More code above the bottom than the parser runs over in one frame.
    let text = huge_code(120_000);
    let (mut app, mut view) = console(&[(Origin::Agent, text.clone())]);
    let first = draw(&mut app, &mut view);
    let reference = whole_layout(&app, &text);
    assert!(view.pending(), "the bottom's highlighting is on its way");
    // Same rows, text and height, one colour for the code for now.
    let plain = rows(&app, &first);
    assert!(plain.iter().any(|r| r.contains("That was all.")));
    let r = app.geometry.pane(0).transcript;
    let code_fg = app.theme.code;
    let y = plain.iter().position(|l| l.contains("fn line_")).unwrap();
    assert_eq!(first[(r.x + 4, r.y + y as u16)].fg, code_fg);
    let (_, pieces) = laid_out(&view, 0);
    let mut frames = 1;
    while view.pending() {
        let buf = draw(&mut app, &mut view);
        frames += 1;
        assert_eq!(rows(&app, &buf), plain, "nothing moves as colours arrive");
        assert!(frames <= pieces + 2, "the parser moves on every frame");
    }
    app.panes[0].scroll = 3;
    let buf = draw(&mut app, &mut view);
    assert_shows_whole_layout(&app, &buf, &reference);
    assert!(frames > 2, "{frames} frames");
}

/// The rows of `lines` wrapped to the pane's width.
fn wrapped(app: &App, lines: &[hive::ui::wrap::Logical]) -> Vec<ratatui::text::Line<'static>> {
    let width = app.geometry.pane(0).transcript.width;
    lines
        .iter()
        .flat_map(|l| hive::ui::wrap::wrap(l, width))
        .collect()
}

/// Draws the bottom, the middle and the top of entry `i`, long plain text,
/// asserting each against `reference` (its whole layout) and that only
/// pieces near the view are laid out.
fn assert_lazy_and_whole(
    app: &mut App,
    view: &mut ViewState,
    i: usize,
    reference: &[ratatui::text::Line<'static>],
) {
    let buf = draw(app, view);
    let (shown, all) = laid_out(view, i);
    assert!(all > 20, "{all} pieces");
    assert!(shown <= 3, "{shown} of {all} pieces laid out");
    for scroll in [5, reference.len() / 2, reference.len() / 3 + 11] {
        app.panes[0].scroll = scroll;
        let buf = draw(app, view);
        assert_shows_whole_layout(app, &buf, reference);
    }
    press(app, KeyCode::Home);
    let top = draw(app, view);
    assert_shows_whole_layout(app, &top, reference);
    press(app, KeyCode::End);
    let end = draw(app, view);
    assert_eq!(rows(app, &end), rows(app, &buf));
    let (shown, _) = laid_out(view, i);
    assert!(shown <= 3, "{shown} pieces still laid out after End");
}

#[test]
fn a_huge_user_message_is_laid_out_only_where_the_view_is() {
    let text: String = (0..12_000)
        .map(|n| {
            format!(
                "pasted line {n} of the log, long enough to wrap {}\n",
                "x".repeat(n % 120)
            )
        })
        .collect();
    let (mut app, mut view) = console(&[(Origin::User, text.clone())]);
    draw(&mut app, &mut view);
    let reference = wrapped(&app, &hive::ui::cells::user_message(&text, &app.theme));
    assert_lazy_and_whole(&mut app, &mut view, 0, &reference);
}

#[test]
fn a_huge_expanded_thought_is_laid_out_only_where_the_view_is() {
    let text: String = (0..12_000)
        .map(|n| format!("thought {n}: {}\n", "maybe ".repeat(n % 30)))
        .collect();
    let Console {
        mut app, mut view, ..
    } = Console::one(Capabilities::default());
    let kind = UpsertKind::Thinking {
        content: text.as_str().into(),
        provider_id: "t".into(),
    };
    app.apply(pane_event(complete("turn-1", "think", kind)));
    app.panes[0].expanded = true;
    draw(&mut app, &mut view);
    // Its whole layout: what `cells::thinking` makes of it expanded.
    let hive::app::transcript::EntryKind::Item(u) =
        &app.panes[0].conversation.transcript.entries[0].kind
    else {
        panic!("not an item");
    };
    let ctx = hive::ui::cells::CellCtx {
        theme: &app.theme,
        expanded: true,
        spin: 0,
        expand_key: "",
    };
    let reference = wrapped(&app, &hive::ui::cells::thinking(u, &text, &ctx));
    assert_lazy_and_whole(&mut app, &mut view, 0, &reference);
}

/// While a long answer streams, the pieces it finished scroll away above the
/// view: their rows are dropped as the view moves on, so what a streaming
/// pane holds stays about a screen however long the answer grows.
#[test]
fn a_streaming_answer_keeps_only_the_rows_near_the_view() {
    let text = long_answer(1500); // about 300 KB
    let (mut app, mut view) = console(&[(Origin::User, "stream it".into())]);
    let mut buffer = hive::text::TextBuffer::new();
    let pieces: Vec<&str> = text.split_inclusive(' ').collect();
    let mut most = 0;
    for (n, piece) in pieces.iter().enumerate() {
        buffer.push_str(piece);
        // Now and then a long stretch at once (about 35 KB), as a pane
        // drawn rarely sees.
        if n % 40 == 0 && (n / 40) % 200 < 60 {
            let kind = UpsertKind::Message {
                content: buffer.snapshot(),
                origin: Origin::Agent,
            };
            let update = upsert("turn-1", "answer", UpsertStatus::Update, kind);
            app.apply(pane_event(PaneEvent::Upsert(update)));
            draw(&mut app, &mut view);
            let rows = view.pane(0).unwrap().held().find(|(i, _)| *i == 1);
            most = most.max(rows.map_or(0, |(_, c)| c.rows_held()));
        }
    }
    let (_, all) = laid_out(&view, 1);
    assert!(all > 100, "{all} chunks");
    // The view is 30 rows: a screen above and below it, and the chunks
    // (about 4 KB each) that reach into those.
    assert!(most <= 400, "{most} rows held at once while streaming");
}
