//! The conservative walk of a ray over the cells it may cross, and ray casts over it.

use core::ops::ControlFlow;

use super::Lattice;
use crate::base::slots::Slots;
use crate::search::ray::RaySearch;
use crate::{Aabb, Item, Point, Ray, Scalar, Workspace};

impl<S: Scalar> Lattice<S> {
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
        for (cx, cy, bound) in self.walk(ray, S::ZERO, S::ZERO) {
            search.report_until(bound, slots, &mut visit)?;
            scan(cx, cy, &mut search);
        }
        search.report_until(S::INFINITY, slots, &mut visit)
    }
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
