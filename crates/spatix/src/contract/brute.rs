//! The brute-force index: every query scans every element.

use core::ops::ControlFlow;

use super::probe::{Probe, Probed, Quiet, Region, RegionKind, Watch};
use crate::base::slots::Slots;
use crate::bytes::{Reader, Refile, Writer};
use crate::{
    Aabb, Error, Handle, Item, Iter, Neighbor, Point, Ray, Scalar, SpatialIndex, SpatialQuery,
    Workspace,
};

/// Every element in one array; every query tests every element.
///
/// The oracle every other structure is tested against, written to be obviously right, and
/// the best choice below about 64 elements, where any index costs more than it saves.
///
/// # Complexity
/// insert, remove, update: O(1). query, within, nearest: O(n). for_each_pair: O(n²).
/// Memory: the slot table only (box, value, generation per element).
///
/// # Example
/// ```
/// use core::ops::ControlFlow;
/// use spatix::{Aabb, BruteForce, Point, SpatialIndex, SpatialQuery};
/// let mut index = BruteForce::new();
/// index.insert(Aabb::new(Point::new(0.0f64, 0.0), Point::new(2.0, 2.0))?, "crate")?;
/// index.insert(Aabb::new(Point::new(5.0f64, 5.0), Point::new(6.0, 6.0))?, "barrel")?;
/// let mut found = Vec::new();
/// let area = Aabb::new(Point::new(1.0, 1.0), Point::new(3.0, 3.0))?;
/// let _ = index.query(&area, |item| { found.push(*item.value); ControlFlow::Continue(()) });
/// assert_eq!(found, ["crate"]);
/// # Ok::<(), spatix::Error>(())
/// ```
///
/// # See also
/// [`UniformGrid`](crate::UniformGrid) and [`Quadtree`](crate::Quadtree) for larger sets.
#[derive(Clone, Debug)]
pub struct BruteForce<S, T> {
    slots: Slots<S, T>,
    /// Live slots, densely packed, so scans skip holes.
    live: Vec<u32>,
    /// Position of each slot in `live`.
    position: Vec<u32>,
}

impl<S: Scalar, T> Default for BruteForce<S, T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Scalar, T> BruteForce<S, T> {
    /// An empty index.
    ///
    /// ```
    /// use spatix::{BruteForce, SpatialIndex, SpatialQuery};
    /// let index = BruteForce::<f32, ()>::new();
    /// assert!(index.is_empty());
    /// ```
    pub fn new() -> Self {
        Self {
            slots: Slots::default(),
            live: Vec::new(),
            position: Vec::new(),
        }
    }

    /// The union of every element's box: the one region (`None` when empty).
    fn bounds(&self) -> Option<Aabb<S>> {
        let mut boxes = self.live.iter().map(|&slot| *self.slots.aabb(slot));
        let first = boxes.next()?;
        Some(boxes.fold(first, |all, b| all.union(&b)))
    }

    fn query_watched<F>(
        &self,
        area: &Aabb<S>,
        watch: &mut impl Watch<S>,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        if !area.is_valid() || self.live.is_empty() {
            return ControlFlow::Continue(());
        }
        watch.region(|| self.bounds().unwrap_or(*area));
        for &slot in &self.live {
            watch.candidate(|| self.slots.handle(slot));
            if self.slots.aabb(slot).intersects(area) {
                visit(self.slots.item(slot))?;
            }
        }
        ControlFlow::Continue(())
    }

    fn nearest_watched<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        watch: &mut impl Watch<S>,
    ) -> &'w [Neighbor<S>] {
        let mut search = workspace.begin_exact(k);
        if point.is_finite() && k > 0 && !self.live.is_empty() {
            watch.region(|| {
                self.bounds().unwrap_or(Aabb {
                    min: point,
                    max: point,
                })
            });
            for &slot in &self.live {
                watch.candidate(|| self.slots.handle(slot));
                let d = self.slots.aabb(slot).distance_key(point);
                search.offer(self.slots.handle(slot), d);
            }
        }
        workspace.finish()
    }

    fn raycast_watched<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        watch: &mut impl Watch<S>,
        mut visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        let mut search = workspace.begin_ray();
        if ray.is_valid() && !self.live.is_empty() {
            watch.region(|| {
                self.bounds().unwrap_or(Aabb {
                    min: ray.origin,
                    max: ray.origin,
                })
            });
            for &slot in &self.live {
                watch.candidate(|| self.slots.handle(slot));
                if let Some(t) = self.slots.aabb(slot).entry_unchecked(ray) {
                    search.push_hit(t, slot);
                }
            }
        }
        search.report_until(S::INFINITY, &self.slots, &mut visit)
    }
}

impl<S: Scalar, T> SpatialQuery<S, T> for BruteForce<S, T> {
    fn get(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.slots.get(handle)
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn iter(&self) -> Iter<'_, S, T> {
        self.slots.iter()
    }

    fn query<F>(&self, area: &Aabb<S>, visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.query_watched(area, &mut Quiet, visit)
    }

    /// The one region: a [`RegionKind::Cell`] over the union of every element's box, listing
    /// them all (none when empty).
    fn visit_regions<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(&Region<S>) -> ControlFlow<()>,
    {
        match self.bounds() {
            Some(bounds) => visit(&Region {
                bounds,
                depth: 0,
                kind: RegionKind::Cell,
                elements: self.live.len(),
            }),
            None => ControlFlow::Continue(()),
        }
    }

    fn query_probed<P: Probe<S>, F>(
        &self,
        area: &Aabb<S>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.query_watched(area, &mut Probed(probe), visit)
    }

    fn nearest_probed<'w, P: Probe<S>>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
        probe: &mut P,
    ) -> &'w [Neighbor<S>] {
        self.nearest_watched(point, k, workspace, &mut Probed(probe))
    }

    fn raycast_all_probed<P: Probe<S>, F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        probe: &mut P,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        self.raycast_watched(ray, workspace, &mut Probed(probe), visit)
    }

    fn for_each_pair<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        for (i, &a) in self.live.iter().enumerate() {
            let box_a = self.slots.aabb(a);
            for &b in &self.live[i + 1..] {
                if box_a.intersects(self.slots.aabb(b)) {
                    visit(self.slots.item(a), self.slots.item(b))?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn nearest<'w>(
        &self,
        point: Point<S>,
        k: usize,
        workspace: &'w mut Workspace<S>,
    ) -> &'w [Neighbor<S>] {
        self.nearest_watched(point, k, workspace, &mut Quiet)
    }

    fn memory_bytes(&self) -> usize {
        self.slots.memory_bytes()
            + self.live.capacity() * size_of::<u32>()
            + self.position.capacity() * size_of::<u32>()
    }

    fn check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        if self.live.len() != self.slots.len() {
            return Err(Error::InvariantViolated(format!(
                "{} live slots listed for {} elements",
                self.live.len(),
                self.slots.len()
            )));
        }
        for (at, &slot) in self.live.iter().enumerate() {
            if !self.slots.is_live(slot) || self.position[slot as usize] as usize != at {
                return Err(Error::InvariantViolated(format!(
                    "live list entry {at} (slot {slot}) is dead or mispositioned"
                )));
            }
        }
        Ok(())
    }

    fn raycast_all<F>(
        &self,
        ray: &Ray<S>,
        workspace: &mut Workspace<S>,
        visit: F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        self.raycast_watched(ray, workspace, &mut Quiet, visit)
    }
}

impl<S: Scalar, T> SpatialIndex<S, T> for BruteForce<S, T> {
    fn insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error> {
        let slot = self.slots.insert(aabb.validated()?, value)?;
        let i = slot as usize;
        if self.position.len() <= i {
            self.position.resize(i + 1, 0);
        }
        self.position[i] = self.live.len() as u32;
        self.live.push(slot);
        Ok(self.slots.handle(slot))
    }

    fn remove(&mut self, handle: Handle) -> Option<T> {
        let slot = self.slots.slot_of(handle)?;
        let at = self.position[slot as usize] as usize;
        self.live.swap_remove(at);
        if let Some(&moved) = self.live.get(at) {
            self.position[moved as usize] = at as u32;
        }
        Some(self.slots.remove(slot))
    }

    fn value_mut(&mut self, handle: Handle) -> Option<&mut T> {
        self.slots.value_mut(handle)
    }

    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        let aabb = aabb.validated()?;
        let slot = self.slots.slot_of(handle).ok_or(Error::StaleHandle)?;
        self.slots.set_aabb(slot, aabb);
        Ok(())
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.live.clear();
    }
}

crate::bytes::byte_form!(BruteForce);

/// The byte form: no parameters, the slot table, the live list in slot order.
impl<S: Scalar, T> Refile for BruteForce<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"brute\0\0\0";

    fn write_config(&self, _: &mut Writer) {}

    fn read_config(_: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(Self::new())
    }

    fn slots(&self) -> &Slots<S, T> {
        &self.slots
    }

    fn file_all(&mut self, slots: Slots<S, T>, _: &Reader<'_>) -> Result<(), Error> {
        self.slots = slots;
        self.live = self.slots.live_slots().collect();
        self.position = vec![0; self.slots.capacity()];
        for (at, &slot) in self.live.iter().enumerate() {
            self.position[slot as usize] = at as u32;
        }
        Ok(())
    }

    fn check(&self) -> Result<(), Error> {
        self.check_invariants()
    }
}

impl<S, T> crate::Listed for BruteForce<S, T> {
    const CLI: &'static str = "brute-force";
    const ABOUT: &'static str =
        "`BruteForce`: one array, every pair tested (O(n²) pairs: for small inputs).";
}

/// Nothing to size.
impl<S: Scalar, T> crate::ListedIndex<S, T> for BruteForce<S, T> {
    fn for_sample(_world: Aabb<S>, _sample: &[Aabb<S>], _total: usize) -> Result<Self, Error> {
        Ok(Self::new())
    }
}
