//! How a structure keeps the contract: the crate-private traits it implements, one per file
//! of its folder, each method named `do_` and the public method's name, and the macros that
//! write its public traits from them.
//!
//! | trait | file | methods |
//! | --- | --- | --- |
//! | [`Holds`] | `mod.rs` | `table` (`get`, `len`, `iter`), `do_memory_bytes` |
//! | [`Searches`] | `query.rs` | `do_query`, `do_nearest`, `do_within`, `do_raycast_all` |
//! | [`Pairs`] | `pairs.rs` | `do_for_each_pair` |
//! | [`Regions`] | `regions.rs` | `do_visit_regions` |
//! | [`Validates`] | `validate.rs` | `do_check_invariants` |
//! | [`Mutates`] | `mutate.rs` | `table_mut` (`value_mut`), `do_insert`, `do_remove`, `do_update`, `do_clear`, `do_maintain`, `do_update_all` |
//!
//! The public methods that [`spatial_query!`] and [`spatial_index!`] write check their input
//! once (an invalid box, a stale handle, `k == 0`, an empty structure) and call the `do_`
//! method directly: each `do_` method sees only input it must answer. A structure whose work
//! another value does implements [`Through`] instead of the searches: the point and
//! hierarchical grids (their [`Leveled`](crate::grid::leveled::Leveled) engine), the kd-tree
//! and the packed index and their views (the arrays they own or borrow).
//!
//! Macros, not a blanket `impl<X: Searches<S, T> + ...> SpatialQuery<S, T> for X`: that impl
//! would overlap [`BruteForce`](crate::BruteForce)'s own (downstream crates may implement
//! even a crate-private trait for `BruteForce<S, TheirType>`, as far as coherence knows), and
//! the docs would show every structure's contract as a blanket impl bounded by traits the
//! reader cannot see.
//!
//! [`spatial_query!`]: crate::contract::spatial_query
//! [`spatial_index!`]: crate::contract::spatial_index

use core::ops::ControlFlow;

use super::probe::{Quiet, Region, Watch};
use crate::base::slots::{Slots, StaticSlots, StaticTable};
use crate::{
    Aabb, Error, Handle, Item, Iter, Neighbor, Point, Ray, Scalar, SpatialIndex, Workspace,
};

/// A nearest search as [`Searches::do_nearest`] receives it, only once the contract's checks
/// passed: a finite point, `k > 0`, and a structure holding at least one element.
/// Its parts: the point, `k`, and the caller's workspace.
pub(crate) struct Nearest<'w, S>(
    pub(crate) Point<S>,
    pub(crate) usize,
    pub(crate) &'w mut Workspace<S>,
);

/// A ray cast as [`Searches::do_raycast_all`] receives it, only once the contract's checks
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
    /// Where a live element lives (a slot, a position): what [`Mutates::do_remove`] and
    /// [`Mutates::do_update`] receive.
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

/// What a structure holds (`mod.rs`): its element table, which `get`, `len` and `iter`
/// answer from, and its memory.
pub(crate) trait Holds<S: Scalar, T> {
    /// The element table.
    type Table: Table<S, T>;

    /// The element table.
    fn table(&self) -> &Self::Table;

    /// Bytes of heap memory held ([`memory_bytes`](crate::SpatialQuery::memory_bytes)).
    fn do_memory_bytes(&self) -> usize;
}

/// A structure's searches (`query.rs`), each called only once the contract's checks passed.
pub(crate) trait Searches<S: Scalar, T> {
    /// Visits every element whose box intersects `area`, a valid box, each exactly once
    /// ([`query`](crate::SpatialQuery::query)), telling `watch` the regions it enters and the
    /// elements it tests.
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        visit: F,
    ) -> ControlFlow<()>;

    /// The `k` nearest elements, ascending, written into the workspace
    /// ([`nearest`](crate::SpatialQuery::nearest)), telling `watch` the regions it enters and
    /// the elements whose distance it computes.
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>];

    /// Visits every element at distance `<= radius` from `point`
    /// ([`within`](crate::SpatialQuery::within)), given a finite point, a radius `>= 0` and a
    /// structure holding at least one element. By default, the elements of the box around
    /// the circle, filtered by distance; a structure with a search of its own overrides it.
    #[inline]
    fn do_within<F: Visits<S, T>>(&self, point: Point<S>, radius: S, visit: F) -> ControlFlow<()>
    where
        Self: Sized,
    {
        self.do_query(
            &Aabb::around(point, radius),
            &mut Quiet,
            within_filter(point, radius, visit),
        )
    }

    /// Visits every element the ray hits, in ascending order of entry
    /// ([`raycast_all`](crate::SpatialQuery::raycast_all)), telling `watch` the regions it
    /// enters and the elements it tests.
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()>;
}

/// A structure's pair pass (`pairs.rs`).
pub(crate) trait Pairs<S: Scalar, T> {
    /// Visits every intersecting unordered pair once
    /// ([`for_each_pair`](crate::SpatialQuery::for_each_pair)).
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()>;
}

/// A structure's shape (`regions.rs`).
pub(crate) trait Regions<S: Scalar> {
    /// Visits every region of the structure's shape, parents before children
    /// ([`visit_regions`](crate::SpatialQuery::visit_regions)), allocating nothing.
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        visit: F,
    ) -> ControlFlow<()>;
}

/// A structure's self-check (`validate.rs`).
pub(crate) trait Validates {
    /// Checks every structural invariant
    /// ([`check_invariants`](crate::SpatialQuery::check_invariants)).
    fn do_check_invariants(&self) -> Result<(), Error>;
}

/// A dynamic structure's changes (`mutate.rs`), each called only with a valid box and a live
/// element.
pub(crate) trait Mutates<S: Scalar, T>: Holds<S, T, Table: TableMut<S, T>> {
    /// The element table, mutably (for [`value_mut`](SpatialIndex::value_mut)).
    fn table_mut(&mut self) -> &mut Self::Table;

    /// Stores `value` with `aabb`, a valid box, and returns its handle
    /// ([`insert`](SpatialIndex::insert)).
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] when the structure is full; nothing changes then.
    fn do_insert(&mut self, aabb: Aabb<S>, value: T) -> Result<Handle, Error>;

    /// Removes the live element at `at` and returns its value
    /// ([`remove`](SpatialIndex::remove)).
    fn do_remove(&mut self, at: At<S, T, Self>) -> T;

    /// Moves the live element at `at` to `aabb`, a valid box
    /// ([`update`](SpatialIndex::update)).
    ///
    /// # Errors
    /// What the structure refuses of a valid box ([`Error::BoxTooLarge`] where it bounds the
    /// size); nothing changes then.
    fn do_update(&mut self, at: At<S, T, Self>, aabb: Aabb<S>) -> Result<(), Error>;

    /// Removes every element, keeping the memory ([`clear`](SpatialIndex::clear)).
    fn do_clear(&mut self);

    /// The structure's deferred tidying ([`maintain`](SpatialIndex::maintain)); by default,
    /// none.
    #[inline]
    fn do_maintain(&mut self) {}

    /// The frame pass ([`update_all`](SpatialIndex::update_all)). By default, the walk that
    /// [`SpatialIndex::update_all`] describes, element by element in table order; a
    /// structure that walks its own memory faster overrides it.
    ///
    /// # Errors
    /// The error of the first box refused, as [`SpatialIndex::update_all`].
    #[inline]
    fn do_update_all<F>(&mut self, f: F) -> Result<(), Error>
    where
        Self: SpatialIndex<S, T> + Sized,
        F: FnMut(Handle, &mut T, &Aabb<S>) -> Aabb<S>,
    {
        super::update_by_walk(self, f)
    }
}

/// Where a live element of `E` lives ([`TableMut::At`] of its table).
pub(crate) type At<S, T, E> = <<E as Holds<S, T>>::Table as TableMut<S, T>>::At;

/// A structure whose searches, pair pass, shape and self-check another value does: an engine
/// it holds (the point and hierarchical grids' [`Leveled`](crate::grid::leveled::Leveled)) or
/// the arrays it owns or borrows (the kd-tree, the packed index and their views). It
/// implements [`Searches`], [`Pairs`], [`Regions`] and [`Validates`] by that value's.
pub(crate) trait Through {
    /// The scalar.
    type S: Scalar;
    /// The value type.
    type T;
    /// The value that does the work.
    type Engine<'a>: Searches<Self::S, Self::T>
        + Pairs<Self::S, Self::T>
        + Regions<Self::S>
        + Validates
    where
        Self: 'a;

    /// The value that does the work.
    fn engine(&self) -> Self::Engine<'_>;
}

impl<X: Through> Searches<X::S, X::T> for X {
    #[inline]
    fn do_query<W: Watch<X::S>, F: Visits<X::S, X::T>>(
        &self,
        area: &Aabb<X::S>,
        watch: &mut W,
        visit: F,
    ) -> ControlFlow<()> {
        self.engine().do_query(area, watch, visit)
    }

    #[inline]
    fn do_nearest<'w, W: Watch<X::S>>(
        &self,
        nearest: Nearest<'w, X::S>,
        watch: &mut W,
    ) -> &'w [Neighbor<X::S>] {
        self.engine().do_nearest(nearest, watch)
    }

    #[inline]
    fn do_within<F: Visits<X::S, X::T>>(
        &self,
        point: Point<X::S>,
        radius: X::S,
        visit: F,
    ) -> ControlFlow<()> {
        self.engine().do_within(point, radius, visit)
    }

    #[inline]
    fn do_raycast_all<W: Watch<X::S>, F: Hits<X::S, X::T>>(
        &self,
        cast: Cast<'_, X::S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        self.engine().do_raycast_all(cast, watch)
    }
}

impl<X: Through> Pairs<X::S, X::T> for X {
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<X::S, X::T>>(&self, visit: F) -> ControlFlow<()> {
        self.engine().do_for_each_pair(visit)
    }
}

impl<X: Through> Regions<X::S> for X {
    #[inline]
    fn do_visit_regions<F: FnMut(&Region<X::S>) -> ControlFlow<()>>(
        &self,
        visit: F,
    ) -> ControlFlow<()> {
        self.engine().do_visit_regions(visit)
    }
}

impl<X: Through> Validates for X {
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.engine().do_check_invariants()
    }
}

/// The elements of `visit` within `radius` of `point` passed on to it; the others skipped.
#[inline]
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

/// Implements [`SpatialQuery`](crate::SpatialQuery) for a structure that implements
/// [`Holds`], [`Searches`], [`Pairs`], [`Regions`] and [`Validates`]: each method checks
/// its input once and calls the structure's `do_` method. For a structure with more type
/// parameters than `S` and `T`: `impl[A: Bound, ...] Structure<S, T, A, ...>`; with a
/// lifetime: `impl<'a>[] Structure<'a, S, T>`.
macro_rules! spatial_query {
    (impl[$($generic:tt)*] $structure:ty) => {
        $crate::contract::spatial_query!(impl<>[$($generic)*] $structure);
    };
    (impl<$($lt:lifetime)?>[$($generic:tt)*] $structure:ty) => {
        impl<$($lt,)? S: $crate::Scalar, T, $($generic)*> $crate::SpatialQuery<S, T> for $structure {
            #[inline]
            fn get(&self, handle: $crate::Handle) -> Option<$crate::Item<'_, S, T>> {
                $crate::contract::Table::item_of($crate::contract::Holds::table(self), handle)
            }

            #[inline]
            fn len(&self) -> usize {
                $crate::contract::Table::count($crate::contract::Holds::table(self))
            }

            #[inline]
            fn iter(&self) -> $crate::Iter<'_, S, T> {
                $crate::contract::Table::items($crate::contract::Holds::table(self))
            }

            #[inline]
            fn query<F>(&self, area: &$crate::Aabb<S>, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>) -> core::ops::ControlFlow<()>,
            {
                if !area.is_valid() {
                    return core::ops::ControlFlow::Continue(());
                }
                $crate::contract::Searches::do_query(
                    self,
                    area,
                    &mut $crate::contract::probe::Quiet,
                    visit,
                )
            }

            #[inline]
            fn for_each_pair<F>(&self, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>, $crate::Item<'_, S, T>)
                    -> core::ops::ControlFlow<()>,
            {
                $crate::contract::Pairs::do_for_each_pair(self, visit)
            }

            #[inline]
            fn nearest<'w>(
                &self,
                point: $crate::Point<S>,
                k: usize,
                workspace: &'w mut $crate::Workspace<S>,
            ) -> &'w [$crate::Neighbor<S>] {
                if k == 0 || !point.is_finite() || $crate::SpatialQuery::is_empty(self) {
                    return workspace.none();
                }
                $crate::contract::Searches::do_nearest(
                    self,
                    $crate::contract::Nearest(point, k, workspace),
                    &mut $crate::contract::probe::Quiet,
                )
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
                if !(point.is_finite() && radius >= S::ZERO)
                    || $crate::SpatialQuery::is_empty(self)
                {
                    return core::ops::ControlFlow::Continue(());
                }
                $crate::contract::Searches::do_within(self, point, radius, visit)
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
                if !ray.is_valid() || $crate::SpatialQuery::is_empty(self) {
                    return core::ops::ControlFlow::Continue(());
                }
                $crate::contract::Searches::do_raycast_all(
                    self,
                    $crate::contract::Cast(ray, workspace, visit),
                    &mut $crate::contract::probe::Quiet,
                )
            }

            #[inline]
            fn visit_regions<F>(&self, visit: F) -> core::ops::ControlFlow<()>
            where
                F: FnMut(&$crate::Region<S>) -> core::ops::ControlFlow<()>,
            {
                $crate::contract::Regions::do_visit_regions(self, visit)
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
                if !area.is_valid() {
                    return core::ops::ControlFlow::Continue(());
                }
                $crate::contract::Searches::do_query(
                    self,
                    area,
                    &mut $crate::contract::probe::Probed(probe),
                    visit,
                )
            }

            #[inline]
            fn nearest_probed<'w, P: $crate::Probe<S>>(
                &self,
                point: $crate::Point<S>,
                k: usize,
                workspace: &'w mut $crate::Workspace<S>,
                probe: &mut P,
            ) -> &'w [$crate::Neighbor<S>] {
                if k == 0 || !point.is_finite() || $crate::SpatialQuery::is_empty(self) {
                    return workspace.none();
                }
                $crate::contract::Searches::do_nearest(
                    self,
                    $crate::contract::Nearest(point, k, workspace),
                    &mut $crate::contract::probe::Probed(probe),
                )
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
                if !ray.is_valid() || $crate::SpatialQuery::is_empty(self) {
                    return core::ops::ControlFlow::Continue(());
                }
                $crate::contract::Searches::do_raycast_all(
                    self,
                    $crate::contract::Cast(ray, workspace, visit),
                    &mut $crate::contract::probe::Probed(probe),
                )
            }

            #[inline]
            fn memory_bytes(&self) -> usize {
                $crate::contract::Holds::do_memory_bytes(self)
            }

            #[inline]
            fn check_invariants(&self) -> Result<(), $crate::Error> {
                $crate::contract::Validates::do_check_invariants(self)
            }
        }
    };
    ($structure:ident) => {
        $crate::contract::spatial_query!(impl[] $structure<S, T>);
    };
}
pub(crate) use spatial_query;

/// Implements [`SpatialQuery`](crate::SpatialQuery) (through [`spatial_query!`], with the same
/// first argument) and [`SpatialIndex`] for a structure that implements [`Mutates`] too: each
/// method checks its input once and calls the structure's `do_` method. After the structure,
/// the docs of its own `maintain` and `update_all`, if it documents them:
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
                let aabb = aabb.validated()?;
                $crate::contract::Mutates::do_insert(self, aabb, value)
            }

            #[inline]
            fn remove(&mut self, handle: $crate::Handle) -> Option<T> {
                let at = $crate::contract::TableMut::resolve(
                    $crate::contract::Holds::table(self),
                    handle,
                )?;
                Some($crate::contract::Mutates::do_remove(self, at))
            }

            #[inline]
            fn update(
                &mut self,
                handle: $crate::Handle,
                aabb: $crate::Aabb<S>,
            ) -> Result<(), $crate::Error> {
                let aabb = aabb.validated()?;
                let at = $crate::contract::TableMut::resolve(
                    $crate::contract::Holds::table(self),
                    handle,
                )
                .ok_or($crate::Error::StaleHandle)?;
                $crate::contract::Mutates::do_update(self, at, aabb)
            }

            #[inline]
            fn value_mut(&mut self, handle: $crate::Handle) -> Option<&mut T> {
                $crate::contract::TableMut::value_of_mut(
                    $crate::contract::Mutates::table_mut(self),
                    handle,
                )
            }

            $($(#[$update_all])+)?
            #[inline]
            fn update_all<F>(&mut self, f: F) -> Result<(), $crate::Error>
            where
                F: FnMut($crate::Handle, &mut T, &$crate::Aabb<S>) -> $crate::Aabb<S>,
            {
                $crate::contract::Mutates::do_update_all(self, f)
            }

            #[inline]
            fn clear(&mut self) {
                $crate::contract::Mutates::do_clear(self);
            }

            $($(#[$maintain])+)?
            #[inline]
            fn maintain(&mut self) {
                $crate::contract::Mutates::do_maintain(self);
            }
        }
    };
    ($structure:ident $($rest:tt)*) => {
        $crate::contract::spatial_index!(impl[] $structure<S, T> $($rest)*);
    };
}
pub(crate) use spatial_index;
