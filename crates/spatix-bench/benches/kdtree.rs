//! Criterion benchmarks of the static `KdTree` on points (the agents' centres):
//!
//! | benchmark | one iteration |
//! | --- | --- |
//! | `kdtree/build/serial/<N>`, `kdtree/build/rayon/<N>` | `KdTree::build` / `KdTree::par_build` of N uniform points (1M, 10M) |
//! | `kdtree/nearest/<layout>/k<k>` | the `k` nearest (1, 8, 64) of each of 10k query points, on 1M points of `layout` (uniform, clustered) |
//! | `kdtree/bytes/load/<N>`, `kdtree/bytes/save/<N>` | `KdTree::from_bytes` / `to_bytes` of the tree of N uniform points (1M), beside its build above |
//! | `kdtree/bytes/view/<N>` | `KdTreeView::open` of those bytes (aligned in memory): the checksum and the checks, no copy |
//!
//! Query points follow the data (`spatix_bench::queries_near`). Run
//! `cargo bench -p spatix-bench --bench kdtree`, or filter, e.g. `-- kdtree/nearest`.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use spatix::{ByteForm, KdTree, KdTreeConfig, Point, SpatialQuery, Workspace};
use spatix_bench::{QUERIES_SEED, QUERY_COUNT, memory_line, points, queries_near};
use spatix_workload::Layout;

/// The point counts of the build benchmarks.
const BUILD_SIZES: [usize; 2] = [1_000_000, 10_000_000];

/// The point count of the nearest-neighbour benchmarks.
const QUERY_N: usize = 1_000_000;

/// The `k`s of the nearest-neighbour benchmarks.
const KS: [usize; 3] = [1, 8, 64];

/// The input of a build: each point with its number as its value.
fn input(points: &[Point<f32>]) -> impl Iterator<Item = (Point<f32>, u32)> + '_ {
    points.iter().enumerate().map(|(i, &p)| (p, i as u32))
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("kdtree/build");
    group.sampling_mode(SamplingMode::Flat);
    for n in BUILD_SIZES {
        let points = points(n, Layout::Uniform);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("serial", n), |b| {
            b.iter_batched(
                || (),
                |()| KdTree::build(input(&points)).expect("finite points"),
                BatchSize::PerIteration,
            );
        });
        group.bench_function(BenchmarkId::new("rayon", n), |b| {
            b.iter_batched(
                || (),
                |()| {
                    KdTree::par_build(input(&points), KdTreeConfig::default())
                        .expect("finite points")
                },
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

fn nearest(c: &mut Criterion) {
    for (name, layout) in [
        ("uniform", Layout::Uniform),
        ("clustered", Layout::Clustered),
    ] {
        let points = points(QUERY_N, layout);
        let tree = KdTree::build(input(&points)).expect("finite points");
        println!(
            "{}",
            memory_line(&format!("kdtree/{name}"), QUERY_N, tree.memory_bytes())
        );
        let queries = queries_near(&points, QUERY_COUNT, QUERIES_SEED);
        let mut group = c.benchmark_group(format!("kdtree/nearest/{name}"));
        group.throughput(Throughput::Elements(QUERY_COUNT as u64));
        for k in KS {
            let mut workspace = Workspace::with_capacity(k, 64);
            group.bench_function(BenchmarkId::from_parameter(format!("k{k}")), |b| {
                b.iter(|| {
                    let mut sum = 0.0f32;
                    for &q in &queries {
                        let found = tree.nearest(black_box(q), k, &mut workspace);
                        sum += found[found.len() - 1].distance_2;
                    }
                    black_box(sum)
                });
            });
        }
        group.finish();
    }
}

/// Saving the tree of 1M points to bytes and loading it back; prints the byte form's size
/// against the tree's `memory_bytes`.
fn bytes(c: &mut Criterion) {
    let n = BUILD_SIZES[0];
    let points = points(n, Layout::Uniform);
    let tree = KdTree::build(input(&points)).expect("finite points");
    let bytes = tree.to_bytes();
    println!(
        "bytes kdtree N={n}: {} bytes, {:.3} of memory_bytes",
        bytes.len(),
        bytes.len() as f64 / tree.memory_bytes() as f64
    );
    let mut group = c.benchmark_group("kdtree/bytes");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("load", n), |b| {
        b.iter(|| KdTree::<f32, u32>::from_bytes(black_box(&bytes)).expect("its own bytes"));
    });
    group.bench_function(BenchmarkId::new("save", n), |b| {
        b.iter(|| black_box(&tree).to_bytes());
    });
    let aligned = spatix::AlignedBytes::copy_of(&bytes);
    group.bench_function(BenchmarkId::new("view", n), |b| {
        b.iter(|| {
            spatix::KdTreeView::<f32, u32>::open(black_box(&aligned)).expect("its own bytes")
        });
    });
    group.finish();
}

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    build(&mut c);
    bytes(&mut c);
    nearest(&mut c);
    c.final_summary();
}
