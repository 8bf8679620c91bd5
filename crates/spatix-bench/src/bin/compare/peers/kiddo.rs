//! The kiddo adapter ([`CRATE`] says how it is used).

use std::num::NonZero;

use kiddo::{ImmutableKdTree, SquaredEuclidean};
use spatix::{Aabb, Point};

use super::{Crate, PointIndex};
use crate::check::Tally;

/// kiddo, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "kiddo",
    version: "6.3.0",
    how: "kiddo: `ImmutableKdTree` (the type its docs recommend when the points are known up front \
         and the tree is built once, then queried: every point workload here). Built with \
         `builder().with_serial_construction()` on one thread (kiddo otherwise builds in parallel \
         from 262,144 points) and `with_parallel_construction()` when `--threads` asks for more. \
         Queries: `query(&p).nearest_n::<SquaredEuclidean<f32>>(k).execute()` and \
         `query(&p).within::<SquaredEuclidean<f32>>(r²).unsorted().execute()` (the docs' faster \
         form when order does not matter). With `--threads`, its own batch queries: \
         `query_batch(&points)` configured the same way, then `.execute()` on its default \
         executor (`Executor::parallel()`, rayon's current pool), each query's results in \
         input order. kiddo stores points only, so it has no box workloads.",
};

/// An `ImmutableKdTree<f32, 2>` with `u32` items (each point's position in the input).
pub(crate) struct Points {
    threads: usize,
    tree: Option<ImmutableKdTree<f32, 2>>,
    /// The query points as kiddo's batch queries take them (kept between runs).
    coords: Vec<[f32; 2]>,
}

impl Points {
    pub(crate) fn new(threads: usize) -> Self {
        Self {
            threads,
            tree: None,
            coords: Vec::new(),
        }
    }

    /// The tree, and `queries` as coordinate arrays for its batch queries.
    fn batch(&mut self, queries: &[Point<f32>]) -> (&ImmutableKdTree<f32, 2>, &[[f32; 2]]) {
        self.coords.clear();
        self.coords.extend(queries.iter().map(|q| [q.x, q.y]));
        let tree = self.tree.as_ref().expect("built before use");
        (tree, &self.coords)
    }

    fn tree(&self) -> &ImmutableKdTree<f32, 2> {
        self.tree.as_ref().expect("built before use")
    }
}

impl PointIndex for Points {
    fn name(&self) -> String {
        "kiddo ImmutableKdTree".into()
    }

    fn build(&mut self, _world: &Aabb<f32>, points: &[Point<f32>]) {
        let coords: Vec<[f32; 2]> = points.iter().map(|p| [p.x, p.y]).collect();
        let builder = ImmutableKdTree::<f32, 2>::builder();
        let tree = if self.threads > 1 {
            builder
                .with_parallel_construction()
                .build_from_slice(&coords)
        } else {
            builder.with_serial_construction().build_from_slice(&coords)
        };
        self.tree = Some(tree.expect("finite points, fewer than 2^32"));
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let k = NonZero::new(k).expect("k > 0");
        if self.threads > 1 {
            let (tree, coords) = self.batch(queries);
            let found = tree
                .query_batch(coords)
                .nearest_n::<SquaredEuclidean<f32>>(k)
                .execute();
            for near in &found {
                out.extend(near.iter().map(|n| n.item));
            }
            return true;
        }
        let tree = self.tree();
        for q in queries {
            let found = tree
                .query(&[q.x, q.y])
                .nearest_n::<SquaredEuclidean<f32>>(k)
                .execute();
            out.extend(found.iter().map(|n| n.item));
        }
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        if self.threads > 1 {
            let (tree, coords) = self.batch(queries);
            let found = tree
                .query_batch(coords)
                .within::<SquaredEuclidean<f32>>(radius * radius)
                .unsorted()
                .execute();
            for n in found.iter().flatten() {
                tally.hit(n.item);
            }
            return true;
        }
        let tree = self.tree();
        for q in queries {
            let found = tree
                .query(&[q.x, q.y])
                .within::<SquaredEuclidean<f32>>(radius * radius)
                .unsorted()
                .execute();
            for n in &found {
                tally.hit(n.item);
            }
        }
        true
    }
}
