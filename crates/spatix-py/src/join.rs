//! The pairs of two point sets within a distance of each other, in one pass over both:
//! `KdTree.count_neighbors` and `KdTree.query_ball_tree` (scipy's two-tree calls). Both sets
//! are counted into the cells of one grid whose side is at least the distance, so a point of
//! the first meets every point of the second it can be near in the nine cells around its
//! own; each candidate is decided as the radius search decides it
//! ([`Aabb::within_distance`]).

use spatix::{Aabb, Point, Scalar};

use crate::batch::{self, Workers};
use crate::scalar::PyScalar;

/// Each point's neighbours, one row per point: where each row starts in the list (and the
/// end of the last), and the list.
pub(crate) type Rows = (Vec<usize>, Vec<i64>);

/// At most this many cells per point of the two sets (the side grows beyond the distance
/// where a small distance would make more).
const CELLS_PER_POINT: f64 = 1.0;

/// At most this many points set the grid's extent.
const SAMPLE: usize = 16_384;

/// The cells of a grid over both sets, and where it lies.
struct Grid {
    /// The lower corner, in `f64`.
    x0: f64,
    y0: f64,
    /// The inverse of the cells' side (a coordinate's cell is found by multiplying by it).
    per_side: f64,
    /// Cells across and up.
    nx: usize,
    ny: usize,
}

/// One set's points filed in a [`Grid`]'s cells, cell after cell (row-major).
struct Filed<S> {
    /// Where each cell's points start in `points` (and the end of the last).
    starts: Vec<u32>,
    /// The points, cell after cell.
    points: Vec<Point<S>>,
    /// Each filed point's position in the set.
    positions: Vec<u32>,
}

impl Grid {
    /// The grid for pairs of `a` and `b` at most `r` apart; `None` where it cannot be made
    /// (a distance or a spread that is not finite, more points than `u32` counts).
    fn new<S: Scalar>(a: &[Point<S>], b: &[Point<S>], r: S) -> Option<Self> {
        if !r.is_finite() || a.len() + b.len() >= u32::MAX as usize {
            return None;
        }
        // Over the bulk of the points (the 0.5% to 99.5% quantiles on each axis of an even
        // stride of at most `SAMPLE` of them): a point beyond it lies in a border cell
        // (cells are clamped, which brings no two points closer than a cell), so that a few
        // far strays leave the cells their size.
        let step = (a.len() + b.len()).div_ceil(SAMPLE).max(1);
        let (x0, x1) = bulk(a.iter().chain(b).step_by(step).map(|p| p.x.to_f64()))?;
        let (y0, y1) = bulk(a.iter().chain(b).step_by(step).map(|p| p.y.to_f64()))?;
        let (w, h) = (x1 - x0, y1 - y0);
        // Wider than the distance by its rounding (the differences of two nearby
        // coordinates are exact, their distance rounds by a few units in the last place), so
        // that two points the search finds within `r` are never two cells apart.
        let near = r.to_f64() * (1.0 + 4.0 * S::RELATIVE_SLACK.to_f64());
        let cells = CELLS_PER_POINT * (a.len() + b.len()) as f64;
        let side = near
            .max((w * h / cells).sqrt())
            .max(w.max(h) / cells)
            .max(f64::MIN_POSITIVE)
            * (1.0 + 1e-9);
        if !side.is_finite() {
            return None;
        }
        Some(Self {
            x0,
            y0,
            per_side: 1.0 / side,
            nx: (w / side) as usize + 1,
            ny: (h / side) as usize + 1,
        })
    }

    /// The cell holding `p`, as `(column, row)` (clamped into the grid; the casts saturate).
    fn column_row<S: Scalar>(&self, p: &Point<S>) -> (usize, usize) {
        let at = |v: f64, v0: f64, n: usize| (((v - v0) * self.per_side) as usize).min(n - 1);
        (
            at(p.x.to_f64(), self.x0, self.nx),
            at(p.y.to_f64(), self.y0, self.ny),
        )
    }

    /// `points` filed cell by cell (a counting sort).
    fn file<S: Scalar>(&self, points: &[Point<S>]) -> Filed<S> {
        let cells: Vec<u32> = points
            .iter()
            .map(|p| {
                let (cx, cy) = self.column_row(p);
                (cy * self.nx + cx) as u32
            })
            .collect();
        let mut starts = vec![0u32; self.nx * self.ny + 1];
        for &c in &cells {
            starts[c as usize + 1] += 1;
        }
        for c in 0..self.nx * self.ny {
            starts[c + 1] += starts[c];
        }
        let mut next = starts.clone();
        let mut filed = Filed {
            starts,
            points: vec![Point::new(S::ZERO, S::ZERO); points.len()],
            positions: vec![0; points.len()],
        };
        for (j, (&c, p)) in cells.iter().zip(points).enumerate() {
            let at = next[c as usize] as usize;
            filed.points[at] = *p;
            filed.positions[at] = j as u32;
            next[c as usize] += 1;
        }
        filed
    }

    /// Calls `visit(k, d)` for every point `b.points[k]` at distance `d <= r` from `p` (as
    /// the radius search decides it, [`Aabb::within_distance`]) in the nine cells around
    /// `p`'s.
    fn near<S: Scalar>(&self, b: &Filed<S>, p: Point<S>, r: S, visit: impl FnMut(usize, S)) {
        let (cx, cy) = self.column_row(&p);
        self.near_in(b, self.around(b, cx, cy), p, r, visit);
    }

    /// Where `b`'s points in the nine cells around cell `(cx, cy)` lie: three runs of
    /// `b.points`, one per row.
    fn around<S>(&self, b: &Filed<S>, cx: usize, cy: usize) -> [(usize, usize); 3] {
        let (x0, x1) = (cx.saturating_sub(1), (cx + 1).min(self.nx - 1));
        let mut runs = [(0, 0); 3];
        for (run, y) in runs
            .iter_mut()
            .zip(cy.saturating_sub(1)..=(cy + 1).min(self.ny - 1))
        {
            let row = y * self.nx;
            *run = (b.starts[row + x0] as usize, b.starts[row + x1 + 1] as usize);
        }
        runs
    }

    /// [`Grid::near`] over the runs [`Grid::around`] gave for `p`'s cell.
    fn near_in<S: Scalar>(
        &self,
        b: &Filed<S>,
        runs: [(usize, usize); 3],
        p: Point<S>,
        r: S,
        mut visit: impl FnMut(usize, S),
    ) {
        // A point farther than this on either axis is farther than `r` however the distance
        // rounds: skipped before its distance is computed.
        let far = r + r * S::RELATIVE_SLACK;
        for (start, end) in runs {
            for (k, &q) in (start..end).zip(&b.points[start..end]) {
                if (q.x - p.x).abs_s() > far || (q.y - p.y).abs_s() > far {
                    continue;
                }
                let d = Aabb { min: q, max: q }.distance_to_point(p);
                if d <= r {
                    visit(k, d);
                }
            }
        }
    }
}

/// The 0.5% and 99.5% quantiles of `values` (finite ones), `None` if there are none.
fn bulk(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return None;
    }
    let lo = *v.select_nth_unstable_by(n / 200, f64::total_cmp).1;
    let hi = *v.select_nth_unstable_by(n - 1 - n / 200, f64::total_cmp).1;
    Some((lo, hi))
}

/// For each point of `a`, the positions of its neighbours in `b` (at most `r` away, as the
/// radius search decides), ascending: the `(offsets, found)` of [`batch::per_query`], the
/// points of `a` spread over `workers`. `None` where no grid can be made (see
/// [`Grid::new`]): the caller falls back on radius searches.
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn neighbours<S: PyScalar>(
    a: &[Point<S>],
    b: &[Point<S>],
    r: S,
    workers: Workers,
) -> Result<Option<Rows>, String> {
    if r.partial_cmp(&S::ZERO).is_none_or(|o| o.is_lt()) || a.is_empty() || b.is_empty() {
        return Ok(Some((vec![0; a.len() + 1], Vec::new())));
    }
    let Some(grid) = Grid::new(a, b, r) else {
        return Ok(None);
    };
    let b = grid.file(b);
    batch::per_query(a.len(), workers, |i, out| {
        let start = out.len();
        grid.near(&b, a[i], r, |k, _| out.push(i64::from(b.positions[k])));
        out[start..].sort_unstable();
    })
    .map(Some)
}

/// The number of pairs of a point of `a` and a point of `b` whose distance `d` (as the
/// radius search measures it) is at most `radii[k]` and more than `radii[k - 1]`, for each
/// `k` (`radii` ascending, finite and at least 0): one count per radius, walked cell by cell
/// (the points of `a` filed too, so that neighbouring points are met together), the grid's
/// rows spread over `workers`. `None` where no grid can be made (see [`Grid::new`]).
///
/// # Errors
/// The message when the threads cannot start.
pub(crate) fn binned<S: PyScalar>(
    a: &[Point<S>],
    b: &[Point<S>],
    radii: &[S],
    workers: Workers,
) -> Result<Option<Vec<u64>>, String> {
    let bins = radii.len();
    let Some(&largest) = radii.last() else {
        return Ok(Some(Vec::new()));
    };
    if a.is_empty() || b.is_empty() {
        return Ok(Some(vec![0; bins]));
    }
    let Some(grid) = Grid::new(a, b, largest) else {
        return Ok(None);
    };
    let (a, b) = (grid.file(a), grid.file(b));
    // Each row of cells' counts, `bins` of them; summed by column at the end.
    let (_, rows) = batch::per_query(grid.ny, workers, |y, out: &mut Vec<u64>| {
        let start = out.len();
        out.resize(start + bins, 0);
        for x in 0..grid.nx {
            let cell = y * grid.nx + x;
            let (first, end) = (a.starts[cell] as usize, a.starts[cell + 1] as usize);
            if first == end {
                continue;
            }
            let runs = grid.around(&b, x, y);
            for &p in &a.points[first..end] {
                grid.near_in(&b, runs, p, largest, |_, d| {
                    out[start + radii.partition_point(|&r| r < d)] += 1;
                });
            }
        }
    })?;
    Ok(Some(column_sums(&rows, bins)))
}

/// The sums of the columns of `rows`, rows of `bins` counts one after another.
pub(crate) fn column_sums(rows: &[u64], bins: usize) -> Vec<u64> {
    let mut counts = vec![0; bins];
    for row in rows.chunks_exact(bins) {
        for (c, n) in counts.iter_mut().zip(row) {
            *c += n;
        }
    }
    counts
}
