//! Criterion benchmarks of the packed index's byte form, beside its build:
//!
//! | Benchmark | What |
//! | --- | --- |
//! | `packed/bytes/build/<N>` | `PackedIndex::build` of the N boxes of the standard agents (1M), what loading replaces |
//! | `packed/bytes/load/<N>`, `packed/bytes/save/<N>` | `PackedIndex::from_bytes` / `to_bytes` of that index |
//! | `packed/bytes/view/<N>` | `PackedView::open` of its bytes (aligned in memory): the checksum and the checks, no copy |
//! | `packed/bytes/view_10_queries/<N>`, `packed/bytes/built_10_queries/<N>` | opening the view and answering 10 window queries, against the same 10 on the index in memory |
//!
//! Also prints the byte form's size against the index's `memory_bytes`. Run
//! `cargo bench -p spatix-bench --bench packed`.

use std::hint::black_box;

use core::ops::ControlFlow;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use spatix::{Aabb, AlignedBytes, ByteForm, PackedIndex, PackedView, SpatialQuery};

/// The box count.
const N: usize = 1_000_000;

/// Building the index of 1M boxes, saving it to bytes and loading it back, in one group so
/// that the three compare directly; prints the byte form's size against `memory_bytes`.
fn bytes(c: &mut Criterion) {
    let boxes: Vec<Aabb<f32>> = spatix_bench::agents(N).boxes().collect();
    let input = || boxes.iter().copied().zip(0u32..);
    let index = PackedIndex::build(input()).expect("valid boxes");
    let bytes = index.to_bytes();
    println!(
        "bytes packed N={N}: {} bytes, {:.3} of memory_bytes ({} bytes)",
        bytes.len(),
        bytes.len() as f64 / index.memory_bytes() as f64,
        index.memory_bytes()
    );
    let mut group = c.benchmark_group("packed/bytes");
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function(BenchmarkId::new("build", N), |b| {
        b.iter_batched(
            || (),
            |()| PackedIndex::build(input()).expect("valid boxes"),
            BatchSize::PerIteration,
        );
    });
    group.bench_function(BenchmarkId::new("load", N), |b| {
        b.iter(|| PackedIndex::<f32, u32>::from_bytes(black_box(&bytes)).expect("its own bytes"));
    });
    group.bench_function(BenchmarkId::new("save", N), |b| {
        b.iter(|| black_box(&index).to_bytes());
    });
    let aligned = AlignedBytes::copy_of(&bytes);
    group.bench_function(BenchmarkId::new("view", N), |b| {
        b.iter(|| PackedView::<f32, u32>::open(black_box(&aligned)).expect("its own bytes"));
    });
    let windows: Vec<Aabb<f32>> = boxes
        .iter()
        .step_by(N / 10)
        .map(|b| {
            let (lo, hi) = (b.min, b.max);
            Aabb::new(
                spatix::Point::new(lo.x - 2.0, lo.y - 2.0),
                spatix::Point::new(hi.x + 2.0, hi.y + 2.0),
            )
            .expect("a window")
        })
        .collect();
    let answer = |index: &dyn Fn(&Aabb<f32>, &mut u64)| {
        let mut found = 0u64;
        windows.iter().for_each(|w| index(w, &mut found));
        found
    };
    group.bench_function(BenchmarkId::new("view_10_queries", N), |b| {
        b.iter(|| {
            let view = PackedView::<f32, u32>::open(black_box(&aligned)).expect("its own bytes");
            answer(&|w, found| {
                let _ = view.query(w, |_| {
                    *found += 1;
                    ControlFlow::Continue(())
                });
            })
        });
    });
    group.bench_function(BenchmarkId::new("built_10_queries", N), |b| {
        b.iter(|| {
            answer(&|w, found| {
                let _ = black_box(&index).query(w, |_| {
                    *found += 1;
                    ControlFlow::Continue(())
                });
            })
        });
    });
    group.finish();
}

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    bytes(&mut c);
    c.final_summary();
}
