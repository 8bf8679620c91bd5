//! The Rust reference for `examples/c/frame.c`: the same agents frame (spatix's `compare`
//! "frame-uniform" workload: `Agents::new(N, Uniform, Uniform, 0x5EED)`, a `SweepGrid` of
//! f32 built by `build_auto`, then frames of step, move, all pairs) through the Rust API,
//! in the same two ways and with the same timing, so that the two programs' figures differ
//! only by the C boundary.
//!
//! `cargo run --release -p spatix-capi --example frame -- [N] [FRAMES]`

use core::ops::ControlFlow;
use std::time::Instant;

use spatix::{Handle, SpatialIndex, SpatialQuery, SweepGrid};
use spatix_workload::{Agents, Layout, Sizes};

/// `compare`'s agents seed.
const SEED: u64 = 0x5EED;

/// Runs `frames` + 1 frames of one way of moving; prints the median and the last frame's pairs.
fn run(n: usize, frames: usize, bulk: bool) {
    let mut agents = Agents::<f32>::new(n, Layout::Uniform, Sizes::Uniform, SEED);
    let items: Vec<_> = (0..n).map(|i| (agents.aabb(i), i as u64)).collect();
    let mut grid = SweepGrid::build_auto(agents.world, items).expect("valid agents");
    let mut handles = vec![Handle::from_bits(0); n];
    for item in grid.iter() {
        handles[*item.value as usize] = item.handle;
    }
    let mut boxes = Vec::with_capacity(n);
    let mut times = Vec::with_capacity(frames + 1);
    let mut pairs = 0u64;
    for _ in 0..=frames {
        let start = Instant::now();
        if bulk {
            agents.step();
            boxes.clear();
            boxes.extend((0..n).map(|i| agents.aabb(i)));
            for (h, b) in handles.iter().zip(&boxes) {
                grid.update(*h, *b).expect("live handle, valid box");
            }
        } else {
            grid.update_all(|_, v, _| {
                agents.step_agent(*v as usize);
                agents.aabb(*v as usize)
            })
            .expect("valid boxes");
        }
        grid.maintain();
        let (mut count, mut ids) = (0u64, 0u64);
        let _ = grid.for_each_pair(|a, b| {
            count += 1;
            ids = ids.wrapping_add(*a.value ^ *b.value);
            ControlFlow::Continue(())
        });
        times.push(start.elapsed().as_secs_f64());
        pairs = count;
        std::hint::black_box(ids);
    }
    times[1..].sort_by(f64::total_cmp);
    let median = times[1 + frames / 2];
    let mode = if bulk { "bulk" } else { "update_all" };
    println!(
        "Rust SweepGrid f32 {mode:<10} N={n} frames={frames} median frame {:.2} ms, pairs {pairs}",
        median * 1e3
    );
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("N: a number"));
    let frames = args
        .next()
        .map_or(10, |a| a.parse().expect("FRAMES: a number"));
    assert!(n > 0 && frames > 0, "usage: frame [N >= 1] [FRAMES >= 1]");
    run(n, frames, true);
    run(n, frames, false);
}
