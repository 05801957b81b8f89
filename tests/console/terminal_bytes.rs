//! What the console writes to the terminal while an answer streams, read
//! back by a terminal emulator (vt100): after every frame the emulator's
//! screen is exactly the frame ratatui drew (text, colours, attributes), so
//! the byte-saving writer (src/app/emit.rs, src/app/screen.rs) is proven to
//! show what a plain repaint would. The stream is the stream benchmark's
//! answer at a fixed frame cadence, so the byte count is deterministic and
//! bounded here too. `HIVE_BYTES_DUMP=path` keeps the bytes for study.

#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)] // tests may panic

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;
use std::time::Duration;

use hive::app::screen::Screen;
use hive::event::Origin;
use hive::provider::Capabilities;
use hive::runner::{PaneEvent, PaneUpdate, TurnState};
use hive::upsert::{TurnEvent, Upsert, UpsertKind, UpsertStatus};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use tui_term::vt100;

use crate::support;
use support::console::Console;

#[path = "../../benches/support/mod.rs"]
mod bench;
use bench::answer;

#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn agents(panes: usize) -> String {
    (0..panes)
        .map(|i| {
            format!("[[agent]]\nid = \"a{i}\"\nname = \"Agent {i}\"\nprovider = \"script\"\n\n")
        })
        .collect()
}

fn upsert(item: &str, status: UpsertStatus, text: &str, origin: Origin) -> Upsert {
    let content = text.into();
    support::console::upsert("t1", item, status, UpsertKind::Message { content, origin })
}

/// A stream drawn frame by frame into the emulator.
struct Run {
    console: Console,
    screen: Screen<Shared>,
    out: Shared,
    parser: vt100::Parser,
    area: Rect,
    /// Bytes written after the first frame.
    bytes: usize,
    /// Everything written, and what ratatui's own backend writes for the
    /// same frames (the plain writer: each frame's changed cells, no
    /// scrolling), with where each frame ends in both.
    ours: Vec<u8>,
    plain: Vec<u8>,
    ends: Vec<(usize, usize)>,
    last: Buffer,
}

impl Run {
    fn new(panes: usize, cols: u16, rows: u16) -> Self {
        let mut console = Console::from_config(&agents(panes), Capabilities::default());
        for pane in 1..panes {
            console.app.apply(PaneUpdate {
                pane,
                event: PaneEvent::Attached {
                    capabilities: Capabilities::default(),
                    terminal: None,
                },
            });
        }
        let out = Shared::default();
        let mut run = Self {
            console,
            screen: Screen::new(CrosstermBackend::new(out.clone())),
            out,
            parser: vt100::Parser::new(rows, cols, 0),
            area: Rect::new(0, 0, cols, rows),
            bytes: 0,
            ours: Vec::new(),
            plain: b"\x1b[2J".to_vec(),
            ends: Vec::new(),
            last: Buffer::empty(Rect::new(0, 0, cols, rows)),
        };
        run.frame();
        run.bytes = 0;
        run
    }

    fn all(&mut self, panes: usize, event: impl Fn() -> PaneEvent) {
        for pane in 0..panes {
            self.console.app.apply(PaneUpdate {
                pane,
                event: event(),
            });
        }
    }

    /// Draws a frame, feeds what was written to the emulator and checks
    /// that it shows the frame.
    fn frame(&mut self) {
        let c = &mut self.console;
        let none: Vec<Option<hive::runner::RunnerHandle>> = Vec::new();
        hive::app::draw(&mut self.screen, self.area, &mut c.app, &mut c.view, &none).unwrap();
        let written = std::mem::take(&mut *self.out.0.borrow_mut());
        self.bytes += written.len();
        if let Ok(path) = std::env::var("HIVE_BYTES_DUMP") {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            f.write_all(&written).unwrap();
        }
        self.parser.process(&written);
        let drawn = self.screen.last_frame();
        if let Some(diff) = differences(self.parser.screen(), drawn) {
            panic!("{diff}\nwritten: {:?}", String::from_utf8_lossy(&written));
        }
        self.ours.extend_from_slice(&written);
        let mut plain = CrosstermBackend::new(&mut self.plain);
        plain.draw(self.last.diff(drawn).into_iter()).unwrap();
        Backend::flush(&mut plain).unwrap();
        self.last = drawn.clone();
        self.ends.push((self.ours.len(), self.plain.len()));
    }
}

/// What happens to the console before a frame of a stream.
enum Change {
    /// The focused pane alone, full width (its transcript scrolls with
    /// margins), or the panes side by side again.
    Zoom(bool),
    /// The terminal's new size.
    Resize(u16, u16),
}

impl Run {
    fn change(&mut self, change: &Change) {
        match *change {
            Change::Zoom(on) => self.console.app.zoom = on,
            Change::Resize(cols, rows) => {
                self.area = Rect::new(0, 0, cols, rows);
                self.parser.screen_mut().set_size(rows, cols);
                // The plain writer repaints a resized screen whole.
                self.plain.extend_from_slice(b"\x1b[2J");
                self.last = Buffer::empty(self.area);
            }
        }
    }
}

/// Streams `chars` of the benchmark's answer into `panes` side by side at
/// `step` chars per 25 ms frame.
fn stream(panes: usize, cols: u16, rows: u16, chars: usize, step: usize) -> Run {
    stream_changing(panes, (cols, rows), chars, step, &[])
}

/// [`stream`], with `changes` made before the frames they name (counted
/// from the first frame of the answer).
fn stream_changing(
    panes: usize,
    (cols, rows): (u16, u16),
    chars: usize,
    step: usize,
    changes: &[(usize, Change)],
) -> Run {
    let text = answer(chars);
    let mut run = Run::new(panes, cols, rows);
    run.all(panes, || {
        PaneEvent::Upsert(upsert("u1", UpsertStatus::Complete, "go", Origin::User))
    });
    run.all(panes, || {
        PaneEvent::Turn(TurnEvent::TurnStarted {
            turn_id: "t1".into(),
            session_id: "s".into(),
            model_id: "m".into(),
            provider_id: "script".into(),
        })
    });
    run.all(panes, || PaneEvent::State(TurnState::Streaming));
    let mut shown = 0;
    let mut frame = 0;
    while shown < text.len() {
        for (_, change) in changes.iter().filter(|(at, _)| *at == frame) {
            run.change(change);
        }
        frame += 1;
        shown = (shown + step).min(text.len());
        while !text.is_char_boundary(shown) {
            shown += 1;
        }
        let part = &text[..shown];
        run.all(panes, || {
            PaneEvent::Live(upsert("a1", UpsertStatus::Update, part, Origin::Agent))
        });
        if std::env::var("NOSPIN").is_err() {
            run.console.app.now += Duration::from_millis(25);
        }
        run.frame();
    }
    run.all(panes, || {
        PaneEvent::Upsert(upsert("a1", UpsertStatus::Complete, &text, Origin::Agent))
    });
    run.all(panes, || support::console::completed("t1"));
    run.all(panes, || PaneEvent::State(TurnState::Idle));
    run.console.app.now += Duration::from_millis(25);
    run.frame();
    let per_char = run.bytes as f64 / (chars * panes) as f64;
    eprintln!(
        "{panes} pane(s) {cols}x{rows}, {} changes: {} bytes, {per_char:.3} per char",
        changes.len(),
        run.bytes
    );
    run
}

fn per_char(run: &Run, chars: usize, panes: usize) -> f64 {
    run.bytes as f64 / (chars * panes) as f64
}

fn vt_colour(c: Color) -> vt100::Color {
    match c {
        Color::Reset => vt100::Color::Default,
        Color::Black => vt100::Color::Idx(0),
        Color::Red => vt100::Color::Idx(1),
        Color::Green => vt100::Color::Idx(2),
        Color::Yellow => vt100::Color::Idx(3),
        Color::Blue => vt100::Color::Idx(4),
        Color::Magenta => vt100::Color::Idx(5),
        Color::Cyan => vt100::Color::Idx(6),
        Color::Gray => vt100::Color::Idx(7),
        Color::DarkGray => vt100::Color::Idx(8),
        Color::LightRed => vt100::Color::Idx(9),
        Color::LightGreen => vt100::Color::Idx(10),
        Color::LightYellow => vt100::Color::Idx(11),
        Color::LightBlue => vt100::Color::Idx(12),
        Color::LightMagenta => vt100::Color::Idx(13),
        Color::LightCyan => vt100::Color::Idx(14),
        Color::White => vt100::Color::Idx(15),
        Color::Indexed(i) => vt100::Color::Idx(i),
        Color::Rgb(r, g, b) => vt100::Color::Rgb(r, g, b),
    }
}

/// How a cell looks: what it shows, in which colours and attributes (a
/// blank's foreground, bold and italic show nothing, so they are left out).
fn look_of_frame(c: &Cell) -> (String, Option<vt100::Color>, vt100::Color, [bool; 5]) {
    let m = c.modifier;
    let blank = c.symbol() == " " && !m.intersects(Modifier::UNDERLINED | Modifier::REVERSED);
    (
        c.symbol().to_owned(),
        (!blank).then(|| vt_colour(c.fg)),
        vt_colour(c.bg),
        [
            !blank && m.contains(Modifier::BOLD),
            !blank && m.contains(Modifier::DIM),
            !blank && m.contains(Modifier::ITALIC),
            m.contains(Modifier::UNDERLINED),
            m.contains(Modifier::REVERSED),
        ],
    )
}

fn look_of_terminal(c: &vt100::Cell) -> (String, Option<vt100::Color>, vt100::Color, [bool; 5]) {
    let symbol = match c.contents() {
        "" => " ".to_owned(),
        s => s.to_owned(),
    };
    let blank = symbol == " " && !c.underline() && !c.inverse();
    (
        symbol,
        (!blank).then(|| c.fgcolor()),
        c.bgcolor(),
        [
            !blank && c.bold(),
            !blank && c.dim(),
            !blank && c.italic(),
            c.underline(),
            c.inverse(),
        ],
    )
}

/// The cells where the emulator does not show the frame, described.
fn differences(term: &vt100::Screen, frame: &Buffer) -> Option<String> {
    let mut out = Vec::new();
    for y in 0..frame.area.height {
        for x in 0..frame.area.width {
            let Some(t) = term.cell(y, x) else {
                out.push(format!("({x},{y}) missing in the emulator"));
                continue;
            };
            if t.is_wide_continuation() {
                continue;
            }
            let (want, got) = (look_of_frame(&frame[(x, y)]), look_of_terminal(t));
            if want != got {
                out.push(format!("({x},{y}) frame {want:?} terminal {got:?}"));
            }
        }
    }
    (!out.is_empty()).then(|| {
        let n = out.len();
        out.truncate(12);
        format!(
            "{n} cells differ:\n{}\nscreen:\n{}",
            out.join("\n"),
            term.contents()
        )
    })
}

fn chars() -> usize {
    std::env::var("HIVE_BYTES_CHARS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

// The bounds hold the writer to what it achieves at this cadence (about
// 40 frames a second, as the stream bench draws): 2.47 and 4.84 bytes per
// char; plain row-by-row writing gave 3.41 and 6.55.

#[test]
fn a_full_width_stream_reaches_the_terminal_as_drawn() {
    let per_char = per_char(&stream(1, 160, 48, chars(), 121), chars(), 1);
    assert!(per_char < 2.6, "{per_char:.3} bytes per char");
}

#[test]
fn side_by_side_streams_reach_the_terminal_as_drawn() {
    let per_char = per_char(&stream(2, 160, 48, chars(), 121), chars(), 2);
    assert!(per_char < 5.0, "{per_char:.3} bytes per char");
}

/// The scroll margins a full-width pane leaves set stay set while two panes
/// stream side by side (the writer's moves keep clear of them), a zoom
/// scrolls with them again, and after a resize the writer starts afresh
/// (margins, saved cursor): the emulator shows every frame as drawn.
#[test]
fn margins_kept_across_layout_switches_and_a_resize() {
    let changes = [
        (0, Change::Zoom(true)),
        (15, Change::Zoom(false)),
        (30, Change::Zoom(true)),
        (45, Change::Resize(120, 40)),
        (60, Change::Zoom(false)),
        (75, Change::Zoom(true)),
    ];
    stream_changing(2, (160, 48), 12_000, 121, &changes);
}

/// tmux (the terminal hive most often runs in) reads the bytes as the
/// emulator above does: at several points of a stream, the screen tmux
/// shows for hive's bytes is the one it shows for ratatui's plain writer.
#[test]
fn tmux_shows_what_the_plain_writer_shows() {
    if !support::tmux::available() {
        return;
    }
    let (cols, rows) = (100, 30);
    let run = stream(1, cols, rows, 8_000, 121);
    let n = run.ends.len();
    for end in [n / 3, 2 * n / 3, n - 1] {
        let (ours, plain) = run.ends[end];
        let shown = |bytes: &[u8]| looks_in_tmux(&tmux_screen(cols, rows, bytes));
        let (a, b) = (shown(&run.ours[..ours]), shown(&run.plain[..plain]));
        assert_eq!(
            a, b,
            "frame {end} of {n}: hive's bytes, then the plain writer's"
        );
    }
}

/// As above, with a full-width pane's margins left set while the panes
/// go side by side and back.
#[test]
fn tmux_shows_what_the_plain_writer_shows_across_layout_switches() {
    if !support::tmux::available() {
        return;
    }
    let (cols, rows) = (100, 30);
    let changes = [
        (0, Change::Zoom(true)),
        (12, Change::Zoom(false)),
        (24, Change::Zoom(true)),
    ];
    let run = stream_changing(2, (cols, rows), 5_000, 121, &changes);
    // The frames just before each switch, and the last one.
    for end in [11, 23, run.ends.len() - 1] {
        let (ours, plain) = run.ends[end];
        let shown = |bytes: &[u8]| looks_in_tmux(&tmux_screen(cols, rows, bytes));
        let (a, b) = (shown(&run.ours[..ours]), shown(&run.plain[..plain]));
        assert_eq!(a, b, "frame {end}: hive's bytes, then the plain writer's");
    }
}

/// A cell as tmux's `capture-pane -e` tells it: the character, the
/// foreground (left out for a space, where it shows nothing), the
/// background and the attributes on, colours as their SGR parameters.
type TmuxCell = (char, Option<String>, String, [bool; 10]);

/// The rows of cells of a `capture-pane -e` screen.
fn looks_in_tmux(capture: &str) -> Vec<Vec<TmuxCell>> {
    let (mut fg, mut bg, mut on) = (String::new(), String::new(), [false; 10]);
    let mut rows = Vec::new();
    for line in capture.lines() {
        let mut row = Vec::new();
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            if c != '\x1b' {
                let ink = (c != ' ' || on[4] || on[7] || on[9]).then(|| fg.clone());
                row.push((c, ink, bg.clone(), on));
                continue;
            }
            let sgr: String = chars.by_ref().skip(1).take_while(|&c| c != 'm').collect();
            let params: Vec<&str> = sgr.split(';').collect();
            let mut i = 0;
            while i < params.len() {
                let p: usize = params[i].parse().unwrap_or(0);
                match p {
                    0 => (fg, bg, on) = (String::new(), String::new(), [false; 10]),
                    1..=9 => on[p] = true,
                    22 => (on[1], on[2]) = (false, false),
                    23..=29 => on[p - 20] = false,
                    38 | 48 => {
                        let n = if params.get(i + 1) == Some(&"2") {
                            5
                        } else {
                            3
                        };
                        let colour = params[i..(i + n).min(params.len())].join(";");
                        *(if p == 38 { &mut fg } else { &mut bg }) = colour;
                        i += n - 1;
                    }
                    39 => fg.clear(),
                    49 => bg.clear(),
                    30..=37 | 90..=97 => fg = p.to_string(),
                    40..=47 | 100..=107 => bg = p.to_string(),
                    _ => {}
                }
                i += 1;
            }
        }
        // Trailing default blanks are left out of a capture.
        while row
            .last()
            .is_some_and(|(c, _, b, o)| *c == ' ' && b.is_empty() && *o == [false; 10])
        {
            row.pop();
        }
        rows.push(row);
    }
    rows
}

/// What tmux shows (with colours and attributes) after a raw terminal
/// reads `bytes`.
fn tmux_screen(cols: u16, rows: u16, bytes: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bytes"), bytes).unwrap();
    let script = "stty raw -echo; cat bytes; touch done; exec sleep 60";
    let tmux = support::tmux::Tmux::start("t", dir, (cols, rows), &[], &["sh", "-c", script]);
    let start = std::time::Instant::now();
    while !tmux.dir().join("done").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "cat did not finish"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // tmux may still be reading what cat wrote: wait for a steady screen.
    let mut screen = String::new();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let now = tmux.cmd(&["capture-pane", "-p", "-e", "-t", "t"]);
        if now == screen {
            return now;
        }
        screen = now;
    }
}
