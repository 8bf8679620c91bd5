//! The seeds' demo without the drawing: N agents move and bounce every frame, and every
//! frame each structure is updated and asked for every colliding pair.
//!
//! ```text
//! cargo run --release -p spatix --example agents -- [AGENTS] [FRAMES] [LAYOUT] [SIZES]
//! ```
//! Defaults: 100000 agents, 300 frames, `uniform` layout (or `clustered`), `uniform` sizes
//! (or `mixed`: 1% dragons). Prints one line per structure: build time, frame time (median
//! and 95th percentile, and the median of each phase), pairs per frame, and index memory.

use core::ops::ControlFlow;
use std::time::Instant;

use spatix::workload::{Agents, Layout, Sizes};
use spatix::{
    Aabb, Handle, LooseQuadtree, LooseQuadtreeConfig, Quadtree, QuadtreeConfig, SpatialIndex,
    UniformGrid,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let n: usize = arg(0)
        .map_or(Ok(100_000), str::parse)
        .unwrap_or_else(|e| usage(&e));
    let frames: usize = arg(1)
        .map_or(Ok(300), str::parse)
        .unwrap_or_else(|e| usage(&e));
    let layout = match arg(2).unwrap_or("uniform") {
        "uniform" => Layout::Uniform,
        "clustered" => Layout::Clustered,
        other => usage(&format!("unknown layout {other:?}")),
    };
    let sizes = match arg(3).unwrap_or("uniform") {
        "uniform" => Sizes::Uniform,
        "mixed" => Sizes::Mixed,
        other => usage(&format!("unknown sizes {other:?}")),
    };
    let agents = Agents::<f32>::new(n, layout, sizes, 1);
    println!("{n} agents, {frames} frames, {layout:?} layout, {sizes:?} sizes");
    let sample: Vec<Aabb<f32>> = agents.boxes().collect();
    let grid = UniformGrid::auto(agents.world, &sample).expect("a valid world");
    run("UniformGrid", grid, agents.clone(), frames);
    let config = QuadtreeConfig::for_element_size(&agents.world, 4.0);
    let mut tree = Quadtree::with_config(agents.world, config).expect("a valid world");
    tree.reserve(agents.len());
    run("Quadtree", tree, agents.clone(), frames);
    let config = LooseQuadtreeConfig::for_element_size(&agents.world, 4.0);
    let mut tree = LooseQuadtree::with_config(agents.world, config).expect("a valid world");
    tree.reserve(agents.len());
    run("LooseQuadtree", tree, agents, frames);
}

fn usage(why: &dyn std::fmt::Display) -> ! {
    eprintln!("{why}\nusage: agents [AGENTS] [FRAMES] [uniform|clustered] [uniform|mixed]");
    std::process::exit(2)
}

/// Runs the simulation on one structure and prints its line.
fn run<I: SpatialIndex<f32, u32>>(
    name: &str,
    mut index: I,
    mut agents: Agents<f32>,
    frames: usize,
) {
    let start = Instant::now();
    let handles: Vec<Handle> = (0..agents.len())
        .map(|i| {
            index
                .insert(agents.aabb(i), i as u32)
                .expect("agents are valid boxes")
        })
        .collect();
    let build = start.elapsed().as_secs_f64() * 1e3;
    let (mut update, mut pairs, mut maintain, mut total) = (vec![], vec![], vec![], vec![]);
    let mut found = 0usize;
    for _ in 0..frames {
        let t0 = Instant::now();
        agents.step();
        for (i, &h) in handles.iter().enumerate() {
            index
                .update(h, agents.aabb(i))
                .expect("live handle, valid box");
        }
        let t1 = Instant::now();
        found = 0;
        let _ = index.for_each_pair(|_, _| {
            found += 1;
            ControlFlow::Continue(())
        });
        let t2 = Instant::now();
        index.maintain();
        let t3 = Instant::now();
        update.push((t1 - t0).as_secs_f64() * 1e3);
        pairs.push((t2 - t1).as_secs_f64() * 1e3);
        maintain.push((t3 - t2).as_secs_f64() * 1e3);
        total.push((t3 - t0).as_secs_f64() * 1e3);
    }
    let bytes = index.memory_bytes() as f64 / agents.len().max(1) as f64;
    println!(
        "{name:<13} build {build:7.1} ms | frame median {:7.2} ms, p95 {:7.2} ms \
         (move+update {:.2}, pairs {:.2}, maintain {:.2}) | {found} pairs | {bytes:.1} bytes/agent",
        percentile(&mut total, 0.5),
        percentile(&mut total, 0.95),
        percentile(&mut update, 0.5),
        percentile(&mut pairs, 0.5),
        percentile(&mut maintain, 0.5),
    );
}

fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * q).round() as usize]
}
