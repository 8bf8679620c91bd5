//! The geometry every grid shares: square cells over a declared world, cell coordinates by
//! multiplication with the inverse cell size (clamped into the grid, so out-of-world boxes land
//! on the border cells), the ring walk of nearest-neighbour search and the conservative walk
//! of ray casts. A grid stores whatever it likes per cell; this is only the arithmetic.

use core::ops::ControlFlow;

use crate::handle::Slots;
use crate::ray::RaySearch;
use crate::{Aabb, Error, Item, Point, Ray, Scalar};

/// Most cells a grid may have (2^28, 1 GiB of `u32` cell heads).
const MAX_CELLS: f64 = (1u64 << 28) as f64;

/// Cells per side of the grid an `auto` constructor builds for an empty sample.
const DEFAULT_CELLS_PER_SIDE: f64 = 64.0;

/// The inclusive block of cells a box overlaps (after clamping into the grid).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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

/// A grid of `cols × rows` square cells of side `cell` whose lower-left corner is the world's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lattice<S> {
    pub(crate) world: Aabb<S>,
    pub(crate) cell: S,
    /// `1 / cell`: cell coordinates are computed with a multiplication.
    pub(crate) inv_cell: S,
    pub(crate) cols: u32,
    pub(crate) rows: u32,
}

impl<S: Scalar> Lattice<S> {
    /// `max(1, ceil(width / cell))` columns and as many rows as the height needs.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] for an invalid world, a cell that is not finite and
    /// positive (or whose inverse overflows), or more than 2^28 cells.
    pub(crate) fn new(world: Aabb<S>, cell: S) -> Result<Self, Error> {
        if !world.is_valid() {
            return Err(Error::InvalidParameter(
                "world must be a valid box (finite, min <= max)",
            ));
        }
        let inv_cell = S::ONE / cell;
        if !(cell.is_finite() && cell > S::ZERO && inv_cell.is_finite()) {
            return Err(Error::InvalidParameter(
                "cell_size must be finite and positive, with a finite inverse",
            ));
        }
        let (width, height) = extent_of(&world);
        let (cols, rows) = dims_for(width, height, cell.to_f64()).ok_or(
            Error::InvalidParameter("the grid would have more than 2^28 cells: use a larger cell"),
        )?;
        Ok(Self {
            world,
            cell,
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
        if !(self.inv_cell * self.cell).is_finite() || self.cols == 0 || self.rows == 0 {
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

    /// Index of the cell holding point `p` (clamped into the grid).
    #[inline]
    pub(crate) fn index_of(&self, p: Point<S>) -> usize {
        self.index(self.col(p.x), self.row(p.y))
    }

    /// Index of a cell in a row-major array of the cells.
    #[inline]
    pub(crate) fn index(&self, cx: u32, cy: u32) -> usize {
        cy as usize * self.cols as usize + cx as usize
    }

    /// Whether cell `(cx, cy)` holds point `p` (clamped into the grid): the one cell that owns
    /// a reference point.
    #[inline]
    pub(crate) fn owns(&self, p: Point<S>, cx: u32, cy: u32) -> bool {
        self.col(p.x) == cx && self.row(p.y) == cy
    }

    /// Visits the cells in rings outward from the cell of `point` (clamped into the world):
    /// `scan(cx, cy)` searches one cell and returns the squared distance a candidate must
    /// still beat (the k-th best so far, infinite while fewer than k are known). Stops as
    /// soon as that bound is no more than a lower bound on the distance to every cell not
    /// yet scanned. A grid considers each element (or group of elements) only in the cell
    /// owning the (clamped) nearest point of its box, so the bound holds for it.
    pub(crate) fn rings(&self, point: Point<S>, mut scan: impl FnMut(u32, u32) -> S) {
        // Distances are bounded from the point clamped into the world: clamping is
        // 1-Lipschitz, so the bounds hold for points outside the world too.
        let p = self.world.closest_point(point);
        let (pcx, pcy) = (self.col(p.x), self.row(p.y));
        let frac = |t: S, c: u32| (t.to_f64() - f64::from(c)).clamp(0.0, 1.0);
        let fx = frac((p.x - self.world.min.x) * self.inv_cell, pcx);
        let fy = frac((p.y - self.world.min.y) * self.inv_cell, pcy);
        // Nearest edge of the point's cell, in cells, less a margin for rounding in the cell
        // coordinates.
        let slack = 1e-4 + 1e-6 * f64::from(self.cols.max(self.rows));
        let edge = fx.min(1.0 - fx).min(fy).min(1.0 - fy) - slack;
        let cell = self.cell.to_f64();
        let (pcx, pcy) = (i64::from(pcx), i64::from(pcy));
        let (cols, rows) = (i64::from(self.cols), i64::from(self.rows));
        let last = pcx.max(cols - 1 - pcx).max(pcy).max(rows - 1 - pcy);
        let mut scan = |cx: i64, cy: i64| scan(cx as u32, cy as u32);
        let mut bound = scan(pcx, pcy);
        for r in 1..=last {
            // Everything in ring r or beyond is at least this far away (less a relative
            // margin for rounding in the distances).
            let reach = (((r - 1) as f64 + edge) * (1.0 - 1e-5)).max(0.0) * cell;
            if bound < S::INFINITY && bound.to_f64() <= reach * reach {
                break;
            }
            let (x0, x1) = ((pcx - r).max(0), (pcx + r).min(cols - 1));
            let (y0, y1) = ((pcy - r + 1).max(0), (pcy + r - 1).min(rows - 1));
            if pcy - r >= 0 {
                for cx in x0..=x1 {
                    bound = scan(cx, pcy - r);
                }
            }
            if pcy + r < rows {
                for cx in x0..=x1 {
                    bound = scan(cx, pcy + r);
                }
            }
            if pcx - r >= 0 {
                for cy in y0..=y1 {
                    bound = scan(pcx - r, cy);
                }
            }
            if pcx + r < cols {
                for cy in y0..=y1 {
                    bound = scan(pcx + r, cy);
                }
            }
        }
    }

    /// A walk along the ray, column by column in the ray's x direction and, within a column,
    /// row by row in its y direction, over every cell the ray may cross (each column's span
    /// of the ray and each span's rows are widened for rounding, so no crossed cell is
    /// skipped). Before `scan(cx, cy, search)` records the hits a cell owns (those whose
    /// clamped entry point it holds), every recorded hit that nothing left to walk could
    /// precede is reported.
    pub(crate) fn walk_ray<T, F>(
        &self,
        ray: &Ray<S>,
        search: &mut RaySearch<'_, S>,
        slots: &Slots<S, T>,
        visit: &mut F,
        mut scan: impl FnMut(u32, u32, &mut RaySearch<'_, S>),
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let (o, d) = (ray.origin, ray.direction);
        let m = self.ray_margin();
        let cols = i64::from(self.cols);
        let step = if d.x < S::ZERO { -1 } else { 1 };
        let span = |c: i64| {
            (0..cols).contains(&c).then(|| {
                let (x0, x1) = self.band(c as u32, self.cols, self.world.min.x);
                let band = Aabb {
                    min: Point::new(x0 - m, -S::INFINITY),
                    max: Point::new(x1 + m, S::INFINITY),
                };
                band.ray_span_conservative(ray)
            })?
        };
        let first = i64::from(self.col(if step < 0 { o.x + m } else { o.x - m }));
        let (mut c, mut current) = (first, span(first));
        if current.is_none() {
            c += step;
            current = span(c);
        }
        let y_at = |t: S| if d.y == S::ZERO { o.y } else { o.y + t * d.y };
        while let Some((ta, tb)) = current {
            let next = span(c + step);
            let next_start = next.map_or(S::INFINITY, |(t, _)| t);
            let (ya, yb) = (y_at(ta), y_at(tb));
            let widen = |y: S| {
                m + if y.is_finite() {
                    y.abs_s() * S::RELATIVE_SLACK
                } else {
                    S::ZERO
                }
            };
            let (lo, hi) = (ya.min_s(yb), ya.max_s(yb));
            let (r0, r1) = (self.row(lo - widen(lo)), self.row(hi + widen(hi)));
            let (x0, x1) = self.band(c as u32, self.cols, self.world.min.x);
            for i in 0..=(r1 - r0) {
                let r = if d.y < S::ZERO { r1 - i } else { r0 + i };
                // Everything not yet walked lies in the rest of this column, or beyond it.
                let (y0, y1) = self.band(r, self.rows, self.world.min.y);
                let rest = if d.y < S::ZERO {
                    Aabb {
                        min: Point::new(x0 - m, -S::INFINITY),
                        max: Point::new(x1 + m, y1 + m),
                    }
                } else {
                    Aabb {
                        min: Point::new(x0 - m, y0 - m),
                        max: Point::new(x1 + m, S::INFINITY),
                    }
                };
                let bound = rest
                    .ray_entry_conservative(ray)
                    .unwrap_or(S::INFINITY)
                    .min_s(next_start);
                search.report_until(bound, slots, visit)?;
                scan(c as u32, r, search);
            }
            current = next;
            c += step;
        }
        search.report_until(S::INFINITY, slots, visit)
    }

    /// The extent of column (or row) `i` of `n` starting at `origin`: the border ones reach to
    /// infinity, as the elements filed in them may lie anywhere beyond the world.
    fn band(&self, i: u32, n: u32, origin: S) -> (S, S) {
        let at = |k: u32| origin + S::from_f64(f64::from(k)) * self.cell;
        let lo = if i == 0 { -S::INFINITY } else { at(i) };
        let hi = if i + 1 == n { S::INFINITY } else { at(i + 1) };
        (lo, hi)
    }

    /// An absolute margin covering the rounding in cell boundaries (which `col` and `row`
    /// compute by scaling, and `band` by multiplying) at this world's magnitude.
    fn ray_margin(&self) -> S {
        let w = self.world;
        let magnitude = w
            .min
            .x
            .abs_s()
            .max_s(w.max.x.abs_s())
            .max_s(w.min.y.abs_s())
            .max_s(w.max.y.abs_s());
        (magnitude + self.cell) * S::RELATIVE_SLACK
    }
}

/// A cell side for a grid over `world` that will hold boxes like those of `sample`, a sample
/// of `total` elements (or of as many as it holds, if more): `factor` times the sample's mean
/// extent (mean of width and height), raised if needed so that cells hold at least `per_cell`
/// of the elements on average and so that the grid has at most 2^28 cells. Invalid boxes in
/// the sample are ignored; an empty sample (or boxes and a world of no area) gives 64 cells
/// along the world's longer side. Returns the side, the number of valid boxes sampled and the
/// number of elements counted (`total`, or that if more).
///
/// # Errors
/// [`Error::InvalidParameter`] if `world` is not a valid box.
pub(crate) fn auto_cell<S: Scalar>(
    world: &Aabb<S>,
    sample: &[Aabb<S>],
    total: usize,
    factor: f64,
    per_cell: f64,
) -> Result<(S, usize, usize), Error> {
    if !world.is_valid() {
        return Err(Error::InvalidParameter(
            "world must be a valid box (finite, min <= max)",
        ));
    }
    let (width, height) = extent_of(world);
    let (mut sampled, mut extent) = (0usize, 0.0f64);
    for b in sample.iter().filter(|b| b.is_valid()) {
        let s = b.size();
        extent += (s.x.to_f64() + s.y.to_f64()) * 0.5;
        sampled += 1;
    }
    let n = total.max(sampled);
    let side = width.max(height);
    let mut cell = if sampled == 0 {
        side / DEFAULT_CELLS_PER_SIDE
    } else {
        let by_extent = factor * extent / sampled as f64;
        let by_count = (width * height * per_cell / n as f64).sqrt();
        by_extent.max(by_count)
    };
    if !(cell > 0.0 && cell.is_finite()) {
        // A world or boxes of no area.
        cell = if side > 0.0 {
            side / DEFAULT_CELLS_PER_SIDE
        } else {
            1.0
        };
    }
    while dims_for(width, height, cell).is_none() && cell.is_finite() {
        cell *= 2.0;
    }
    Ok((S::from_f64(cell), sampled, n))
}

/// Width and height of a box, in `f64` so that they cannot overflow for `f32` boxes.
fn extent_of<S: Scalar>(b: &Aabb<S>) -> (f64, f64) {
    (
        b.max.x.to_f64() - b.min.x.to_f64(),
        b.max.y.to_f64() - b.min.y.to_f64(),
    )
}

/// Columns and rows of a `width` × `height` world in cells of side `cell`, unless that is
/// more than 2^28 cells.
fn dims_for(width: f64, height: f64, cell: f64) -> Option<(u32, u32)> {
    let across = |length: f64| (length / cell).ceil().max(1.0);
    let (cols, rows) = (across(width), across(height));
    (cols * rows <= MAX_CELLS).then_some((cols as u32, rows as u32))
}
