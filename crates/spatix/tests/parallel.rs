//! `ParallelPairs` reports exactly the pairs of the serial pass, on every structure that has
//! it, for several layouts (feature `rayon`).
#![cfg(feature = "rayon")]

use core::ops::ControlFlow;
use std::sync::Mutex;

use spatix::{
    Aabb, HierarchicalGrid, LooseGrid, LooseQuadtree, MxCifQuadtree, ParallelPairs, PointGrid,
    Quadtree, SweepGrid, UniformGrid,
};
use spatix_workload::{Agents, Layout, Sizes};

fn same_pairs<I: ParallelPairs<f64, u32>>(make: impl Fn(&Agents<f64>) -> I) {
    for (layout, sizes) in [
        (Layout::Uniform, Sizes::Uniform),
        (Layout::Clustered, Sizes::Mixed),
        (Layout::OutOfWorld, Sizes::Mixed),
    ] {
        let agents = Agents::<f64>::new(20_000, layout, sizes, 5);
        let mut index = make(&agents);
        for (i, b) in agents.boxes().enumerate() {
            index.insert(b, i as u32).unwrap();
        }
        let mut serial = Vec::new();
        let _ = index.for_each_pair(|a, b| {
            serial.push((*a.value.min(b.value), *a.value.max(b.value)));
            ControlFlow::Continue(())
        });
        let parallel = Mutex::new(Vec::new());
        let _ = index.par_for_each_pair(|a, b| {
            let pair = (*a.value.min(b.value), *a.value.max(b.value));
            parallel.lock().unwrap().push(pair);
            ControlFlow::Continue(())
        });
        let mut parallel = parallel.into_inner().unwrap();
        serial.sort_unstable();
        parallel.sort_unstable();
        assert!(
            serial.len() > 1000,
            "{layout:?}: too few pairs to mean anything"
        );
        assert_eq!(serial, parallel, "{layout:?} {sizes:?}");
        let flow = index.par_for_each_pair(|_, _| ControlFlow::Break(()));
        assert!(
            flow.is_break(),
            "{layout:?}: a visitor that breaks stops the pass"
        );
    }
}

#[test]
fn quadtree_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| Quadtree::for_element_size(a.world, 4.0).unwrap());
}

#[test]
fn grid_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| {
        let sample: Vec<Aabb<f64>> = a.boxes().collect();
        UniformGrid::auto(a.world, &sample).unwrap()
    });
}

#[test]
fn point_grid_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| {
        let sample: Vec<Aabb<f64>> = a.boxes().collect();
        PointGrid::auto(a.world, &sample).unwrap()
    });
}

#[test]
fn hierarchical_grid_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| {
        let sample: Vec<Aabb<f64>> = a.boxes().collect();
        HierarchicalGrid::auto(a.world, &sample).unwrap()
    });
}

#[test]
fn loose_grid_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| {
        let sample: Vec<Aabb<f64>> = a.boxes().collect();
        LooseGrid::auto(a.world, &sample).unwrap()
    });
}

#[test]
fn mxcif_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| MxCifQuadtree::for_element_size(a.world, 4.0).unwrap());
}

#[test]
fn loose_quadtree_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| LooseQuadtree::for_element_size(a.world, 4.0).unwrap());
}

#[test]
fn sweep_grid_parallel_pairs_equal_serial_pairs() {
    same_pairs(|a| {
        let sample: Vec<Aabb<f64>> = a.boxes().collect();
        SweepGrid::auto(a.world, &sample).unwrap()
    });
}
