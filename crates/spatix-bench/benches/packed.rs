//! Criterion benchmarks of the packed index's byte form, beside its build:
//!
//! | Benchmark | What |
//! | --- | --- |
//! | `packed/bytes/build/<N>` | `PackedIndex::build` of the N boxes of the standard agents (1M), what loading replaces |
//! | `packed/bytes/load/<N>`, `packed/bytes/save/<N>` | `PackedIndex::from_bytes` / `to_bytes` of that index |
//!
//! Also prints the byte form's size against the index's `memory_bytes`. Run
//! `cargo bench -p spatix-bench --bench packed`.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput};
use spatix::{Aabb, ByteForm, PackedIndex, SpatialQuery};

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
    group.finish();
}

fn main() {
    let mut c = spatix_bench::criterion().configure_from_args();
    bytes(&mut c);
    c.final_summary();
}
