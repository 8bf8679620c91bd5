//! Every structure's regions against what it already shows of itself (`traverse`,
//! `for_each_cell`), and their counts: each element listed once where a structure files it
//! once; the probed searches' costs on a known layout.

use core::ops::ControlFlow;

use crate::test_util::{bx, dust};
use crate::{
    Aabb, BruteForce, HierarchicalGrid, KdTree, Layered, LooseGrid, LooseQuadtree, MxCifQuadtree,
    NodeKind, PackedIndex, Point, PointGrid, Quadtree, QueryCost, Region, RegionKind, SpatialIndex,
    SpatialQuery, SweepGrid, UniformGrid, Workspace,
};

fn regions<I: SpatialQuery<f64, u32>>(index: &I) -> Vec<Region<f64>> {
    let mut out = Vec::new();
    let _ = index.visit_regions(|r| {
        out.push(*r);
        ControlFlow::Continue(())
    });
    out
}

fn listed(regions: &[Region<f64>]) -> usize {
    regions.iter().map(|r| r.elements).sum()
}

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 1000.0, 1000.0)
}

/// 500 boxes of mixed sizes over the world, some outside it.
fn boxes() -> Vec<Aabb<f64>> {
    let mut v = dust(400);
    for (i, b) in dust(100).into_iter().enumerate() {
        let s = (i % 7) as f64 * 9.0;
        let shift = if i % 10 == 0 { 1100.0 } else { 0.0 };
        v.push(bx(
            b.min.x + shift,
            b.min.y,
            b.max.x + s + shift,
            b.max.y + s,
        ));
    }
    v
}

fn filled<I: SpatialIndex<f64, u32>>(mut index: I) -> I {
    for (i, b) in boxes().into_iter().enumerate() {
        index.insert(b, i as u32).unwrap();
    }
    index
}

fn node_kind(kind: NodeKind) -> (RegionKind, usize) {
    match kind {
        NodeKind::Branch => (RegionKind::Node, 0),
        NodeKind::Leaf { elements } => (RegionKind::Leaf, elements),
    }
}

#[test]
fn uniform_grid_regions_are_its_non_empty_cells() {
    let grid = filled(UniformGrid::new(world(), 50.0).unwrap());
    let mut cells = Vec::new();
    grid.for_each_cell(|cell, count| {
        if count > 0 {
            cells.push(Region {
                bounds: cell,
                depth: 0,
                kind: RegionKind::Cell,
                elements: count,
            });
        }
    });
    let r = regions(&grid);
    assert_eq!(r, cells);
    // Listed once per cell overlapped: more listings than elements here.
    assert!(listed(&r) > grid.len());
}

#[test]
fn loose_grid_regions_are_its_cells_and_list_each_element_once() {
    let grid = filled(LooseGrid::new(world(), 50.0).unwrap());
    let mut cells = Vec::new();
    grid.for_each_cell(|cell, count| {
        cells.push(Region {
            bounds: cell,
            depth: 0,
            kind: RegionKind::Cell,
            elements: count,
        });
    });
    let r = regions(&grid);
    assert_eq!(r, cells);
    assert_eq!(listed(&r), grid.len());
    for e in grid.iter() {
        assert!(
            r.iter().any(|c| c.bounds.contains(&e.aabb)),
            "{:?} in no loose cell",
            e.aabb
        );
    }
}

#[test]
fn quadtrees_regions_are_their_nodes() {
    let tree = filled(Quadtree::new(world()).unwrap());
    let mut nodes = Vec::new();
    tree.traverse(|b, depth, kind| {
        let (kind, elements) = node_kind(kind);
        nodes.push(Region {
            bounds: *b,
            depth,
            kind,
            elements,
        });
    });
    let r = regions(&tree);
    assert_eq!(r, nodes);
    assert!(r.iter().any(|n| n.depth >= 2));
    assert!(listed(&r) >= tree.len());

    let tree = filled(MxCifQuadtree::new(world()).unwrap());
    let r = regions(&tree);
    let mut at = 0;
    tree.traverse(|b, depth, kind| {
        assert_eq!((r[at].bounds, r[at].depth), (*b, depth));
        assert_eq!(r[at].kind, node_kind(kind).0);
        if let NodeKind::Leaf { elements } = kind {
            assert_eq!(r[at].elements, elements);
        }
        at += 1;
    });
    assert_eq!(at, r.len());
    // MX-CIF files every element in one node, branches included.
    assert_eq!(listed(&r), tree.len());

    let tree = filled(LooseQuadtree::new(world()).unwrap());
    let r = regions(&tree);
    let mut at = 0;
    tree.traverse(|node| {
        let (kind, elements) = node_kind(node.kind);
        let bounds = node.loose.unwrap_or(node.cell);
        assert_eq!(
            r[at],
            Region {
                bounds,
                depth: node.depth,
                kind,
                elements
            }
        );
        at += 1;
    });
    assert_eq!(at, r.len());
    assert_eq!(listed(&r), tree.len());
}

#[test]
fn leveled_grids_list_each_element_once_by_level() {
    let points = filled(PointGrid::new(world(), 40.0).unwrap());
    let r = regions(&points);
    assert_eq!(listed(&r), points.len());
    assert!(r.iter().all(|c| c.kind == RegionKind::Cell));

    let grid = filled(HierarchicalGrid::new(world(), 5.0).unwrap());
    let r = regions(&grid);
    assert_eq!(listed(&r), grid.len());
    assert!(
        r.windows(2).all(|w| w[0].depth <= w[1].depth),
        "levels in order"
    );
    assert!(
        r.iter().any(|c| c.depth > 0),
        "the larger boxes sit on coarser levels"
    );
}

#[test]
fn sweep_bands_enclose_their_elements() {
    let sweep = filled(SweepGrid::new(world(), 50.0).unwrap());
    let r = regions(&sweep);
    assert_eq!(listed(&r), sweep.len());
    assert!(r.iter().all(|b| b.kind == RegionKind::Band));
    for e in sweep.iter() {
        assert!(r.iter().any(|b| b.bounds.contains(&e.aabb)));
    }
}

#[test]
fn packed_regions_are_its_nodes_by_level() {
    let index = PackedIndex::build(boxes().into_iter().zip(0u32..)).unwrap();
    let mut nodes = Vec::new();
    index.traverse(|b, level, below| {
        let (kind, elements) = if level == 1 {
            (RegionKind::Leaf, below)
        } else {
            (RegionKind::Node, 0)
        };
        nodes.push(Region {
            bounds: *b,
            depth: level,
            kind,
            elements,
        });
    });
    let r = regions(&index);
    assert_eq!(r, nodes);
    assert_eq!(listed(&r), index.len());
}

#[test]
fn kd_tree_regions_are_splits_and_leaves() {
    let points: Vec<(Point<f64>, u32)> = boxes().iter().map(|b| b.min).zip(0..).collect();
    let tree = KdTree::build(points.clone()).unwrap();
    let r = regions(&tree);
    assert_eq!(listed(&r), tree.len());
    assert_eq!(r[0].kind, RegionKind::Split);
    assert_eq!(r[0].depth, 0);
    let leaves: Vec<&Region<f64>> = r.iter().filter(|n| n.kind == RegionKind::Leaf).collect();
    let splits = r.len() - leaves.len();
    assert_eq!(splits + 1, leaves.len(), "a complete binary tree");
    for (p, _) in &points {
        assert!(leaves.iter().any(|l| l.bounds.contains_point(*p)));
    }
    assert!(regions(&KdTree::<f64, u32>::build([]).unwrap()).is_empty());
}

#[test]
fn layered_regions_are_its_parts_each_with_its_own() {
    let mut index = filled(Layered::<f64, u32>::new(world(), 4.0).unwrap());
    index.maintain();
    let r = regions(&index);
    let parts: Vec<&Region<f64>> = r.iter().filter(|p| p.kind == RegionKind::Part).collect();
    assert_eq!(parts.len(), 2, "agents and large ones; no static part yet");
    assert_eq!(listed(&r), index.len());
    for e in index.iter() {
        assert!(parts.iter().any(|p| p.bounds.contains(&e.aabb)));
    }
}

#[test]
fn brute_force_is_one_cell() {
    let index = filled(BruteForce::new());
    let r = regions(&index);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].elements, index.len());
    assert!(regions(&BruteForce::<f64, u32>::new()).is_empty());
}

#[test]
fn visiting_stops_when_asked() {
    let grid = filled(UniformGrid::new(world(), 50.0).unwrap());
    let mut calls = 0;
    let flow = grid.visit_regions(|_| {
        calls += 1;
        if calls == 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert!(flow.is_break());
    assert_eq!(calls, 3);
}

#[test]
fn costs_count_what_a_search_looked_at() {
    // Ten points, one per cell of a row of ten cells.
    let mut grid = UniformGrid::new(bx(0.0, 0.0, 100.0, 10.0), 10.0).unwrap();
    let mut brute = BruteForce::new();
    for i in 0..10 {
        let b = Aabb::point(Point::new(f64::from(i) * 10.0 + 5.0, 5.0)).unwrap();
        grid.insert(b, i).unwrap();
        brute.insert(b, i).unwrap();
    }
    let area = bx(0.0, 0.0, 29.0, 9.0);
    let mut cost = QueryCost::default();
    let _ = grid.query_probed(&area, &mut cost, |_| ControlFlow::Continue(()));
    assert_eq!(
        cost,
        QueryCost {
            regions: 3,
            candidates: 3
        }
    );
    let mut cost = QueryCost::default();
    let _ = brute.query_probed(&area, &mut cost, |_| ControlFlow::Continue(()));
    assert_eq!(
        cost,
        QueryCost {
            regions: 1,
            candidates: 10
        }
    );
    let mut cost = QueryCost::default();
    let mut ws = Workspace::new();
    let found = grid.nearest_probed(Point::new(5.0, 5.0), 1, &mut ws, &mut cost);
    assert_eq!(found.len(), 1);
    assert!(cost.candidates >= 1 && cost.candidates < 10, "{cost:?}");
    // An invalid area, or an empty structure, looks at nothing.
    let mut cost = QueryCost::default();
    let inverted = Aabb {
        min: Point::new(1.0, 1.0),
        max: Point::new(0.0, 0.0),
    };
    let _ = grid.query_probed(&inverted, &mut cost, |_| ControlFlow::Continue(()));
    let empty = UniformGrid::<f64, u32>::new(world(), 50.0).unwrap();
    let _ = empty.nearest_probed(Point::new(1.0, 1.0), 3, &mut Workspace::new(), &mut cost);
    assert_eq!(cost, QueryCost::default());
}
