//! Focused unit tests of the tight quadtree's mechanics (the shared conformance suite covers
//! the contract).

use core::ops::ControlFlow;

use super::{Node, Quadtree};
use crate::TreeConfig;
use crate::test_util::bx;
use crate::{Aabb, BruteForce, Error, NodeKind, Point, SpatialIndex, SpatialQuery, Workspace};

fn world() -> Aabb<f64> {
    Aabb::new(Point::new(0.0, 0.0), Point::new(64.0, 64.0)).unwrap()
}

fn leaves(tree: &Quadtree<f64, u32>) -> usize {
    let mut n = 0;
    tree.traverse(|_, _, kind| n += usize::from(matches!(kind, NodeKind::Leaf { .. })));
    n
}

fn pair_count<I: SpatialIndex<f64, u32>>(index: &I) -> usize {
    let mut n = 0;
    let _ = index.for_each_pair(|_, _| {
        n += 1;
        ControlFlow::Continue(())
    });
    n
}

#[test]
fn node_is_eight_bytes() {
    assert_eq!(size_of::<Node>(), 8);
}

#[test]
fn splits_past_the_threshold_and_collapses_lazily() {
    let mut tree = Quadtree::new(world()).unwrap();
    let mut handles = Vec::new();
    for i in 0..9u32 {
        let x = f64::from(i) * 7.0 + 0.5;
        handles.push(tree.insert(bx(x, x, x + 1.0, x + 1.0), i).unwrap());
        tree.check_invariants().unwrap();
    }
    assert!(leaves(&tree) > 1, "nine elements split a leaf of eight");
    for h in handles {
        tree.remove(h).unwrap();
        tree.check_invariants().unwrap();
    }
    assert!(leaves(&tree) > 1, "removal alone does not collapse");
    for _ in 0..8 {
        tree.maintain();
        tree.check_invariants().unwrap();
    }
    assert_eq!(
        leaves(&tree),
        1,
        "maintain collapses one level per call down to the root"
    );
}

#[test]
fn freed_groups_are_reused() {
    let mut tree = Quadtree::new(world()).unwrap();
    for round in 0..5u32 {
        let hs: Vec<_> = (0..40u32)
            .map(|i| {
                let x = f64::from(i % 8) * 8.0 + 1.0;
                let y = f64::from(i / 8) * 8.0 + 1.0;
                tree.insert(bx(x, y, x + 2.0, y + 2.0), i + round).unwrap()
            })
            .collect();
        let nodes_after_fill = tree.base.nodes.len();
        for h in hs {
            tree.remove(h);
        }
        for _ in 0..10 {
            tree.maintain();
        }
        tree.check_invariants().unwrap();
        if round > 0 {
            assert_eq!(
                tree.base.nodes.len(),
                nodes_after_fill,
                "no new nodes once warm"
            );
        }
    }
}

#[test]
fn update_inside_the_leaf_only_moves_the_box() {
    let mut tree = Quadtree::new(world()).unwrap();
    for i in 0..30u32 {
        let x = f64::from(i % 6) * 10.0 + 2.0;
        let y = f64::from(i / 6) * 10.0 + 2.0;
        tree.insert(bx(x, y, x + 1.0, y + 1.0), i).unwrap();
    }
    let h = tree.insert(bx(33.0, 33.0, 34.0, 34.0), 99).unwrap();
    let nodes = tree.base.nodes.clone();
    let links = tree.links.in_use();
    let home = tree.homes[h.slot() as usize];
    assert!(home.fits(&bx(33.2, 33.2, 34.2, 34.2)));
    assert_ne!(
        tree.base.nodes[home.node as usize].count,
        super::BRANCH,
        "its home is its leaf"
    );
    tree.update(h, bx(33.2, 33.2, 34.2, 34.2)).unwrap();
    assert_eq!(tree.base.nodes, nodes);
    assert_eq!(tree.links.in_use(), links);
    tree.check_invariants().unwrap();
}

#[test]
fn coincident_points_stop_at_the_depth_limit() {
    let config = TreeConfig {
        max_elements: 2,
        max_depth: 5,
    };
    let mut tree = Quadtree::with_config(world(), config).unwrap();
    let mut oracle = BruteForce::new();
    for i in 0..200u32 {
        tree.insert(bx(10.0, 10.0, 10.0, 10.0), i).unwrap();
        oracle.insert(bx(10.0, 10.0, 10.0, 10.0), i).unwrap();
    }
    tree.check_invariants().unwrap();
    assert_eq!(pair_count(&tree), 200 * 199 / 2);
    assert_eq!(pair_count(&oracle), 200 * 199 / 2);
}

#[test]
fn elements_on_split_lines_and_outside_the_world_are_found_once() {
    let mut tree = Quadtree::with_config(
        world(),
        TreeConfig {
            max_elements: 1,
            max_depth: 6,
        },
    )
    .unwrap();
    let mut oracle = BruteForce::new();
    let boxes = [
        bx(32.0, 32.0, 32.0, 32.0),
        bx(16.0, 0.0, 48.0, 64.0),
        bx(-10.0, -10.0, -5.0, -5.0),
        bx(70.0, 10.0, 80.0, 20.0),
        bx(-100.0, 30.0, 200.0, 31.0),
        bx(64.0, 64.0, 64.0, 64.0),
        bx(0.0, 0.0, 8.0, 8.0),
    ];
    for (i, b) in boxes.iter().enumerate() {
        tree.insert(*b, i as u32).unwrap();
        oracle.insert(*b, i as u32).unwrap();
        tree.check_invariants().unwrap();
    }
    assert_eq!(pair_count(&tree), pair_count(&oracle));
    for area in [
        bx(-20.0, -20.0, -6.0, -6.0),
        bx(75.0, 0.0, 90.0, 15.0),
        bx(0.0, 0.0, 64.0, 64.0),
        bx(32.0, 32.0, 32.0, 32.0),
    ] {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let _ = tree.query(&area, |it| {
            a.push(*it.value);
            ControlFlow::Continue(())
        });
        let _ = oracle.query(&area, |it| {
            b.push(*it.value);
            ControlFlow::Continue(())
        });
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "query {area:?}");
    }
    let mut ws = Workspace::new();
    let far = tree.nearest(Point::new(-50.0, -50.0), 2, &mut ws).to_vec();
    let expect = oracle
        .nearest(Point::new(-50.0, -50.0), 2, &mut ws)
        .to_vec();
    assert_eq!(
        far.iter().map(|n| n.distance).collect::<Vec<_>>(),
        expect.iter().map(|n| n.distance).collect::<Vec<_>>()
    );
}

#[test]
fn bad_parameters_and_boxes_are_errors() {
    assert!(
        Quadtree::<f64, ()>::with_config(
            world(),
            TreeConfig {
                max_elements: 0,
                max_depth: 3
            }
        )
        .is_err()
    );
    assert!(
        Quadtree::<f64, ()>::with_config(
            world(),
            TreeConfig {
                max_elements: 8,
                max_depth: 31
            }
        )
        .is_err()
    );
    let bad_world = Aabb {
        min: Point::new(1.0, 0.0),
        max: Point::new(0.0, 1.0),
    };
    assert_eq!(
        Quadtree::<f64, ()>::new(bad_world).err(),
        Some(Error::InvalidAabb)
    );
    let mut tree = Quadtree::new(world()).unwrap();
    let nan = Aabb {
        min: Point::new(f64::NAN, 0.0),
        max: Point::new(1.0, 1.0),
    };
    assert_eq!(tree.insert(nan, 1u32), Err(Error::InvalidAabb));
    let h = tree.insert(bx(1.0, 1.0, 2.0, 2.0), 2).unwrap();
    assert_eq!(tree.update(h, nan), Err(Error::InvalidAabb));
    assert_eq!(tree.remove(h), Some(2));
    assert_eq!(
        tree.update(h, bx(1.0, 1.0, 2.0, 2.0)),
        Err(Error::StaleHandle)
    );
    tree.check_invariants().unwrap();
}

#[test]
fn worlds_too_thin_to_halve_do_not_multiply_entries() {
    let thin = [
        Aabb::new(Point::new(5.0, 5.0), Point::new(5.0, 5.0)).unwrap(),
        Aabb::new(Point::new(5.0, 0.0), Point::new(5.0, 64.0)).unwrap(),
        // At f64 precision: the whole world is a few ulps wide.
        Aabb::new(Point::new(1e16, 1e16), Point::new(1e16 + 8.0, 1e16 + 8.0)).unwrap(),
    ];
    for world in thin {
        let config = TreeConfig {
            max_elements: 2,
            max_depth: TreeConfig::MAX_DEPTH,
        };
        let mut tree = Quadtree::with_config(world, config).unwrap();
        let mut oracle = BruteForce::new();
        for i in 0..100u32 {
            // Points (each in at most four leaves), many of them coincident.
            let c = world.center();
            let y = world.min.y + f64::from(i % 10) * (world.max.y - world.min.y) / 10.0;
            let b = bx(c.x, y, c.x, y);
            tree.insert(b, i).unwrap();
            oracle.insert(b, i).unwrap();
        }
        tree.check_invariants().unwrap();
        assert!(
            tree.links.in_use() <= 100 * 4,
            "{world:?}: {} entries",
            tree.links.in_use()
        );
        assert_eq!(pair_count(&tree), pair_count(&oracle), "{world:?}");
    }
}

/// A world made long and thin by one stray box (the box around 20,000 boxes over
/// [0, 20,000]², and one at x = -10^12) sized by `for_element_size`: the depth stays low
/// enough across the short side that each box is filed in a few leaves (at the long side's
/// depth, nodes were 10^-7 tall and every box was filed in millions of leaves).
#[test]
fn an_elongated_world_files_each_box_in_a_few_leaves() {
    let mut rng = spatix_workload::Rng::new(7);
    let mut boxes: Vec<Aabb<f64>> = (0..20_000)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 20_000.0), rng.range(0.0, 20_000.0));
            bx(x, y, x + 4.0, y + 4.0)
        })
        .collect();
    boxes.push(bx(-1e12, 0.0, -1e12 + 4.0, 4.0));
    let world = Aabb::new(Point::new(-1e12, 0.0), Point::new(20_002.0, 20_002.0)).unwrap();
    let mut tree = Quadtree::for_element_size(world, 4.0).unwrap();
    let square = Aabb::new(Point::new(0.0, 0.0), Point::new(20_002.0, 20_002.0)).unwrap();
    // Nodes at least a quarter of the square world's deepest across: two levels more.
    let square_depth = Quadtree::<f64, u32>::for_element_size(square, 4.0)
        .unwrap()
        .config()
        .max_depth;
    assert_eq!(tree.config().max_depth, square_depth + 2);
    for (i, b) in (0..).zip(&boxes) {
        tree.insert(*b, i).unwrap();
    }
    tree.check_invariants().unwrap();
    let per_element = tree.memory_bytes() / boxes.len();
    assert!(per_element < 400, "{per_element} bytes per element");
    assert_eq!(
        pair_count(&tree),
        pair_count(&{
            let mut oracle = BruteForce::new();
            for (i, b) in (0..).zip(&boxes) {
                oracle.insert(*b, i).unwrap();
            }
            oracle
        })
    );
}

/// Boxes that overlap alike go to the same children at every level: splitting them would
/// make 4^depth leaves (two covering boxes), or 2^depth along an edge two boxes share to a
/// hair. A leaf splits only when the split separates its elements, so the tree stays a few
/// nodes per element even at the deepest limit.
#[test]
fn boxes_that_overlap_alike_do_not_multiply_leaves() {
    let config = TreeConfig {
        max_elements: 1,
        max_depth: TreeConfig::MAX_DEPTH,
    };
    let hair = 1e-12;
    let cases: [&[Aabb<f64>]; 4] = [
        &[bx(0.0, 0.0, 64.0, 64.0), bx(0.0, 0.0, 64.0, 64.0)],
        &[bx(0.0, 0.0, 21.3, 64.0), bx(0.0, 0.0, 21.3 + hair, 64.0)],
        &[
            bx(0.0, 0.0, 21.3, 40.1),
            bx(0.0, 0.0, 21.3 + hair, 40.1 + hair),
        ],
        &[
            bx(-5.0, -5.0, 70.0, 70.0),
            bx(0.0, 0.0, 64.0, 64.0),
            bx(10.0, 3.0, 50.0, 60.0),
            bx(10.0 + hair, 3.0, 50.0 - hair, 60.0),
        ],
    ];
    for boxes in cases {
        let mut tree = Quadtree::with_config(world(), config).unwrap();
        let mut oracle = BruteForce::new();
        for (i, &b) in boxes.iter().enumerate() {
            tree.insert(b, i as u32).unwrap();
            oracle.insert(b, i as u32).unwrap();
            tree.check_invariants().unwrap();
        }
        assert!(
            tree.base.nodes.len() <= 64 * boxes.len(),
            "{boxes:?}: {} nodes",
            tree.base.nodes.len()
        );
        assert_eq!(pair_count(&tree), pair_count(&oracle), "{boxes:?}");
    }
}

/// A leaf that overflowed without separating splits as soon as a removal or an update lets
/// it separate (the self-check asks that of every leaf).
#[test]
fn a_leaf_splits_once_its_elements_separate() {
    let config = TreeConfig {
        max_elements: 1,
        max_depth: 6,
    };
    let mut tree = Quadtree::with_config(world(), config).unwrap();
    let cover: Vec<_> = (0..3)
        .map(|i| tree.insert(bx(0.0, 0.0, 64.0, 64.0), i).unwrap())
        .collect();
    tree.insert(bx(1.0, 1.0, 2.0, 2.0), 3).unwrap();
    tree.insert(bx(40.0, 40.0, 41.0, 41.0), 4).unwrap();
    tree.check_invariants().unwrap();
    assert_eq!(leaves(&tree), 1, "three of five straddle: no split");
    tree.remove(cover[0]).unwrap();
    tree.check_invariants().unwrap();
    assert!(
        leaves(&tree) > 1,
        "two of four straddle: the removal splits"
    );

    let mut tree = Quadtree::with_config(world(), config).unwrap();
    let cover: Vec<_> = (0..3)
        .map(|i| tree.insert(bx(0.0, 0.0, 64.0, 64.0), i).unwrap())
        .collect();
    tree.insert(bx(1.0, 1.0, 2.0, 2.0), 3).unwrap();
    tree.insert(bx(40.0, 40.0, 41.0, 41.0), 4).unwrap();
    assert_eq!(leaves(&tree), 1);
    tree.update(cover[1], bx(5.0, 5.0, 6.0, 6.0)).unwrap();
    tree.check_invariants().unwrap();
    assert!(leaves(&tree) > 1, "the update in place splits");
}
