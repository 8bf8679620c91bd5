//! Focused unit tests of the MX-CIF quadtree's mechanics (the shared conformance suite covers
//! the contract).

use core::ops::ControlFlow;

use super::{MxCifQuadtree, Node};
use crate::TreeConfig;
use crate::test_util::{bx, pairs};
use crate::{Aabb, Error, Handle, NodeKind, Point, SpatialIndex, SpatialQuery, Workspace};

fn world() -> Aabb<f64> {
    Aabb::new(Point::new(0.0, 0.0), Point::new(64.0, 64.0)).unwrap()
}

fn tree(max_elements: u32, max_depth: u32) -> MxCifQuadtree<f64, u32> {
    let config = TreeConfig {
        max_elements,
        max_depth,
    };
    MxCifQuadtree::with_config(world(), config).unwrap()
}

/// The depth of the node element `h` sits in.
fn depth(tree: &MxCifQuadtree<f64, u32>, h: Handle) -> u8 {
    let node = tree.places[h.slot() as usize].node;
    tree.frames[node as usize].depth
}

/// Four small boxes, one in the middle of each quadrant of the world: enough, with a
/// threshold of 1, to split the root.
fn fill_quadrants(tree: &mut MxCifQuadtree<f64, u32>) -> Vec<Handle> {
    [(14.0, 14.0), (46.0, 14.0), (14.0, 46.0), (46.0, 46.0)]
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| tree.insert(bx(x, y, x + 2.0, y + 2.0), i as u32).unwrap())
        .collect()
}

#[test]
fn node_is_sixteen_bytes() {
    assert_eq!(size_of::<Node>(), 16);
    assert_eq!(size_of::<super::Place>(), 8);
}

#[test]
fn elements_live_in_the_smallest_node_that_contains_them() {
    let mut tree = tree(1, 6);
    let corners = fill_quadrants(&mut tree);
    let small = tree.insert(bx(1.0, 1.0, 1.5, 1.5), 10).unwrap();
    let straddler = tree.insert(bx(30.0, 5.0, 34.0, 6.0), 11).unwrap();
    let touching = tree.insert(bx(28.0, 50.0, 32.0, 51.0), 12).unwrap();
    let dragon = tree.insert(bx(10.0, 10.0, 50.0, 50.0), 13).unwrap();
    tree.check_invariants().unwrap();
    assert!(corners.iter().all(|&h| depth(&tree, h) >= 1));
    assert!(depth(&tree, small) >= 2, "a small box goes down");
    assert_eq!(
        depth(&tree, straddler),
        0,
        "a box across the centre line stays up"
    );
    assert_eq!(
        depth(&tree, touching),
        0,
        "a box touching a split line stays above it (closed boxes touch across it)"
    );
    assert_eq!(depth(&tree, dragon), 0);
    let stored: u32 = tree
        .base
        .nodes
        .iter()
        .filter(|n| n.len != super::FREE)
        .map(|n| n.len)
        .sum();
    assert_eq!(
        stored as usize,
        tree.len(),
        "each element is stored exactly once"
    );
}

#[test]
fn removal_swaps_the_last_element_into_the_hole() {
    let mut tree = tree(16, 4);
    let hs: Vec<Handle> = (0..3u32)
        .map(|i| {
            let x = f64::from(i) * 3.0 + 1.0;
            tree.insert(bx(x, 1.0, x + 1.0, 2.0), i).unwrap()
        })
        .collect();
    let first = tree.places[hs[0].slot() as usize];
    assert_eq!(tree.places[hs[2].slot() as usize].at, first.at + 2);
    assert_eq!(tree.remove(hs[0]), Some(0));
    assert_eq!(
        tree.places[hs[2].slot() as usize].at,
        first.at,
        "the last moved in"
    );
    assert_eq!(
        tree.places[hs[1].slot() as usize].at,
        first.at + 1,
        "the rest stay"
    );
    assert_eq!(tree.base.nodes[first.node as usize].len, 2);
    tree.check_invariants().unwrap();
}

#[test]
fn branches_merge_in_maintain_not_on_removal() {
    let mut tree = tree(4, 4);
    let hs = (0..5u32)
        .map(|i| {
            let x = f64::from(i) * 12.0 + 1.0;
            tree.insert(bx(x, 1.0, x + 1.0, 2.0), i).unwrap()
        })
        .collect::<Vec<_>>();
    assert!(
        tree.base.nodes[0].is_branch(),
        "five elements split a leaf of four"
    );
    let nodes = tree.base.nodes.len();
    tree.remove(hs[0]);
    tree.check_invariants().unwrap();
    assert!(
        tree.base.nodes[0].is_branch(),
        "removal alone does not merge"
    );
    tree.maintain();
    tree.check_invariants().unwrap();
    assert!(
        !tree.base.nodes[0].is_branch(),
        "four elements fit one leaf again"
    );
    assert_eq!(tree.base.nodes[0].len, 4);
    assert_ne!(
        tree.base.free_group,
        crate::base::handle::NIL,
        "the child group is free"
    );
    tree.insert(bx(40.0, 40.0, 41.0, 41.0), 9).unwrap();
    assert!(tree.base.nodes[0].is_branch());
    assert_eq!(tree.base.nodes.len(), nodes, "the freed group is reused");
    tree.check_invariants().unwrap();
}

#[test]
fn a_whole_emptied_subtree_folds_in_one_maintain() {
    let mut tree = tree(1, 6);
    let hs: Vec<Handle> = (0..40u32)
        .map(|i| {
            let x = f64::from(i % 8) * 8.0 + 2.0;
            let y = f64::from(i / 8) * 8.0 + 2.0;
            tree.insert(bx(x, y, x + 1.0, y + 1.0), i).unwrap()
        })
        .collect();
    for &h in &hs[1..] {
        tree.remove(h);
    }
    tree.maintain();
    tree.check_invariants().unwrap();
    let mut nodes = 0;
    tree.traverse(|_, _, _| nodes += 1);
    assert_eq!(nodes, 1, "one element left: the tree is a single leaf");
}

#[test]
fn update_inside_the_node_only_moves_the_box() {
    let mut tree = tree(2, 5);
    fill_quadrants(&mut tree);
    let h = tree.insert(bx(15.0, 15.0, 15.5, 15.5), 9).unwrap();
    let (nodes, places) = (tree.base.nodes.clone(), tree.places.clone());
    let moved = bx(15.2, 15.1, 15.7, 15.6);
    tree.update(h, moved).unwrap();
    assert_eq!(tree.base.nodes, nodes);
    assert_eq!(tree.places[h.slot() as usize], places[h.slot() as usize]);
    assert_eq!(
        tree.runs.boxes[places[h.slot() as usize].at as usize],
        moved
    );
    tree.check_invariants().unwrap();
    let far = bx(60.0, 60.0, 60.5, 60.5);
    tree.update(h, far).unwrap();
    assert_ne!(
        tree.places[h.slot() as usize].node,
        places[h.slot() as usize].node
    );
    tree.check_invariants().unwrap();
}

#[test]
fn a_straddler_that_moves_off_the_line_goes_down() {
    let mut tree = tree(1, 5);
    fill_quadrants(&mut tree);
    let h = tree.insert(bx(31.0, 5.0, 33.0, 6.0), 9).unwrap();
    assert_eq!(depth(&tree, h), 0);
    tree.update(h, bx(34.0, 5.0, 36.0, 6.0)).unwrap();
    assert!(depth(&tree, h) >= 1, "off the centre line it fits a child");
    tree.check_invariants().unwrap();
}

#[test]
fn coincident_points_stop_at_the_depth_limit() {
    let mut tree = tree(2, 5);
    for i in 0..100u32 {
        tree.insert(bx(3.0, 3.0, 3.0, 3.0), i).unwrap();
    }
    tree.check_invariants().unwrap();
    let mut deepest = 0;
    tree.traverse(|_, d, _| deepest = deepest.max(d));
    assert_eq!(deepest, 5);
    assert_eq!(pairs(&tree).len(), 100 * 99 / 2);
}

#[test]
fn pairs_cross_levels_each_once() {
    let mut tree = tree(1, 6);
    let _ = fill_quadrants(&mut tree);
    tree.insert(bx(13.0, 13.0, 47.0, 47.0), 10).unwrap(); // overlaps all four corners
    tree.insert(bx(31.0, 0.0, 33.0, 64.0), 11).unwrap(); // the centre line: meets 10
    tree.insert(bx(15.0, 15.0, 15.5, 15.5), 12).unwrap(); // inside corner 0
    tree.check_invariants().unwrap();
    assert_eq!(
        pairs(&tree),
        [
            (0, 10),
            (0, 12),
            (1, 10),
            (2, 10),
            (3, 10),
            (10, 11),
            (10, 12)
        ]
    );
}

#[test]
fn runs_compact_once_a_quarter_is_free() {
    let mut tree = tree(8, 6);
    let hs: Vec<Handle> = (0..2000u32)
        .map(|i| {
            let x = f64::from(i % 50) * 1.25 + 0.3;
            let y = f64::from(i / 50) * 1.5 + 0.2;
            tree.insert(bx(x, y, x + 0.4, y + 0.4), i).unwrap()
        })
        .collect();
    for (i, &h) in hs.iter().enumerate() {
        if i % 5 != 0 {
            tree.remove(h);
        }
    }
    assert!(
        tree.runs.free_entries() * 4 > tree.runs.allocated(),
        "{} of {} free",
        tree.runs.free_entries(),
        tree.runs.allocated()
    );
    let before = pairs(&tree);
    tree.maintain();
    tree.check_invariants().unwrap();
    assert_eq!(tree.runs.free_entries(), 0);
    let in_use: usize = tree
        .base
        .nodes
        .iter()
        .filter(|n| n.len != super::FREE)
        .map(|n| n.cap as usize)
        .sum();
    assert_eq!(tree.runs.allocated(), in_use, "the runs tile the arrays");
    assert_eq!(pairs(&tree), before);
}

#[test]
fn out_of_world_elements_sit_on_the_border_and_are_found() {
    let mut tree = tree(1, 5);
    fill_quadrants(&mut tree);
    let far = tree.insert(bx(500.0, 10.0, 501.0, 11.0), 7).unwrap();
    tree.check_invariants().unwrap();
    assert!(
        depth(&tree, far) >= 1,
        "clamped onto the right border, it goes down"
    );
    let mut found = Vec::new();
    let _ = tree.query(&bx(499.0, 0.0, 600.0, 20.0), |item| {
        found.push(item.handle);
        ControlFlow::Continue(())
    });
    assert_eq!(found, [far]);
    let mut ws = Workspace::new();
    assert_eq!(
        tree.nearest(Point::new(900.0, 10.0), 1, &mut ws)[0].handle,
        far
    );
}

#[test]
fn traverse_reports_every_node_with_its_box() {
    let mut tree = tree(1, 3);
    fill_quadrants(&mut tree);
    let mut seen = Vec::new();
    tree.traverse(|aabb, depth, kind| seen.push((*aabb, depth, kind)));
    assert_eq!(seen[0], (world(), 0, NodeKind::Branch));
    assert_eq!(seen.len(), 5);
    assert!(
        seen[1..]
            .iter()
            .all(|&(b, d, k)| d == 1 && b.size().x == 32.0 && k == NodeKind::Leaf { elements: 1 })
    );
}

#[test]
fn bad_parameters_and_boxes_are_errors() {
    let bad = |max_elements, max_depth| TreeConfig {
        max_elements,
        max_depth,
    };
    assert!(MxCifQuadtree::<f64, ()>::with_config(world(), bad(0, 4)).is_err());
    assert!(MxCifQuadtree::<f64, ()>::with_config(world(), bad(4, 31)).is_err());
    let inverted = Aabb {
        min: Point::new(1.0, 1.0),
        max: Point::new(0.0, 0.0),
    };
    assert_eq!(
        MxCifQuadtree::<f64, ()>::new(inverted).err(),
        Some(Error::InvalidAabb)
    );
    let mut tree = tree(4, 4);
    let nan = Aabb {
        min: Point::new(f64::NAN, 0.0),
        max: Point::new(1.0, 1.0),
    };
    assert_eq!(tree.insert(nan, 1), Err(Error::InvalidAabb));
    let h = tree.insert(bx(1.0, 1.0, 2.0, 2.0), 1).unwrap();
    assert_eq!(tree.update(h, nan), Err(Error::InvalidAabb));
    assert_eq!(tree.remove(h), Some(1));
    assert_eq!(tree.remove(h), None);
    assert_eq!(
        tree.update(h, bx(0.0, 0.0, 1.0, 1.0)),
        Err(Error::StaleHandle)
    );
    tree.check_invariants().unwrap();
}

#[test]
fn deepest_nodes_are_about_twelve_elements_wide() {
    let w = Aabb::new(Point::new(0.0f32, 0.0), Point::new(3162.0, 3162.0)).unwrap();
    let depth = |size: f32| {
        let tree = MxCifQuadtree::<f32, ()>::for_element_size(w, size).unwrap();
        tree.config().max_depth
    };
    assert_eq!(depth(4.0), 6);
    assert_eq!(depth(0.0), 0);
    assert_eq!(depth(1e-30), 30);
}
