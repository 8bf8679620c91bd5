//! Criterion benchmarks of the spatix structures on the standard agents workload: groups
//! `build/`, `query/`, `pairs/` and `frame/` (no `frame/` for static structures), each
//! benchmark named `<group>/<structure>/<mix>/<N>`
//! (see the `spatix_bench` crate docs). Run `cargo bench -p spatix-bench`, or filter, e.g.
//! `cargo bench -p spatix-bench -- frame/`.

use criterion::Criterion;
use spatix::{Aabb, ListedIndex, ListedStatic};
use spatix_bench::{Mix, Suite};
use spatix_workload::Agents;

/// Benchmarks one dynamic structure of the list, set up from the agents
/// (`ListedIndex::for_sample`, never timed); a bounded one (the point grid) on same-size
/// agents only (with the dragons of the mixed mix, its bound would be theirs).
fn bench_dynamic<I: ListedIndex<f32, u32>>(c: &mut Criterion, suite: &mut Suite, name: &str) {
    let make = |a: &Agents<f32>| {
        let sample: Vec<Aabb<f32>> = a.boxes().collect();
        I::for_sample(a.world, &sample, a.len()).unwrap()
    };
    if I::BOUNDED {
        suite.bench_mixes(c, name, &[Mix::Uniform, Mix::Clustered], sizes(name), make);
    } else {
        suite.bench(c, name, sizes(name), make);
    }
}

/// Benchmarks one static structure of the list, built from the agents (timed as the build; a
/// structure of points from their positions).
fn bench_static<I: ListedStatic<f32, u32>>(
    c: &mut Criterion,
    suite: &mut Suite,
    name: &str,
    points: bool,
) {
    suite.bench_static(c, name, &spatix_bench::SIZES, |a| {
        if points {
            I::build_from(
                a.positions
                    .iter()
                    .map(|&p| Aabb::point(p).unwrap())
                    .zip(0..),
            )
        } else {
            I::build_from(a.boxes().zip(0..))
        }
        .unwrap()
    });
}

/// Every structure of `spatix::for_each_structure!`: the oracle at 10k only.
macro_rules! benches {
    ($c:ident, $suite:ident; oracle { $($oracle_name:ident: $oracle:ident),* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
        $($suite.bench(&mut $c, stringify!($oracle_name), &[10_000], |_| spatix::$oracle::new());)*
        $(bench_dynamic::<spatix::$ty<f32, u32>>(&mut $c, &mut $suite, stringify!($name));)*
        $(bench_dynamic::<spatix::$serial_ty<f32, u32>>(&mut $c, &mut $suite, stringify!($serial));)*
        $(bench_static::<spatix::$boxes_ty<f32, u32>>(&mut $c, &mut $suite, stringify!($boxes), false);)*
        $(bench_static::<spatix::$points_ty<f32, u32>>(&mut $c, &mut $suite, stringify!($points), true);)*
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
