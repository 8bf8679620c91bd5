//! The loose grid's own mechanics: one entry per element, the reach fast path, boxes that grow
//! and shrink, re-filing and packing in `maintain`, irregular cells in the tight grid.

use super::{LooseGrid, LooseGridConfig, is_empty};
use crate::base::handle::NIL;
use crate::test_util::{bx, found, pairs};
use crate::{Aabb, BruteForce, Handle, Point, SpatialIndex, SpatialQuery};
use spatix_workload::{Agents, Layout, Sizes};

/// An agent's box or world as this crate's `Aabb`: `spatix-workload` is built on the library as
/// a dependency, whose `Aabb` a unit test sees as another type with the same fields.
macro_rules! own {
    ($b:expr) => {{
        let b = $b;
        Aabb {
            min: Point::new(b.min.x, b.min.y),
            max: Point::new(b.max.x, b.max.y),
        }
    }};
}

/// `[0, 100]²` in loose cells of 10 (reach 2.5) and tight cells of 20.
fn grid() -> LooseGrid<f64, u32> {
    LooseGrid::new(bx(0.0, 0.0, 100.0, 100.0), 10.0).unwrap()
}

/// The cells, lists and tight grid, to see what an operation touched.
fn snapshot(g: &LooseGrid<f64, u32>) -> (Vec<Aabb<f64>>, Vec<u32>, Vec<u32>, usize) {
    (
        g.boxes.clone(),
        g.heads.clone(),
        g.tight.heads.clone(),
        g.elements.relinked(),
    )
}

#[test]
fn an_element_is_one_entry_in_the_cell_of_its_centre_whatever_its_size() {
    let mut g = grid();
    let small = g.insert(bx(31.0, 42.0, 33.0, 44.0), 0).unwrap();
    let dragon = g.insert(bx(5.0, 5.0, 95.0, 95.0), 1).unwrap();
    assert_eq!(g.elements.in_use(), 2);
    assert_eq!(g.home[small.slot() as usize] as usize, g.loose.index(3, 4));
    assert_eq!(g.home[dragon.slot() as usize] as usize, g.loose.index(5, 5));
    // The dragon's cell reaches far past its square: irregular, listed in every tight cell.
    assert_eq!(g.tight.irregular, 1);
    assert_eq!(g.tight.lists.in_use(), 25);
    assert_eq!(found(&g, &bx(0.0, 0.0, 6.0, 6.0)), [1]);
    assert_eq!(pairs(&g), [(0, 1)]);
    g.check_invariants().unwrap();
    // Removed, the dragon leaves its box behind until `maintain` shrinks it away.
    g.remove(dragon);
    assert_eq!(g.tight.irregular, 1);
    g.maintain();
    assert_eq!((g.tight.irregular, g.tight.lists.in_use()), (0, 0));
    assert!(is_empty(&g.boxes[g.loose.index(5, 5)]));
    g.check_invariants().unwrap();
}

#[test]
fn an_update_within_reach_touches_no_cell() {
    let mut g = grid();
    let h = g.insert(bx(41.0, 41.0, 43.0, 43.0), 0).unwrap();
    g.insert(bx(46.0, 46.0, 48.0, 48.0), 1).unwrap();
    g.maintain();
    let before = snapshot(&g);
    assert!(g.overhang < 0.0);
    // Still in its cell, then its centre drifts into the next cell, 2 past the square.
    g.update(h, bx(44.0, 41.0, 46.0, 43.0)).unwrap();
    g.update(h, bx(49.0, 41.0, 52.0, 43.0)).unwrap();
    assert_eq!(
        snapshot(&g),
        before,
        "no cell, list or tight cell was written"
    );
    assert_eq!(g.home[h.slot() as usize] as usize, g.loose.index(4, 4));
    assert_eq!(g.overhang, 2.0);
    // The cell's region covers the drifted element, so it is found and paired.
    assert_eq!(found(&g, &bx(51.5, 42.0, 60.0, 50.0)), [0]);
    g.update(h, bx(47.5, 44.0, 50.0, 47.0)).unwrap();
    assert_eq!(pairs(&g), [(0, 1)]);
    g.check_invariants().unwrap();
    // `maintain` re-files it in the cell of its centre and forgets the overhang.
    g.update(h, bx(49.0, 41.0, 52.0, 43.0)).unwrap();
    g.maintain();
    assert_eq!(g.home[h.slot() as usize] as usize, g.loose.index(5, 4));
    assert!(g.overhang < 0.0);
    assert_eq!(g.boxes[g.loose.index(5, 4)], bx(49.0, 41.0, 52.0, 43.0));
    g.check_invariants().unwrap();
}

#[test]
fn an_update_beyond_reach_grows_the_cell_box_until_maintain() {
    let mut g = grid();
    let h = g.insert(bx(41.0, 41.0, 43.0, 43.0), 0).unwrap();
    g.insert(bx(80.0, 80.0, 82.0, 82.0), 1).unwrap();
    g.maintain();
    let home = g.loose.index(4, 4);
    // Far away: the home cell's box grows to cover it and the cell becomes irregular.
    g.update(h, bx(79.0, 79.0, 81.0, 81.0)).unwrap();
    assert_eq!(g.home[h.slot() as usize] as usize, home);
    assert_eq!(g.boxes[home], bx(41.0, 41.0, 81.0, 81.0));
    assert_eq!(g.tight.irregular, 1);
    assert_eq!(found(&g, &bx(78.0, 78.0, 79.5, 79.5)), [0]);
    assert_eq!(pairs(&g), [(0, 1)]);
    g.check_invariants().unwrap();
    g.maintain();
    assert_eq!(g.home[h.slot() as usize] as usize, g.loose.index(8, 8));
    assert_eq!(g.boxes[g.loose.index(8, 8)], bx(79.0, 79.0, 82.0, 82.0));
    assert!(is_empty(&g.boxes[home]));
    assert_eq!(g.tight.irregular, 0);
    g.check_invariants().unwrap();
}

#[test]
fn maintain_shrinks_boxes_to_their_elements() {
    let mut g = grid();
    let h = g.insert(bx(11.0, 11.0, 19.0, 19.0), 0).unwrap();
    g.insert(bx(12.0, 12.0, 13.0, 13.0), 1).unwrap();
    let cell = g.loose.index(1, 1);
    assert_eq!(g.boxes[cell], bx(11.0, 11.0, 19.0, 19.0));
    g.remove(h);
    assert_eq!(
        g.boxes[cell],
        bx(11.0, 11.0, 19.0, 19.0),
        "removal does not shrink"
    );
    g.maintain();
    assert_eq!(g.boxes[cell], bx(12.0, 12.0, 13.0, 13.0));
    // Nothing meets the space the removed element left.
    assert!(found(&g, &bx(15.0, 15.0, 16.0, 16.0)).is_empty());
    g.check_invariants().unwrap();
}

/// Whether every list is one run of consecutive nodes.
fn packed(g: &LooseGrid<f64, u32>) -> bool {
    g.heads.iter().all(|&head| {
        let mut at = head;
        while at != NIL {
            let next = g.elements.link(at).next;
            if next != NIL && next != at + 1 {
                return false;
            }
            at = next;
        }
        true
    })
}

#[test]
fn maintain_lays_the_lists_out_in_cell_order_once_enough_moved() {
    let mut agents = Agents::<f64>::new(4000, Layout::Uniform, Sizes::Uniform, 3);
    let sample: Vec<_> = agents.boxes().map(|b| own!(b)).collect();
    let mut g = LooseGrid::auto(own!(agents.world), &sample).unwrap();
    let handles: Vec<Handle> = sample
        .iter()
        .enumerate()
        .map(|(i, b)| g.insert(*b, i as u32).unwrap())
        .collect();
    g.maintain();
    assert!(
        packed(&g),
        "the first maintain packs what insertion scattered"
    );
    let mut scattered = false;
    for _ in 0..40 {
        agents.step();
        for (i, h) in handles.iter().enumerate() {
            g.update(*h, own!(agents.aabb(i))).unwrap();
        }
        g.maintain();
        scattered |= !packed(&g);
        // Re-filed nodes stay put, but never many for long.
        assert!(g.elements.relinked() * 8 < g.len());
        g.check_invariants().unwrap();
    }
    assert!(scattered, "re-filing moved nodes between lists in place");
}

#[test]
fn a_moving_crowd_matches_the_oracle_frame_after_frame() {
    for (sizes, reach) in [
        (Sizes::Uniform, None),
        (Sizes::Mixed, None),
        (Sizes::Mixed, Some(0.0)),
    ] {
        let mut agents = Agents::<f64>::new(3000, Layout::Clustered, sizes, 9);
        let cell = agents.world.size().x / 40.0;
        let config = LooseGridConfig {
            reach: reach.unwrap_or(cell / 4.0),
            ..LooseGridConfig::new(cell)
        };
        let mut g = LooseGrid::with_config(own!(agents.world), config).unwrap();
        let mut brute = BruteForce::new();
        let handles: Vec<(Handle, Handle)> = agents
            .boxes()
            .enumerate()
            .map(|(i, b)| {
                let b = own!(b);
                (
                    g.insert(b, i as u32).unwrap(),
                    brute.insert(b, i as u32).unwrap(),
                )
            })
            .collect();
        for frame in 0..6 {
            agents.step();
            for (i, (h, hb)) in handles.iter().enumerate() {
                let b = own!(agents.aabb(i));
                g.update(*h, b).unwrap();
                brute.update(*hb, b).unwrap();
            }
            assert_eq!(pairs(&g), pairs(&brute), "{sizes:?} frame {frame}");
            let area = bx(0.0, 0.0, agents.world.max.x / 3.0, agents.world.max.y / 2.0);
            assert_eq!(found(&g, &area), found(&brute, &area));
            g.check_invariants().unwrap();
            if frame % 2 == 0 {
                g.maintain();
            }
        }
        assert!(g.tight.irregular > 0 || sizes == Sizes::Uniform);
    }
}

#[test]
fn elements_outside_the_world_make_irregular_border_cells() {
    let mut g = grid();
    g.insert(bx(250.0, 50.0, 251.0, 51.0), 0).unwrap();
    g.insert(bx(-30.0, -30.0, -29.0, -29.0), 1).unwrap();
    g.insert(bx(98.0, 50.0, 99.0, 51.0), 2).unwrap();
    assert_eq!(g.tight.irregular, 2);
    assert_eq!(found(&g, &bx(200.0, 0.0, 300.0, 100.0)), [0]);
    assert_eq!(found(&g, &bx(-100.0, -100.0, -29.0, -29.0)), [1]);
    assert_eq!(found(&g, &bx(97.0, 0.0, 1000.0, 100.0)), [0, 2]);
    g.check_invariants().unwrap();
}

#[test]
fn clear_forgets_everything_and_the_grid_is_reused() {
    let mut g = grid();
    let hs: Vec<Handle> = (0..50)
        .map(|i| {
            let x = f64::from(i) * 2.0;
            g.insert(bx(x, x, x + 1.0, x + 1.0), i).unwrap()
        })
        .collect();
    g.insert(bx(0.0, 0.0, 100.0, 100.0), 50).unwrap();
    g.clear();
    assert!(g.is_empty() && g.tight.irregular == 0 && g.overhang < 0.0);
    assert!(g.get(hs[3]).is_none());
    g.check_invariants().unwrap();
    let h = g.insert(bx(10.0, 10.0, 11.0, 11.0), 7).unwrap();
    assert_eq!(*g.get(h).unwrap().value, 7);
    assert_eq!(found(&g, &bx(0.0, 0.0, 100.0, 100.0)), [7]);
    g.check_invariants().unwrap();
}

#[test]
fn a_capacity_given_up_front_is_all_the_memory_needed() {
    let agents = Agents::<f32>::new(5000, Layout::Uniform, Sizes::Uniform, 5);
    let mut g = LooseGrid::<f32, u32>::with_capacity(own!(agents.world), 16.0, 5000).unwrap();
    let before = g.memory_bytes();
    for (i, b) in agents.boxes().enumerate() {
        g.insert(own!(b), i as u32).unwrap();
    }
    assert_eq!(g.memory_bytes(), before);
}

#[test]
fn bands_that_do_not_fit_are_walked() {
    // 600 columns (more than the pass keeps bands for) of 3 rows, dense enough that a row's
    // north bands overflow their buffer, and one cell too crowded to copy, among neighbours.
    let world = bx(0.0, 0.0, 6000.0, 30.0);
    let mut g = LooseGrid::<f64, u32>::new(world, 10.0).unwrap();
    assert!(g.dims().0 as usize > 512);
    let mut rng = spatix_workload::Rng::new(17);
    let mut boxes: Vec<Aabb<f64>> = (0..15_000)
        .map(|_| {
            let (x, y) = (rng.range(0.0, 6000.0), rng.range(0.0, 30.0));
            let (w, h) = (rng.range(1.0, 2.0), rng.range(1.0, 2.0));
            bx(x - w, y - h, x + w, y + h)
        })
        .collect();
    boxes.extend((0..200).map(|i| {
        let x = 14.0 + f64::from(i % 10) * 0.2;
        bx(x, 14.0, x + 1.0, 15.0)
    }));
    let mut brute = BruteForce::new();
    let handles: Vec<(Handle, Handle)> = (0u32..)
        .zip(&boxes)
        .map(|(i, b)| (g.insert(*b, i).unwrap(), brute.insert(*b, i).unwrap()))
        .collect();
    for frame in 0..3 {
        assert_eq!(pairs(&g), pairs(&brute), "frame {frame}");
        g.check_invariants().unwrap();
        for (k, (h, hb)) in handles.iter().enumerate() {
            let b = boxes[k];
            let d = if (k + frame) % 3 == 0 { 0.5 } else { -0.25 };
            let moved = bx(b.min.x + d, b.min.y, b.max.x + d, b.max.y);
            boxes[k] = moved;
            g.update(*h, moved).unwrap();
            brute.update(*hb, moved).unwrap();
        }
        assert_eq!(pairs(&g), pairs(&brute), "frame {frame}, moved");
        g.maintain();
    }
}
