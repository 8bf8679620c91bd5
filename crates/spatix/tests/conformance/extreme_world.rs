//! Every structure over an extreme world: the random sequences of the ordinary and the
//! extreme data (`Variant::Uniform`, `Variant::Extreme`), with the structure declared over
//! `[-MAX, MAX]²` (a world whose width overflows `S`) or sized by its own `auto` from
//! extreme data, instead of over the data's small world. The world only sizes the cells,
//! nodes or bands; whatever the world, every answer must be the oracle's.
//!
//! `BruteForce` has no world, and the static structures (`PackedIndex`, `KdTree`) are built
//! from their data alone: the main suite's `Extreme` variant covers them. Cells are kept few
//! (a finest cell of a 64th of MAX, a point grid's bound of a 64th of MAX): a nearest search
//! for more elements than there are walks every cell, and the data lies in a few of them.
//!
//! Not here yet (open gaps, outside the leveled grids): `SweepGrid::auto` over `[-MAX, MAX]²` (`f64`: refused, more than
//! 2^24 bands; `f32`: a ray from the origin towards `(1, MAX)` misses a point on it), and
//! `UniformGrid::new` and `LooseGrid::new` with an `f32` world wider than MAX (a cell's
//! boundary `min + k * cell` overflows past the middle, so a ray walk skips the cells there).

use spatix::{
    Aabb, HierarchicalGrid, Layered, LooseGrid, LooseQuadtree, MxCifQuadtree, PackedIndex, Point,
    PointGrid, Quadtree, Scalar, SpatialIndex, UniformGrid,
};

use crate::data::{Bx, Variant};
use crate::suite;

/// `[-MAX, MAX]²`: its width and height overflow `S`.
pub(crate) fn widest<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(-S::MAX, -S::MAX),
        max: Point::new(S::MAX, S::MAX),
    }
}

/// What `auto` constructors see: the corners of the plane, a box from `-MAX` to `MAX`, one
/// half as wide, a box far out at 1e300 (`MAX` in `f32`), subnormal boxes and a few ordinary
/// ones near the origin (saturated at ±MAX in `f32`).
pub(crate) fn extreme_sample<S: Scalar>() -> Vec<Aabb<S>> {
    let m = f64::MAX;
    let mut sample = vec![
        Bx::point(-m, -m),
        Bx::point(m, m),
        Bx::point(-m, m),
        Bx::new(-m, 0.0, m, 1.0),
        Bx::new(-m / 2.0, -m / 2.0, m / 2.0, m / 2.0),
        Bx::new(1e300, 1e300, 1e300, 1e300),
        Bx::new(5e-324, 5e-324, 1e-310, 1e-310),
        Bx::new(-1e-300, 0.0, 0.0, 1e-300),
    ];
    sample.extend((0..8).map(|i| {
        let c = f64::from(i) * 10.0;
        Bx::new(c, c, c + 3.0, c + 2.0)
    }));
    sample.into_iter().map(Bx::to).collect()
}

/// The random sequences of the uniform and the extreme data over a structure that `make`
/// builds whatever the data's world, with a declared bound on half extents if it has one.
pub(crate) fn run<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    make: impl Fn() -> I,
    bound: Option<f64>,
) {
    for variant in [Variant::Uniform, Variant::Extreme] {
        suite::random_ops(variant, &|_| make(), bound);
    }
}

/// One test per structure and scalar: `extreme_world!(name, scalar, constructor)`, the
/// constructor an expression of the scalar type `S` (a type alias in the test).
macro_rules! extreme_world {
    ($name:ident, $scalar:ty, $make:expr $(,)?) => {
        #[test]
        fn $name() {
            type S = $scalar;
            run::<$scalar, _>(|| $make, None);
        }
    };
}

extreme_world!(quadtree_f32, f32, Quadtree::new(widest::<S>()).unwrap());
extreme_world!(quadtree_f64, f64, Quadtree::new(widest::<S>()).unwrap());
extreme_world!(
    quadtree_sized_f64,
    f64,
    Quadtree::for_element_size(widest::<S>(), 1.0).unwrap()
);
extreme_world!(
    loose_quadtree_f32,
    f32,
    LooseQuadtree::new(widest::<S>()).unwrap()
);
extreme_world!(
    loose_quadtree_f64,
    f64,
    LooseQuadtree::new(widest::<S>()).unwrap()
);
extreme_world!(mxcif_f32, f32, MxCifQuadtree::new(widest::<S>()).unwrap());
extreme_world!(mxcif_f64, f64, MxCifQuadtree::new(widest::<S>()).unwrap());
extreme_world!(
    grid_auto_f32,
    f32,
    UniformGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    grid_auto_f64,
    f64,
    UniformGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    loose_grid_auto_f32,
    f32,
    LooseGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    loose_grid_auto_f64,
    f64,
    LooseGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    hierarchical_auto_f32,
    f32,
    HierarchicalGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    hierarchical_auto_f64,
    f64,
    HierarchicalGrid::auto(widest::<S>(), &extreme_sample::<S>()).unwrap()
);
extreme_world!(
    hierarchical_f32,
    f32,
    HierarchicalGrid::new(widest::<S>(), S::MAX / 64.0).unwrap()
);
extreme_world!(
    hierarchical_f64,
    f64,
    HierarchicalGrid::with_factor(widest::<S>(), S::MAX / 64.0, 2).unwrap()
);
extreme_world!(layered_f32, f32, layered::<S>());
extreme_world!(layered_f64, f64, layered::<S>());

/// `Layered` over the widest world with agents up to a 64th of MAX, the rest in the large
/// part.
fn layered<S: Scalar>() -> Layered<S, u64> {
    Layered::new(widest(), S::MAX * S::from_f64(1.0 / 64.0)).unwrap()
}

/// `Layered` from parts that `auto` sized from the extreme sample, its threshold the agents'
/// bound.
fn layered_auto<S: Scalar>() -> Layered<S, u64> {
    let agents = PointGrid::auto(widest(), &extreme_sample()).unwrap();
    let large = LooseGrid::auto(widest(), &extreme_sample()).unwrap();
    let threshold = agents.max_half_extent();
    Layered::from_parts(agents, large, PackedIndex::build([]).unwrap(), threshold).unwrap()
}

#[test]
fn layered_auto_f32() {
    run(layered_auto::<f32>, None);
}

#[test]
fn layered_auto_f64() {
    run(layered_auto::<f64>, None);
}

/// Point grids hold boxes up to their bound: a 64th of MAX over the widest world, and the
/// bound `auto` takes from the extreme sample (a quarter of MAX, the largest it holds).
fn points_over_widest<S: Scalar>() -> PointGrid<S, u64> {
    PointGrid::new(widest(), S::MAX * S::from_f64(1.0 / 64.0)).unwrap()
}

fn points_auto<S: Scalar>() -> PointGrid<S, u64> {
    PointGrid::auto(widest(), &extreme_sample()).unwrap()
}

#[test]
fn points_f32() {
    run(points_over_widest::<f32>, Some(f64::from(f32::MAX) / 64.0));
}

#[test]
fn points_f64() {
    run(points_over_widest::<f64>, Some(f64::MAX / 64.0));
}

#[test]
fn points_auto_f32() {
    let bound = points_auto::<f32>().max_half_extent().to_f64();
    run(points_auto::<f32>, Some(bound));
}

#[test]
fn points_auto_f64() {
    let bound = points_auto::<f64>().max_half_extent().to_f64();
    run(points_auto::<f64>, Some(bound));
}
