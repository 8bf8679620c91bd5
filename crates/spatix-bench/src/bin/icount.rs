//! `icount`: the deterministic half of the performance guard, run under callgrind by
//! `scripts/icount.sh`. Each case sets up its data uncounted, then runs the part it measures
//! once inside [`icount_measured`], the one function callgrind collects in
//! (`--toggle-collect`) and dumps its counts after (`--dump-after`): one dump per case, in
//! the order this binary prints the cases' names.
//!
//! ```text
//! icount [--list]
//! ```
//!
//! The cases, at [`N`] elements: the agents frame (`update_all` stepping every agent,
//! `maintain`, `for_each_pair`) of every dynamic structure on the uniform mix, after one
//! uncounted warm-up frame; the packed index's build from the agents' boxes and its
//! rectangle queries; the kd-tree's build from the agents' centres and its k-nearest queries.
//! Each prints its answer (pairs, hits or neighbours found) beside its name, so that a count
//! that changes with the answer is told apart from one that changes with the code.

use std::hint::black_box;
use std::ops::ControlFlow;

use spatix::prelude::*;
use spatix::{Aabb, KdTree, ListedIndex, PackedIndex, Point, Workspace};
use spatix_bench::{AGENTS_SEED, Mix, QUERIES_SEED, QUERY_SIDE, queries_near, query_squares};
use spatix_workload::{Agent, Agents};

/// The elements of every case.
const N: usize = 100_000;

/// The queries of the query cases.
const QUERIES: usize = 2_000;

/// The neighbours each k-nearest query asks for.
const K: usize = 8;

/// Runs `f` once: the only code callgrind counts (its name is what `scripts/icount.sh`
/// passes to `--toggle-collect` and `--dump-after`).
#[inline(never)]
fn icount_measured(f: &mut dyn FnMut() -> u64) -> u64 {
    f()
}

/// One case: its name and what it runs, the set-up uncounted, the part measured through
/// [`icount_measured`]. Returns its answer.
struct Case {
    name: String,
    run: Box<dyn Fn() -> u64>,
}

/// An agent kept as its element's value.
type Value = Agent<f32>;

/// The agents frame of a structure made by `make`: every agent inserted (or built in one go),
/// one frame uncounted, then one counted.
fn frame_case<I: SpatialIndex<f32, Value> + 'static>(
    name: &str,
    make: fn(&Agents<f32>) -> I,
) -> Case {
    Case {
        name: format!("frame {name}"),
        run: Box::new(move || {
            let agents = Mix::Uniform.agents(N);
            let mut index = make(&agents);
            let arena = agents.arena;
            let mut frame = || {
                index
                    .update_all(|_, agent, _| {
                        agent.step(&arena);
                        agent.aabb()
                    })
                    .expect("agents' boxes stay valid");
                index.maintain();
                let mut pairs = 0u64;
                let _ = index.for_each_pair(|_, _| {
                    pairs += 1;
                    ControlFlow::Continue(())
                });
                black_box(pairs)
            };
            frame();
            icount_measured(&mut frame)
        }),
    }
}

/// `agents` inserted one by one into `index`, then `maintain`.
fn inserted<I: SpatialIndex<f32, Value>>(mut index: I, agents: &Agents<f32>) -> I {
    for i in 0..agents.len() {
        index
            .insert(agents.aabb(i), agents.agent(i))
            .expect("agent boxes are valid");
    }
    index.maintain();
    index
}

/// A sample of the agents' boxes, for the structures sized from one.
fn boxes(agents: &Agents<f32>) -> Vec<Aabb<f32>> {
    agents.boxes().collect()
}

/// A frame case per dynamic structure, each made as `compare` makes it.
macro_rules! frame_cases {
    (oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:ident: $serial_ty:ident),* } }
        fixed { $($fixed:tt)* }) => {
        vec![
            $(frame_case(stringify!($name), made::<spatix::$ty<f32, Value>>),)*
            $(frame_case(stringify!($serial), made::<spatix::$serial_ty<f32, Value>>),)*
        ]
    };
}

/// A structure holding `agents`: built in one go where it has a bulk build, else set up from
/// their boxes ([`ListedIndex::for_sample`], as `compare` makes it) and filled by inserting.
fn made<I: ListedIndex<f32, Value>>(agents: &Agents<f32>) -> I {
    if I::BULK {
        let items = (0..agents.len()).map(|i| (agents.aabb(i), agents.agent(i)));
        return I::with_items(agents.world, items.collect()).expect("agent boxes are valid");
    }
    let index = I::for_sample(agents.world, &boxes(agents), agents.len());
    inserted(index.expect("the agents' world is valid"), agents)
}

/// The static structures' cases: build and queries, counted separately.
fn static_cases(cases: &mut Vec<Case>) {
    let items = || {
        let agents = Mix::Uniform.agents(N);
        let boxes: Vec<(Aabb<f32>, u32)> = agents.boxes().zip(0..).collect();
        (agents.world, boxes)
    };
    cases.push(Case {
        name: "build packed_index".into(),
        run: Box::new(move || {
            let (_, boxes) = items();
            icount_measured(&mut || {
                let index = PackedIndex::build(boxes.iter().copied()).expect("valid boxes");
                black_box(index.len() as u64)
            })
        }),
    });
    cases.push(Case {
        name: "query packed_index".into(),
        run: Box::new(move || {
            let (world, boxes) = items();
            let index = PackedIndex::build(boxes).expect("valid boxes");
            let squares = query_squares(&world, QUERIES, QUERY_SIDE, QUERIES_SEED);
            icount_measured(&mut || {
                let mut hits = 0u64;
                for square in &squares {
                    let _ = index.query(square, |_| {
                        hits += 1;
                        ControlFlow::Continue(())
                    });
                }
                black_box(hits)
            })
        }),
    });
    let points = || {
        let points = spatix_bench::points(N, spatix_workload::Layout::Uniform);
        let items: Vec<(Point<f32>, u32)> = points.iter().copied().zip(0..).collect();
        (points, items)
    };
    cases.push(Case {
        name: "build kd_tree".into(),
        run: Box::new(move || {
            let (_, items) = points();
            icount_measured(&mut || {
                let tree = KdTree::build(items.iter().copied()).expect("valid points");
                black_box(tree.len() as u64)
            })
        }),
    });
    cases.push(Case {
        name: "nearest kd_tree".into(),
        run: Box::new(move || {
            let (points, items) = points();
            let tree = KdTree::build(items).expect("valid points");
            let queries = queries_near(&points, QUERIES, QUERIES_SEED);
            let mut workspace = Workspace::with_capacity(64, 1024);
            icount_measured(&mut || {
                let mut found = 0u64;
                for q in &queries {
                    found += tree.nearest(*q, K, &mut workspace).len() as u64;
                }
                black_box(found)
            })
        }),
    });
}

fn main() {
    let mut cases = spatix::for_each_structure!(frame_cases);
    static_cases(&mut cases);
    let list = std::env::args().nth(1).is_some_and(|a| a == "--list");
    println!("icount: N = {N}, agents seed {AGENTS_SEED:#x}");
    for case in &cases {
        if list {
            println!("{}", case.name);
        } else {
            let answer = (case.run)();
            println!("{}\t{answer}", case.name);
        }
    }
}
