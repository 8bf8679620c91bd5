//! The pair pass's memory of the loose cells behind it.
//!
//! A regular loose cell pairs with its regular neighbours behind it in row-major order (west,
//! and the three below). Their elements that can meet it lie in a band along their side
//! facing it: a regular cell's region reaches at most `pad` past its square, so an element
//! of the neighbour that meets it reaches within `pad` of the shared side. While pairing each
//! cell the pass saves its elements in its east band and in its north band, so that the cell
//! east of it and the three above it read those instead of walking its whole list. What does
//! not fit is marked to be walked.

use crate::{Aabb, Scalar};

/// Elements of one loose cell copied at once. A loose cell holding more is paired by walking
/// its list; a partner cell holding more is filtered in several rounds.
pub(super) const CAP: usize = 128;

/// An element copied out of its list node.
#[derive(Clone, Copy, Default)]
pub(super) struct Entry<S> {
    pub(super) aabb: Aabb<S>,
    pub(super) slot: u32,
}

/// Entries of the north bands of one row kept at once.
const ROW_ENTRIES: usize = 1024;

/// Cells of a row whose north bands are kept; those further east are walked.
const ROW_CELLS: usize = 512;

/// `Span::len` of a cell whose band is not kept: its list must be walked.
const WALK: u32 = u32::MAX;

/// What a cell finds of a neighbour behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Band {
    /// Nothing to pair with: the neighbour is empty or irregular (irregular cells are paired
    /// through the tight grid), or off the grid.
    Nothing,
    /// Entries `start..start + len` of the east band (`row == None`) or of the previous
    /// row's north bands.
    Saved {
        row: Option<usize>,
        start: u32,
        len: u32,
    },
    /// The band was not kept: walk the neighbour's list.
    Walk,
}

/// Where a cell's north band lies in its row's buffer.
#[derive(Clone, Copy, Default)]
struct Span {
    start: u32,
    len: u32,
}

/// The north bands of the cells of one row.
struct RowBands<S> {
    entries: [Entry<S>; ROW_ENTRIES],
    len: usize,
    cells: [Span; ROW_CELLS],
    /// Whether these are the bands of the row just below the current one.
    valid: bool,
}

/// The saved bands: the previous cell's east band, and the north bands of the previous row
/// and of the current one.
pub(super) struct Bands<S> {
    east: [Entry<S>; CAP],
    east_len: u32,
    rows: [RowBands<S>; 2],
    /// Which of `rows` is being filled.
    current: usize,
}

impl<S: Scalar> Bands<S> {
    pub(super) fn new() -> Self {
        let row = || RowBands {
            entries: [Entry::default(); ROW_ENTRIES],
            len: 0,
            cells: [Span::default(); ROW_CELLS],
            valid: false,
        };
        Self {
            east: [Entry::default(); CAP],
            east_len: 0,
            rows: [row(), row()],
            current: 0,
        }
    }

    /// Starts a row; `follows` says whether the previous row started was the one below it.
    pub(super) fn start_row(&mut self, follows: bool) {
        self.current = 1 - self.current;
        self.rows[1 - self.current].valid = follows;
        let row = &mut self.rows[self.current];
        row.len = 0;
        row.valid = true;
        self.east_len = 0;
    }

    /// The band of the west neighbour of column `cx`, facing it.
    #[inline]
    pub(super) fn west(&self, cx: u32) -> Band {
        match self.east_len {
            _ if cx == 0 => Band::Nothing,
            0 => Band::Nothing,
            WALK => Band::Walk,
            len => Band::Saved {
                row: None,
                start: 0,
                len,
            },
        }
    }

    /// The north band of column `x` of the row below.
    #[inline]
    pub(super) fn below(&self, x: u32) -> Band {
        let row = &self.rows[1 - self.current];
        if !row.valid || x as usize >= ROW_CELLS {
            return Band::Walk;
        }
        match row.cells[x as usize] {
            Span { len: 0, .. } => Band::Nothing,
            Span { len: WALK, .. } => Band::Walk,
            Span { start, len } => Band::Saved {
                row: Some(1 - self.current),
                start,
                len,
            },
        }
    }

    /// Entry `i` of a saved band.
    #[inline]
    pub(super) fn entry(&self, row: Option<usize>, i: u32) -> Entry<S> {
        match row {
            None => self.east[i as usize],
            Some(r) => self.rows[r].entries[i as usize],
        }
    }

    /// Records that cell `cx` of the current row leaves nothing to pair with.
    #[inline]
    pub(super) fn save_nothing(&mut self, cx: u32) {
        self.east_len = 0;
        self.set_north(cx, Span { start: 0, len: 0 });
    }

    /// Records that cell `cx` must be walked by the cells pairing with it.
    #[inline]
    pub(super) fn save_walk(&mut self, cx: u32) {
        self.east_len = WALK;
        self.set_north(
            cx,
            Span {
                start: 0,
                len: WALK,
            },
        );
    }

    /// Saves the bands of cell `cx` of the current row, a regular cell with square `square`
    /// holding `own`: the elements within `pad` of its east side, and of its north side.
    #[inline]
    pub(super) fn save(&mut self, cx: u32, own: &[Entry<S>], square: &Aabb<S>, pad: S) {
        let (east_from, north_from) = (square.max.x - pad, square.max.y - pad);
        let mut east = 0;
        for e in own {
            self.east[east] = *e;
            east += usize::from(e.aabb.max.x >= east_from);
        }
        self.east_len = east as u32;
        if cx as usize >= ROW_CELLS {
            return;
        }
        let row = &mut self.rows[self.current];
        let start = row.len;
        if start + own.len() > ROW_ENTRIES {
            row.cells[cx as usize] = Span {
                start: 0,
                len: WALK,
            };
            return;
        }
        let mut end = start;
        for e in own {
            row.entries[end] = *e;
            end += usize::from(e.aabb.max.y >= north_from);
        }
        row.len = end;
        row.cells[cx as usize] = Span {
            start: start as u32,
            len: (end - start) as u32,
        };
    }

    fn set_north(&mut self, cx: u32, span: Span) {
        if let Some(cell) = self.rows[self.current].cells.get_mut(cx as usize) {
            *cell = span;
        }
    }
}
