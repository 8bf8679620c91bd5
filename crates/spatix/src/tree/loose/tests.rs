//! Focused unit tests of the loose quadtree's mechanics (the shared conformance suite covers
//! the contract).

use super::{LooseQuadtree, nothing};
use crate::TreeConfig;
use crate::base::handle::NIL;
use crate::base::pool::ListPool;
use crate::test_util::{bx, found, pairs};
use crate::tree::BRANCH;
use crate::{Aabb, BruteForce, Error, Handle, NodeKind, Point, SpatialIndex, SpatialQuery};

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 64.0, 64.0)
}

fn tree(max_elements: u32, max_depth: u32) -> LooseQuadtree<f64, u32> {
    let config = TreeConfig {
        max_elements,
        max_depth,
    };
    LooseQuadtree::with_config(world(), config).unwrap()
}

fn leaves(tree: &LooseQuadtree<f64, u32>) -> usize {
    let mut n = 0;
    tree.traverse(|node| n += usize::from(matches!(node.kind, NodeKind::Leaf { .. })));
    n
}

/// A 5 × 5 lattice of small boxes, split down to leaves of one or two elements.
fn lattice() -> (LooseQuadtree<f64, u32>, Vec<Handle>) {
    let mut tree = tree(1, 4);
    let handles = (0..25u32)
        .map(|i| {
            let x = f64::from(i % 5) * 12.0 + 4.0;
            let y = f64::from(i / 5) * 12.0 + 4.0;
            tree.insert(bx(x, y, x + 2.0, y + 2.0), i).unwrap()
        })
        .collect();
    tree.check_invariants().unwrap();
    (tree, handles)
}

#[test]
fn each_element_is_listed_once_in_the_leaf_of_its_centre() {
    let mut tree = tree(1, 5);
    let mut handles = Vec::new();
    for i in 0..20u32 {
        let x = f64::from(i % 5) * 12.0 + 1.0;
        let y = f64::from(i / 5) * 15.0 + 1.0;
        handles.push(tree.insert(bx(x, y, x + 3.0, y + 3.0), i).unwrap());
    }
    // A dragon over most of the world, and a box reaching far outside it.
    handles.push(tree.insert(bx(2.0, 2.0, 60.0, 50.0), 20).unwrap());
    handles.push(tree.insert(bx(50.0, -100.0, 58.0, 30.0), 21).unwrap());
    tree.check_invariants().unwrap();
    assert_eq!(tree.links.in_use(), tree.len(), "one list entry each");
    for h in handles {
        let slot = h.slot() as usize;
        let leaf = tree.leaves[slot];
        assert_ne!(tree.base.nodes[leaf as usize].count, BRANCH);
        let aabb = tree.slots.aabb(h.slot());
        assert!(super::owns(&tree.regions[leaf as usize], tree.centre(aabb)));
        assert!(tree.loose[leaf as usize].contains(aabb));
    }
}

#[test]
fn loose_boxes_grow_on_insert_and_overhang_their_quadrants() {
    let (mut tree, _) = lattice();
    let dragon = bx(5.0, 5.0, 40.0, 45.0);
    let h = tree.insert(dragon, 99).unwrap();
    let mut node = tree.leaves[h.slot() as usize];
    loop {
        assert!(tree.loose[node as usize].contains(&dragon), "node {node}");
        if node == 0 {
            break;
        }
        node = tree.parent(node);
    }
    let mut overhanging = 0;
    tree.traverse(|n| {
        if let Some(loose) = n.loose {
            overhanging += usize::from(!n.cell.contains(&loose));
        }
    });
    assert!(
        overhanging > 0,
        "the dragon's leaf reaches past its quadrant"
    );
    assert_eq!(
        tree.loose[0],
        tree.iter().fold(nothing(), |b, it| b.union(&it.aabb))
    );
}

#[test]
fn a_move_within_the_leaf_only_grows_boxes() {
    let (mut tree, handles) = lattice();
    tree.maintain();
    let h = handles[12];
    let slot = h.slot() as usize;
    let (leaf, entry) = (tree.leaves[slot], tree.entries[slot]);
    let (nodes, links) = (tree.base.nodes.clone(), tree.links.in_use());
    let before = tree.loose.clone();
    // Wider, with its centre in place: the leaf's box must grow, nothing else may change.
    let wider = bx(26.0, 27.5, 31.0, 28.5);
    assert!(!before[leaf as usize].contains(&wider));
    tree.update(h, wider).unwrap();
    assert_eq!(tree.base.nodes, nodes, "no node changes");
    assert_eq!(tree.links.in_use(), links);
    assert_eq!((tree.leaves[slot], tree.entries[slot]), (leaf, entry));
    assert_eq!(
        tree.links.link(entry).data,
        wider,
        "the list node's copy follows"
    );
    assert!(tree.loose[leaf as usize].contains(&wider));
    let mut ancestors = vec![leaf];
    while *ancestors.last().unwrap() != 0 {
        ancestors.push(tree.parent(*ancestors.last().unwrap()));
    }
    for (n, (old, new)) in before.iter().zip(&tree.loose).enumerate() {
        if !ancestors.contains(&(n as u32)) {
            assert_eq!(old, new, "node {n} is off the element's path");
        }
    }
    tree.check_invariants().unwrap();
}

#[test]
fn a_move_out_of_the_leaf_refiles_by_centre() {
    let (mut tree, handles) = lattice();
    let h = handles[0];
    let old = tree.leaves[h.slot() as usize];
    tree.update(h, bx(50.0, 50.0, 53.0, 53.0)).unwrap();
    let new = tree.leaves[h.slot() as usize];
    assert_ne!(old, new);
    assert!(super::owns(
        &tree.regions[new as usize],
        Point::new(51.5, 51.5)
    ));
    tree.check_invariants().unwrap();
}

#[test]
fn maintain_shrinks_every_box_to_fit() {
    let (mut tree, handles) = lattice();
    for (i, &h) in handles.iter().enumerate() {
        if i % 2 == 0 {
            tree.remove(h).unwrap();
        } else {
            // Shrink each box towards its centre.
            let b = tree.get(h).unwrap().aabb;
            tree.update(
                h,
                bx(b.min.x + 0.5, b.min.y + 0.5, b.max.x - 0.5, b.max.y - 0.5),
            )
            .unwrap();
        }
    }
    let exact = tree.iter().fold(nothing(), |b, it| b.union(&it.aabb));
    assert_ne!(
        tree.loose[0], exact,
        "removals and moves leave boxes too large"
    );
    tree.maintain();
    tree.check_invariants().unwrap();
    assert_eq!(tree.loose[0], exact);
    // Every leaf's box is exactly the union of its elements'.
    let mut fitted = vec![nothing(); tree.base.nodes.len()];
    for item in tree.iter() {
        let leaf = tree.leaves[item.handle.slot() as usize] as usize;
        fitted[leaf] = fitted[leaf].union(&item.aabb);
    }
    for item in tree.iter() {
        let leaf = tree.leaves[item.handle.slot() as usize] as usize;
        assert_eq!(tree.loose[leaf], fitted[leaf], "leaf {leaf}");
    }
    tree.traverse(|n| {
        if n.kind == (NodeKind::Leaf { elements: 0 }) {
            assert_eq!(n.loose, None, "an empty leaf has no loose box");
        }
    });
}

#[test]
fn maintain_collapses_empty_branches_at_once_and_groups_are_reused() {
    let (mut tree, handles) = lattice();
    let nodes_when_full = tree.base.nodes.len();
    assert!(leaves(&tree) > 4);
    for h in handles {
        tree.remove(h).unwrap();
    }
    assert!(leaves(&tree) > 4, "removal alone does not collapse");
    tree.maintain();
    tree.check_invariants().unwrap();
    assert_eq!(leaves(&tree), 1, "one call collapses every level");
    let mut empty = true;
    tree.traverse(|n| empty &= n.loose.is_none());
    assert!(empty, "an empty tree has no loose box");
    for i in 0..25u32 {
        let x = f64::from(i % 5) * 12.0 + 4.0;
        let y = f64::from(i / 5) * 12.0 + 4.0;
        tree.insert(bx(x, y, x + 2.0, y + 2.0), i).unwrap();
    }
    assert_eq!(
        tree.base.nodes.len(),
        nodes_when_full,
        "freed groups are reused"
    );
    tree.check_invariants().unwrap();
}

#[test]
fn elements_whose_centres_are_far_apart_still_pair() {
    let mut tree = tree(1, 6);
    let mut brute = BruteForce::new();
    let boxes = [
        // Two dragons whose centres lie in opposite quadrants, overlapping in the middle.
        bx(0.0, 0.0, 40.0, 40.0),
        bx(30.0, 30.0, 64.0, 64.0),
        // Small elements far from both centres, under one dragon or both.
        bx(35.0, 35.0, 36.0, 36.0),
        bx(2.0, 38.0, 3.0, 39.0),
        bx(60.0, 31.0, 61.0, 32.0),
        bx(50.0, 2.0, 51.0, 3.0),
        // A box reaching in from far outside the world.
        bx(-200.0, 10.0, 1.0, 11.0),
    ];
    for (i, b) in boxes.iter().enumerate() {
        tree.insert(*b, i as u32).unwrap();
        brute.insert(*b, i as u32).unwrap();
    }
    tree.check_invariants().unwrap();
    let leaf = |i: usize| tree.leaves[i];
    assert_ne!(leaf(0), leaf(1), "the dragons are in different leaves");
    assert_eq!(pairs(&tree), pairs(&brute));
    assert!(pairs(&tree).contains(&(0, 1)));
    assert!(pairs(&tree).contains(&(0, 6)));
}

#[test]
fn pairs_and_queries_are_exact_with_stale_boxes() {
    let (mut tree, handles) = lattice();
    let mut brute = BruteForce::new();
    for i in 0..25u32 {
        let x = f64::from(i % 5) * 12.0 + 4.0;
        let y = f64::from(i / 5) * 12.0 + 4.0;
        brute.insert(bx(x, y, x + 2.0, y + 2.0), i).unwrap();
    }
    let brute_handles: Vec<Handle> = brute.iter().map(|it| it.handle).collect();
    // Everything crowds into the middle; no maintain, so the old boxes stay grown.
    for (i, (&h, &g)) in handles.iter().zip(&brute_handles).enumerate() {
        let x = 28.0 + f64::from(i as u32 % 5) * 1.5;
        let b = bx(x, 30.0, x + 2.0, 32.0);
        tree.update(h, b).unwrap();
        brute.update(g, b).unwrap();
    }
    tree.check_invariants().unwrap();
    assert_eq!(pairs(&tree), pairs(&brute));
    let area = bx(27.0, 29.0, 31.0, 33.0);
    assert_eq!(found(&tree, &area), found(&brute, &area));
}

#[test]
fn coincident_centres_stop_at_the_depth_limit() {
    let mut tree = tree(2, 5);
    for i in 0..200u32 {
        tree.insert(bx(10.0, 10.0, 10.0, 10.0), i).unwrap();
    }
    tree.check_invariants().unwrap();
    let mut deepest = 0;
    tree.traverse(|n| deepest = deepest.max(n.depth));
    assert_eq!(deepest, 5);
    assert_eq!(pairs(&tree).len(), 200 * 199 / 2);
}

#[test]
fn bad_parameters_and_boxes_are_errors() {
    for (max_elements, max_depth) in [(0, 3), (8, 31), (65537, 3)] {
        let config = TreeConfig {
            max_elements,
            max_depth,
        };
        assert!(matches!(
            LooseQuadtree::<f64, ()>::with_config(world(), config),
            Err(Error::InvalidParameter(_))
        ));
    }
    let inverted = Aabb {
        min: Point::new(1.0, 0.0),
        max: Point::new(0.0, 1.0),
    };
    assert_eq!(
        LooseQuadtree::<f64, ()>::new(inverted).err(),
        Some(Error::InvalidAabb)
    );
    let mut tree = tree(8, 8);
    let nan = Aabb {
        min: Point::new(f64::NAN, 0.0),
        max: Point::new(1.0, 1.0),
    };
    assert_eq!(tree.insert(nan, 1), Err(Error::InvalidAabb));
    let h = tree.insert(bx(1.0, 1.0, 2.0, 2.0), 2).unwrap();
    assert_eq!(tree.update(h, nan), Err(Error::InvalidAabb));
    assert_eq!(tree.remove(h), Some(2));
    assert_eq!(tree.remove(h), None);
    assert_eq!(
        tree.update(h, bx(1.0, 1.0, 2.0, 2.0)),
        Err(Error::StaleHandle)
    );
    tree.check_invariants().unwrap();
}

#[test]
fn for_element_size_scales_the_depth_with_the_world() {
    let small = LooseQuadtree::<f64, ()>::for_element_size(bx(0.0, 0.0, 100.0, 100.0), 4.0)
        .unwrap()
        .config();
    let large = LooseQuadtree::<f64, ()>::for_element_size(bx(0.0, 0.0, 10_000.0, 10_000.0), 4.0)
        .unwrap()
        .config();
    assert_eq!(small.max_depth, 1);
    assert_eq!(large.max_depth, 7);
    let degenerate = LooseQuadtree::<f64, ()>::for_element_size(bx(0.0, 0.0, 0.0, 0.0), 0.0)
        .unwrap()
        .config();
    assert_eq!(degenerate.max_depth, 0);
    assert!(degenerate.validate().is_ok());
}

#[test]
fn list_pool_removes_a_known_node_in_place() {
    let mut pool = ListPool::<u8>::default();
    let mut head = NIL;
    let nodes: Vec<u32> = (0..4)
        .map(|i| pool.push_with(&mut head, i, i as u8))
        .collect();
    // The list is 3, 2, 1, 0; removing node 1 (item 1) moves the head's item 3 into it.
    assert_eq!(pool.remove_node(&mut head, nodes[1]), Some(3));
    assert_eq!(pool.link(nodes[1]).data, 3);
    let mut items: Vec<u32> = pool.items(head).collect();
    items.sort_unstable();
    assert_eq!(items, [0, 2, 3]);
    // Removing the head itself moves nothing.
    let first = head;
    assert_eq!(pool.remove_node(&mut head, first), None);
    assert_eq!(pool.items(head).count(), 2);
    assert_eq!(pool.in_use(), 2);
}
