//! Tiling 1–9 (or more) panes into a grid that suits the terminal's shape.

use ratatui::layout::Rect;

/// Width/height (in cells) a pane reads best at: terminal cells are about
/// twice as tall as wide, so this is a slightly landscape pane.
const IDEAL_RATIO: f64 = 2.2;
const MIN_PANE_WIDTH: u16 = 24;

/// Columns and rows for `n` panes in `area`.
pub(crate) fn grid_shape(n: usize, area: Rect) -> (usize, usize) {
    if n <= 1 {
        return (1, 1);
    }
    let w = f64::from(area.width.max(1));
    let h = f64::from(area.height.max(1));
    let mut best = (1, n);
    let mut best_score = f64::MAX;
    for cols in 1..=n {
        let rows = n.div_ceil(cols);
        let cw = w / cols as f64;
        let ch = h / rows as f64;
        let mut score = ((cw / ch) / IDEAL_RATIO).ln().abs();
        // Empty cells waste space; narrow panes are unreadable.
        score += 0.3 * (cols * rows - n) as f64;
        if cw < f64::from(MIN_PANE_WIDTH) && cols > 1 {
            score += 10.0;
        }
        if score < best_score - 1e-9 {
            best_score = score;
            best = (cols, rows);
        }
    }
    best
}

/// The rectangles of `n` panes, in reading order. The last row stretches
/// its panes over the full width when it is not full.
pub(crate) fn grid(n: usize, area: Rect) -> Vec<Rect> {
    if n == 0 {
        return Vec::new();
    }
    let (cols, rows) = grid_shape(n, area);
    let mut out = Vec::with_capacity(n);
    for r in 0..rows {
        let y0 = area.y + split(area.height, rows, r);
        let y1 = area.y + split(area.height, rows, r + 1);
        let in_row = if r + 1 == rows {
            n - cols * (rows - 1)
        } else {
            cols
        };
        for c in 0..in_row {
            let x0 = area.x + split(area.width, in_row, c);
            let x1 = area.x + split(area.width, in_row, c + 1);
            out.push(Rect::new(x0, y0, x1 - x0, y1 - y0));
        }
    }
    out
}

/// Start offset of part `i` of `total` cut into `parts` nearly equal parts.
fn split(total: u16, parts: usize, i: usize) -> u16 {
    ((usize::from(total) * i) / parts.max(1)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_terminal() {
        let wide = Rect::new(0, 0, 240, 60);
        assert_eq!(grid_shape(1, wide), (1, 1));
        assert_eq!(grid_shape(2, wide), (2, 1));
        assert_eq!(grid_shape(4, wide), (2, 2));
        let tall = Rect::new(0, 0, 80, 100);
        assert_eq!(grid_shape(2, tall), (1, 2));
    }

    #[test]
    fn panes_tile_without_gaps_or_overlap() {
        for n in 1..=9 {
            for area in [
                Rect::new(0, 0, 200, 50),
                Rect::new(0, 0, 40, 11),
                Rect::new(3, 2, 7, 3),
            ] {
                let rects = grid(n, area);
                assert_eq!(rects.len(), n);
                let cells: usize = rects.iter().map(|r| r.area() as usize).sum();
                assert_eq!(cells, area.area() as usize, "n={n} {area:?}");
                for (i, a) in rects.iter().enumerate() {
                    assert!(area.contains(a.as_position()) || a.area() == 0);
                    for b in &rects[i + 1..] {
                        assert!(!a.intersects(*b), "{a:?} {b:?}");
                    }
                }
            }
        }
    }
}
