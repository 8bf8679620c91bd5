//! Area queries, k-nearest search and ray casts.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::handle::NIL;
use crate::{Aabb, Item, Neighbor, Point, Ray, Scalar, Workspace};

impl<S: Scalar, T> UniformGrid<S, T> {
    /// Walks the cells under `area`. An element is filed in several cells, so it is reported
    /// only from the cell holding the lower-left corner of (element ∩ area): the first cell of
    /// its range, pushed up to the first cell of the query's range.
    pub(super) fn query_area<F>(&self, area: &Aabb<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() {
            return ControlFlow::Continue(());
        }
        let q = self.range(area);
        for cy in q.y0..=q.y1 {
            for cx in q.x0..=q.x1 {
                let mut at = self.cells[self.index(cx, cy)];
                while at != NIL {
                    let link = self.pool.link(at);
                    at = link.next;
                    let b = self.slots.aabb(link.item);
                    if b.intersects(area)
                        && self.col(b.min.x).max(q.x0) == cx
                        && self.row(b.min.y).max(q.y0) == cy
                    {
                        visit(self.slots.item(link.item))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Ring search outward from the point's (clamped) cell. An element is considered only in
    /// the cell of the nearest point of its box to the query point (clamped into the grid, so
    /// always a cell it is filed in); the search stops when the k-th best distance is no more
    /// than a lower bound on the distance to anything in the rings not yet searched.
    pub(super) fn nearest_rings<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        {
            let mut search = workspace.begin();
            if k > 0 && point.is_finite() && self.slots.len() > 0 {
                // Distances are bounded from the point clamped into the world: clamping is
                // 1-Lipschitz, so the bounds hold for points outside the world too.
                let p = self.world.closest_point(point);
                let (pcx, pcy) = (self.col(p.x), self.row(p.y));
                let frac = |t: S, c: u32| (t.to_f64() - f64::from(c)).clamp(0.0, 1.0);
                let fx = frac((p.x - self.world.min.x) * self.inv_cell, pcx);
                let fy = frac((p.y - self.world.min.y) * self.inv_cell, pcy);
                // Nearest edge of the point's cell, in cells, less a margin for rounding in
                // the cell coordinates.
                let slack = 1e-4 + 1e-6 * f64::from(self.cols.max(self.rows));
                let edge = fx.min(1.0 - fx).min(fy).min(1.0 - fy) - slack;
                let cell = self.cell_size.to_f64();
                let (pcx, pcy) = (i64::from(pcx), i64::from(pcy));
                let (cols, rows) = (i64::from(self.cols), i64::from(self.rows));
                let last = pcx.max(cols - 1 - pcx).max(pcy).max(rows - 1 - pcy);
                let mut scan = |cx: i64, cy: i64| {
                    let (cx, cy) = (cx as u32, cy as u32);
                    for slot in self.pool.items(self.cells[self.index(cx, cy)]) {
                        let b = self.slots.aabb(slot);
                        let d = b.distance_2_to_point(point);
                        if d <= search.bound(k) {
                            let q = b.closest_point(point);
                            if self.col(q.x) == cx && self.row(q.y) == cy {
                                search.offer(k, self.slots.handle(slot), d);
                            }
                        }
                    }
                    search.bound(k)
                };
                let mut bound = scan(pcx, pcy);
                for r in 1..=last {
                    // Everything in ring r or beyond is at least this far away (less a
                    // relative margin for rounding in the distances).
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
        }
        workspace.finish()
    }

    /// A walk along the ray, column by column in the ray's x direction and, within a column,
    /// row by row in its y direction, over every cell the ray may cross (each column's span of
    /// the ray and each span's rows are widened for rounding, so no crossed cell is skipped).
    /// An element is recorded only by the cell owning the (clamped) point where the ray enters
    /// it; a recorded hit is reported once nothing left to walk could hold an earlier one.
    pub(super) fn raycast_impl<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let mut search = workspace.begin_ray();
        if !ray.is_valid() || self.slots.len() == 0 {
            return ControlFlow::Continue(());
        }
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
            let cx = c as u32;
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
                search.report_until(bound, &self.slots, &mut visit)?;
                for slot in self.pool.items(self.cells[self.index(cx, r)]) {
                    let b = self.slots.aabb(slot);
                    if let Some(t) = b.entry_unchecked(ray) {
                        let q = self.world.closest_point(b.entry_point(ray, t));
                        if self.col(q.x) == cx && self.row(q.y) == r {
                            search.push_hit(t, slot);
                        }
                    }
                }
            }
            current = next;
            c += step;
        }
        search.report_until(S::INFINITY, &self.slots, &mut visit)
    }

    /// The extent of column (or row) `i` of `n` starting at `origin`: the border ones reach to
    /// infinity, as the elements filed in them may lie anywhere beyond the world.
    fn band(&self, i: u32, n: u32, origin: S) -> (S, S) {
        let at = |k: u32| origin + S::from_f64(f64::from(k)) * self.cell_size;
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
        (magnitude + self.cell_size) * S::RELATIVE_SLACK
    }
}
