//! How a structure keeps the contract. It implements [`QueryEngine`] (and, if it changes,
//! [`IndexEngine`]): one required method per thing only it can do, each called only with
//! input the contract lets through. The public traits come from [`spatial_query!`] and
//! [`spatial_index!`], whose every method is a one-line forward into the functions of this
//! module, where the contract's input checks and handle resolution are written once for
//! every structure.
//!
//! Forwards, not a blanket `impl<X: QueryEngine<S, T>> SpatialQuery<S, T> for X`: that impl
//! would overlap [`BruteForce`](crate::BruteForce)'s own (downstream crates may implement
//! even a crate-private trait for `BruteForce<S, TheirType>`, as far as coherence knows), and
//! the docs would show every structure's contract as a blanket impl bounded by a trait the
//! reader cannot see.
//!
//! [`spatial_query!`]: crate::contract::spatial_query
//! [`spatial_index!`]: crate::contract::spatial_index

use core::ops::ControlFlow;

use super::probe::{Probe, Probed, Quiet, Region, Watch};
use crate::base::slots::{Slots, StaticSlots, StaticTable};
use crate::{
    Aabb, Error, Handle, Item, Iter, Neighbor, Point, Ray, Scalar, SpatialIndex, Workspace,
};

/// A nearest search as [`QueryEngine::nearest_k`] receives it, only once the contract's checks
/// passed: a finite point, `k > 0`, and a structure holding at least one element.
/// Its parts: the point, `k`, and the caller's workspace.
pub(crate) struct Nearest<'w, S>(
    pub(crate) Point<S>,
    pub(crate) usize,
    pub(crate) &'w mut Workspace<S>,
);

/// A ray cast as [`QueryEngine::raycast_valid`] receives it, only once the contract's checks
/// passed: a valid ray, and a structure holding at least one element.
/// Its parts: the ray, the caller's workspace, and the visitor.
pub(crate) struct Cast<'a, S, F>(
    pub(crate) &'a Ray<S>,
    pub(crate) &'a mut Workspace<S>,
    pub(crate) F,
);

/// A visitor of elements (`query`, `within`).
pub(crate) trait Visits<S, T>: FnMut(Item<'_, S, T>) -> ControlFlow<()> {}

impl<S, T, F: FnMut(Item<'_, S, T>) -> ControlFlow<()>> Visits<S, T> for F {}

/// A visitor of intersecting pairs (`for_each_pair`).
pub(crate) trait VisitsPairs<S, T>:
    FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>
{
}

impl<S, T, F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>> VisitsPairs<S, T> for F {}

/// A visitor of ray hits: an element and the ray's entry parameter into it.
pub(crate) trait Hits<S, T>: FnMut(Item<'_, S, T>, S) -> ControlFlow<()> {}

impl<S, T, F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>> Hits<S, T> for F {}

/// Where a structure keeps its elements' handles, boxes and values: what `get`, `len` and
/// `iter` answer from. [`Slots`] and [`StaticSlots`] implement it, and the structures that
/// keep their elements their own way ([`KdTree`](crate::KdTree),
/// [`SweepGrid`](crate::SweepGrid)).
pub(crate) trait Table<S, T> {
    /// The element a handle names, or `None` if the handle is stale (`get`).
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>>;

    /// Number of elements held (`len`).
    fn count(&self) -> usize;

    /// Every element, in the table's order (`iter`).
    fn items(&self) -> Iter<'_, S, T>;
}

/// The element table of a dynamic structure: handles resolve to where an element lives.
pub(crate) trait TableMut<S, T>: Table<S, T> {
    /// Where a live element lives (a slot, a position): what [`IndexEngine::remove_at`] and
    /// [`IndexEngine::update_at`] receive.
    type At: Copy;

    /// Where the element a handle names lives, or `None` if the handle is stale.
    fn resolve(&self, handle: Handle) -> Option<Self::At>;

    /// The value of the element a handle names, or `None` if the handle is stale
    /// (`value_mut`).
    fn value_of_mut(&mut self, handle: Handle) -> Option<&mut T>;
}

impl<S: Scalar, T> Table<S, T> for Slots<S, T> {
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.get(handle)
    }

    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        self.iter()
    }
}

impl<S: Scalar, T> TableMut<S, T> for Slots<S, T> {
    type At = u32;

    #[inline]
    fn resolve(&self, handle: Handle) -> Option<u32> {
        self.slot_of(handle)
    }

    #[inline]
    fn value_of_mut(&mut self, handle: Handle) -> Option<&mut T> {
        self.value_mut(handle)
    }
}

impl<S: Scalar, T> Table<S, T> for StaticSlots<S, T> {
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.table().get(handle)
    }

    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        self.table().iter()
    }
}

impl<S: Scalar, T> Table<S, T> for StaticTable<'_, S, T> {
    #[inline]
    fn item_of(&self, handle: Handle) -> Option<Item<'_, S, T>> {
        self.get(handle)
    }

    #[inline]
    fn count(&self) -> usize {
        self.len()
    }

    #[inline]
    fn items(&self) -> Iter<'_, S, T> {
        self.iter()
    }
}

/// What a structure provides for [`SpatialQuery`](crate::SpatialQuery): its element table and
/// its own searches. The contract's checks happen before these are called (in the functions
/// of this module), so each sees only input it must answer.
pub(crate) trait QueryEngine<S: Scalar, T> {
    /// The element table that `get`, `len` and `iter` answer from.
    type Table: Table<S, T>;

    /// The element table.
    fn table(&self) -> &Self::Table;

    /// Visits every element whose box intersects `area`, a valid box, each exactly once
    /// (`query`), telling `watch` the regions it enters and the elements it tests.
    fn query_valid<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        visit: F,
    ) -> ControlFlow<()>;

    /// Visits every intersecting unordered pair once (`for_each_pair`).
    fn pairs<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()>;

    /// The `k` nearest elements, ascending, written into the workspace (`nearest`), telling
    /// `watch` the regions it enters and the elements whose distance it computes.
    fn nearest_k<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>];

    /// Visits every element at distance `<= radius` from `point` (`within`), given a finite
    /// point, a radius `>= 0` and a structure holding at least one element. By default, the
    /// elements of the box around the circle, filtered by distance; a structure with a
    /// search of its own overrides it.
    fn within_valid<F: Visits<S, T>>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()>
    where
        Self: Sized,
    {
        query(
            self,
            &Aabb::around(point, radius),
            within_filter(point, radius, visit),
        )
    }

    /// Visits every element the ray hits, in ascending order of entry (`raycast_all`),
    /// telling `watch` the regions it enters and the elements it tests.
    fn raycast_valid<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()>;

    /// Visits every region of the structure's shape, parents before children
    /// (`visit_regions`), allocating nothing.
    fn regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(&self, visit: F) -> ControlFlow<()>;

    /// Bytes of heap memory held (`memory_bytes`).
    fn heap_bytes(&self) -> usize;

    /// Checks every structural invariant (`check_invariants`).
    fn check(&self) -> Result<(), Error>;
}

/// What a dynamic structure provides for [`SpatialIndex`] on top of [`QueryEngine`]. Boxes
/// are validated and handles resolved before these are called (in the functions of this
/// module), so each sees only valid boxes and live elements.
pub(crate) trait IndexEngine<S: Scalar, T>:
    QueryEngine<S, T, Table: TableMut<S, T>>
{
    /// The element table, mutably (for `value_mut`).
    fn table_mut(&mut self) -> &mut Self::Table;

    /// Stores `value` with `aabb`, a valid box, and returns its handle (`insert`).
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] when the structure is full; nothing changes then.
    fn insert_valid(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error>;

    /// Removes the live element at `at` and returns its value (`remove`).
    fn remove_at(&mut self, at: At<S, T, Self>) -> T;

    /// Moves the live element at `at` to `aabb`, a valid box (`update`).
    ///
    /// # Errors
    /// What the structure refuses of a valid box ([`Error::BoxTooLarge`] where it bounds the
    /// size); nothing changes then.
    fn update_at(&mut self, at: At<S, T, Self>, aabb: Aabb<S>) -> Result<(), Error>;

    /// Removes every element, keeping the memory (`clear`).
    fn remove_all(&mut self);

    /// The structure's deferred tidying (`maintain`); by default, none.
    fn tidy(&mut self) {}

    /// The frame pass (`update_all`). By default, the walk that
    /// [`SpatialIndex::update_all`] describes, element by element in table order; a
    /// structure that walks its own memory faster overrides it.
    ///
    /// # Errors
    /// The error of the first box refused, as [`SpatialIndex::update_all`].
    #[inline]
    fn update_each<F>(&mut self, f: F) -> Result<(), Error>
    where
        Self: SpatialIndex<S, T> + Sized,
        F: FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
    {
        super::update_by_walk(self, f)
    }
}

/// Where a live element of `E` lives ([`TableMut::At`] of its table).
pub(crate) type At<S, T, E> = <<E as QueryEngine<S, T>>::Table as TableMut<S, T>>::At;

/// The elements of `visit` within `radius` of `point` passed on to it; the others skipped.
pub(crate) fn within_filter<S: Scalar, T>(
    point: Point<S>,
    radius: S,
    mut visit: impl Visits<S, T>,
) -> impl Visits<S, T> {
    move |item: Item<'_, S, T>| {
        if item.aabb.within_distance(point, radius) {
            visit(item)
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// [`SpatialQuery::get`](crate::SpatialQuery::get).
#[inline]
pub(crate) fn get<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    handle: Handle,
) -> Option<Item<'_, S, T>> {
    engine.table().item_of(handle)
}

/// [`SpatialQuery::len`](crate::SpatialQuery::len).
#[inline]
pub(crate) fn len<S: Scalar, T, E: QueryEngine<S, T>>(engine: &E) -> usize {
    engine.table().count()
}

/// [`SpatialQuery::iter`](crate::SpatialQuery::iter).
#[inline]
pub(crate) fn iter<S: Scalar, T, E: QueryEngine<S, T>>(engine: &E) -> Iter<'_, S, T> {
    engine.table().items()
}

/// [`SpatialQuery::query`](crate::SpatialQuery::query): [`query_watched`] with no probe.
#[inline]
pub(crate) fn query<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    area: &Aabb<S>,
    visit: impl Visits<S, T>,
) -> ControlFlow<()> {
    query_watched(engine, area, &mut Quiet, visit)
}

/// [`SpatialQuery::query_probed`](crate::SpatialQuery::query_probed).
#[inline]
pub(crate) fn query_probed<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    area: &Aabb<S>,
    probe: &mut impl Probe<S>,
    visit: impl Visits<S, T>,
) -> ControlFlow<()> {
    query_watched(engine, area, &mut Probed(probe), visit)
}

/// An area query: an invalid area matches nothing.
#[inline]
pub(crate) fn query_watched<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    area: &Aabb<S>,
    watch: &mut impl Watch<S>,
    visit: impl Visits<S, T>,
) -> ControlFlow<()> {
    if !area.is_valid() {
        return ControlFlow::Continue(());
    }
    engine.query_valid(area, watch, visit)
}

/// [`SpatialQuery::for_each_pair`](crate::SpatialQuery::for_each_pair).
#[inline]
pub(crate) fn for_each_pair<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    visit: impl VisitsPairs<S, T>,
) -> ControlFlow<()> {
    engine.pairs(visit)
}

/// [`SpatialQuery::nearest`](crate::SpatialQuery::nearest): [`nearest_watched`] with no
/// probe.
#[inline]
pub(crate) fn nearest<'w, S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    point: Point<S>,
    k: usize,
    workspace: &'w mut Workspace<S>,
) -> &'w [Neighbor<S>] {
    nearest_watched(engine, point, k, workspace, &mut Quiet)
}

/// [`SpatialQuery::nearest_probed`](crate::SpatialQuery::nearest_probed).
#[inline]
pub(crate) fn nearest_probed<'w, S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    point: Point<S>,
    k: usize,
    workspace: &'w mut Workspace<S>,
    probe: &mut impl Probe<S>,
) -> &'w [Neighbor<S>] {
    nearest_watched(engine, point, k, workspace, &mut Probed(probe))
}

/// A nearest search: `k == 0`, a non-finite point or an empty structure find nothing.
#[inline]
pub(crate) fn nearest_watched<'w, S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    point: Point<S>,
    k: usize,
    workspace: &'w mut Workspace<S>,
    watch: &mut impl Watch<S>,
) -> &'w [Neighbor<S>] {
    if k == 0 || !point.is_finite() || len(engine) == 0 {
        return workspace.none();
    }
    engine.nearest_k(Nearest(point, k, workspace), watch)
}

/// [`SpatialQuery::within`](crate::SpatialQuery::within): a non-finite point, a negative or
/// NaN radius, or an empty structure match nothing.
#[inline]
pub(crate) fn within<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    point: Point<S>,
    radius: S,
    visit: impl Visits<S, T>,
) -> ControlFlow<()> {
    if !(point.is_finite() && radius >= S::ZERO) || len(engine) == 0 {
        return ControlFlow::Continue(());
    }
    engine.within_valid(point, radius, visit)
}

/// [`SpatialQuery::raycast_all`](crate::SpatialQuery::raycast_all): [`raycast_watched`] with
/// no probe.
#[inline]
pub(crate) fn raycast_all<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
    visit: impl Hits<S, T>,
) -> ControlFlow<()> {
    raycast_watched(engine, ray, workspace, &mut Quiet, visit)
}

/// [`SpatialQuery::raycast_all_probed`](crate::SpatialQuery::raycast_all_probed).
#[inline]
pub(crate) fn raycast_all_probed<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
    probe: &mut impl Probe<S>,
    visit: impl Hits<S, T>,
) -> ControlFlow<()> {
    raycast_watched(engine, ray, workspace, &mut Probed(probe), visit)
}

/// A ray cast: an invalid ray, or an empty structure, hit nothing.
#[inline]
pub(crate) fn raycast_watched<S: Scalar, T, E: QueryEngine<S, T>>(
    engine: &E,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
    watch: &mut impl Watch<S>,
    visit: impl Hits<S, T>,
) -> ControlFlow<()> {
    if !ray.is_valid() || len(engine) == 0 {
        return ControlFlow::Continue(());
    }
    engine.raycast_valid(Cast(ray, workspace, visit), watch)
}

/// [`SpatialIndex::insert`]: an invalid box is refused with [`Error::InvalidAabb`].
#[inline]
pub(crate) fn insert<S: Scalar, T, E: IndexEngine<S, T>>(
    engine: &mut E,
    aabb: Aabb<S>,
    value: T,
) -> Result<Handle, Error> {
    let aabb = aabb.validated()?;
    engine.insert_valid(aabb, value)
}

/// [`SpatialIndex::remove`]: `None` for a stale handle.
#[inline]
pub(crate) fn remove<S: Scalar, T, E: IndexEngine<S, T>>(
    engine: &mut E,
    handle: Handle,
) -> Option<T> {
    let at = engine.table().resolve(handle)?;
    Some(engine.remove_at(at))
}

/// [`SpatialIndex::update`]: an invalid box is refused with [`Error::InvalidAabb`], a stale
/// handle with [`Error::StaleHandle`].
#[inline]
pub(crate) fn update<S: Scalar, T, E: IndexEngine<S, T>>(
    engine: &mut E,
    handle: Handle,
    aabb: Aabb<S>,
) -> Result<(), Error> {
    let aabb = aabb.validated()?;
    let at = engine.table().resolve(handle).ok_or(Error::StaleHandle)?;
    engine.update_at(at, aabb)
}

/// [`SpatialIndex::value_mut`]: `None` for a stale handle.
#[inline]
pub(crate) fn value_mut<S: Scalar, T, E: IndexEngine<S, T>>(
    engine: &mut E,
    handle: Handle,
) -> Option<&mut T> {
    engine.table_mut().value_of_mut(handle)
}

/// Implements [`SpatialQuery`](crate::SpatialQuery) for a structure that implements
/// [`QueryEngine`]: every method a one-line forward into this module. For a structure with
/// more type parameters than `S` and `T`: `impl[A: Bound, ...] Structure<S, T, A, ...>`;
/// with a lifetime: `impl<'a>[] Structure<'a, S, T>`.
macro_rules! spatial_query {
    (impl[$($generic:tt)*] $structure:ty) => {
        $crate::contract::spatial_query!(impl<>[$($generic)*] $structure);
    };
    (impl<$($lt:lifetime)?>[$($generic:tt)*] $structure:ty) => {
        impl<$($lt,)? S: $crate::Scalar, T, $($generic)*> $crate::SpatialQuery<S, T> for $structure {
            #[inline]
            fn get(&self, handle: $crate::Handle) -> Option<$crate::Item<'_, S, T>> {
                $crate::contract::engine::get(self, handle)
            }

            #[inline]
            fn len(&self) -> usize {
                $crate::contract::engine::len(self)
            }

            #[inline]
            fn iter(&self) -> $crate::Iter<'_, S, T> {
                $crate::contract::engine::iter(self)
            }

            #[inline]
            fn query<F>(&self, area: &$crate::Aabb<S>, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::query(self, area, visit)
            }

            #[inline]
            fn for_each_pair<F>(&self, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>, $crate::Item<'_, S, T>)
                    -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::for_each_pair(self, visit)
            }

            #[inline]
            fn nearest<'w>(
                &self,
                point: $crate::Point<S>,
                k: usize,
                workspace: &'w mut $crate::Workspace<S>,
            ) -> &'w [$crate::Neighbor<S>] {
                $crate::contract::engine::nearest(self, point, k, workspace)
            }

            #[inline]
            fn within<F>(
                &self,
                point: $crate::Point<S>,
                radius: S,
                visit: F,
            ) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::within(self, point, radius, visit)
            }

            #[inline]
            fn raycast_all<F>(
                &self,
                ray: &$crate::Ray<S>,
                workspace: &mut $crate::Workspace<S>,
                visit: F,
            ) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>, S) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::raycast_all(self, ray, workspace, visit)
            }

            #[inline]
            fn visit_regions<F>(&self, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut(&$crate::Region<S>) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::QueryEngine::regions(self, visit)
            }

            #[inline]
            fn query_probed<P: $crate::Probe<S>, F>(
                &self,
                area: &$crate::Aabb<S>,
                probe: &mut P,
                visit: F,
            ) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::query_probed(self, area, probe, visit)
            }

            #[inline]
            fn nearest_probed<'w, P: $crate::Probe<S>>(
                &self,
                point: $crate::Point<S>,
                k: usize,
                workspace: &'w mut $crate::Workspace<S>,
                probe: &mut P,
            ) -> &'w [$crate::Neighbor<S>] {
                $crate::contract::engine::nearest_probed(self, point, k, workspace, probe)
            }

            #[inline]
            fn raycast_all_probed<P: $crate::Probe<S>, F>(
                &self,
                ray: &$crate::Ray<S>,
                workspace: &mut $crate::Workspace<S>,
                probe: &mut P,
                visit: F,
            ) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>, S) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::engine::raycast_all_probed(self, ray, workspace, probe, visit)
            }

            #[inline]
            fn memory_bytes(&self) -> usize {
                $crate::contract::QueryEngine::heap_bytes(self)
            }

            #[inline]
            fn check_invariants(&self) -> Result<(), $crate::Error> {
                $crate::contract::QueryEngine::check(self)
            }
        }
    };
    ($structure:ident) => {
        $crate::contract::spatial_query!(impl[] $structure<S, T>);
    };
}
pub(crate) use spatial_query;

/// Implements [`SpatialQuery`](crate::SpatialQuery) (through [`spatial_query!`], with the same
/// first argument) and [`SpatialIndex`] for a structure that implements [`IndexEngine`]: every
/// method a one-line forward into this module. After the structure, the docs of its own
/// `maintain` and `update_all`, if it documents them:
/// `Structure, maintain { /// docs }, update_all { /// docs }`.
macro_rules! spatial_index {
    (
        impl[$($generic:tt)*] $structure:ty
        $(, maintain { $(#[$maintain:meta])+ })?
        $(, update_all { $(#[$update_all:meta])+ })?
    ) => {
        $crate::contract::spatial_query!(impl[$($generic)*] $structure);

        impl<S: $crate::Scalar, T, $($generic)*> $crate::SpatialIndex<S, T> for $structure {
            #[inline]
            fn insert(
                &mut self,
                aabb: $crate::Aabb<S>,
                value: T,
            ) -> Result<$crate::Handle, $crate::Error> {
                $crate::contract::engine::insert(self, aabb, value)
            }

            #[inline]
            fn remove(&mut self, handle: $crate::Handle) -> Option<T> {
                $crate::contract::engine::remove(self, handle)
            }

            #[inline]
            fn update(
                &mut self,
                handle: $crate::Handle,
                aabb: $crate::Aabb<S>,
            ) -> Result<(), $crate::Error> {
                $crate::contract::engine::update(self, handle, aabb)
            }

            #[inline]
            fn value_mut(&mut self, handle: $crate::Handle) -> Option<&mut T> {
                $crate::contract::engine::value_mut(self, handle)
            }

            $($(#[$update_all])+)?
            #[inline]
            fn update_all<F>(&mut self, f: F) -> Result<(), $crate::Error>
            where
                F: FnMut($crate::Handle, &mut T, &$crate::Aabb<S>) -> $crate::Aabb<S>,
            {
                $crate::contract::IndexEngine::update_each(self, f)
            }

            #[inline]
            fn clear(&mut self) {
                $crate::contract::IndexEngine::remove_all(self);
            }

            $($(#[$maintain])+)?
            #[inline]
            fn maintain(&mut self) {
                $crate::contract::IndexEngine::tidy(self);
            }
        }
    };
    ($structure:ident $($rest:tt)*) => {
        $crate::contract::spatial_index!(impl[] $structure<S, T> $($rest)*);
    };
}
pub(crate) use spatial_index;
