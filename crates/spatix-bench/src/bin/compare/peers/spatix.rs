//! spatix's own structures, through the `SpatialIndex` contract: one generic adapter, and one
//! line per structure in [`box_indexes`] and [`point_indexes`].
//!
//! The dynamic structures hold points as zero-size boxes. A static structure (a kd-tree for
//! points, a packed index for boxes) gets its own small adapter here, implementing
//! [`PointIndex`] (build, nearest, within) or [`BoxIndex`] (its `moved` rebuilds), and its line
//! in the lists below.

use core::ops::ControlFlow;
use std::sync::atomic::{AtomicU64, Ordering};

use spatix::{
    Aabb, BruteForce, Handle, ParallelPairs, Point, Quadtree, QuadtreeConfig, SpatialIndex,
    UniformGrid, Workspace,
};

use super::{BoxIndex, Crate, Moves, PointIndex};
use crate::check::Tally;

/// spatix, and how this adapter uses it.
pub(crate) const CRATE: Crate = Crate {
    name: "spatix",
    version: env!("CARGO_PKG_VERSION"),
    how: "Every dynamic structure through the `SpatialIndex` contract: built by `insert` of \
         every element (after `QuadtreeConfig::for_element_size(world, mean extent)` and \
         `reserve(n)`, or `UniformGrid::auto(world, boxes)`), then `maintain`; a frame \
         `update`s every element then `maintain`s; pairs `for_each_pair` (`ParallelPairs` with \
         `--threads`); queries `query`, `nearest` (one reused `Workspace`, each result's value \
         read with `get`), `within`. Points are zero-size boxes. `BruteForce` only at 10k.",
};

/// Above this N the brute-force oracle is not measured (it is quadratic).
const BRUTE_MAX_N: usize = 10_000;

/// Every spatix structure of boxes.
pub(crate) fn box_indexes(threads: usize) -> Vec<Box<dyn BoxIndex>> {
    vec![
        Box::new(Dynamic::new("Quadtree", quadtree).parallel(threads)),
        Box::new(Dynamic::new("UniformGrid", grid).parallel(threads)),
        Box::new(Dynamic::new("BruteForce", brute).up_to(BRUTE_MAX_N)),
    ]
}

/// Every spatix structure of points.
pub(crate) fn point_indexes() -> Vec<Box<dyn PointIndex>> {
    vec![
        Box::new(Dynamic::new("Quadtree", quadtree)),
        Box::new(Dynamic::new("UniformGrid", grid)),
        Box::new(Dynamic::new("BruteForce", brute).up_to(BRUTE_MAX_N)),
    ]
}

/// `QuadtreeConfig::for_element_size` with the sample's mean box extent (at least 1, for
/// points), room reserved for the sample.
fn quadtree(world: &Aabb<f32>, sample: &[Aabb<f32>]) -> Quadtree<f32, u32> {
    let extent: f64 = sample
        .iter()
        .map(|b| f64::from(b.size().x + b.size().y) * 0.5)
        .sum::<f64>()
        / sample.len().max(1) as f64;
    let config = QuadtreeConfig::for_element_size(world, extent.max(1.0) as f32);
    let mut tree = Quadtree::with_config(*world, config).expect("the agents' world is valid");
    tree.reserve(sample.len());
    tree
}

/// `UniformGrid::auto` over the sample.
fn grid(world: &Aabb<f32>, sample: &[Aabb<f32>]) -> UniformGrid<f32, u32> {
    UniformGrid::auto(*world, sample).expect("the agents' world is valid")
}

fn brute(_: &Aabb<f32>, _: &[Aabb<f32>]) -> BruteForce<f32, u32> {
    BruteForce::new()
}

/// Makes an empty structure for a world and the boxes it will hold (never timed).
type Make<I> = fn(&Aabb<f32>, &[Aabb<f32>]) -> I;

/// A dynamic spatix structure: built by inserting every element, updated in place.
struct Dynamic<I> {
    name: &'static str,
    make: Make<I>,
    max_n: usize,
    pairs: fn(&I, &mut Tally),
    index: Option<I>,
    handles: Vec<Handle>,
    workspace: Workspace<f32>,
}

impl<I: SpatialIndex<f32, u32>> Dynamic<I> {
    fn new(name: &'static str, make: Make<I>) -> Self {
        Self {
            name,
            make,
            max_n: usize::MAX,
            pairs: serial_pairs::<I>,
            index: None,
            handles: Vec::new(),
            workspace: Workspace::with_capacity(64, 1024),
        }
    }

    fn up_to(mut self, max_n: usize) -> Self {
        self.max_n = max_n;
        self
    }

    /// A new structure holding `boxes`, in order.
    fn fill(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let mut index = (self.make)(world, boxes);
        self.handles.clear();
        self.handles.reserve(boxes.len());
        for (i, b) in boxes.iter().enumerate() {
            let handle = index
                .insert(*b, i as u32)
                .expect("workload boxes are valid");
            self.handles.push(handle);
        }
        index.maintain();
        self.index = Some(index);
    }

    fn index(&self) -> &I {
        self.index.as_ref().expect("built before use")
    }
}

impl<I: ParallelPairs<f32, u32>> Dynamic<I> {
    /// Above one thread, the pair pass runs on rayon's pool (`ParallelPairs`).
    fn parallel(mut self, threads: usize) -> Self {
        if threads > 1 {
            self.pairs = parallel_pairs::<I>;
        }
        self
    }
}

fn serial_pairs<I: SpatialIndex<f32, u32>>(index: &I, tally: &mut Tally) {
    let _ = index.for_each_pair(|a, b| {
        tally.pair(*a.value, *b.value);
        ControlFlow::Continue(())
    });
}

fn parallel_pairs<I: ParallelPairs<f32, u32>>(index: &I, tally: &mut Tally) {
    let (count, hash) = (AtomicU64::new(0), AtomicU64::new(0));
    let _ = index.par_for_each_pair(|a, b| {
        let mut one = Tally::default();
        one.pair(*a.value, *b.value);
        count.fetch_add(one.count, Ordering::Relaxed);
        hash.fetch_add(one.hash, Ordering::Relaxed);
        ControlFlow::Continue(())
    });
    tally.merge(Tally {
        count: count.into_inner(),
        hash: hash.into_inner(),
    });
}

impl<I: SpatialIndex<f32, u32>> BoxIndex for Dynamic<I> {
    fn name(&self) -> String {
        format!("spatix {}", self.name)
    }

    fn moves(&self) -> Moves {
        Moves::Update
    }

    fn runs_at(&self, n: usize) -> bool {
        n <= self.max_n
    }

    fn build(&mut self, world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        self.fill(world, boxes);
    }

    /// Updates every element, then `maintain` (the frame's tidying).
    fn moved(&mut self, _world: &Aabb<f32>, boxes: &[Aabb<f32>]) {
        let index = self.index.as_mut().expect("built before use");
        for (&handle, b) in self.handles.iter().zip(boxes) {
            index.update(handle, *b).expect("live handle, valid box");
        }
        index.maintain();
    }

    fn pairs(&mut self, tally: &mut Tally) {
        (self.pairs)(self.index(), tally);
    }

    fn query(&mut self, squares: &[Aabb<f32>], tally: &mut Tally) {
        let index = self.index();
        for square in squares {
            let _ = index.query(square, |item| {
                tally.hit(*item.value);
                ControlFlow::Continue(())
            });
        }
    }
}

impl<I: SpatialIndex<f32, u32>> PointIndex for Dynamic<I> {
    fn name(&self) -> String {
        format!("spatix {}", self.name)
    }

    fn runs_at(&self, n: usize) -> bool {
        n <= self.max_n
    }

    fn build(&mut self, world: &Aabb<f32>, points: &[Point<f32>]) {
        let boxes: Vec<Aabb<f32>> = points
            .iter()
            .map(|p| Aabb::point(*p).expect("workload points are finite"))
            .collect();
        self.fill(world, &boxes);
    }

    fn nearest(&mut self, queries: &[Point<f32>], k: usize, out: &mut Vec<u32>) -> bool {
        let index = self.index.as_ref().expect("built before use");
        for q in queries {
            for found in index.nearest(*q, k, &mut self.workspace) {
                let item = index.get(found.handle).expect("a found handle is live");
                out.push(*item.value);
            }
        }
        true
    }

    fn within(&mut self, queries: &[Point<f32>], radius: f32, tally: &mut Tally) -> bool {
        let index = self.index();
        for q in queries {
            let _ = index.within(*q, radius, |item| {
                tally.hit(*item.value);
                ControlFlow::Continue(())
            });
        }
        true
    }
}
