//! The kd-tree's own mechanics: shape, split rules, handles, robustness to equal coordinates,
//! and the self-check catching corruption. Query results are compared with `BruteForce` by
//! the conformance suite.

use core::ops::ControlFlow;

use super::*;
use crate::bytes::resealed;
use crate::{BruteForce, ByteForm, Handle, SpatialIndex, SpatialQuery, Workspace};
use spatix_workload::Rng;

fn tree_of(points: &[Point<f64>], config: KdTreeConfig) -> KdTree<f64, usize> {
    let tree = KdTree::with_config(points.iter().enumerate().map(|(i, &p)| (p, i)), config)
        .expect("valid points");
    tree.check_invariants().expect("a fresh tree is consistent");
    tree
}

fn random_points(n: usize, seed: u64) -> Vec<Point<f64>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| Point::new(rng.range(0.0, 100.0), rng.range(0.0, 100.0)))
        .collect()
}

fn pair_count(tree: &KdTree<f64, usize>) -> usize {
    let mut n = 0;
    let _ = tree.for_each_pair(|a, b| {
        assert_ne!(a.handle, b.handle);
        assert_eq!(a.aabb, b.aabb, "only coincident points intersect");
        n += 1;
        ControlFlow::Continue(())
    });
    n
}

#[test]
fn shape_leaves_hold_between_half_a_bucket_and_a_bucket() {
    for n in [0, 1, 2, 15, 16, 17, 31, 33, 1000, 4097] {
        for bucket in [2, 3, 8, 16, 64] {
            let shape = Shape::new(n, bucket);
            let leaves = 1usize << shape.height;
            let mut end = 0;
            for j in 0..leaves {
                let (a, b) = (shape.start(j), shape.start(j + 1));
                assert_eq!(a, end, "leaves are contiguous");
                assert!(
                    b - a <= bucket as usize,
                    "n {n} bucket {bucket}: leaf {j} too full"
                );
                if shape.height > 0 {
                    assert!(
                        b - a >= (bucket / 2) as usize && b > a,
                        "leaf {j} too empty"
                    );
                }
                end = b;
            }
            assert_eq!(end, n);
            if shape.height > 0 {
                assert!(
                    n > (bucket as usize) << (shape.height - 1),
                    "not the lowest tree"
                );
            }
        }
    }
}

#[test]
fn every_split_has_its_own_place_in_the_blocks() {
    // Heights around multiples of the four levels a block holds, so the top block is
    // partial or full; each split written through its node is read back unchanged.
    for height in [1, 3, 4, 5, 8, 9, 11] {
        let shape = Shape {
            n: 16 << height,
            height,
        };
        let preorder: Vec<_> = (0..shape.nodes())
            .map(|i| Split {
                value: i as f32,
                axis: (i % 3 == 0) as u32,
            })
            .collect();
        let splits = Splits::from_preorder(&preorder, height);
        let mut index = 0;
        let mut stack = vec![shape.root()];
        while let Some(c) = stack.pop() {
            if c.height > 0 {
                assert_eq!(splits.get(c), preorder[index], "{c:?} at height {height}");
                index += 1;
                let (l, r) = c.children();
                stack.extend([r, l]);
            }
        }
        assert_eq!(index, shape.nodes(), "every internal node is reached");
    }
}

#[test]
fn identical_points_build_a_balanced_tree_and_answer_everything() {
    let n = 5000;
    let points = vec![Point::new(3.0, -7.0); n];
    let tree = tree_of(&points, KdTreeConfig::default());
    // ceil(log2(5000 / 16)) = 9, exactly as for distinct points
    assert_eq!(tree.height(), 9);
    assert_eq!(
        tree.height(),
        tree_of(&random_points(n, 1), KdTreeConfig::default()).height()
    );
    let mut ws = Workspace::new();
    let near = tree.nearest(Point::new(3.0, -7.0), 8, &mut ws);
    assert_eq!(near.len(), 8);
    assert!(near.iter().all(|n| n.distance_2 == 0.0));
    assert_eq!(tree.nearest(Point::new(4.0, -7.0), n + 5, &mut ws).len(), n);
    let mut inside = 0;
    let _ = tree.within(Point::new(3.0, -7.0), 0.0, |_| {
        inside += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(inside, n);
    let small = tree_of(&points[..300], KdTreeConfig::default());
    assert_eq!(pair_count(&small), 300 * 299 / 2);
}

#[test]
fn equal_coordinates_on_split_lines_pair_across_leaves() {
    // A column of points on x = 50 (every x split lands on it), each point doubled, plus a
    // scatter around it: coincident pairs straddle leaves.
    let mut points = random_points(400, 2);
    for i in 0..200 {
        let p = Point::new(50.0, f64::from(i % 50));
        points.extend([p, p]);
    }
    for config in [
        KdTreeConfig::default(),
        KdTreeConfig {
            bucket_size: 2,
            split: SplitRule::Cycle,
        },
    ] {
        let tree = tree_of(&points, config);
        let mut brute = BruteForce::new();
        for (i, &p) in points.iter().enumerate() {
            brute.insert(Aabb::point(p).unwrap(), i).unwrap();
        }
        let mut expected = 0;
        let _ = brute.for_each_pair(|_, _| {
            expected += 1;
            ControlFlow::Continue(())
        });
        // 50 distinct points, each 8 times: 50 * C(8, 2)
        assert_eq!(expected, 50 * 28);
        assert_eq!(pair_count(&tree), expected, "{config:?}");
    }
}

#[test]
fn split_rules_choose_the_axes_they_promise() {
    // x: all at 0 but one at 100 (wide spread, small variance); y: even over 0..50.
    let points: Vec<_> = (0..64)
        .map(|i| Point::new(if i == 0 { 100.0 } else { 0.0 }, f64::from(i) * 50.0 / 63.0))
        .collect();
    let axis = |split| {
        let config = KdTreeConfig {
            bucket_size: 4,
            split,
        };
        let tree = tree_of(&points, config);
        tree.splits.get(tree.shape.root()).axis
    };
    assert_eq!(axis(SplitRule::Spread), 0);
    assert_eq!(axis(SplitRule::Variance), 1);
    // Cycle: x at the root, y below it, whatever the data.
    let cycled = tree_of(
        &points,
        KdTreeConfig {
            bucket_size: 4,
            split: SplitRule::Cycle,
        },
    );
    let (left, _) = cycled.shape.root().children();
    assert_eq!(cycled.splits.get(cycled.shape.root()).axis, 0);
    assert_eq!(cycled.splits.get(left).axis, 1);
    // A horizontal line splits on x under both measured rules.
    let line: Vec<_> = (0..64).map(|i| Point::new(f64::from(i), 5.0)).collect();
    for split in [SplitRule::Spread, SplitRule::Variance] {
        let tree = tree_of(
            &line,
            KdTreeConfig {
                bucket_size: 4,
                split,
            },
        );
        let mut stack = vec![tree.shape.root()];
        while let Some(c) = stack.pop() {
            if c.height > 0 {
                assert_eq!(tree.splits.get(c).axis, 0, "{split:?}");
                let (l, r) = c.children();
                stack.extend([l, r]);
            }
        }
    }
}

#[test]
fn splits_are_medians_and_leaves_contiguous() {
    let points = random_points(1000, 3);
    let tree = tree_of(&points, KdTreeConfig::default());
    let root = tree.shape.root();
    let (left, right) = root.children();
    let split = tree.splits.get(root);
    let a = split.axis as usize;
    let (l, r) = (tree.shape.range(left), tree.shape.range(right));
    assert_eq!((l.len(), r.len()), (500, 500));
    assert!(l.clone().all(|i| tree.points[i][a] <= split.value));
    assert!(r.clone().all(|i| tree.points[i][a] >= split.value));
    assert!(
        r.clone().any(|i| tree.points[i][a] == split.value),
        "the median is a point"
    );
}

#[test]
fn heavy_duplicates_in_large_nodes_build_a_valid_balanced_tree() {
    // 100k points on three vertical lines, spread widest along x: the root and its children
    // (more than 4096 points) take the sampled-pivot selection, whose pivots equal a third of
    // the points each.
    let mut rng = Rng::new(4);
    let points: Vec<_> = (0..100_000)
        .map(|i| Point::new(f64::from(i % 3) * 10.0, rng.range(0.0, 1.0)))
        .collect();
    let tree = tree_of(&points, KdTreeConfig::default());
    assert_eq!(tree.splits.get(tree.shape.root()).axis, 0);
    let same = vec![Point::new(1.0, 1.0); 100_000];
    assert_eq!(
        tree_of(&same, KdTreeConfig::default()).height(),
        tree.height()
    );
    let cycle = KdTreeConfig {
        split: SplitRule::Cycle,
        ..KdTreeConfig::default()
    };
    let mut ws = Workspace::new();
    let near = tree_of(&points, cycle).nearest(Point::new(10.0, 0.5), 3, &mut ws);
    assert!(near.iter().all(|n| n.distance_2 <= 1e-6), "{near:?}");
}

#[test]
fn median_selection_orders_around_its_position_on_any_data() {
    let n = 100_000;
    let mut rng = Rng::new(5);
    let random: Vec<f64> = (0..n).map(|_| rng.unit()).collect();
    let data: [(&str, Vec<f64>); 6] = [
        ("random", random),
        ("sorted", (0..n).map(|i| i as f64).collect()),
        ("reversed", (0..n).map(|i| (n - i) as f64).collect()),
        ("three values", (0..n).map(|i| (i % 3) as f64).collect()),
        ("all equal", vec![2.5; n]),
        ("sawtooth", (0..n).map(|i| (i % 1000) as f64).collect()),
    ];
    for (name, keys) in data {
        let mut sorted = keys.clone();
        sorted.sort_by(f64::total_cmp);
        for k in [0, 1, n / 3, n / 2, n - 2, n - 1] {
            let mut v = keys.clone();
            select::select(&mut v, k, |x: &f64| *x);
            assert_eq!(v[k], sorted[k], "{name}, position {k}");
            assert!(v[..k].iter().all(|&x| x <= v[k]), "{name}, position {k}");
            assert!(v[k..].iter().all(|&x| x >= v[k]), "{name}, position {k}");
            v.sort_by(f64::total_cmp);
            assert_eq!(v, sorted, "{name}: a permutation");
        }
    }
}

#[test]
fn handles_name_tree_positions_and_reject_strangers() {
    let points = random_points(100, 4);
    let tree = tree_of(&points, KdTreeConfig::default());
    let other = tree_of(&points, KdTreeConfig::default());
    let mut seen = vec![false; points.len()];
    for (i, item) in tree.iter().enumerate() {
        assert_eq!(item.handle.slot() as usize, i, "iter is in tree order");
        let input = *item.value;
        assert!(!seen[input], "input {input} listed twice");
        seen[input] = true;
        assert_eq!(item.aabb, Aabb::point(points[input]).unwrap());
        assert_eq!(
            tree.tree().point(i),
            points[input],
            "the handle's slot is the tree position"
        );
        let got = tree.get(item.handle).expect("a live handle");
        assert_eq!((*got.value, got.aabb), (input, item.aabb));
        assert!(other.get(item.handle).is_none(), "another tree's handle");
        let next = Handle::from_bits(item.handle.to_bits() + (1 << 32));
        assert!(tree.get(next).is_none(), "a handle of another generation");
    }
    assert!(seen.iter().all(|&s| s), "every input listed");
    let past = Handle::from_bits(tree.iter().next().unwrap().handle.to_bits() + 100);
    assert!(tree.get(past).is_none(), "past the end");
    let mut ws = Workspace::new();
    let best = tree.nearest(points[42], 1, &mut ws)[0];
    assert_eq!(best.distance_2, 0.0);
    assert_eq!(*tree.get(best.handle).unwrap().value, 42);
}

#[test]
fn bad_input_is_rejected() {
    for bad in [
        Point::new(f32::NAN, 0.0),
        Point::new(0.0, f32::INFINITY),
        Point::new(f32::NEG_INFINITY, 1.0),
    ] {
        let points = [(Point::new(1.0, 1.0), 0), (bad, 1)];
        assert_eq!(KdTree::build(points).unwrap_err(), Error::InvalidAabb);
    }
    for bucket_size in [0, 1, 65537] {
        let config = KdTreeConfig {
            bucket_size,
            ..KdTreeConfig::default()
        };
        assert!(matches!(
            KdTree::with_config([(Point::new(0.0f32, 0.0), ())], config),
            Err(Error::InvalidParameter(_))
        ));
    }
    let empty = KdTree::<f32, ()>::build([]).unwrap();
    empty.check_invariants().unwrap();
    assert!(empty.is_empty());
    assert!(
        empty
            .nearest(Point::new(0.0, 0.0), 3, &mut Workspace::new())
            .is_empty()
    );
}

#[test]
fn queries_answer_bad_arguments_with_nothing() {
    let tree = tree_of(&random_points(200, 5), KdTreeConfig::default());
    let mut ws = Workspace::new();
    assert!(
        tree.nearest(Point::new(f64::NAN, 1.0), 4, &mut ws)
            .is_empty()
    );
    assert!(tree.nearest(Point::new(1.0, 1.0), 0, &mut ws).is_empty());
    let calls = core::cell::Cell::new(0);
    let count = |_: Item<'_, f64, usize>| {
        calls.set(calls.get() + 1);
        ControlFlow::Continue(())
    };
    let _ = tree.within(Point::new(1.0, 1.0), -1.0, &count);
    let _ = tree.within(Point::new(1.0, 1.0), f64::NAN, &count);
    let inverted = Aabb {
        min: Point::new(10.0, 10.0),
        max: Point::new(0.0, 0.0),
    };
    let _ = tree.query(&inverted, &count);
    assert_eq!(calls.get(), 0);
    let _ = tree.within(Point::new(1.0, 1.0), f64::INFINITY, &count);
    assert_eq!(calls.get(), 200);
}

#[test]
fn huge_coordinates_do_not_break_the_search() {
    // Squared distances overflow f32 here: the heap must still fill, and within must fall
    // back to the exact test.
    let points: Vec<_> = (0..100)
        .map(|i| {
            (
                Point::new(if i % 2 == 0 { -3e38f32 } else { 3e38 }, i as f32),
                i,
            )
        })
        .collect();
    let tree = KdTree::with_config(
        points.iter().copied(),
        KdTreeConfig {
            bucket_size: 4,
            ..KdTreeConfig::default()
        },
    )
    .unwrap();
    let mut ws = Workspace::new();
    assert_eq!(tree.nearest(Point::new(-3e38, 0.0), 80, &mut ws).len(), 80);
    let mut n = 0;
    let _ = tree.within(Point::new(0.0, 0.0), 3.1e38, |_| {
        n += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(n, 100);
}

/// Fuzzer finding (kdtree-f64-bucket-2-cycle): a point at distance `r + 10` from the query
/// point, where `r` is so large that `r + 10` rounds to `r`, was reported by `within` (its
/// rounded squared distance equals `r²`); `BruteForce`, whose area `point ± r` excludes it,
/// did not. The kd-tree now applies the same area.
#[test]
fn within_agrees_with_brute_force_where_the_distance_rounds_to_the_radius() {
    let r = f64::from(f32::MAX);
    let (q, p) = (Point::new(r, 94.25), Point::new(-10.0, -10.0));
    let tree = tree_of(&[p], KdTreeConfig::default());
    let mut oracle = BruteForce::new();
    oracle.insert(Aabb::point(p).unwrap(), 0).unwrap();
    let mut found = 0;
    let _ = oracle.within(q, r, |_| {
        found += 1;
        ControlFlow::Continue(())
    });
    assert_eq!(found, 0);
    same_within(&tree, &oracle, q, r, "r + 10 rounds to r");
}

/// Asserts that `within` of `tree` and of `oracle` report the same elements.
fn same_within<S: Scalar>(
    tree: &KdTree<S, usize>,
    oracle: &BruteForce<S, usize>,
    q: Point<S>,
    r: S,
    context: &str,
) {
    let (mut got, mut want) = (Vec::new(), Vec::new());
    let _ = tree.within(q, r, |i| {
        got.push(*i.value);
        ControlFlow::Continue(())
    });
    let _ = oracle.within(q, r, |i| {
        want.push(*i.value);
        ControlFlow::Continue(())
    });
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{context}: {q:?}, radius {r:?}");
}

/// `within` against `BruteForce` on radii of every scale, including radii equal to a
/// point's distance (decided by the exact test at the slack's edge) and radii large enough
/// that whole subtrees are reported untested, on spread, duplicated and collinear points,
/// ordinary and extreme (the scaled keys' path), in `f64` and `f32`.
#[test]
fn within_matches_brute_force_at_every_radius_and_magnitude() {
    let mut rng = Rng::new(31);
    let config = KdTreeConfig {
        bucket_size: 4,
        ..KdTreeConfig::default()
    };
    for scale in [1.0, 1e150, 1e-150, 1e36, 1e-36, 3e38] {
        for shape in 0..3 {
            let points: Vec<Point<f64>> = (0..700)
                .map(|i| {
                    let (x, y) = (rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
                    let (x, y) = match shape {
                        0 => (x, y),
                        1 => ((i % 5) as f64 * 0.25, (i % 3) as f64 * 0.25),
                        _ => (x, 0.5 * x),
                    };
                    Point::new(x * scale, y * scale)
                })
                .collect();
            // In f32 too where the points are finite there (1e150 is not: f64 alone).
            let narrow: Vec<Point<f32>> = points
                .iter()
                .map(|p| Point::new(p.x as f32, p.y as f32))
                .filter(|p| p.is_finite())
                .collect();
            let tree = tree_of(&points, config);
            let tree32 = KdTree::with_config(narrow.iter().copied().zip(0..), config).unwrap();
            let (mut oracle, mut oracle32) = (BruteForce::new(), BruteForce::new());
            for (i, p) in points.iter().enumerate() {
                oracle.insert(Aabb::point(*p).unwrap(), i).unwrap();
            }
            for (i, p) in narrow.iter().enumerate() {
                oracle32.insert(Aabb::point(*p).unwrap(), i).unwrap();
            }
            let context = format!("scale {scale:e}, shape {shape}");
            for _ in 0..40 {
                let q = Point::new(rng.range(-1.2, 1.2) * scale, rng.range(-1.2, 1.2) * scale);
                let other = rng.below(points.len());
                let radii = [
                    rng.range(0.0, 0.05) * scale,
                    rng.range(0.0, 3.0) * scale,
                    q.distance(points[other]),
                    0.0,
                ];
                for r in radii {
                    same_within(&tree, &oracle, q, r, &context);
                    let q32 = Point::new(q.x as f32, q.y as f32);
                    let r32 = match narrow.get(other) {
                        Some(&p) if r == radii[2] => q32.distance(p),
                        _ => r as f32,
                    };
                    same_within(&tree32, &oracle32, q32, r32, &context);
                }
            }
        }
    }
}

#[test]
fn check_invariants_catches_corruption() {
    let points = random_points(500, 6);
    let fresh = tree_of(&points, KdTreeConfig::default());
    type Corruption = fn(&mut KdTree<f64, usize>);
    let corrupt: [(&str, Corruption); 6] = [
        ("a split moved", |t| {
            let mut split = t.splits.get(t.shape.root());
            split.value += 10.0;
            t.splits.set(t.shape.root(), split);
        }),
        ("a split's axis flipped", |t| {
            let mut split = t.splits.get(t.shape.root());
            split.axis ^= 1;
            t.splits.set(t.shape.root(), split);
        }),
        ("two points swapped across the root", |t| {
            let last = t.points.len() - 1;
            t.points.swap(0, last);
        }),
        ("a point moved beyond the bounds", |t| {
            t.points[7][0] = 1000.0
        }),
        ("a value missing", |t| {
            t.values.pop();
        }),
        ("the bounds shrunk", |t| t.bounds.max.x -= 1.0),
    ];
    for (what, f) in corrupt {
        let mut tree = fresh.clone();
        f(&mut tree);
        assert!(tree.check_invariants().is_err(), "not caught: {what}");
    }
}

#[cfg(feature = "rayon")]
#[test]
fn par_build_builds_the_same_tree() {
    let points = random_points(200_000, 7);
    let input = || points.iter().enumerate().map(|(i, &p)| (p, i));
    for split in [SplitRule::Spread, SplitRule::Variance, SplitRule::Cycle] {
        let config = KdTreeConfig {
            split,
            ..KdTreeConfig::default()
        };
        let serial = KdTree::with_config(input(), config).unwrap();
        let parallel = KdTree::par_build(input(), config).unwrap();
        parallel.check_invariants().unwrap();
        assert_eq!(serial.splits, parallel.splits);
        assert_eq!(serial.points, parallel.points);
        assert_eq!(serial.values, parallel.values);
    }
}

/// The search loads two sibling leaves in one pass when they fit (`PAIR` points) and scans
/// larger leaves in runs of `PAIR`: every bucket size around those limits, with coincident
/// points, must give the brute-force distances, each naming a point at that distance.
#[test]
fn nearest_agrees_with_brute_force_on_both_sides_of_the_pair_limit() {
    let mut ws = Workspace::new();
    for bucket_size in [2, 16, 31, 32, 33, 64, 65, 200] {
        for n in [1, 2, 33, 130, 1000] {
            let mut points = random_points(n, (n * 1000 + bucket_size) as u64);
            points.extend_from_within(..n / 3);
            let config = KdTreeConfig {
                bucket_size: bucket_size as u32,
                ..KdTreeConfig::default()
            };
            let tree = tree_of(&points, config);
            for q in random_points(20, bucket_size as u64) {
                let mut all: Vec<f64> = points.iter().map(|p| p.distance_2(q)).collect();
                all.sort_by(f64::total_cmp);
                for k in [1, 8, 64, 2000] {
                    let found = tree.nearest(q, k, &mut ws);
                    let got: Vec<f64> = found.iter().map(|f| f.distance_2).collect();
                    assert_eq!(
                        got,
                        all[..k.min(all.len())],
                        "bucket {bucket_size}, n {n}, k {k}"
                    );
                    for f in found {
                        let input = *tree.get(f.handle).unwrap().value;
                        assert_eq!(points[input].distance_2(q), f.distance_2);
                    }
                }
            }
        }
    }
}

/// Issue 16's case: squared distances near 1e400 overflow, but the ranking must not tie
/// them (the point at (1e200, 0) lies at 1e200 from the query, the origin at 1.4e200).
#[test]
fn far_points_are_ranked_by_distance_not_tied_at_infinity() {
    let points = [Point::new(0.0, 0.0), Point::new(1e200, 0.0)];
    let tree = tree_of(&points, KdTreeConfig::default());
    let mut ws = Workspace::new();
    let found = tree.nearest(Point::new(1e200, 1e200), 2, &mut ws);
    let order: Vec<usize> = found
        .iter()
        .map(|f| *tree.get(f.handle).unwrap().value)
        .collect();
    assert_eq!(order, [1, 0]);
    // Reported squared distances beyond f64::MAX are infinite; smaller ones are exact.
    assert!(found.iter().all(|f| f.distance_2 == f64::INFINITY));
    let near = tree.nearest(Point::new(1e150, 0.0), 1, &mut ws)[0];
    assert_eq!(near.distance_2, 1e150 * 1e150);
}

/// Squares of differences near 1e-200 underflow to zero; the ranking must still tell them
/// apart, and so must `within`.
#[test]
fn tiny_distances_are_ranked_not_tied_at_zero() {
    let points: Vec<_> = [3.0, 1.0, 2.0, 5.0]
        .iter()
        .map(|&m| Point::new(m * 1e-200, -m * 1e-201))
        .collect();
    let tree = tree_of(&points, KdTreeConfig::default());
    let mut ws = Workspace::new();
    let found = tree.nearest(Point::new(0.0, 0.0), 4, &mut ws);
    let order: Vec<usize> = found
        .iter()
        .map(|f| *tree.get(f.handle).unwrap().value)
        .collect();
    assert_eq!(order, [1, 2, 0, 3]);
    let mut within = Vec::new();
    let _ = tree.within(Point::new(0.0, 0.0), 2.5e-200, |item| {
        within.push(*item.value);
        ControlFlow::Continue(())
    });
    within.sort_unstable();
    assert_eq!(within, [1, 2]);
}

/// A coordinate of any magnitude: zero, or `±m · 2^e` with `e` in `exponents`, and now and
/// then the type's largest value.
fn any_magnitude(rng: &mut Rng, exponents: (i32, i32), max: f64) -> f64 {
    let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
    match rng.below(20) {
        0 | 1 => 0.0,
        2 => sign * max,
        _ => {
            let e = exponents.0 + rng.below((exponents.1 - exponents.0) as usize) as i32;
            sign * rng.range(1.0, 2.0) * 2f64.powi(e)
        }
    }
}

/// Checks `nearest` and `within` of a tree of `points` from `q` against `reference`, an
/// independent distance divided by `unit` (exact, or correctly rounded in a wider type),
/// allowing for rankings that tie within the tree's rounding (`tolerance`, relative).
fn check_against_reference<S: Scalar>(
    points: &[Point<S>],
    queries: &[Point<S>],
    (reference, unit): (impl Fn(Point<S>, Point<S>) -> f64, f64),
    tolerance: f64,
) {
    let tree = KdTree::with_config(
        points.iter().enumerate().map(|(i, &p)| (p, i)),
        KdTreeConfig {
            bucket_size: 3,
            ..KdTreeConfig::default()
        },
    )
    .expect("finite points");
    tree.check_invariants().expect("a fresh tree is consistent");
    let mut ws = Workspace::new();
    let close = |a: f64, b: f64| a <= b * (1.0 + tolerance) || a <= b + f64::MIN_POSITIVE;
    for &q in queries {
        let mut all: Vec<f64> = points.iter().map(|&p| reference(q, p)).collect();
        all.sort_by(f64::total_cmp);
        for k in [1, 5, points.len()] {
            let found = tree.nearest(q, k, &mut ws);
            assert_eq!(found.len(), k.min(points.len()));
            let got: Vec<f64> = found
                .iter()
                .map(|f| reference(q, points[*tree.get(f.handle).unwrap().value]))
                .collect();
            for (i, &d) in got.iter().enumerate() {
                assert!(
                    close(d, all[i]) && close(all[i], d),
                    "query {q:?}, k {k}: rank {i} at {d:e}, the true one at {:e}",
                    all[i]
                );
            }
        }
        let radius = S::from_f64(all[all.len() / 2] * unit);
        if !radius.is_finite() {
            continue;
        }
        let r = radius.to_f64() / unit;
        let mut hits = vec![false; points.len()];
        let _ = tree.within(q, radius, |item| {
            hits[*item.value] = true;
            ControlFlow::Continue(())
        });
        for (i, &p) in points.iter().enumerate() {
            let d = reference(q, p);
            if hits[i] {
                assert!(
                    close(d, r),
                    "query {q:?}: {p:?} at {d:e} beyond radius {r:e}"
                );
            } else {
                assert!(
                    close(r, d),
                    "query {q:?}: {p:?} at {d:e} within radius {r:e}, not found"
                );
            }
        }
    }
}

/// Rounds of random trees and queries with coordinates from `coord(rng, round)`, checked
/// against `reference` (a distance divided by its `unit`) with `tolerance`.
fn exact_over_the_whole_range<S: Scalar>(
    seed: u64,
    coord: impl Fn(&mut Rng, usize) -> S,
    reference: (impl Fn(Point<S>, Point<S>) -> f64 + Copy, f64),
    tolerance: f64,
) {
    let mut rng = Rng::new(seed);
    for round in 0..40 {
        let mut point = || Point::new(coord(&mut rng, round), coord(&mut rng, round));
        let points: Vec<_> = (0..60).map(|_| point()).collect();
        let queries: Vec<_> = (0..10).map(|_| point()).collect();
        check_against_reference(&points, &queries, reference, tolerance);
    }
}

#[test]
fn f64_distances_are_exact_over_the_whole_range() {
    // Every other round tiny coordinates only (their squares underflow).
    let coord = |rng: &mut Rng, round: usize| {
        let exponents = if round % 2 == 0 {
            (-1000, 1023)
        } else {
            (-300, -200)
        };
        any_magnitude(rng, exponents, f64::MAX)
    };
    // Independent of the tree's arithmetic: libm's hypotenuse of the halved differences
    // (halving is exact at these magnitudes; the distance itself may exceed f64::MAX).
    let reference =
        |q: Point<f64>, p: Point<f64>| f64::hypot(q.x / 2.0 - p.x / 2.0, q.y / 2.0 - p.y / 2.0);
    exact_over_the_whole_range(16, coord, (reference, 2.0), 1e-14);
}

#[test]
fn f32_distances_are_exact_over_the_whole_range() {
    let coord = |rng: &mut Rng, round: usize| {
        let exponents = if round % 2 == 0 {
            (-126, 127)
        } else {
            (-60, -40)
        };
        any_magnitude(rng, exponents, f64::from(f32::MAX)) as f32
    };
    // In f64, where the squares of f32 differences neither overflow nor underflow.
    let reference = |q: Point<f32>, p: Point<f32>| {
        let dx = f64::from(q.x) - f64::from(p.x);
        let dy = f64::from(q.y) - f64::from(p.y);
        (dx * dx + dy * dy).sqrt()
    };
    exact_over_the_whole_range(32, coord, (reference, 1.0), 1e-6);
}

/// Fuzzer finding (kdtree-f32): one tiny coordinate sends every search to the scaled keys,
/// and the results reported their squared distance rounded once from those, an ulp away
/// from what `BruteForce` reports (`f32` arithmetic). They now report `Point::distance_2`.
#[test]
fn scaled_searches_report_squared_distances_as_every_structure_does() {
    let mut rng = Rng::new(85);
    let mut coord = || rng.range(-1e7, 1e7) as f32;
    let mut points: Vec<Point<f32>> = (0..300).map(|_| Point::new(coord(), coord())).collect();
    points.push(Point::new(1e-30, 0.0));
    let queries: Vec<_> = (0..20).map(|_| Point::new(coord(), coord())).collect();
    let tree = KdTree::build(points.iter().enumerate().map(|(i, &p)| (p, i))).unwrap();
    let mut ws = Workspace::new();
    for q in queries {
        for f in tree.nearest(q, points.len(), &mut ws) {
            let p = points[*tree.get(f.handle).unwrap().value];
            assert_eq!(f.distance_2, q.distance_2(p), "{q:?} to {p:?}");
        }
    }
}

/// Saving and loading: the same tree (the bytes of the loaded one are the bytes saved), the
/// same answers, and handles given out before saving name the same elements after.
#[test]
fn bytes_load_the_same_tree() {
    fn check<S: Scalar>(points: &[Point<S>], config: KdTreeConfig) {
        let tree = KdTree::with_config(points.iter().copied().zip(0u64..), config).unwrap();
        let bytes = tree.to_bytes();
        let loaded = KdTree::<S, u64>::from_bytes(&bytes).unwrap();
        loaded.check_invariants().unwrap();
        assert_eq!(loaded.to_bytes(), bytes);
        assert_eq!((loaded.points.len(), loaded.config), (points.len(), config));
        for item in tree.iter() {
            let again = loaded.get(item.handle).unwrap();
            assert_eq!((again.aabb, again.value), (item.aabb, item.value));
        }
        let mut ws = (Workspace::new(), Workspace::new());
        for q in points.iter().step_by(7) {
            let q = Point::new(q.x + S::HALF, q.y);
            assert_eq!(
                tree.nearest(q, 5, &mut ws.0),
                loaded.nearest(q, 5, &mut ws.1)
            );
        }
        // A later build of the same points is another tree: its handles are not these.
        let rebuilt = KdTree::with_config(points.iter().copied().zip(0u64..), config).unwrap();
        if let Some(item) = tree.iter().next() {
            assert!(rebuilt.get(item.handle).is_none());
        }
    }
    let mut rng = Rng::new(11);
    for n in [0, 1, 17, 1000, 20_000] {
        let points: Vec<Point<f64>> = (0..n)
            .map(|_| Point::new(rng.range(-50.0, 50.0), rng.range(0.0, 1e-3)))
            .collect();
        let narrow: Vec<Point<f32>> = points
            .iter()
            .map(|p| Point::new(p.x as f32, p.y as f32))
            .collect();
        for config in [
            KdTreeConfig::default(),
            KdTreeConfig {
                bucket_size: 2,
                split: SplitRule::Cycle,
            },
        ] {
            check(&points, config);
            check(&narrow, config);
        }
    }
}

/// Bad bytes are an error, never a panic: every truncation, every byte changed (in two
/// ways), bytes of another scalar, value type or structure, and lying lengths. A change that
/// still decodes gives a consistent tree whose bytes are the changed ones.
#[test]
fn bad_bytes_are_refused() {
    let mut rng = Rng::new(12);
    let points: Vec<_> = (0..50)
        .map(|_| (Point::new(rng.range(0.0, 9.0), rng.range(0.0, 9.0)), 0u16))
        .collect();
    let config = KdTreeConfig {
        bucket_size: 4,
        split: SplitRule::Spread,
    };
    let bytes = KdTree::with_config(points, config).unwrap().to_bytes();
    let corrupt = |r: Result<KdTree<f64, u16>, Error>| matches!(r, Err(Error::Corrupt(_)));
    for cut in 0..bytes.len() {
        assert!(corrupt(KdTree::from_bytes(&bytes[..cut])), "cut at {cut}");
        // Cut short with the checksum made right, so that the sections' checks refuse it.
        let resealed = resealed(&bytes[..cut]);
        assert!(corrupt(KdTree::from_bytes(&resealed)), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(corrupt(KdTree::from_bytes(&longer)));
    for at in 0..bytes.len() {
        for flip in [0x01, 0xFF] {
            let mut changed = bytes.clone();
            changed[at] ^= flip;
            // As changed, refused by the checksum (or, in the magic and the version, before
            // it); with the checksum made right, by the checks behind it, or loaded.
            match KdTree::<f64, u16>::from_bytes(&changed) {
                Err(Error::Corrupt(text)) => assert!(
                    at < 8 || text.contains("checksum mismatch"),
                    "byte {at} ^ {flip:#x}: {text}"
                ),
                other => panic!("byte {at} ^ {flip:#x}: {other:?}"),
            }
            let changed = resealed(&changed);
            match KdTree::<f64, u16>::from_bytes(&changed) {
                Ok(tree) => {
                    tree.check_invariants().unwrap();
                    assert_eq!(tree.to_bytes(), changed, "byte {at} ^ {flip:#x}");
                }
                Err(e) => assert!(matches!(e, Error::Corrupt(_)), "{e:?}"),
            }
        }
    }
    assert!(KdTree::<f32, u16>::from_bytes(&bytes).is_err());
    assert!(KdTree::<f64, u32>::from_bytes(&bytes).is_err());
    assert!(KdTree::<f64, i16>::from_bytes(&bytes).is_err());
    // The count of split blocks (after the 33-byte header, the configuration, the
    // generation, the bounds and the magnitudes) set to 2^64 - 1: refused before anything is
    // allocated for it.
    let at = 33 + 5 + 4 + 32 + 1;
    assert_eq!(
        bytes[at..at + 8],
        1u64.to_le_bytes(),
        "the split blocks of 50 points in fours (15 splits, 4 levels)"
    );
    let mut lying = bytes.clone();
    lying[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    match KdTree::<f64, u16>::from_bytes(&resealed(&lying)) {
        Err(Error::Corrupt(text)) => assert!(text.contains("do not fit"), "{text}"),
        other => panic!("{other:?}"),
    }
}
