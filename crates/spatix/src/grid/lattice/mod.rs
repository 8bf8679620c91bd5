//! The lattice every grid is built on: square cells over a declared world, cell coordinates by
//! multiplication with the inverse cell size (clamped, so that out-of-world boxes land on the
//! border cells), cell bands that reach to infinity on the world's border, the rounding margin
//! at the world's magnitude, the conservative ray walk, the rings of the nearest search, and
//! the cell size `auto` constructors pick from a sample. A grid stores whatever it likes per
//! cell; this is only the arithmetic.

mod auto;
mod rings;
mod walk;

pub(crate) use auto::{AutoCells, auto_cell, auto_world, bulk_extent, cell_for_count};
#[cfg(test)]
pub(crate) use rings::RINGS_WALKED;
pub(crate) use rings::{Rings, settled};
pub(crate) use walk::RayWalk;

use crate::{Aabb, Error, Point, Scalar};

/// Most cells a grid may have (2^28, 1 GiB of `u32` cell heads).
const MAX_CELLS: f64 = (1u64 << 28) as f64;

/// Cells per side of the grid an `auto` constructor builds for an empty sample.
pub(crate) const DEFAULT_CELLS_PER_SIDE: f64 = 64.0;

/// Square cells of side `cell_size` over `world`, `cols × rows` of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lattice<S> {
    pub(crate) world: Aabb<S>,
    pub(crate) cell_size: S,
    /// `1 / cell_size`: cell coordinates are computed with a multiplication.
    pub(crate) inv_cell: S,
    pub(crate) cols: u32,
    pub(crate) rows: u32,
}

/// The inclusive block of cells a box overlaps (after clamping into the grid).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CellRange {
    pub(crate) x0: u32,
    pub(crate) y0: u32,
    pub(crate) x1: u32,
    pub(crate) y1: u32,
}

impl CellRange {
    #[inline]
    pub(crate) fn contains(&self, x: u32, y: u32) -> bool {
        self.x0 <= x && x <= self.x1 && self.y0 <= y && y <= self.y1
    }

    /// Number of cells in the block.
    #[inline]
    pub(crate) fn area(&self) -> usize {
        (self.x1 - self.x0 + 1) as usize * (self.y1 - self.y0 + 1) as usize
    }

    /// The cells of the block, row by row.
    #[inline]
    pub(crate) fn cells(self) -> impl Iterator<Item = (u32, u32)> {
        (self.y0..=self.y1).flat_map(move |cy| (self.x0..=self.x1).map(move |cx| (cx, cy)))
    }
}

/// Width and height of a box, in `f64` so that they cannot overflow for `f32` boxes.
pub(crate) fn extent_of<S: Scalar>(b: &Aabb<S>) -> (f64, f64) {
    (
        b.max.x.to_f64() - b.min.x.to_f64(),
        b.max.y.to_f64() - b.min.y.to_f64(),
    )
}

/// The largest magnitude of a coordinate of a box.
pub(crate) fn magnitude<S: Scalar>(w: &Aabb<S>) -> S {
    w.min
        .x
        .abs_s()
        .max_s(w.max.x.abs_s())
        .max_s(w.min.y.abs_s())
        .max_s(w.max.y.abs_s())
}

/// The part of `world` within ±MAX/4 on each axis (`world` itself unless it reaches further):
/// cells laid over it have a finite width and height, and the offset of any coordinate inside
/// it from its lower corner is finite too. Elements beyond it are filed clamped into the
/// border cells, as elements beyond any world are.
pub(crate) fn within_quarter<S: Scalar>(world: &Aabb<S>) -> Aabb<S> {
    let quarter = S::MAX * S::from_f64(0.25);
    let cut = |v: S| v.max_s(-quarter).min_s(quarter);
    Aabb {
        min: Point::new(cut(world.min.x), cut(world.min.y)),
        max: Point::new(cut(world.max.x), cut(world.max.y)),
    }
}

/// Columns and rows of a `width` × `height` world in cells of side `cell`, unless that is
/// more than 2^28 cells.
pub(crate) fn dims_for(width: f64, height: f64, cell: f64) -> Option<(u32, u32)> {
    let across = |length: f64| (length / cell).ceil().max(1.0);
    let (cols, rows) = (across(width), across(height));
    (cols * rows <= MAX_CELLS).then_some((cols as u32, rows as u32))
}

impl<S: Scalar> Lattice<S> {
    /// `max(1, ceil(width / cell_size))` columns and as many rows as the height needs.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid world, a cell size that is not finite and
    /// positive (or whose inverse overflows), or more than 2^28 cells.
    pub(crate) fn new(world: Aabb<S>, cell_size: S) -> Result<Self, Error> {
        world.valid_world()?;
        let inv_cell = S::ONE / cell_size;
        if !(cell_size.is_finite() && cell_size > S::ZERO && inv_cell.is_finite()) {
            return Err(Error::InvalidParameter(
                "cell_size must be finite and positive, with a finite inverse",
            ));
        }
        let (width, height) = extent_of(&world);
        let (cols, rows) =
            dims_for(width, height, cell_size.to_f64()).ok_or(Error::InvalidParameter(
                "the grid would have more than 2^28 cells: use a larger cell_size",
            ))?;
        Ok(Self {
            world,
            cell_size,
            inv_cell,
            cols,
            rows,
        })
    }

    /// Checks that the geometry is usable and that `cells` cells are stored for it.
    pub(crate) fn check(&self, cells: usize) -> Result<(), Error> {
        if cells != self.len() {
            return Err(Error::InvariantViolated(format!(
                "{cells} cells for a {} x {} grid",
                self.cols, self.rows
            )));
        }
        if !(self.inv_cell * self.cell_size).is_finite() || self.cols == 0 || self.rows == 0 {
            return Err(Error::InvariantViolated(
                "the grid's cell size or dimensions are unusable".into(),
            ));
        }
        Ok(())
    }

    /// Number of cells.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.cols as usize * self.rows as usize
    }

    /// The column of a coordinate, clamped into the grid (NaN gives column 0).
    #[inline]
    pub(crate) fn col(&self, x: S) -> u32 {
        // Truncation instead of floor: the two differ only below zero, which clamps to 0.
        ((x - self.world.min.x) * self.inv_cell)
            .to_i64()
            .clamp(0, i64::from(self.cols - 1)) as u32
    }

    /// The row of a coordinate, clamped into the grid (NaN gives row 0).
    #[inline]
    pub(crate) fn row(&self, y: S) -> u32 {
        ((y - self.world.min.y) * self.inv_cell)
            .to_i64()
            .clamp(0, i64::from(self.rows - 1)) as u32
    }

    /// The cell of a point.
    #[inline]
    pub(crate) fn cell_of(&self, p: Point<S>) -> (u32, u32) {
        (self.col(p.x), self.row(p.y))
    }

    /// Index of the cell holding point `p` (clamped into the grid).
    #[inline]
    pub(crate) fn index_of(&self, p: Point<S>) -> usize {
        self.index(self.col(p.x), self.row(p.y))
    }

    /// Whether cell `(cx, cy)` holds point `p` (clamped into the grid): the one cell that owns
    /// a reference point.
    #[inline]
    pub(crate) fn owns(&self, p: Point<S>, cx: u32, cy: u32) -> bool {
        self.cell_of(p) == (cx, cy)
    }

    /// The block of cells a box overlaps.
    #[inline]
    pub(crate) fn range(&self, b: &Aabb<S>) -> CellRange {
        CellRange {
            x0: self.col(b.min.x),
            y0: self.row(b.min.y),
            x1: self.col(b.max.x),
            y1: self.row(b.max.y),
        }
    }

    /// Index of a cell in a row-major array of cells.
    #[inline]
    pub(crate) fn index(&self, cx: u32, cy: u32) -> usize {
        cy as usize * self.cols as usize + cx as usize
    }

    /// The boundary `k` cells from `origin` (a column's or a row's), computed the same way
    /// everywhere.
    #[inline]
    fn line(&self, origin: S, k: u32) -> S {
        origin + S::from_f64(f64::from(k)) * self.cell_size
    }

    /// The nominal square of a cell (the last column and row may extend past the world).
    #[inline]
    pub(crate) fn square(&self, cx: u32, cy: u32) -> Aabb<S> {
        let o = self.world.min;
        Aabb {
            min: Point::new(self.line(o.x, cx), self.line(o.y, cy)),
            max: Point::new(self.line(o.x, cx + 1), self.line(o.y, cy + 1)),
        }
    }

    /// The extent of column (or row) `i` of `n` starting at `origin`: the border ones reach to
    /// infinity, as the elements filed in them may lie anywhere beyond the world.
    #[inline]
    pub(crate) fn band(&self, i: u32, n: u32, origin: S) -> (S, S) {
        let lo = if i == 0 {
            -S::INFINITY
        } else {
            self.line(origin, i)
        };
        let hi = if i + 1 == n {
            S::INFINITY
        } else {
            self.line(origin, i + 1)
        };
        (lo, hi)
    }

    /// An absolute margin covering the rounding in cell boundaries (which `col` and `row`
    /// compute by scaling, and `band` by multiplying) at this world's magnitude.
    pub(crate) fn margin(&self) -> S {
        (magnitude(&self.world) + self.cell_size) * S::RELATIVE_SLACK
    }
}
