//! `ParallelQuery` joins the suite: at the full check of every sequence, data set and bulk
//! test, each batch query (windows, radii, k nearest, rays) is asked for a batch of queries
//! drawn around the live elements and across the world, and every query's batch answer must
//! equal the structure's own per-query answer element by element, in the same order (the
//! per-query answers are checked against the oracle by the rest of the harness). The batches
//! are long enough to be cut into several parts, so answers are gathered from several threads
//! and read back across part boundaries.

use core::ops::ControlFlow;

use spatix::{Aabb, BatchBuffers, Handle, ParallelQuery, Point, Ray, Scalar, Workspace};

/// Queries per batch: more than three parts' worth at the batch's minimum part size, and not
/// a multiple of it, so that the last part is short.
const QUERIES: usize = 150;

/// SplitMix64: the queries are a function of the structure's contents, so a failure repeats.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The query points: the centres and corners of live boxes (the dense places), points across
/// the world and a little beyond it, and the non-finite points every query must refuse.
fn points<S: Scalar>(live: &[Aabb<S>], world: Aabb<S>, rng: &mut Rng) -> Vec<Point<S>> {
    let (lo, size) = (world.min, world.size());
    let mut points: Vec<Point<S>> = (0..QUERIES - 2)
        .map(|i| match (i % 3, live.is_empty()) {
            (0, false) => live[rng.next() as usize % live.len()].center(),
            (1, false) => live[rng.next() as usize % live.len()].min,
            _ => {
                let at = |lo: S, size: S, u: f64| lo + size * S::from_f64(1.2 * u - 0.1);
                Point::new(at(lo.x, size.x, rng.unit()), at(lo.y, size.y, rng.unit()))
            }
        })
        .collect();
    points.insert(QUERIES / 2, Point::new(S::from_f64(f64::NAN), S::ZERO));
    points.push(Point::new(S::INFINITY, S::ZERO));
    points
}

/// Checks every batch query of `index` against its per-query answers; `live` are the boxes
/// it holds, `world` its data set's world, `seed` varies the queries between calls.
pub(crate) fn check<S: Scalar, I: ParallelQuery<S, u64>>(
    index: &I,
    live: &[Aabb<S>],
    world: Aabb<S>,
    seed: u64,
) -> Result<(), String> {
    let mut rng = Rng(seed ^ live.len() as u64);
    let points = points(live, world, &mut rng);
    let mut buffers = BatchBuffers::new();
    let mut workspace = Workspace::new();
    let side = world.size().x.to_f64().max(world.size().y.to_f64());

    for scale in [0.25, 0.01] {
        let windows: Vec<Aabb<S>> = points
            .iter()
            .filter(|p| p.is_finite())
            .map(|&p| {
                let r = S::from_f64(side * scale * rng.unit());
                let grown = Aabb::new(Point::new(p.x - r, p.y - r), Point::new(p.x + r, p.y + r));
                grown.unwrap_or_else(|_| Aabb::point(p).expect("a finite point"))
            })
            .collect();
        let found = index.query_batch(&windows, &mut buffers);
        for (i, area) in windows.iter().enumerate() {
            let mut want = Vec::new();
            let _ = index.query(area, |item| {
                want.push(item.handle);
                ControlFlow::Continue(())
            });
            same(found.get(i), &want, || {
                format!("query_batch window {i} {area:?}")
            })?;
        }
    }

    for radius in [0.0, side / 20.0] {
        let radius = S::from_f64(radius);
        let found = index.within_batch(&points, radius, &mut buffers);
        for (i, &p) in points.iter().enumerate() {
            let mut want = Vec::new();
            let _ = index.within(p, radius, |item| {
                want.push(item.handle);
                ControlFlow::Continue(())
            });
            same(found.get(i), &want, || {
                format!("within_batch point {i} {p:?}, radius {radius:?}")
            })?;
        }
    }

    for k in [1, 5, live.len() + 1] {
        let found = index.nearest_batch(&points, k, &mut buffers);
        for (i, &p) in points.iter().enumerate() {
            let want = index.nearest(p, k, &mut workspace);
            if found.get(i) != want {
                return Err(format!(
                    "nearest_batch point {i} {p:?}, k = {k}: {:?}, but nearest gives {want:?}",
                    found.get(i)
                ));
            }
        }
        if found.total() != found.iter().map(<[_]>::len).sum::<usize>() {
            return Err(format!(
                "nearest_batch k = {k}: total disagrees with the lists"
            ));
        }
    }

    for reach in [f64::INFINITY, side / 4.0] {
        let rays: Vec<Ray<S>> = points
            .iter()
            .filter(|p| p.is_finite())
            .filter_map(|&origin| {
                let angle = rng.unit() * core::f64::consts::TAU;
                let direction = Point::new(S::from_f64(angle.cos()), S::from_f64(angle.sin()));
                Ray::new(origin, direction, S::from_f64(reach * rng.unit())).ok()
            })
            .collect();
        let found = index.raycast_batch(&rays, &mut buffers);
        for (i, ray) in rays.iter().enumerate() {
            let want = index.raycast(ray, &mut workspace);
            if found.get(i) != want.as_slice() {
                return Err(format!(
                    "raycast_batch ray {i} {ray:?}: {:?}, but raycast gives {want:?}",
                    found.get(i)
                ));
            }
        }
    }
    Ok(())
}

/// Whether a batch answer is the per-query answer, element by element.
fn same(got: &[Handle], want: &[Handle], what: impl Fn() -> String) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{}: {got:?}, but the query alone gives {want:?}",
            what()
        ))
    }
}
