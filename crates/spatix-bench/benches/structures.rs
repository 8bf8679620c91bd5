//! Criterion benchmarks of the spatix structures on the standard agents workload: groups
//! `build/`, `query/`, `pairs/` and `frame/` (no `frame/` for static structures), each
//! benchmark named `<group>/<structure>/<mix>/<N>`
//! (see the `spatix_bench` crate docs). Run `cargo bench -p spatix-bench`, or filter, e.g.
//! `cargo bench -p spatix-bench -- frame/`.

use spatix::{
    Aabb, BruteForce, HierarchicalGrid, Layered, LooseGrid, LooseQuadtree, MxCifQuadtree,
    PackedIndex, PointGrid, Quadtree, SweepGrid, UniformGrid,
};
use spatix_bench::{Mix, Suite};

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    let mut suite = Suite::new();
    // One line per structure: its name, the N to measure (`&spatix_bench::SIZES` for all
    // three), and how to make an empty one for the agents (never timed).
    suite.bench(&mut c, "brute", &[10_000], |_| BruteForce::new());
    suite.bench(&mut c, "quadtree", &spatix_bench::SIZES, |a| {
        let mut tree = Quadtree::for_element_size(a.world, 4.0).unwrap();
        tree.reserve(a.len());
        tree
    });
    suite.bench(&mut c, "mxcif", &spatix_bench::SIZES, |a| {
        let mut tree = MxCifQuadtree::for_element_size(a.world, 4.0).unwrap();
        tree.reserve(a.len());
        tree
    });
    suite.bench(&mut c, "grid", &spatix_bench::SIZES, |a| {
        let sample: Vec<Aabb<f32>> = a.boxes().collect();
        UniformGrid::auto(a.world, &sample).unwrap()
    });
    suite.bench(&mut c, "loose_quadtree", &spatix_bench::SIZES, |a| {
        let mut tree = LooseQuadtree::for_element_size(a.world, 4.0).unwrap();
        tree.reserve(a.len());
        tree
    });
    // Same-size agents only: with the dragons of the mixed mix, its bound would be theirs.
    let same_size = [Mix::Uniform, Mix::Clustered];
    suite.bench_mixes(&mut c, "points", &same_size, &spatix_bench::SIZES, |a| {
        let sample: Vec<Aabb<f32>> = a.boxes().collect();
        PointGrid::auto(a.world, &sample).unwrap()
    });
    suite.bench(&mut c, "hierarchical", &spatix_bench::SIZES, |a| {
        let sample: Vec<Aabb<f32>> = a.boxes().collect();
        HierarchicalGrid::auto(a.world, &sample).unwrap()
    });
    // Also at 500k, a size the loose grid has a target for (issue 3).
    suite.bench(
        &mut c,
        "loose_grid",
        &[10_000, 100_000, 500_000, 1_000_000],
        |a| {
            let sample: Vec<Aabb<f32>> = a.boxes().collect();
            LooseGrid::auto(a.world, &sample).unwrap()
        },
    );
    // The structure built for the frame (issue 14): same sizes as the loose grid's.
    suite.bench(
        &mut c,
        "sweep",
        &[10_000, 100_000, 500_000, 1_000_000],
        |a| {
            let sample: Vec<Aabb<f32>> = a.boxes().collect();
            SweepGrid::auto(a.world, &sample).unwrap()
        },
    );
    // Agents (half-size up to 3, as the workload's common agents) in one part, dragons in
    // another.
    suite.bench(&mut c, "layered", &spatix_bench::SIZES, |a| {
        Layered::new(a.world, 3.0).unwrap()
    });
    // Static structures: how to build one from the agents (timed as the build).
    suite.bench_static(&mut c, "packed", &spatix_bench::SIZES, |a| {
        PackedIndex::build(a.boxes().zip(0..)).unwrap()
    });
    // The uniform grid built in one go (its `build` row against `grid`'s inserts and
    // `packed`'s build).
    suite.bench_static(&mut c, "grid_built", &[1_000_000], |a| {
        UniformGrid::build(a.world, a.boxes().zip(0..)).unwrap()
    });
    c.final_summary();
}
