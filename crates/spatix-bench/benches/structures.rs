//! Criterion benchmarks of the spatix structures on the standard agents workload: groups
//! `build/`, `query/`, `pairs/` and `frame/` (no `frame/` for static structures), each
//! benchmark named `<group>/<structure>/<mix>/<N>`
//! (see the `spatix_bench` crate docs). Run `cargo bench -p spatix-bench`, or filter, e.g.
//! `cargo bench -p spatix-bench -- frame/`.

use spatix::Aabb;
use spatix_bench::{Mix, Suite};

/// One line per structure of `spatix::for_each_structure!`: its short name, the N to measure
/// ([`sizes`]), and how to make an empty one for the agents (never timed): the oracle at 10k
/// only; the quadtrees sized for elements of 4 with room reserved, the layered index with a
/// threshold of 3 (the workload's common agents in one part, dragons in another), the others
/// from the agents; a bounded structure (the point grid) on same-size agents only (with the
/// dragons of the mixed mix, its bound would be theirs). Static structures: how to build one
/// from the agents (timed as the build; a structure of points from their positions).
macro_rules! benches {
    (
        $c:ident, $suite:ident;
        oracle { $(
            $oracle:ident {
                name: $oracle_name:ident,
                cli: $oracle_cli:ident,
                about: $oracle_about:literal
            }
        )* }
        dynamic { $(
            $ty:ident {
                name: $name:ident,
                cli: $cli:ident,
                make: $make:ident,
                pairs: $pairs:ident,
                holds: $holds:ident,
                bulk: $bulk:ident,
                about: $about:literal
            }
        )* }
        fixed { $(
            $fixed:ident {
                name: $fixed_name:ident,
                cli: $fixed_cli:ident,
                holds: $fixed_holds:ident,
                about: $fixed_about:literal
            }
        )* }
    ) => {
        $($suite.bench(&mut $c, stringify!($oracle_name), &[10_000], |_| spatix::$oracle::new());)*
        $(bench!($holds, $c, $suite, stringify!($name), |a| made!($make, $ty, a));)*
        $($suite.bench_static(&mut $c, stringify!($fixed_name), &spatix_bench::SIZES, |a| {
            built!($fixed_holds, $fixed, a)
        });)*
    };
}

/// Benchmarks one dynamic structure (a bounded one on same-size agents only).
macro_rules! bench {
    (boxes, $c:ident, $suite:ident, $name:expr, $make:expr) => {
        $suite.bench(&mut $c, $name, sizes($name), $make)
    };
    (bounded, $c:ident, $suite:ident, $name:expr, $make:expr) => {
        $suite.bench_mixes(
            &mut $c,
            $name,
            &[Mix::Uniform, Mix::Clustered],
            sizes($name),
            $make,
        )
    };
}

/// An empty dynamic structure for the agents `$a`.
macro_rules! made {
    (element_size, $ty:ident, $a:ident) => {{
        let mut tree = spatix::$ty::for_element_size($a.world, 4.0).unwrap();
        tree.reserve($a.len());
        tree
    }};
    (sample, $ty:ident, $a:ident) => {{
        let sample: Vec<Aabb<f32>> = $a.boxes().collect();
        spatix::$ty::auto($a.world, &sample).unwrap()
    }};
    (threshold, $ty:ident, $a:ident) => {
        spatix::$ty::new($a.world, 3.0).unwrap()
    };
}

/// A static structure built from the agents `$a` (their positions, for one of points).
macro_rules! built {
    (boxes, $ty:ident, $a:ident) => {
        spatix::$ty::build($a.boxes().zip(0..)).unwrap()
    };
    (points, $ty:ident, $a:ident) => {
        spatix::$ty::build($a.positions.iter().copied().zip(0..)).unwrap()
    };
}

/// The N a structure is measured at: [`spatix_bench::SIZES`], and 500k too for the loose
/// grid (a size it has a target for, issue 3) and the sweep grid (built for the frame,
/// issue 14).
fn sizes(name: &str) -> &'static [usize] {
    match name {
        "loose_grid" | "sweep" => &[10_000, 100_000, 500_000, 1_000_000],
        _ => &spatix_bench::SIZES,
    }
}

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    let mut suite = Suite::new();
    spatix::for_each_structure!(benches, c, suite;);
    // The uniform grid built in one go (its `build` row against `grid`'s inserts and
    // `packed`'s build).
    suite.bench_static(&mut c, "grid_built", &[1_000_000], |a| {
        spatix::UniformGrid::build(a.world, a.boxes().zip(0..)).unwrap()
    });
    c.final_summary();
}
