//! Routing between the parts, handles across them, static elements (waiting, built, marked
//! gone, rebuilt), and each query against the oracle with elements in all three parts.

use core::ops::ControlFlow;

use super::Layered;
use crate::test_util::{assert_matches_oracle, bx, extreme_boxes, found, pairs, widest};
use crate::{
    Aabb, BruteForce, Error, Handle, Item, Iter, LooseGrid, Neighbor, PackedIndex, Point,
    PointGrid, Ray, Scalar, SpatialIndex, SpatialQuery, StaticIndex, UniformGrid, Workspace,
};
use spatix_workload::Rng;

fn world() -> Aabb<f64> {
    bx(0.0, 0.0, 100.0, 100.0)
}

/// Distances of the `k` nearest, and the values of a ray's hits with their entries.
fn nearest_and_ray<I: SpatialQuery<f64, u32>>(
    index: &I,
    p: Point<f64>,
) -> (Vec<f64>, Vec<(u32, f64)>) {
    let mut ws = Workspace::new();
    let near = index
        .nearest(p, 5, &mut ws)
        .iter()
        .map(|n| n.distance)
        .collect();
    let ray = Ray::new(p, Point::new(1.0, 0.3), 200.0).unwrap();
    let mut hits = Vec::new();
    let _ = index.raycast_all(&ray, &mut ws, |e, t| {
        hits.push((*e.value, t));
        ControlFlow::Continue(())
    });
    hits.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    (near, hits)
}

#[test]
fn elements_are_routed_by_size_and_static_ones_stay_static() {
    let mut index = Layered::new(world(), 2.0).unwrap();
    let agent = index.insert(bx(10.0, 10.0, 13.0, 14.0), 0).unwrap();
    let dragon = index.insert(bx(10.0, 10.0, 15.0, 11.0), 1).unwrap();
    let rock = index.insert_static(bx(12.0, 0.0, 12.5, 0.5), 2).unwrap();
    // The rock waits among the agents until maintain builds the static part.
    assert_eq!(index.part_lens(), (2, 1, 0));
    index.check_invariants().unwrap();
    index.maintain();
    assert_eq!(index.part_lens(), (1, 1, 1));
    let handles = [agent, dragon, rock];
    for (i, a) in handles.iter().enumerate() {
        assert!(
            handles[i + 1..].iter().all(|b| a != b),
            "handles are distinct"
        );
    }
    // Growing, an agent becomes large; shrinking, large becomes an agent; same handles.
    index.update(agent, bx(0.0, 0.0, 50.0, 50.0)).unwrap();
    index.update(dragon, bx(20.0, 20.0, 21.0, 21.0)).unwrap();
    assert_eq!(index.part_lens(), (1, 1, 1));
    assert_eq!(*index.get(agent).unwrap().value, 0);
    assert_eq!(index.get(dragon).unwrap().aabb, bx(20.0, 20.0, 21.0, 21.0));
    // A static element that moves waits in the part its size names, then is built again.
    index.update(rock, bx(0.0, 0.0, 90.0, 90.0)).unwrap();
    assert_eq!(index.part_lens(), (1, 2, 0));
    assert_eq!(pairs(&index), [(0, 1), (0, 2), (1, 2)]);
    index.check_invariants().unwrap();
    index.maintain();
    assert_eq!(index.part_lens(), (1, 1, 1));
    assert_eq!(pairs(&index), [(0, 1), (0, 2), (1, 2)]);
    // An update to the same box leaves it built.
    index.update(rock, bx(0.0, 0.0, 90.0, 90.0)).unwrap();
    assert_eq!((index.pending, index.dead), (0, 0));
    index.check_invariants().unwrap();
    assert_eq!(index.remove(rock), Some(2));
    assert_eq!(index.remove(rock), None);
    assert!(index.get(rock).is_none());
    assert_eq!(
        index.update(rock, bx(1.0, 1.0, 2.0, 2.0)),
        Err(Error::StaleHandle)
    );
    assert_eq!(index.part_lens(), (1, 1, 0));
    assert_eq!(pairs(&index), [(0, 1)]);
    index.check_invariants().unwrap();
    index.maintain();
    assert_eq!((index.statics.len(), index.dead), (0, 0));
    index.check_invariants().unwrap();
}

#[test]
fn handles_and_results_survive_rebuilds_of_the_static_part() {
    let mut index = Layered::new(world(), 1.0).unwrap();
    let mut brute = BruteForce::new();
    let mut handles = Vec::new();
    // A row of walls, each touching the next: static pairs, each reported once.
    for i in 0..40u32 {
        let x = f64::from(i) * 2.0;
        let b = bx(x, 50.0, x + 2.0, 52.0 + f64::from(i % 3) * 10.0);
        handles.push((index.insert_static(b, i).unwrap(), i));
        brute.insert(b, i).unwrap();
    }
    let agent = index.insert(bx(10.5, 50.5, 11.5, 51.5), 101).unwrap();
    brute.insert(bx(10.5, 50.5, 11.5, 51.5), 101).unwrap();
    let before = pairs(&index);
    assert_eq!(before, pairs(&brute));
    assert!(before.contains(&(0, 1)) && before.contains(&(5, 101)));
    index.maintain();
    assert_eq!(index.part_lens(), (1, 0, 40));
    assert_eq!(pairs(&index), before);
    for &(h, v) in &handles {
        assert_eq!(*index.get(h).unwrap().value, v);
    }
    // Remove every fourth wall: marked gone in the built part, skipped by every query.
    for &(h, v) in handles.iter().step_by(4) {
        assert_eq!(index.remove(h), Some(v));
    }
    assert_eq!(index.dead, 10);
    let mut want: Vec<(u32, u32)> = before
        .iter()
        .copied()
        .filter(|&(a, b)| a % 4 != 0 && b % 4 != 0)
        .collect();
    assert_eq!(pairs(&index), want);
    assert_eq!(found(&index, &world()), {
        let mut v: Vec<u32> = (0..40).filter(|v| v % 4 != 0).collect();
        v.push(101);
        v
    });
    // Nearest must look past the gone walls: the nearest live one to wall 0 is wall 1.
    let mut ws = Workspace::new();
    let near = index.nearest(Point::new(1.0, 51.0), 1, &mut ws)[0].handle;
    assert_eq!(near, handles[1].0);
    index.check_invariants().unwrap();
    // A reused slot (a new static element, still waiting) is not taken for a gone one.
    let reused = index.insert_static(bx(0.0, 50.0, 2.0, 52.0), 200).unwrap();
    assert_eq!(reused.slot(), handles[36].0.slot());
    want.push((1, 200));
    want.sort_unstable();
    assert_eq!(pairs(&index), want);
    index.maintain();
    assert_eq!((index.part_lens(), index.dead), ((1, 0, 31), 0));
    assert_eq!(pairs(&index), want);
    assert_eq!(*index.get(agent).unwrap().value, 101);
    assert_eq!(*index.get(reused).unwrap().value, 200);
    assert!(index.get(handles[0].0).is_none());
    index.check_invariants().unwrap();
    // A warm maintain with no static change keeps the built part as it is.
    let built = index.statics.iter().next().unwrap().handle;
    index.update(agent, bx(30.0, 30.0, 31.0, 31.0)).unwrap();
    index.maintain();
    assert_eq!(index.statics.iter().next().unwrap().handle, built);
}

#[test]
fn bad_parameters_and_boxes_change_nothing() {
    let grid = || UniformGrid::<f64, u32>::new(world(), 10.0).unwrap();
    let loose = || LooseGrid::<f64, u32>::new(world(), 10.0).unwrap();
    let packed = || PackedIndex::<f64, u32>::build([]).unwrap();
    assert!(Layered::<f64, u32, _, _, _>::from_parts(grid(), loose(), packed(), f64::NAN).is_err());
    let mut used = grid();
    used.insert(bx(1.0, 1.0, 2.0, 2.0), 0).unwrap();
    assert!(matches!(
        Layered::<f64, u32, _, _, _>::from_parts(used, loose(), packed(), 1.0),
        Err(Error::InvalidParameter(_))
    ));
    let built = PackedIndex::build([(bx(1.0, 1.0, 2.0, 2.0), 0)]).unwrap();
    assert!(Layered::<f64, u32, _, _, _>::from_parts(grid(), loose(), built, 1.0).is_err());
    assert!(Layered::<f64, u32>::new(world(), f64::MAX).is_err());
    let mut index = Layered::new(world(), 1.0).unwrap();
    let h = index.insert(bx(1.0, 1.0, 2.0, 2.0), 0).unwrap();
    let bad = Aabb {
        min: Point::new(5.0, f64::NAN),
        max: Point::new(6.0, 6.0),
    };
    assert_eq!(index.insert(bad, 1), Err(Error::InvalidAabb));
    assert_eq!(index.insert_static(bad, 1), Err(Error::InvalidAabb));
    assert_eq!(index.update(h, bad), Err(Error::InvalidAabb));
    assert_eq!(index.len(), 1);
    assert_eq!(index.get(h).unwrap().aabb, bx(1.0, 1.0, 2.0, 2.0));
    index.check_invariants().unwrap();
}

#[test]
fn every_query_matches_the_oracle_with_all_three_parts_in_use() {
    let mut rng = Rng::new(17);
    let mut index = Layered::new(world(), 1.5).unwrap();
    let mut brute = BruteForce::new();
    let mut live: Vec<(Handle, Handle, u32)> = Vec::new();
    // Comparisons made while static elements waited, were built, and were marked gone.
    let mut seen = [0usize; 3];
    let random_box = |rng: &mut Rng| {
        let (x, y) = (rng.range(-10.0, 110.0), rng.range(-10.0, 110.0));
        let half = if rng.below(10) == 0 {
            rng.range(3.0, 30.0)
        } else {
            rng.range(0.0, 1.5)
        };
        bx(x - half, y - half * 0.5, x + half, y + half)
    };
    for step in 0..1500u32 {
        match rng.below(10) {
            0..=3 => {
                let b = random_box(&mut rng);
                let (h, hb) = if rng.below(4) == 0 {
                    (
                        index.insert_static(b, step).unwrap(),
                        brute.insert(b, step).unwrap(),
                    )
                } else {
                    (
                        index.insert(b, step).unwrap(),
                        brute.insert(b, step).unwrap(),
                    )
                };
                live.push((h, hb, step));
            }
            4..=7 if !live.is_empty() => {
                let (h, hb, _) = live[rng.below(live.len())];
                let b = random_box(&mut rng);
                index.update(h, b).unwrap();
                brute.update(hb, b).unwrap();
            }
            8 if !live.is_empty() => {
                let (h, hb, v) = live.swap_remove(rng.below(live.len()));
                assert_eq!(index.remove(h), Some(v));
                brute.remove(hb);
            }
            _ => index.maintain(),
        }
        if step % 10 == 0 {
            index.check_invariants().unwrap();
            seen[0] += usize::from(index.pending > 0);
            seen[1] += usize::from(index.part_lens().2 > 0);
            seen[2] += usize::from(index.dead > 0);
            let area = random_box(&mut rng);
            assert_eq!(found(&index, &area), found(&brute, &area));
            assert_eq!(pairs(&index), pairs(&brute));
            let p = Point::new(rng.range(0.0, 100.0), rng.range(0.0, 100.0));
            let (near, hits) = nearest_and_ray(&index, p);
            let (near_b, hits_b) = nearest_and_ray(&brute, p);
            assert_eq!((near, hits), (near_b, hits_b));
        }
    }
    let (a, l, _) = index.part_lens();
    assert!(
        a > 0 && l > 0 && seen.iter().all(|&n| n > 10),
        "all three parts and every static state were used: {:?}",
        (a, l, seen)
    );
}

#[test]
fn visitors_stop_early_in_every_part() {
    let mut index = Layered::new(world(), 1.0).unwrap();
    index.insert(bx(1.0, 1.0, 2.0, 2.0), 0).unwrap();
    index.insert(bx(1.0, 1.0, 9.0, 9.0), 1).unwrap();
    index.insert_static(bx(1.0, 1.0, 3.0, 3.0), 2).unwrap();
    let mut seen = 0;
    let flow = index.for_each_pair(|_, _| {
        seen += 1;
        ControlFlow::Break(())
    });
    assert!(flow.is_break() && seen == 1);
    let ray = Ray::new(Point::new(0.0, 1.5), Point::new(1.0, 0.0), 10.0).unwrap();
    let mut hits = Vec::new();
    let flow = index.raycast_all(&ray, &mut Workspace::new(), |e, _| {
        hits.push(*e.value);
        ControlFlow::Break(())
    });
    assert!(flow.is_break());
    assert_eq!(hits.len(), 1);
}

/// A test part (over `I`, by default the oracle) that refuses boxes wider than 1, as a point
/// grid refuses boxes past its bound; as a static part, it refuses to be built from such
/// boxes.
#[derive(Clone, Default)]
struct Narrow<I = BruteForce<f64, u32>>(I);

/// Whether `Narrow` refuses the box.
fn too_wide(aabb: &Aabb<f64>) -> bool {
    aabb.size().x > 1.0
}

impl<I: SpatialIndex<f64, u32>> SpatialQuery<f64, u32> for Narrow<I> {
    fn get(&self, handle: Handle) -> Option<Item<'_, f64, u32>> {
        self.0.get(handle)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn iter(&self) -> Iter<'_, f64, u32> {
        self.0.iter()
    }
    fn query<F>(&self, area: &Aabb<f64>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>) -> ControlFlow<()>,
    {
        self.0.query(area, visit)
    }
    fn for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>, Item<'_, f64, u32>) -> ControlFlow<()>,
    {
        self.0.for_each_pair(visit)
    }
    fn nearest<'w>(
        &self,
        point: Point<f64>,
        k: usize,
        workspace: &'w mut Workspace<f64>,
    ) -> &'w [Neighbor<f64>] {
        self.0.nearest(point, k, workspace)
    }
    fn raycast_all<F>(
        &self,
        ray: &Ray<f64>,
        workspace: &mut Workspace<f64>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>, f64) -> ControlFlow<()>,
    {
        self.0.raycast_all(ray, workspace, visit)
    }
    fn visit_regions<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: FnMut(&crate::Region<f64>) -> ControlFlow<()>,
    {
        self.0.visit_regions(visit)
    }
    fn query_probed<P: crate::Probe<f64>, F>(
        &self,
        area: &Aabb<f64>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>) -> ControlFlow<()>,
    {
        self.0.query_probed(area, probe, visit)
    }
    fn nearest_probed<'w, P: crate::Probe<f64>>(
        &self,
        point: Point<f64>,
        k: usize,
        workspace: &'w mut Workspace<f64>,
        probe: &mut P,
    ) -> &'w [Neighbor<f64>] {
        self.0.nearest_probed(point, k, workspace, probe)
    }
    fn raycast_all_probed<P: crate::Probe<f64>, F>(
        &self,
        ray: &Ray<f64>,
        workspace: &mut Workspace<f64>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>, f64) -> ControlFlow<()>,
    {
        self.0.raycast_all_probed(ray, workspace, probe, visit)
    }
    fn memory_bytes(&self) -> usize {
        self.0.memory_bytes()
    }
    fn check_invariants(&self) -> Result<(), Error> {
        match self.0.iter().find(|e| too_wide(&e.aabb)) {
            Some(e) => Err(Error::InvariantViolated(format!(
                "{:?} is too wide",
                e.aabb
            ))),
            None => self.0.check_invariants(),
        }
    }
}

impl<I: SpatialIndex<f64, u32>> SpatialIndex<f64, u32> for Narrow<I> {
    fn insert(&mut self, aabb: Aabb<f64>, value: u32) -> Result<Handle, Error> {
        if too_wide(&aabb) {
            return Err(Error::InvalidParameter("too wide"));
        }
        self.0.insert(aabb, value)
    }
    fn remove(&mut self, handle: Handle) -> Option<u32> {
        self.0.remove(handle)
    }
    fn value_mut(&mut self, handle: Handle) -> Option<&mut u32> {
        self.0.value_mut(handle)
    }
    fn update(&mut self, handle: Handle, aabb: Aabb<f64>) -> Result<(), Error> {
        if too_wide(&aabb) {
            return Err(Error::InvalidParameter("too wide"));
        }
        self.0.update(handle, aabb)
    }
    fn clear(&mut self) {
        self.0.clear();
    }
}

impl StaticIndex<f64, u32> for Narrow {
    fn rebuild<I>(&mut self, items: I) -> Result<(), Error>
    where
        I: IntoIterator<Item = (Aabb<f64>, u32)>,
    {
        let items: Vec<_> = items.into_iter().collect();
        if items.iter().any(|(b, _)| too_wide(b)) {
            return Err(Error::InvalidParameter("too wide"));
        }
        self.0.clear();
        for (b, v) in items {
            self.0.insert(b, v)?;
        }
        Ok(())
    }
}

#[test]
fn boxes_the_agents_part_refuses_go_to_the_large_part() {
    let mut index = Layered::<f64, u32, _, _, _>::from_parts(
        Narrow::<BruteForce<f64, u32>>::default(),
        LooseGrid::new(world(), 10.0).unwrap(),
        PackedIndex::build([]).unwrap(),
        2.0,
    )
    .unwrap();
    // Both are agents by the threshold; the part takes only the narrow one.
    let narrow = index.insert(bx(1.0, 1.0, 1.5, 4.0), 0).unwrap();
    let wide = index.insert(bx(1.0, 1.0, 4.0, 1.5), 1).unwrap();
    assert_eq!(index.part_lens(), (1, 1, 0));
    // Widening moves the narrow one over; the wide one, narrowed, comes back; and one the
    // part refuses while it is in the large part stays there.
    index.update(narrow, bx(1.0, 1.0, 3.0, 2.0)).unwrap();
    assert_eq!(index.part_lens(), (0, 2, 0));
    index.update(wide, bx(2.0, 1.0, 2.5, 1.5)).unwrap();
    assert_eq!(index.part_lens(), (1, 1, 0));
    index.update(narrow, bx(1.0, 1.0, 3.5, 2.0)).unwrap();
    assert_eq!(index.part_lens(), (1, 1, 0));
    assert_eq!(pairs(&index), [(0, 1)]);
    index.check_invariants().unwrap();
}

#[test]
fn a_static_part_that_fails_to_build_leaves_its_elements_waiting() {
    let mut index = Layered::<f64, u32, _, _, _>::from_parts(
        PointGrid::new(world(), 2.0).unwrap(),
        LooseGrid::new(world(), 10.0).unwrap(),
        Narrow::<BruteForce<f64, u32>>::default(),
        2.0,
    )
    .unwrap();
    let rock = index.insert_static(bx(1.0, 1.0, 2.0, 2.0), 0).unwrap();
    index.maintain();
    assert_eq!((index.part_lens(), index.pending), ((0, 0, 1), 0));
    // The wall cannot be built: every maintain leaves it waiting, and nothing else changes.
    let wall = index.insert_static(bx(1.5, 0.0, 3.5, 9.0), 1).unwrap();
    index.maintain();
    assert_eq!((index.part_lens(), index.pending), ((0, 1, 1), 1));
    assert_eq!(pairs(&index), [(0, 1)]);
    index.check_invariants().unwrap();
    // Widened, the rock leaves the static part, which cannot be rebuilt: it stays marked
    // gone there, skipped by every query, until the wall is narrow again.
    index.update(rock, bx(1.0, 1.0, 2.5, 2.0)).unwrap();
    index.maintain();
    assert_eq!(
        (index.part_lens(), index.pending, index.dead),
        ((1, 1, 0), 2, 1)
    );
    assert_eq!(found(&index, &bx(0.0, 0.0, 1.0, 1.0)), [0]);
    assert_eq!(pairs(&index), [(0, 1)]);
    let (near, hits) = nearest_and_ray(&index, Point::new(0.0, 1.5));
    assert_eq!((near.len(), hits.len()), (2, 2));
    index.check_invariants().unwrap();
    index.update(rock, bx(1.0, 1.0, 2.0, 2.0)).unwrap();
    index.maintain();
    assert_eq!(
        (index.part_lens(), index.pending, index.dead),
        ((1, 1, 0), 2, 1)
    );
    index.update(wall, bx(3.0, 0.0, 3.5, 9.0)).unwrap();
    index.maintain();
    assert_eq!(
        (index.part_lens(), index.pending, index.dead),
        ((0, 0, 2), 0, 0)
    );
    assert_eq!(pairs(&index), []);
    index.check_invariants().unwrap();
}

#[test]
fn clear_keeps_handles_stale_and_the_index_reusable() {
    let mut index = Layered::new(world(), 1.0).unwrap();
    let h = index.insert(bx(1.0, 1.0, 2.0, 2.0), 0).unwrap();
    index.insert_static(bx(1.0, 1.0, 20.0, 2.0), 1).unwrap();
    index.insert_static(bx(1.0, 1.0, 1.5, 1.5), 2).unwrap();
    index.maintain();
    index.insert_static(bx(5.0, 1.0, 6.0, 2.0), 3).unwrap();
    index.clear();
    assert!(index.is_empty() && index.get(h).is_none());
    assert_eq!(index.part_lens(), (0, 0, 0));
    index.check_invariants().unwrap();
    let h2 = index.insert(bx(50.0, 50.0, 51.0, 51.0), 7).unwrap();
    let h3 = index.insert_static(bx(1.0, 1.0, 1.5, 1.5), 8).unwrap();
    assert_eq!(found(&index, &world()), [7, 8]);
    assert_eq!(pairs(&index), []);
    index.check_invariants().unwrap();
    index.maintain();
    assert_eq!(index.part_lens(), (1, 0, 1));
    assert_eq!(found(&index, &world()), [7, 8]);
    assert!(index.get(h2).is_some() && index.get(h3).is_some());
    index.check_invariants().unwrap();
}

/// The scalar type is generic: the same index over `f32`.
#[test]
fn works_over_f32() {
    fn check<S: Scalar>() {
        let w = Aabb::new(
            Point::new(S::ZERO, S::ZERO),
            Point::new(S::from_f64(10.0), S::from_f64(10.0)),
        )
        .unwrap();
        let mut index = Layered::<S, u8>::new(w, S::ONE).unwrap();
        let b = Aabb::new(
            Point::new(S::ONE, S::ONE),
            Point::new(S::from_f64(2.0), S::from_f64(2.0)),
        )
        .unwrap();
        index.insert(b, 1).unwrap();
        index.insert_static(b, 2).unwrap();
        let mut n = 0;
        let _ = index.for_each_pair(|_, _| {
            n += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(n, 1);
    }
    check::<f32>();
    check::<f64>();
}

#[test]
fn extreme_worlds_and_boxes_match_the_oracle() {
    fn check<S: Scalar>() {
        let boxes = extreme_boxes::<S>();
        // Over [-MAX, MAX]² (its width overflows): agents up to 4, and up to a quarter of
        // MAX, the rest in the large part; every third element static.
        for threshold in [S::from_f64(4.0), S::MAX * S::from_f64(0.25)] {
            let mut index = Layered::new(widest(), threshold).unwrap();
            assert_matches_oracle(&mut index, &boxes);
            let mut index = Layered::<S, u32>::new(widest(), threshold).unwrap();
            for (i, b) in boxes.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
                index.insert_static(*b, i as u32).unwrap();
            }
            index.maintain();
            index.check_invariants().unwrap();
            assert_eq!(index.part_lens().2, boxes.len().div_ceil(3));
            let mut oracle = BruteForce::new();
            for (i, b) in boxes.iter().enumerate().filter(|(i, _)| i % 3 == 0) {
                oracle.insert(*b, i as u32).unwrap();
            }
            assert_eq!(pairs(&index), pairs(&oracle));
            assert_eq!(found(&index, &widest()), found(&oracle, &widest()));
        }
    }
    check::<f32>();
    check::<f64>();
}

#[test]
fn a_threshold_near_a_sixteenth_of_max_is_fine() {
    // What the CLI asks for five points between -1.7e308 and 1e200: a world of a quarter of
    // MAX and a threshold of a quarter of it, whose sixteen times is MAX itself.
    let world = Aabb::new(
        Point::new(-4.494_232_837_155_789_3e307, 0.0),
        Point::new(1e200, 4.494_232_837_155_789_3e307),
    )
    .unwrap();
    let mut index = Layered::<f64, u32>::new(world, 1.123_558_209_288_947_3e307).unwrap();
    index.insert(bx(0.0, 0.0, 1.0, 1.0), 1).unwrap();
    index.check_invariants().unwrap();
}

/// A narrow part's parallel passes are its inner structure's; its frame refuses (keeping the
/// old box) what `update` refuses.
#[cfg(feature = "rayon")]
impl<I: crate::par::PairParts<f64, u32>> crate::par::PairParts<f64, u32> for Narrow<I>
where
    Narrow<I>: SpatialQuery<f64, u32>,
{
    type Part = I::Part;
    type Scratch = I::Scratch;

    fn pair_parts(&self, target: usize, parts: &mut Vec<I::Part>, scratch: &mut I::Scratch) {
        self.0.pair_parts(target, parts, scratch);
    }

    fn pairs_of_part<F>(&self, part: &I::Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, f64, u32>, Item<'_, f64, u32>) -> ControlFlow<()>,
    {
        self.0.pairs_of_part(part, visit)
    }
}

#[cfg(feature = "rayon")]
impl<I: SpatialIndex<f64, u32> + crate::par::UpdateParts<f64, u32>>
    crate::par::UpdateParts<f64, u32> for Narrow<I>
{
    fn update_in_parts<F: crate::par::MoveFn<f64, u32>>(&mut self, f: F) -> Result<(), Error> {
        use core::sync::atomic::{AtomicBool, Ordering};
        let refused = AtomicBool::new(false);
        self.0
            .update_in_parts(|h: Handle, v: &mut u32, old: &Aabb<f64>| {
                let new = f(h, v, old);
                if too_wide(&new) {
                    refused.store(true, Ordering::Relaxed);
                    *old
                } else {
                    new
                }
            })?;
        if refused.into_inner() {
            return Err(Error::InvalidParameter("too wide"));
        }
        Ok(())
    }
}

/// `par_update_all` on four threads leaves what `update_all` leaves on one: every element's
/// box, value and part, the pairs and the queries, with elements changing parts both ways,
/// boxes the agents part refuses (moved to the large part), static elements built and
/// waiting, and invalid boxes refused.
#[cfg(feature = "rayon")]
#[test]
fn parallel_frames_leave_the_serial_state() {
    use crate::ParallelPairs;
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    let (one, four) = (pool(1), pool(4));
    let narrow = Narrow(PointGrid::new(world(), 2.0).unwrap());
    let mut serial = Layered::<f64, u64, _, _, _>::from_parts(
        narrow,
        LooseGrid::new(world(), 10.0).unwrap(),
        PackedIndex::build([]).unwrap(),
        2.0,
    )
    .unwrap();
    let mut rng = Rng::new(5);
    let mut handles = Vec::new();
    for i in 0..3000u64 {
        let (x, y) = (rng.range(0.0, 97.0), rng.range(0.0, 97.0));
        let (w, h) = (rng.range(0.1, 1.0), rng.range(0.1, 1.0));
        let b = bx(x, y, x + w, y + h);
        let handle = if i % 50 == 0 {
            serial.insert_static(b, 0)
        } else {
            serial.insert(b, 0)
        };
        handles.push(handle.unwrap());
    }
    serial.maintain();
    let mut parallel = serial.clone();
    for frame in 0..8u64 {
        let step = |h: Handle, value: &mut u64, b: &Aabb<f64>| {
            *value += 1;
            let r = u64::from(h.slot()).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ frame;
            let (dx, dy) = ((r % 7) as f64 - 3.0, ((r >> 8) % 7) as f64 - 3.0);
            // Some grow past the threshold, some past the narrow part's width (still
            // agents by size), some shrink back, one in 97 is invalid.
            let (w, h) = match (r >> 16) % 9 {
                0 => (5.0, 1.0),
                1 => (1.5, 0.5),
                2 => (0.5, 0.5),
                _ => (b.max.x - b.min.x, b.max.y - b.min.y),
            };
            if (r >> 24) % 97 == 0 {
                return Aabb {
                    min: b.max,
                    max: b.min,
                };
            }
            let (x, y) = (
                (b.min.x + dx).clamp(0.0, 95.0),
                (b.min.y + dy).clamp(0.0, 95.0),
            );
            bx(x, y, x + w, y + h)
        };
        let expected = one.install(|| serial.update_all(step));
        let got = four.install(|| parallel.par_update_all(step));
        assert_eq!(got, expected, "frame {frame}");
        for &h in &handles {
            let (a, b) = (serial.get(h).unwrap(), parallel.get(h).unwrap());
            assert_eq!((a.aabb, *a.value), (b.aabb, *b.value));
            assert_eq!(*b.value, frame + 1, "one call per element and frame");
        }
        assert_eq!(serial.part_lens(), parallel.part_lens(), "frame {frame}");
        parallel.check_invariants().unwrap();
        let ordered = |(a, b): (Handle, Handle)| if a.slot() < b.slot() { (a, b) } else { (b, a) };
        let mut expected = Vec::new();
        let _ = serial.for_each_pair(|a, b| {
            expected.push(ordered((a.handle, b.handle)));
            ControlFlow::Continue(())
        });
        expected.sort_unstable_by_key(|&(a, b)| (a.slot(), b.slot()));
        let mut buffers = crate::PairBuffers::new();
        four.install(|| parallel.par_collect_pairs(&mut buffers));
        let mut got: Vec<_> = buffers.iter().map(ordered).collect();
        got.sort_unstable_by_key(|&(a, b)| (a.slot(), b.slot()));
        assert!(!expected.is_empty());
        assert_eq!(got, expected, "frame {frame}");
        if frame % 3 == 2 {
            serial.maintain();
            parallel.maintain();
        }
    }
}
