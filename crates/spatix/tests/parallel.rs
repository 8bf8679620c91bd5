//! `ParallelPairs` reports exactly the pairs of the serial pass, in each of its forms
//! (`par_for_each_pair`, `par_fold_pairs`, `par_collect_pairs`), on every structure that has
//! it, for several layouts (feature `rayon`).
#![cfg(feature = "rayon")]

use core::ops::ControlFlow;
use std::sync::Mutex;

use spatix::{
    Aabb, Handle, ListedIndex, PackedConfig, PackedIndex, PairBuffers, ParallelPairs, Quadtree,
    SpatialIndex, UniformGrid,
};
use spatix_workload::{Agents, Layout, Sizes};

/// A pair with its smaller handle first.
fn ordered(a: Handle, b: Handle) -> (Handle, Handle) {
    (a.min(b), a.max(b))
}

/// The pairs of the serial pass, each ordered, sorted.
fn serial_pairs<I: ParallelPairs<f64, u32>>(index: &I) -> Vec<(Handle, Handle)> {
    let mut serial = Vec::new();
    let _ = index.for_each_pair(|a, b| {
        serial.push(ordered(a.handle, b.handle));
        ControlFlow::Continue(())
    });
    serial.sort_unstable();
    serial
}

/// The pairs of every parallel form, each ordered and sorted, with the form's name.
fn parallel_pairs<I: ParallelPairs<f64, u32>>(
    index: &I,
    buffers: &mut PairBuffers,
) -> [(&'static str, Vec<(Handle, Handle)>); 3] {
    let shared = Mutex::new(Vec::new());
    let _ = index.par_for_each_pair(|a, b| {
        shared.lock().unwrap().push(ordered(a.handle, b.handle));
        ControlFlow::Continue(())
    });
    let folded = index.par_fold_pairs(
        Vec::new,
        |list, a, b| {
            list.push(ordered(a.handle, b.handle));
            ControlFlow::Continue(())
        },
        |mut list, more| {
            list.extend(more);
            list
        },
    );
    let ControlFlow::Continue(folded) = folded else {
        panic!("par_fold_pairs broke with no fold breaking");
    };
    index.par_collect_pairs(buffers);
    assert_eq!(
        buffers.len(),
        buffers.iter().count(),
        "PairBuffers::len counts the pairs"
    );
    assert_eq!(buffers.is_empty(), buffers.iter().next().is_none());
    let collected = buffers.iter().map(|(a, b)| ordered(a, b)).collect();
    let mut forms = [
        ("par_for_each_pair", shared.into_inner().unwrap()),
        ("par_fold_pairs", folded),
        ("par_collect_pairs", collected),
    ];
    for (_, pairs) in &mut forms {
        pairs.sort_unstable();
    }
    forms
}

/// A dynamic structure holding `items`, inserted in order.
fn inserted<I: SpatialIndex<f64, u32>>(mut index: I, items: &[(Aabb<f64>, u32)]) -> I {
    for &(b, i) in items {
        index.insert(b, i).unwrap();
    }
    index
}

/// The parallel forms against the serial pass on agents of several layouts; `build` makes
/// the structure for the agents' world holding the given elements.
fn same_pairs<I: ParallelPairs<f64, u32>>(build: impl Fn(&Agents<f64>, &[(Aabb<f64>, u32)]) -> I) {
    // One set of buffers for every layout: later passes reuse what earlier ones left.
    let mut buffers = PairBuffers::new();
    for (layout, sizes) in [
        (Layout::Uniform, Sizes::Uniform),
        (Layout::Clustered, Sizes::Mixed),
        (Layout::OutOfWorld, Sizes::Mixed),
    ] {
        let agents = Agents::<f64>::new(20_000, layout, sizes, 5);
        for (name, pairs) in parallel_pairs(&build(&agents, &[]), &mut buffers) {
            assert!(pairs.is_empty(), "{layout:?}: {name} on an empty structure");
        }
        let items: Vec<(Aabb<f64>, u32)> = agents.boxes().zip(0..).collect();
        let index = build(&agents, &items);
        let serial = serial_pairs(&index);
        assert!(
            serial.len() > 1000,
            "{layout:?}: too few pairs to mean anything"
        );
        for (name, pairs) in parallel_pairs(&index, &mut buffers) {
            assert_eq!(serial, pairs, "{layout:?} {sizes:?}: {name}");
        }
        // A second pass into the same buffers replaces the first one's pairs.
        index.par_collect_pairs(&mut buffers);
        assert_eq!(buffers.len(), serial.len(), "{layout:?}: a warm collect");

        let flow = index.par_for_each_pair(|_, _| ControlFlow::Break(()));
        assert!(
            flow.is_break(),
            "{layout:?}: a visitor that breaks stops the pass"
        );
        // A fold that breaks at its first pair: the pass says so, and the states hold at
        // least that pair and fewer than all.
        let flow = index.par_fold_pairs(
            || 0usize,
            |seen, _, _| {
                *seen += 1;
                ControlFlow::Break(())
            },
            |a, b| a + b,
        );
        let ControlFlow::Break(seen) = flow else {
            panic!("{layout:?}: a fold that breaks must stop the pass");
        };
        assert!(
            (1..serial.len()).contains(&seen),
            "{layout:?}: {seen} pairs seen after a break"
        );
    }
}

/// One `PairBuffers` passed to structures of different kinds in turn (each cuts its pass
/// into parts of its own type) collects each one's pairs.
#[test]
fn pair_buffers_serve_every_structure() {
    let agents = Agents::<f64>::new(5_000, Layout::Clustered, Sizes::Uniform, 9);
    let sample: Vec<Aabb<f64>> = agents.boxes().collect();
    let mut tree = Quadtree::for_element_size(agents.world, 4.0).unwrap();
    let mut grid = UniformGrid::auto(agents.world, &sample).unwrap();
    for (i, b) in agents.boxes().enumerate() {
        tree.insert(b, i as u32).unwrap();
        grid.insert(b, i as u32).unwrap();
    }
    let mut buffers = PairBuffers::new();
    for _ in 0..2 {
        for (name, index) in [("quadtree", &tree as &dyn Collect), ("grid", &grid)] {
            let serial = index.serial();
            assert!(serial.len() > 100, "{name}: too few pairs to mean anything");
            let mut collected = index.collect(&mut buffers);
            collected.sort_unstable();
            assert_eq!(serial, collected, "{name}");
        }
    }
}

/// The serial and the buffered pass of a structure, behind one object type.
trait Collect {
    fn serial(&self) -> Vec<(Handle, Handle)>;
    fn collect(&self, buffers: &mut PairBuffers) -> Vec<(Handle, Handle)>;
}

impl<I: ParallelPairs<f64, u32>> Collect for I {
    fn serial(&self) -> Vec<(Handle, Handle)> {
        serial_pairs(self)
    }

    fn collect(&self, buffers: &mut PairBuffers) -> Vec<(Handle, Handle)> {
        self.par_collect_pairs(buffers);
        buffers.iter().map(|(a, b)| ordered(a, b)).collect()
    }
}

/// One test per structure of `spatix::for_each_structure!` with a parallel pair pass, named
/// by its short name, each set up from the agents (`ListedIndex::for_sample`).
macro_rules! parallel_pairs_tests {
    (oracle { $($oracle:tt)* } dynamic { parallel { $($name:ident: $ty:ident),* } serial { $($serial:tt)* } }
        fixed { $($fixed:tt)* }) => {
        $(
            #[test]
            fn $name() {
                same_pairs(|a, items| {
                    let sample: Vec<Aabb<f64>> = a.boxes().collect();
                    let index = <spatix::$ty<f64, u32> as ListedIndex<f64, u32>>::for_sample(
                        a.world,
                        &sample,
                        items.len(),
                    );
                    inserted(index.unwrap(), items)
                });
            }
        )*
    };
}

mod parallel_pairs_equal_serial_pairs {
    use super::*;

    spatix::for_each_structure!(parallel_pairs_tests);
}

/// The packed index's parts unroll its recursion from the root down: with the default
/// nodes and with nodes of two (a deep tree), on a pool of two threads (a few parts near the
/// root) and of sixteen (parts many levels down).
#[test]
fn packed_index_parallel_pairs_equal_serial_pairs() {
    for threads in [2, 16] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            same_pairs(|_, items| PackedIndex::build(items.iter().copied()).unwrap());
            same_pairs(|_, items| {
                PackedIndex::with_config(items.iter().copied(), PackedConfig { node_size: 2 })
                    .unwrap()
            });
        });
    }
}
