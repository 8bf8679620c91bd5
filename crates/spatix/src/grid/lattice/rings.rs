//! The rings of cells a nearest search visits outward from the query point's cell.

use super::Lattice;
use crate::{Point, Scalar};

#[cfg(test)]
std::thread_local! {
    /// Rings of cells the nearest searches of this thread walked, for tests of their work.
    pub(crate) static RINGS_WALKED: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

impl<S: Scalar> Lattice<S> {
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
