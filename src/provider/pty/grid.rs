//! The emulator's size, set in one place: a shrink hands what it freed
//! back to the system (issue 53 item 6: a pane made 3000 × 3000, then
//! 80 × 24 again, left the server 550 MB it no longer used).
//!
//! vt100 drops the rows a shrink cuts, but each is a small allocation
//! (under glibc's mmap threshold) in the middle of the heap, below the rows
//! that scrolled into the history since: glibc keeps such pages unless told
//! (`malloc_trim`, src/heap.rs).

use super::pump::lock;
use crate::provider::TerminalScreen;

/// Sets the emulator to `rows` × `cols` (already [`super::fit`]); true when
/// that changed it. A smaller grid gives the freed memory back.
pub(super) fn set_size(screen: &TerminalScreen, rows: u16, cols: u16) -> bool {
    let (old_rows, old_cols) = {
        let mut parser = lock(screen);
        let old = parser.screen().size();
        if old == (rows, cols) {
            return false;
        }
        parser.screen_mut().set_size(rows, cols);
        old
    };
    if u32::from(rows) * u32::from(cols) < u32::from(old_rows) * u32::from(old_cols) {
        crate::heap::give_back_freed();
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use tui_term::vt100;

    use super::super::{MAX_COLS, MAX_ROWS, SCROLLBACK_LINES};
    use super::*;

    /// This process's resident bytes, as the kernel counts them.
    fn resident() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("statm");
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .expect("resident pages");
        // SAFETY: sysconf(3) reads a constant.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        pages * page
    }

    const CHILD: &str = "HIVE_TEST_GRID_CHILD";
    const NAME: &str = "provider::pty::grid::tests::a_shrink_gives_the_freed_grid_back";

    /// Issue 53 item 6: a pane at the largest size, its screen written in
    /// full and 200 lines scrolled into its history, then shrunk to
    /// 80 × 24: the rows the shrink cut (476 rows of 1000 cells, on the
    /// screen and on the alternate screen vt100 keeps beside it: 30 MB) go
    /// back to the system, measured as the process's resident memory.
    /// Without the give-back only those at the top of the heap went (the
    /// rows written last, about 6 MB): the rest sit below the history's
    /// rows. Run alone in a process of its own, so that no other test's
    /// memory counts.
    #[test]
    fn a_shrink_gives_the_freed_grid_back() {
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().expect("the test binary");
            let out = std::process::Command::new(exe)
                .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .expect("run the test alone");
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.status.success(), "{said}");
            assert!(said.contains("1 passed"), "the test did not run: {said}");
            return;
        }
        let screen = TerminalScreen(Arc::new(Mutex::new(vt100::Parser::new(
            24,
            80,
            SCROLLBACK_LINES,
        ))));
        assert!(set_size(&screen, MAX_ROWS, MAX_COLS));
        let line = format!("{}\r\n", "y".repeat(usize::from(MAX_COLS) - 1));
        for _ in 0..usize::from(MAX_ROWS) + 200 {
            lock(&screen).process(line.as_bytes());
        }
        let big = resident();
        assert!(set_size(&screen, 24, 80));
        assert!(!set_size(&screen, 24, 80), "the same size is no change");
        let after = resident();
        let cut = 2 * usize::from(MAX_ROWS - 24) * usize::from(MAX_COLS) * 32;
        let freed = big.saturating_sub(after);
        println!(
            "resident {} MB at {MAX_COLS} x {MAX_ROWS}, {} MB after the shrink: {} MB of {} MB cut given back",
            big >> 20,
            after >> 20,
            freed >> 20,
            cut >> 20
        );
        assert!(
            freed >= cut * 4 / 5,
            "{freed} bytes given back of the {cut} the shrink cut"
        );
        assert_eq!(lock(&screen).screen().size(), (24, 80));
    }
}
