//! Criterion benchmarks of every structure on the adversarial data sets of
//! [`spatix_workload::Adversary`]: each structure's worst cases, measured. Benchmarks are
//! named `adversarial/<set>/<op>/<structure>`, with `op`:
//! - `build`: insert every element, then `maintain`;
//! - `query`: 1000 squares a hundredth of the world wide, spread over it;
//! - `pairs`: every intersecting pair (not on the coincident points, whose n (n - 1) / 2 pairs
//!   are quadratic by definition);
//! - `frame`: update every element to its next position, then `maintain` (moving sets only).
//!
//! A `memory` line per structure and set gives its bytes per element once built. Run
//! `cargo bench -p spatix-bench --bench adversarial`, or filter, e.g. `-- 'thin boxes'`;
//! `scripts/reliability-tables.py --write` turns its output into docs/RELIABILITY.md's
//! tables. The last three sets are 100k clean boxes and the same with one to four stray boxes
//! far away, each declared over the bulk of its data (as the CLI sizes a structure): the
//! strays' cost is the difference.

use core::hint::black_box;

use criterion::{BenchmarkId, Criterion, SamplingMode};
use spatix::{Aabb, Handle, ListedIndex, ListedStatic, SpatialIndex, SpatialQuery};
use spatix_workload::Adversary;

/// Query squares per `query` benchmark.
const QUERIES: usize = 1000;

/// The sets, with the query squares over each one's world.
struct Sets(Vec<(Adversary<f32>, Vec<Aabb<f32>>)>);

impl Sets {
    fn new() -> Self {
        Self(
            Adversary::<f32>::all()
                .into_iter()
                .map(|set| {
                    let side = set.world.size().x.max(set.world.size().y) / 100.0;
                    let squares = spatix_bench::query_squares(
                        &set.world,
                        QUERIES,
                        side,
                        spatix_bench::QUERIES_SEED,
                    );
                    (set, squares)
                })
                .collect(),
        )
    }

    /// `build`, `query`, `pairs` and `frame` of a dynamic structure made by `make` (from the
    /// set's world and boxes; never timed).
    fn dynamic<I, F>(&self, c: &mut Criterion, name: &str, make: F)
    where
        I: SpatialIndex<f32, u32>,
        F: Fn(Aabb<f32>, &[Aabb<f32>]) -> I,
    {
        for (set, squares) in &self.0 {
            let mut group = c.benchmark_group(format!("adversarial/{}", set.name));
            group.sampling_mode(SamplingMode::Flat);
            let fill = |index: &mut I, handles: &mut Vec<Handle>| {
                for (i, b) in set.boxes.iter().enumerate() {
                    handles.push(
                        index
                            .insert(*b, i as u32)
                            .expect("adversarial boxes are valid"),
                    );
                }
                index.maintain();
            };
            group.bench_function(BenchmarkId::new("build", name), |b| {
                b.iter_with_large_drop(|| {
                    let mut index = make(set.world, &set.boxes);
                    fill(&mut index, &mut Vec::with_capacity(set.boxes.len()));
                    index
                });
            });
            let mut index = make(set.world, &set.boxes);
            let mut handles = Vec::with_capacity(set.boxes.len());
            fill(&mut index, &mut handles);
            println!(
                "{}",
                spatix_bench::memory_line(
                    &format!("{name} on '{}'", set.name),
                    index.len(),
                    index.memory_bytes()
                )
            );
            measure_reads(&mut group, name, set, squares, &index);
            if !set.frames.is_empty() {
                let mut frame = 0;
                group.bench_function(BenchmarkId::new("frame", name), |b| {
                    b.iter(|| {
                        frame = (frame + 1) % set.frames.len();
                        for (&h, aabb) in handles.iter().zip(&set.frames[frame]) {
                            index.update(h, *aabb).expect("live handle, valid box");
                        }
                        index.maintain();
                    });
                });
            }
            group.finish();
        }
    }

    /// `build`, `query` and `pairs` of a static structure built by `build` from the set's
    /// boxes (each with its index as value); sets it cannot hold (`build` gives `None`) are
    /// skipped.
    fn fixed<I, F>(&self, c: &mut Criterion, name: &str, build: F)
    where
        I: SpatialQuery<f32, u32>,
        F: Fn(&[Aabb<f32>]) -> Option<I>,
    {
        for (set, squares) in &self.0 {
            let Some(index) = build(&set.boxes) else {
                continue;
            };
            let mut group = c.benchmark_group(format!("adversarial/{}", set.name));
            group.sampling_mode(SamplingMode::Flat);
            group.bench_function(BenchmarkId::new("build", name), |b| {
                b.iter_with_large_drop(|| build(black_box(&set.boxes)));
            });
            println!(
                "{}",
                spatix_bench::memory_line(
                    &format!("{name} on '{}'", set.name),
                    index.len(),
                    index.memory_bytes()
                )
            );
            measure_reads(&mut group, name, set, squares, &index);
            group.finish();
        }
    }
}

/// `query` and (unless the set is quadratic) `pairs` on a built structure.
fn measure_reads<I: SpatialQuery<f32, u32>>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    set: &Adversary<f32>,
    squares: &[Aabb<f32>],
    index: &I,
) {
    group.bench_function(BenchmarkId::new("query", name), |b| {
        b.iter(|| spatix_bench::count_query_hits(index, squares));
    });
    if !set.quadratic {
        group.bench_function(BenchmarkId::new("pairs", name), |b| {
            b.iter(|| spatix_bench::count_pairs(index));
        });
    }
}

/// Each structure of `spatix::for_each_structure!` as it sets itself up from the data
/// (`ListedIndex::for_sample` of the boxes; not the quadratic oracle); a static structure of
/// points only on the sets of points (the coincident set).
macro_rules! benches {
    ($c:ident, $sets:ident; oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { boxes { $($boxes:ident: $boxes_ty:ident),* } points { $($points:ident: $points_ty:ident),* } }) => {
        $($sets.dynamic(&mut $c, stringify!($name), made::<spatix::$ty<f32, u32>>);)*
        $($sets.dynamic(&mut $c, stringify!($serial), made::<spatix::$serial_ty<f32, u32>>);)*
        $($sets.fixed(&mut $c, stringify!($boxes), |boxes| {
            <spatix::$boxes_ty<f32, u32> as ListedStatic<f32, u32>>::build_from(
                boxes.iter().copied().zip(0u32..),
            )
            .ok()
        });)*
        $($sets.fixed(&mut $c, stringify!($points), |boxes| {
            let points = boxes.iter().all(|b| b.min == b.max);
            points.then(|| {
                <spatix::$points_ty<f32, u32> as ListedStatic<f32, u32>>::build_from(
                    boxes.iter().copied().zip(0u32..),
                )
                .unwrap()
            })
        });)*
    };
}

/// An empty dynamic structure for `boxes` in `world`.
fn made<I: ListedIndex<f32, u32>>(world: Aabb<f32>, boxes: &[Aabb<f32>]) -> I {
    I::for_sample(world, boxes, boxes.len()).unwrap()
}

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    let sets = Sets::new();
    spatix::for_each_structure!(benches, c, sets;);
    c.final_summary();
}
