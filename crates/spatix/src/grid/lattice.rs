//! The lattice every grid is built on: square cells over a declared world, cell coordinates by
//! multiplication with the inverse cell size (clamped, so that out-of-world boxes land on the
//! border cells), cell bands that reach to infinity on the world's border, the rounding margin
//! at the world's magnitude, the conservative ray walk, the rings of the nearest search, and
//! the cell size `auto` constructors pick from a sample. A grid stores whatever it likes per
//! cell; this is only the arithmetic.

use core::ops::ControlFlow;

use crate::ray::RaySearch;
use crate::slots::Slots;
use crate::{Aabb, Error, Item, Point, Ray, Scalar, Workspace};

/// Most cells a grid may have (2^28, 1 GiB of `u32` cell heads).
const MAX_CELLS: f64 = (1u64 << 28) as f64;

/// Cells per side of the grid an `auto` constructor builds for an empty sample.
const DEFAULT_CELLS_PER_SIDE: f64 = 64.0;

#[cfg(test)]
std::thread_local! {
    /// Rings of cells the nearest searches of this thread walked, for tests of their work.
    pub(crate) static RINGS_WALKED: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

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
        if !world.is_valid() {
            return Err(Error::InvalidParameter(
                "world must be a valid box (finite, min <= max)",
            ));
        }
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

    /// The cells a ray may cross, in an order that lets hits be reported in ascending `t`
    /// (see [`RayWalk`]), for elements that stick out of their cell by up to `below` on the
    /// low sides and `above` on the high sides.
    pub(crate) fn walk<'a>(&'a self, ray: &'a Ray<S>, below: S, above: S) -> RayWalk<'a, S> {
        RayWalk::new(self, ray, below, above)
    }

    /// Casts a ray over the cells ([`RayWalk`], not widened: for grids whose elements lie
    /// inside their cells' bands): before `scan(cx, cy, search)` records the hits a cell owns,
    /// every recorded hit that nothing left to walk could precede is reported.
    pub(crate) fn cast<T, F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        slots: &Slots<S, T>,
        mut visit: F,
        mut scan: impl FnMut(u32, u32, &mut RaySearch<'_, S>),
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let mut search = workspace.begin_ray();
        if ray.is_valid() && slots.len() > 0 {
            for (cx, cy, bound) in self.walk(ray, S::ZERO, S::ZERO) {
                search.report_until(bound, slots, &mut visit)?;
                scan(cx, cy, &mut search);
            }
        }
        search.report_until(S::INFINITY, slots, &mut visit)
    }

    /// The start of a ring search around `point` (see [`Rings`]).
    pub(crate) fn rings(&self, point: Point<S>) -> Rings {
        // Distances are bounded from the point clamped into the world: clamping is
        // 1-Lipschitz, so the bounds hold for points outside the world too.
        let p = self.world.closest_point(point);
        let (pcx, pcy) = self.cell_of(p);
        let frac = |t: S, c: u32| (t.to_f64() - f64::from(c)).clamp(0.0, 1.0);
        let fx = frac((p.x - self.world.min.x) * self.inv_cell, pcx);
        let fy = frac((p.y - self.world.min.y) * self.inv_cell, pcy);
        // Nearest edge of the point's cell, in cells, less a margin for rounding in the cell
        // coordinates.
        let slack = 1e-4 + 1e-6 * f64::from(self.cols.max(self.rows));
        let edge = fx.min(1.0 - fx).min(fy).min(1.0 - fy) - slack;
        let (pcx, pcy) = (i64::from(pcx), i64::from(pcy));
        let (cols, rows) = (i64::from(self.cols), i64::from(self.rows));
        Rings {
            pcx,
            pcy,
            edge,
            cell: self.cell_size.to_f64(),
            last: pcx.max(cols - 1 - pcx).max(pcy).max(rows - 1 - pcy),
            cols,
            rows,
        }
    }
}

/// The square rings of cells around a point's cell: ring 0 is the cell itself, ring `r` the
/// cells at Chebyshev distance `r` from it. Everything filed in ring `r` or beyond is at least
/// [`Rings::reach`] away, so a search visits rings outward until that exceeds its k-th best.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rings {
    pcx: i64,
    pcy: i64,
    /// Distance from the point to its cell's nearest side, in cells (less a rounding margin).
    edge: f64,
    cell: f64,
    /// The outermost ring that holds any cell.
    pub(crate) last: i64,
    cols: i64,
    rows: i64,
}

impl Rings {
    /// A lower bound on the distance from the point to anything filed in ring `r` or beyond,
    /// for elements that stick out of their cell by up to `grow` (less a relative margin for
    /// rounding in the distances).
    #[inline]
    pub(crate) fn reach(&self, r: i64, grow: f64) -> f64 {
        if r == 0 {
            return 0.0;
        }
        ((((r - 1) as f64 + self.edge) * (1.0 - 1e-5)).max(0.0) * self.cell - grow * (1.0 + 1e-5))
            .max(0.0)
    }

    /// Whether a search whose k-th best distance is `bound` (infinite while fewer
    /// than k are known) can stop before ring `r`: nothing there or beyond can beat it.
    #[inline]
    pub(crate) fn settled<S: Scalar>(&self, r: i64, grow: f64, bound: S) -> bool {
        settled(bound, self.reach(r, grow))
    }

    /// Calls `visit(cx, cy)` for every cell of ring `r` inside the grid.
    #[inline]
    pub(crate) fn cells(&self, r: i64, mut visit: impl FnMut(u32, u32)) {
        #[cfg(test)]
        RINGS_WALKED.with(|n| n.set(n.get() + 1));
        let (pcx, pcy) = (self.pcx, self.pcy);
        if r == 0 {
            visit(pcx as u32, pcy as u32);
            return;
        }
        let (x0, x1) = ((pcx - r).max(0), (pcx + r).min(self.cols - 1));
        let (y0, y1) = ((pcy - r + 1).max(0), (pcy + r - 1).min(self.rows - 1));
        if pcy - r >= 0 {
            for cx in x0..=x1 {
                visit(cx as u32, (pcy - r) as u32);
            }
        }
        if pcy + r < self.rows {
            for cx in x0..=x1 {
                visit(cx as u32, (pcy + r) as u32);
            }
        }
        if pcx - r >= 0 {
            for cy in y0..=y1 {
                visit((pcx - r) as u32, cy as u32);
            }
        }
        if pcx + r < self.cols {
            for cy in y0..=y1 {
                visit((pcx + r) as u32, cy as u32);
            }
        }
    }
}

/// Whether nothing at least `reach` away can beat a k-th best distance key `bound` (infinite
/// while fewer than k are known; see [`Aabb::distance_key`]).
#[inline]
pub(crate) fn settled<S: Scalar>(bound: S, reach: f64) -> bool {
    bound < S::INFINITY && bound.key_distance_f64() <= reach
}

/// A walk along a ray over every cell it may cross, column by column in the ray's x direction
/// and, within a column, row by row in its y direction. Each column's span of the ray and each
/// span's rows are widened for rounding, so no crossed cell is skipped; columns and rows are
/// also widened by how far elements stick out of their cells (`below`, `above`).
///
/// Yields `(cx, cy, bound)`: `bound` is a lower bound on the entry parameter of the ray into
/// any element filed in this cell or in any cell the walk yields later, so every hit recorded
/// so far at or below it can be reported.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RayWalk<'a, S> {
    lattice: &'a Lattice<S>,
    ray: &'a Ray<S>,
    below: S,
    above: S,
    /// The rounding margin of the lattice.
    m: S,
    step: i64,
    /// The current column, and the ray's span through it (`None` once the walk is over).
    c: i64,
    current: Option<(S, S)>,
    /// Where the ray may enter the next column (infinity when it does not).
    next_start: S,
    next: Option<(S, S)>,
    /// The current column's rows still to yield: `r0..=r1`, `i` of them yielded so far.
    r0: u32,
    r1: u32,
    i: u32,
    /// Whether the rows of the current column have been set up.
    rows_ready: bool,
}

impl<'a, S: Scalar> RayWalk<'a, S> {
    fn new(lattice: &'a Lattice<S>, ray: &'a Ray<S>, below: S, above: S) -> Self {
        let m = lattice.margin();
        let o = ray.origin;
        let step = if ray.direction.x < S::ZERO { -1 } else { 1 };
        let mut walk = Self {
            lattice,
            ray,
            below,
            above,
            m,
            step,
            c: 0,
            current: None,
            next_start: S::INFINITY,
            next: None,
            r0: 0,
            r1: 0,
            i: 0,
            rows_ready: false,
        };
        if !ray.is_valid() {
            return walk;
        }
        // The first column whose (widened) band may hold the origin.
        let first = i64::from(lattice.col(if step < 0 {
            o.x + below + m
        } else {
            o.x - above - m
        }));
        walk.c = first;
        walk.current = walk.span(first);
        if walk.current.is_none() {
            walk.c += step;
            walk.current = walk.span(walk.c);
        }
        walk
    }

    /// The ray's span through column `c`'s widened band, if it crosses it.
    fn span(&self, c: i64) -> Option<(S, S)> {
        let l = self.lattice;
        if !(0..i64::from(l.cols)).contains(&c) {
            return None;
        }
        let (x0, x1) = l.band(c as u32, l.cols, l.world.min.x);
        let band = Aabb {
            min: Point::new(x0 - self.below - self.m, -S::INFINITY),
            max: Point::new(x1 + self.above + self.m, S::INFINITY),
        };
        band.ray_span_conservative(self.ray)
    }

    /// Sets up the rows of the current column: those whose widened band meets the ray's
    /// span through the column.
    fn start_column(&mut self, (ta, tb): (S, S)) {
        let (o, d) = (self.ray.origin, self.ray.direction);
        self.next = self.span(self.c + self.step);
        self.next_start = self.next.map_or(S::INFINITY, |(t, _)| t);
        let y_at = |t: S| if d.y == S::ZERO { o.y } else { o.y + t * d.y };
        let (ya, yb) = (y_at(ta), y_at(tb));
        let m = self.m;
        let widen = |y: S| {
            m + if y.is_finite() {
                y.abs_s() * S::RELATIVE_SLACK
            } else {
                S::ZERO
            }
        };
        let (lo, hi) = (ya.min_s(yb), ya.max_s(yb));
        self.r0 = self.lattice.row(lo - widen(lo) - self.above);
        self.r1 = self.lattice.row(hi + widen(hi) + self.below);
        self.i = 0;
        self.rows_ready = true;
    }
}

impl<S: Scalar> Iterator for RayWalk<'_, S> {
    type Item = (u32, u32, S);

    fn next(&mut self) -> Option<(u32, u32, S)> {
        loop {
            let span = self.current?;
            if !self.rows_ready {
                self.start_column(span);
            }
            if self.i > self.r1 - self.r0 {
                self.current = self.next;
                self.c += self.step;
                self.rows_ready = false;
                continue;
            }
            let l = self.lattice;
            let d = self.ray.direction;
            let r = if d.y < S::ZERO {
                self.r1 - self.i
            } else {
                self.r0 + self.i
            };
            self.i += 1;
            // Everything not yet walked lies in the rest of this column, or beyond it.
            let cx = self.c as u32;
            let (x0, x1) = l.band(cx, l.cols, l.world.min.x);
            let (y0, y1) = l.band(r, l.rows, l.world.min.y);
            let (left, right) = (x0 - self.below - self.m, x1 + self.above + self.m);
            let rest = if d.y < S::ZERO {
                Aabb {
                    min: Point::new(left, -S::INFINITY),
                    max: Point::new(right, y1 + self.above + self.m),
                }
            } else {
                Aabb {
                    min: Point::new(left, y0 - self.below - self.m),
                    max: Point::new(right, S::INFINITY),
                }
            };
            let bound = rest
                .ray_entry_conservative(self.ray)
                .unwrap_or(S::INFINITY)
                .min_s(self.next_start);
            return Some((cx, r, bound));
        }
    }
}

/// The world an `auto` constructor lays its cells over: `world` cut down to where the bulk of
/// `sample` lies ([`Aabb::bulk_of`]) grown by its own width and height on every side, so that
/// a few stray elements (or a declared world far larger than the data) do not make the cells
/// huge or countless: elements beyond it are filed in the border cells. Kept within ±MAX/4
/// so that its width and height are finite. `world` itself when it is invalid (the caller
/// reports that), or when the sample is empty or lies wholly outside it (only clamped).
pub(crate) fn auto_world<S: Scalar>(world: &Aabb<S>, sample: &[Aabb<S>]) -> Aabb<S> {
    if !world.is_valid() {
        return *world;
    }
    let quarter = S::MAX.to_f64() * 0.25;
    let cut = |lo: S, hi: S, bulk: Option<(S, S)>| {
        let (mut lo, mut hi) = (lo.to_f64(), hi.to_f64());
        if let Some((a, b)) = bulk {
            let (a, b) = (a.to_f64(), b.to_f64());
            let (a, b) = (a - (b - a), b + (b - a));
            if a <= hi && lo <= b {
                (lo, hi) = (lo.max(a), hi.min(b));
            }
        }
        let (lo, hi) = (lo.clamp(-quarter, quarter), hi.clamp(-quarter, quarter));
        (S::from_f64(lo), S::from_f64(hi))
    };
    let bulk = Aabb::bulk_of(sample);
    let (x0, x1) = cut(world.min.x, world.max.x, bulk.map(|b| (b.min.x, b.max.x)));
    let (y0, y1) = cut(world.min.y, world.max.y, bulk.map(|b| (b.min.y, b.max.y)));
    Aabb {
        min: Point::new(x0, y0),
        max: Point::new(x1, y1),
    }
}

/// The side of the square cells that `count` elements spread evenly over a `width` × `height`
/// world fill with `per_cell` elements each: the floor an `auto` constructor puts under its cell
/// side, so that a few tiny elements do not ask for far more cells than elements (0, no floor,
/// for no elements).
pub(crate) fn cell_for_count(width: f64, height: f64, count: usize, per_cell: f64) -> f64 {
    if count == 0 {
        0.0
    } else {
        (width * height * per_cell / count as f64).sqrt()
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
    // The mean extent, each capped at the 99.5% quantile: a few huge boxes do not set it.
    let mut extents: Vec<f64> = sample
        .iter()
        .filter(|b| b.is_valid())
        .map(|b| {
            let (w, h) = extent_of(b);
            (w + h) * 0.5
        })
        .collect();
    let sampled = extents.len();
    let extent = if sampled == 0 {
        0.0
    } else {
        let cap = *extents
            .select_nth_unstable_by(sampled - 1 - sampled / 200, f64::total_cmp)
            .1;
        extents.iter().map(|e| e.min(cap)).sum::<f64>()
    };
    let n = total.max(sampled);
    let side = width.max(height);
    let mut cell = if sampled == 0 {
        side / DEFAULT_CELLS_PER_SIDE
    } else {
        let by_extent = factor * extent / sampled as f64;
        by_extent.max(cell_for_count(width, height, n, per_cell))
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
    // Boxes near `S::MAX` wide make a cell past what `S` holds: one that big already puts
    // the whole world in one cell.
    let cell = cell.min(S::MAX.to_f64() * 0.25);
    Ok((S::from_f64(cell), sampled, n))
}
