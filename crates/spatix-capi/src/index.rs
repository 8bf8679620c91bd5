//! The structures behind the opaque pointers: [`Index`], one object-safe face over every
//! wrapped spatix structure (a blanket implementation over [`Structure`], implemented for
//! every listed structure from `spatix::for_each_structure!` and for the two views), and
//! [`Mutate`], the dynamic structures' extra half.

use core::cell::RefCell;
use core::ops::ControlFlow;

use spatix::{
    Aabb, BatchBuffers, ByteForm, Error, Handle, KdTree, KdTreeView, ListedIndex, ListedStatic,
    PackedIndex, PackedView, PairBuffers, ParallelPairs, ParallelQuery, Point, Ray, Scalar,
    SpatialIndex, SpatialQuery, ViewValue, Workspace,
};

use crate::status::{Failure, SpatixStatus};
use crate::types::{SpatixHit, SpatixItem, SpatixKind, SpatixNeighbor};

/// A scalar the ABI offers (`f32` or `f64`): the library's [`Scalar`] with what the ABI
/// keeps per scalar.
pub(crate) trait AbiScalar: Scalar + Into<f64> + Send + Sync + 'static {
    /// The tag of a live index of this precision (a foreign or other-precision pointer
    /// almost certainly holds something else there).
    const TAG: u64;

    /// Runs `f` with this thread's reusable workspace (a fresh one when it is in use, as
    /// when a visitor queries again), so that warm queries allocate nothing.
    fn with_workspace<R>(f: impl FnOnce(&mut Workspace<Self>) -> R) -> R;
}

macro_rules! abi_scalar {
    ($s:ty, $tag:expr, $cell:ident) => {
        thread_local! {
            static $cell: RefCell<Workspace<$s>> = RefCell::new(Workspace::new());
        }
        impl AbiScalar for $s {
            const TAG: u64 = $tag;
            fn with_workspace<R>(f: impl FnOnce(&mut Workspace<Self>) -> R) -> R {
                $cell.with(|cell| match cell.try_borrow_mut() {
                    Ok(mut ws) => f(&mut ws),
                    Err(_) => f(&mut Workspace::new()),
                })
            }
        }
    };
}
abi_scalar!(f32, 0x5350_4154_4958_0032, WORKSPACE_F32);
abi_scalar!(f64, 0x5350_4154_4958_0064, WORKSPACE_F64);

/// A visitor of elements.
pub(crate) type Visit<'a> = &'a mut dyn FnMut(SpatixItem) -> ControlFlow<()>;

/// A visitor of pairs.
pub(crate) type VisitPairs<'a> = &'a mut dyn FnMut(SpatixItem, SpatixItem) -> ControlFlow<()>;

/// A visitor of pairs called from several threads at once.
pub(crate) type SharedPairs<'a> = &'a (dyn Fn(SpatixItem, SpatixItem) -> ControlFlow<()> + Sync);

/// A visitor of a batch's answers: the query's position in the batch, and one answer. Called
/// query by query, in input order.
pub(crate) type VisitBatch<'a, R> = &'a mut dyn FnMut(usize, R);

/// The moving function of an update-all pass.
pub(crate) type Mover<'a, S> = &'a mut dyn FnMut(Handle, &mut u64, &Aabb<S>) -> Aabb<S>;

/// The moving function of a parallel update-all pass.
pub(crate) type SharedMover<'a, S> = &'a (dyn Fn(Handle, &mut u64, &Aabb<S>) -> Aabb<S> + Sync);

/// What every index behind an opaque pointer answers.
pub(crate) trait Index<S: AbiScalar>: Send + Sync {
    /// Which structure it is.
    fn kind(&self) -> SpatixKind;
    /// How many elements it holds.
    fn len(&self) -> usize;
    /// An element's box and value.
    fn get(&self, handle: Handle) -> Option<(Aabb<S>, u64)>;
    /// Every element whose box intersects `area`.
    fn query(&self, area: &Aabb<S>, visit: Visit<'_>) -> ControlFlow<()>;
    /// Every element within `radius` of `point`.
    fn within(&self, point: Point<S>, radius: S, visit: Visit<'_>) -> ControlFlow<()>;
    /// The `k` elements nearest `point`, nearest first.
    fn nearest(
        &self,
        point: Point<S>,
        k: usize,
        visit: &mut dyn FnMut(SpatixNeighbor) -> ControlFlow<()>,
    ) -> ControlFlow<()>;
    /// Every element the ray hits, nearest first.
    fn raycast(
        &self,
        ray: &Ray<S>,
        visit: &mut dyn FnMut(SpatixHit) -> ControlFlow<()>,
    ) -> ControlFlow<()>;
    /// Every intersecting pair, once.
    fn pairs(&self, visit: VisitPairs<'_>) -> ControlFlow<()>;
    /// Every intersecting pair, once, found on all threads.
    fn par_pairs(&self, visit: SharedPairs<'_>) -> Result<ControlFlow<()>, Failure>;
    /// Every intersecting pair, once, collected on all threads, then visited on this one.
    fn par_collect_pairs(&self, visit: VisitPairs<'_>) -> Result<(), Failure>;
    /// Rectangle queries answered on all threads (`ParallelQuery::query_batch`).
    fn query_batch(&self, areas: &[Aabb<S>], visit: VisitBatch<'_, SpatixItem>);
    /// Radius queries answered on all threads (`ParallelQuery::within_batch`).
    fn within_batch(&self, points: &[Point<S>], radius: S, visit: VisitBatch<'_, SpatixItem>);
    /// k-nearest queries answered on all threads (`ParallelQuery::nearest_batch`).
    fn nearest_batch(&self, points: &[Point<S>], k: usize, visit: VisitBatch<'_, SpatixNeighbor>);
    /// First hits of rays found on all threads (`ParallelQuery::raycast_batch`).
    fn raycast_batch(&self, rays: &[Ray<S>], visit: VisitBatch<'_, SpatixHit>);
    /// The byte form.
    fn to_bytes(&self) -> Vec<u8>;
    /// The dynamic half, or `Unsupported` for a static structure.
    fn mutate(&mut self) -> Result<&mut dyn Mutate<S>, Failure>;
}

/// What a dynamic structure adds.
pub(crate) trait Mutate<S: AbiScalar> {
    /// [`SpatialIndex::insert`].
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error>;
    /// [`SpatialIndex::remove`].
    fn remove(&mut self, handle: Handle) -> Option<u64>;
    /// [`SpatialIndex::update`].
    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error>;
    /// [`SpatialIndex::update_all`].
    fn update_all(&mut self, mover: Mover<'_, S>) -> Result<(), Error>;
    /// [`ParallelPairs::par_update_all`], or `Unsupported` for a structure without it.
    fn par_update_all(&mut self, mover: SharedMover<'_, S>) -> Result<(), Failure>;
    /// [`SpatialIndex::maintain`].
    fn maintain(&mut self);
}

impl<S: AbiScalar, I> Mutate<S> for I
where
    I: SpatialIndex<S, u64> + Structure<S>,
{
    fn insert(&mut self, aabb: Aabb<S>, value: u64) -> Result<Handle, Error> {
        SpatialIndex::insert(self, aabb, value)
    }
    fn remove(&mut self, handle: Handle) -> Option<u64> {
        SpatialIndex::remove(self, handle)
    }
    fn update(&mut self, handle: Handle, aabb: Aabb<S>) -> Result<(), Error> {
        SpatialIndex::update(self, handle, aabb)
    }
    fn update_all(&mut self, mover: Mover<'_, S>) -> Result<(), Error> {
        SpatialIndex::update_all(self, mover)
    }
    fn par_update_all(&mut self, mover: SharedMover<'_, S>) -> Result<(), Failure> {
        match self.par_update(mover) {
            Some(done) => Ok(done?),
            None => Err(Failure::unsupported("parallel update-all", I::NAME)),
        }
    }
    fn maintain(&mut self) {
        SpatialIndex::maintain(self);
    }
}

/// A spatix structure the ABI wraps: the few answers that differ between structures.
pub(crate) trait Structure<S: AbiScalar>:
    SpatialQuery<S, u64> + Send + Sync + 'static
{
    /// Its name: of its type (of the indexed structure for a view), in messages and in
    /// [`SpatixKind::ALL`].
    const NAME: &'static str;
    /// Its byte form.
    fn save(&self) -> Vec<u8>;
    /// The dynamic half, where the structure has one.
    fn dynamic(&mut self) -> Option<&mut dyn Mutate<S>> {
        None
    }
    /// The parallel pair passes, where the structure has them.
    fn parallel(&self) -> Option<&dyn Parallel<S>> {
        None
    }
    /// [`ParallelPairs::par_update_all`], where the structure has it.
    fn par_update(&mut self, mover: SharedMover<'_, S>) -> Option<Result<(), Error>> {
        let _ = mover;
        None
    }
}

/// The parallel pair passes of a structure ([`ParallelPairs`]), with items for the ABI.
pub(crate) trait Parallel<S> {
    /// [`ParallelPairs::par_for_each_pair`].
    fn par_pairs(&self, visit: SharedPairs<'_>) -> ControlFlow<()>;
    /// [`ParallelPairs::par_collect_pairs`], then each pair visited here.
    fn par_collect_pairs(&self, visit: VisitPairs<'_>);
}

impl<S: AbiScalar, I: ParallelPairs<S, u64>> Parallel<S> for I {
    fn par_pairs(&self, visit: SharedPairs<'_>) -> ControlFlow<()> {
        self.par_for_each_pair(|a, b| visit(SpatixItem::of(a), SpatixItem::of(b)))
    }
    fn par_collect_pairs(&self, visit: VisitPairs<'_>) {
        let mut buffers = PairBuffers::new();
        ParallelPairs::par_collect_pairs(self, &mut buffers);
        for (a, b) in buffers.iter() {
            if visit(item_of(self, a), item_of(self, b)).is_break() {
                break;
            }
        }
    }
}

/// What a caller does with the structure a [`SpatixKind`] names ([`with_kind`]).
pub(crate) trait UseKind<S: AbiScalar> {
    /// What it gives.
    type Output;
    /// With a dynamic structure.
    fn dynamic<I: Structure<S> + ListedIndex<S, u64>>(self) -> Self::Output;
    /// With a static structure.
    fn fixed<I: Structure<S> + ListedStatic<S, u64>>(self) -> Self::Output;
}

/// [`Structure`] for the listed structure `$ty`: its name, its byte form and the methods
/// given (what its group has).
macro_rules! listed_structure {
    ($ty:ident, $($methods:tt)*) => {
        impl<S: AbiScalar> Structure<S> for spatix::$ty<S, u64> {
            const NAME: &'static str = stringify!($ty);
            fn save(&self) -> Vec<u8> {
                ByteForm::to_bytes(self)
            }
            $($methods)*
        }
    };
}

/// Every listed structure but the oracle behind the ABI: its [`Structure`] impl (a dynamic
/// one's both halves; the parallel passes of the `parallel` group and of static structures
/// of boxes), [`with_kind`] and [`load`]'s structures, from `spatix::for_each_structure!`.
macro_rules! structures {
    (
        oracle { $($o:ident: $oty:ident),* }
        dynamic {
            parallel { $($p:ident: $pty:ident),* }
            serial { $($s:ident: $sty:ident),* }
        }
        fixed {
            boxes { $($b:ident: $bty:ident),* }
            points { $($q:ident: $qty:ident),* }
        }
    ) => {
        $(
            listed_structure!($pty,
                fn dynamic(&mut self) -> Option<&mut dyn Mutate<S>> {
                    Some(self)
                }
                fn parallel(&self) -> Option<&dyn Parallel<S>> {
                    Some(self)
                }
                fn par_update(&mut self, mover: SharedMover<'_, S>) -> Option<Result<(), Error>> {
                    Some(ParallelPairs::par_update_all(self, mover))
                }
            );
        )*
        $(
            listed_structure!($sty,
                fn dynamic(&mut self) -> Option<&mut dyn Mutate<S>> {
                    Some(self)
                }
            );
        )*
        $(
            listed_structure!($bty,
                fn parallel(&self) -> Option<&dyn Parallel<S>> {
                    Some(self)
                }
            );
        )*
        $(listed_structure!($qty,);)*

        /// Runs `user` with the structure `kind` names (a [`SpatixKind`] as C passes it: an
        /// `int32_t`, since a C caller may pass any number), or `InvalidParameter` for a number
        /// that is no kind.
        pub(crate) fn with_kind<S: AbiScalar, U: UseKind<S>>(
            kind: i32,
            user: U,
        ) -> Result<U::Output, Failure> {
            let name = SpatixKind::ALL
                .iter()
                .find(|(k, _)| *k as i32 == kind)
                .map_or("", |(_, name)| name);
            $(
                if name == stringify!($pty) {
                    return Ok(user.dynamic::<spatix::$pty<S, u64>>());
                }
            )*
            $(
                if name == stringify!($sty) {
                    return Ok(user.dynamic::<spatix::$sty<S, u64>>());
                }
            )*
            $(
                if name == stringify!($bty) {
                    return Ok(user.fixed::<spatix::$bty<S, u64>>());
                }
            )*
            $(
                if name == stringify!($qty) {
                    return Ok(user.fixed::<spatix::$qty<S, u64>>());
                }
            )*
            Err(Failure::new(
                SpatixStatus::InvalidParameter,
                format!("invalid parameter: {kind} is not a SpatixKind"),
            ))
        }

        /// The index whose byte form `bytes` is, of whichever structure its header names.
        pub(crate) fn load<S: AbiScalar>(bytes: &[u8]) -> Result<Box<dyn Index<S>>, Failure> {
            fn from<S: AbiScalar, I: Structure<S> + ByteForm>(
                bytes: &[u8],
            ) -> Result<Box<dyn Index<S>>, Failure> {
                Ok(Box::new(I::from_bytes(bytes)?))
            }
            // The header only: the load checks the checksum (one pass over the bytes).
            let header = spatix::ByteHeader::peek(bytes)?;
            let name = header.structure.as_str();
            $(
                if name == <spatix::$pty<S, u64> as ByteForm>::NAME {
                    return from::<S, spatix::$pty<S, u64>>(bytes);
                }
            )*
            $(
                if name == <spatix::$sty<S, u64> as ByteForm>::NAME {
                    return from::<S, spatix::$sty<S, u64>>(bytes);
                }
            )*
            $(
                if name == <spatix::$bty<S, u64> as ByteForm>::NAME {
                    return from::<S, spatix::$bty<S, u64>>(bytes);
                }
            )*
            $(
                if name == <spatix::$qty<S, u64> as ByteForm>::NAME {
                    return from::<S, spatix::$qty<S, u64>>(bytes);
                }
            )*
            Err(Failure::new(
                SpatixStatus::CorruptBytes,
                format!("corrupt bytes: structure {name:?} is not one the C ABI loads"),
            ))
        }
    };
}
spatix::for_each_structure!(structures);

impl<S: AbiScalar + ViewValue> Structure<S> for PackedView<'static, S, u64> {
    const NAME: &'static str = "PackedIndex";
    fn save(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }
    fn parallel(&self) -> Option<&dyn Parallel<S>> {
        Some(self)
    }
}

impl<S: AbiScalar + ViewValue> Structure<S> for KdTreeView<'static, S, u64> {
    const NAME: &'static str = "KdTree";
    fn save(&self) -> Vec<u8> {
        self.bytes().to_vec()
    }
}

/// A view of the byte form `bytes` (a packed index or a kd-tree, as its header names), read
/// in place.
pub(crate) fn view<S: AbiScalar + ViewValue>(
    bytes: &'static [u8],
) -> Result<Box<dyn Index<S>>, Failure> {
    let header = spatix::ByteHeader::peek(bytes)?;
    let name = header.structure.as_str();
    if name == <PackedIndex<S, u64> as ByteForm>::NAME {
        Ok(Box::new(PackedView::<S, u64>::open(bytes)?))
    } else if name == <KdTree<S, u64> as ByteForm>::NAME {
        Ok(Box::new(KdTreeView::<S, u64>::open(bytes)?))
    } else {
        let known = spatix::ByteHeader::read(bytes)?;
        Err(Failure::unsupported(
            "view (only a packed index or a kd-tree is read in place; load it)",
            &known.structure,
        ))
    }
}

impl<S: AbiScalar, I: Structure<S>> Index<S> for I {
    fn kind(&self) -> SpatixKind {
        SpatixKind::ALL
            .iter()
            .find(|(_, name)| *name == I::NAME)
            .map(|(kind, _)| *kind)
            .expect("src/kinds.rs has a kind for every listed structure (tests/header.rs)")
    }
    fn len(&self) -> usize {
        SpatialQuery::len(self)
    }
    fn get(&self, handle: Handle) -> Option<(Aabb<S>, u64)> {
        SpatialQuery::get(self, handle).map(|item| (item.aabb, *item.value))
    }
    fn query(&self, area: &Aabb<S>, visit: Visit<'_>) -> ControlFlow<()> {
        SpatialQuery::query(self, area, |item| visit(SpatixItem::of(item)))
    }
    fn within(&self, point: Point<S>, radius: S, visit: Visit<'_>) -> ControlFlow<()> {
        SpatialQuery::within(self, point, radius, |item| visit(SpatixItem::of(item)))
    }
    fn nearest(
        &self,
        point: Point<S>,
        k: usize,
        visit: &mut dyn FnMut(SpatixNeighbor) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        S::with_workspace(|ws| {
            for n in SpatialQuery::nearest(self, point, k, ws) {
                let item = item_of(self, n.handle);
                visit(SpatixNeighbor {
                    item,
                    distance: n.distance.into(),
                })?;
            }
            ControlFlow::Continue(())
        })
    }
    fn raycast(
        &self,
        ray: &Ray<S>,
        visit: &mut dyn FnMut(SpatixHit) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        S::with_workspace(|ws| {
            SpatialQuery::raycast_all(self, ray, ws, |item, t| {
                visit(SpatixHit {
                    item: SpatixItem::of(item),
                    t: t.into(),
                })
            })
        })
    }
    fn pairs(&self, visit: VisitPairs<'_>) -> ControlFlow<()> {
        SpatialQuery::for_each_pair(self, |a, b| visit(SpatixItem::of(a), SpatixItem::of(b)))
    }
    fn par_pairs(&self, visit: SharedPairs<'_>) -> Result<ControlFlow<()>, Failure> {
        let parallel = self.parallel();
        let parallel =
            parallel.ok_or_else(|| Failure::unsupported("parallel pair pass", I::NAME))?;
        Ok(parallel.par_pairs(visit))
    }
    fn par_collect_pairs(&self, visit: VisitPairs<'_>) -> Result<(), Failure> {
        let parallel = self.parallel();
        let parallel =
            parallel.ok_or_else(|| Failure::unsupported("parallel pair pass", I::NAME))?;
        parallel.par_collect_pairs(visit);
        Ok(())
    }
    fn query_batch(&self, areas: &[Aabb<S>], visit: VisitBatch<'_, SpatixItem>) {
        let mut buffers = BatchBuffers::default();
        let answers = ParallelQuery::query_batch(self, areas, &mut buffers);
        for (i, handles) in answers.iter().enumerate() {
            handles.iter().for_each(|h| visit(i, item_of(self, *h)));
        }
    }
    fn within_batch(&self, points: &[Point<S>], radius: S, visit: VisitBatch<'_, SpatixItem>) {
        let mut buffers = BatchBuffers::default();
        let answers = ParallelQuery::within_batch(self, points, radius, &mut buffers);
        for (i, handles) in answers.iter().enumerate() {
            handles.iter().for_each(|h| visit(i, item_of(self, *h)));
        }
    }
    fn nearest_batch(&self, points: &[Point<S>], k: usize, visit: VisitBatch<'_, SpatixNeighbor>) {
        let mut buffers = BatchBuffers::default();
        let answers = ParallelQuery::nearest_batch(self, points, k, &mut buffers);
        for (i, found) in answers.iter().enumerate() {
            for n in found {
                let item = item_of(self, n.handle);
                visit(
                    i,
                    SpatixNeighbor {
                        item,
                        distance: n.distance.into(),
                    },
                );
            }
        }
    }
    fn raycast_batch(&self, rays: &[Ray<S>], visit: VisitBatch<'_, SpatixHit>) {
        let mut buffers = BatchBuffers::default();
        let answers = ParallelQuery::raycast_batch(self, rays, &mut buffers);
        for (i, hits) in answers.iter().enumerate() {
            for hit in hits {
                let item = item_of(self, hit.handle);
                visit(
                    i,
                    SpatixHit {
                        item,
                        t: hit.t.into(),
                    },
                );
            }
        }
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.save()
    }
    fn mutate(&mut self) -> Result<&mut dyn Mutate<S>, Failure> {
        self.dynamic()
            .ok_or_else(|| Failure::unsupported("insert, remove or update", I::NAME))
    }
}

/// The item of a handle a query of `index` gave (its value looked up).
fn item_of<S: AbiScalar, I: SpatialQuery<S, u64>>(index: &I, handle: Handle) -> SpatixItem {
    SpatixItem::new(
        handle,
        SpatialQuery::get(index, handle).map_or(0, |item| *item.value),
    )
}
