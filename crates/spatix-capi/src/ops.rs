//! The bodies of the entry points, generic over the precision: each `extern "C"` function of
//! [`f32`](crate::f32) and [`f64`](crate::f64) is a one-line forward to one of these.
//!
//! # Safety
//! Every function here is `unsafe` with one contract, the entry point's: each pointer
//! argument is null or valid for the reads and writes the entry point's documentation
//! describes (an index pointer: made by this library and not yet destroyed; a buffer of
//! `n` or `capacity` elements: that many elements, readable or writable). Null pointers are
//! refused with `SPATIX_STATUS_NULL_POINTER`, index pointers of another kind or precision with
//! `SPATIX_STATUS_FOREIGN_POINTER`.

use core::ffi::c_void;
use core::ops::ControlFlow;

use spatix::{
    Aabb, Handle, KdTree, ListedIndex, ListedStatic, LooseGrid, PackedIndex, Point, SweepGrid,
    UniformGrid, ViewValue,
};

use crate::index::{self, AbiScalar, Index, Structure, UseKind};
use crate::status::{Failure, SpatixStatus, guard};
use crate::types::{
    SpatixAabb, SpatixHit, SpatixHitFn, SpatixItem, SpatixItemFn, SpatixKind, SpatixNeighbor,
    SpatixNeighborFn, SpatixPair, SpatixPairFn, SpatixPoint, SpatixRay, UpdateFn,
};

/// What an opaque index pointer points to: a tag checked on entry, and the index.
pub(crate) struct Object<S: AbiScalar> {
    /// `S::TAG` while alive; cleared by destroy.
    tag: u64,
    /// The structure.
    index: Box<dyn Index<S>>,
}

/// An opaque C type of one precision, wrapping an [`Object`].
pub(crate) trait Opaque: Sized + 'static {
    /// Its precision.
    type S: AbiScalar;
    /// Wraps an object.
    fn wrap(object: Object<Self::S>) -> Self;
    /// The object inside.
    fn object(&self) -> &Object<Self::S>;
    /// The object inside, mutably.
    fn object_mut(&mut self) -> &mut Object<Self::S>;
}

/// Implements [`Opaque`] for the C type `$name` of precision `$s`.
macro_rules! opaque {
    ($name:ident, $s:ty) => {
        impl $crate::ops::Opaque for $name {
            type S = $s;
            fn wrap(object: $crate::ops::Object<$s>) -> Self {
                Self(object)
            }
            fn object(&self) -> &$crate::ops::Object<$s> {
                &self.0
            }
            fn object_mut(&mut self) -> &mut $crate::ops::Object<$s> {
                &mut self.0
            }
        }
    };
}
pub(crate) use opaque;

/// The checked index behind a pointer: `NullPointer` or `ForeignPointer` if it is not one.
///
/// # Safety
/// `p` is null, or points to readable memory at least as large as `O` (see module docs).
unsafe fn checked<'a, O: Opaque>(p: *const O) -> Result<&'a O, Failure> {
    if p.is_null() {
        return Err(Failure::null("index"));
    }
    if !p.is_aligned() {
        return Err(foreign());
    }
    // SAFETY: non-null, aligned, and readable by the contract; the tag then says whether it
    // is a live object of this precision.
    let o = unsafe { &*p };
    if o.object().tag == O::S::TAG {
        Ok(o)
    } else {
        Err(foreign())
    }
}

/// The failure of a pointer that is no live index of this precision.
fn foreign() -> Failure {
    Failure::new(
        SpatixStatus::ForeignPointer,
        "foreign pointer: not a live spatix index of this precision",
    )
}

/// The index behind a pointer, for reading.
///
/// # Safety
/// As [`checked`].
unsafe fn index<'a, O: Opaque>(p: *const O) -> Result<&'a dyn Index<O::S>, Failure> {
    // SAFETY: forwarded contract.
    Ok(unsafe { checked(p) }?.object().index.as_ref())
}

/// The index behind a pointer, for writing.
///
/// # Safety
/// As [`checked`], and no other reference to the index is alive (the caller's exclusive
/// access, documented per function).
unsafe fn index_mut<'a, O: Opaque>(p: *mut O) -> Result<&'a mut dyn Index<O::S>, Failure> {
    // SAFETY: forwarded contract: checked first, then the exclusive access the caller grants.
    unsafe { checked(p) }?;
    // SAFETY: as above.
    Ok(unsafe { &mut *p }.object_mut().index.as_mut())
}

/// `*p`, `NullPointer` if null.
///
/// # Safety
/// `p` is null or valid for one read.
unsafe fn read<T: Copy>(p: *const T, what: &str) -> Result<T, Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null and valid for a read by the contract.
    Ok(unsafe { p.read_unaligned() })
}

/// `*p = value`, `NullPointer` if null.
///
/// # Safety
/// `p` is null or valid for one write.
unsafe fn write<T>(p: *mut T, value: T, what: &str) -> Result<(), Failure> {
    if p.is_null() {
        return Err(Failure::null(what));
    }
    // SAFETY: non-null and valid for a write by the contract.
    unsafe { p.write_unaligned(value) };
    Ok(())
}

/// The `n` elements at `p` (which may be null when `n` is 0).
///
/// # Safety
/// `p` is null or valid for reading `n` elements.
unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::null(what));
    }
    if !p.is_aligned()
        || n.checked_mul(size_of::<T>())
            .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Failure::new(
            SpatixStatus::InvalidParameter,
            format!("invalid parameter: {what} is misaligned or too long"),
        ));
    }
    // SAFETY: non-null, aligned, of a length that fits, readable by the contract.
    Ok(unsafe { core::slice::from_raw_parts(p, n) })
}

/// `true` (stop) from a C visitor's non-zero return.
fn flow(returned: i32) -> ControlFlow<()> {
    if returned == 0 {
        ControlFlow::Continue(())
    } else {
        ControlFlow::Break(())
    }
}

/// A C context pointer shared with the threads of a parallel pass: the caller promises (in
/// the entry point's documentation) that its callback may run on several threads at once.
#[derive(Clone, Copy)]
struct Shared(*mut c_void);

// SAFETY: the parallel entry points document that the callback and its context must be safe
// to use from several threads at once; the pointer itself is only passed back to it.
unsafe impl Sync for Shared {}
// SAFETY: as above.
unsafe impl Send for Shared {}

impl Shared {
    /// The pointer (a method, so that closures capture the whole `Sync` wrapper).
    fn get(self) -> *mut c_void {
        self.0
    }
}

/// Writes what a visitor is given into `buf` while there is room, and the count wanted into
/// `count`; `BufferTooSmall` when the room was short.
///
/// # Safety
/// `buf` is null or writable for `capacity` elements; `count` null or writable.
unsafe fn fill<T>(
    buf: *mut T,
    capacity: usize,
    count: *mut usize,
    run: impl FnOnce(&mut dyn FnMut(T) -> ControlFlow<()>) -> Result<(), Failure>,
) -> Result<(), Failure> {
    if count.is_null() {
        return Err(Failure::null("count"));
    }
    if capacity > 0 && buf.is_null() {
        return Err(Failure::null("buffer"));
    }
    if !buf.is_aligned() {
        return Err(Failure::new(
            SpatixStatus::InvalidParameter,
            "invalid parameter: the buffer is misaligned",
        ));
    }
    let mut n = 0usize;
    run(&mut |x| {
        if n < capacity {
            // SAFETY: `n < capacity` and the buffer is writable for `capacity` elements.
            unsafe { buf.add(n).write(x) };
        }
        n += 1;
        ControlFlow::Continue(())
    })?;
    // SAFETY: `count` is non-null and writable by the contract.
    unsafe { write(count, n, "count") }?;
    if n > capacity {
        return Err(Failure::new(
            SpatixStatus::BufferTooSmall,
            format!("buffer too small: {n} results, room for {capacity}"),
        ));
    }
    Ok(())
}

/// Makes an index with `make` and writes its pointer to `out`.
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn create<O: Opaque>(
    out: *mut *mut O,
    make: impl FnOnce() -> Result<Box<dyn Index<O::S>>, Failure>,
) -> SpatixStatus {
    guard(|| {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        let object = Object {
            tag: O::S::TAG,
            index: make()?,
        };
        let p = Box::into_raw(Box::new(O::wrap(object)));
        // SAFETY: `out` is non-null and writable by the contract.
        unsafe { write(out, p, "out") }
    })
}

/// The world box behind a pointer.
///
/// # Safety
/// `world` is null or readable.
unsafe fn world<S: AbiScalar>(world: *const SpatixAabb<S>) -> Result<Aabb<S>, Failure> {
    // SAFETY: forwarded contract.
    unsafe { read(world, "world") }?.to_aabb()
}

/// An empty vector with room for `n`, or `OutOfMemory` (reserved before the input is
/// looked at, so that a length no memory could hold is refused without touching it).
fn reserve<T>(n: usize, what: &str) -> Result<Vec<T>, Failure> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Failure::new(
            SpatixStatus::OutOfMemory,
            format!("out of memory: cannot reserve room for {n} {what}"),
        )
    })?;
    Ok(v)
}

/// The `n` items of `boxes` and `values`, reserved fallibly (`OutOfMemory`).
///
/// # Safety
/// Each of `boxes` and `values` is null or readable for `n` elements.
unsafe fn items<S: AbiScalar, B: Copy>(
    boxes: *const B,
    values: *const u64,
    n: usize,
    convert: impl Fn(B) -> Result<Aabb<S>, Failure>,
) -> Result<Vec<(Aabb<S>, u64)>, Failure> {
    let mut items = reserve(n, "elements")?;
    // SAFETY: forwarded contract.
    let boxes = unsafe { slice(boxes, n, "boxes") }?;
    // SAFETY: forwarded contract.
    let values = unsafe { slice(values, n, "values") }?;
    for (b, v) in boxes.iter().zip(values) {
        items.push((convert(*b)?, *v));
    }
    Ok(items)
}

/// A structure's `new`: a world and its band height or cell size.
type NewFn<S, I> = fn(Aabb<S>, S) -> Result<I, spatix::Error>;

/// An empty grid made by its `new` (`SweepGrid::new`, `UniformGrid::new`, `LooseGrid::new`).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn grid_new<O: Opaque, I: index::Structure<O::S>>(
    w: *const SpatixAabb<O::S>,
    size: O::S,
    out: *mut *mut O,
    make: NewFn<O::S, I>,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe { create(out, || Ok(Box::new(make(world(w)?, size)?))) }
}

/// `SweepGrid::build_auto`.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn sweep_grid_build<O: Opaque>(
    w: *const SpatixAabb<O::S>,
    boxes: *const SpatixAabb<O::S>,
    values: *const u64,
    n: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let items = items(boxes, values, n, SpatixAabb::to_aabb)?;
            Ok(Box::new(SweepGrid::build_auto(world(w)?, items)?))
        })
    }
}

/// A structure's `auto` constructor: a world and a sample of the boxes it will hold.
type AutoFn<S, I> = fn(Aabb<S>, &[Aabb<S>]) -> Result<I, spatix::Error>;

/// A dynamic structure sized for `sample` by its `auto` constructor.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn auto<O: Opaque, I: index::Structure<O::S>>(
    w: *const SpatixAabb<O::S>,
    sample: *const SpatixAabb<O::S>,
    n: usize,
    out: *mut *mut O,
    make: AutoFn<O::S, I>,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let sample = each(sample, n, "sample", SpatixAabb::to_aabb)?;
            Ok(Box::new(make(world(w)?, &sample)?))
        })
    }
}

/// `spatix_grid_*_auto`: the `auto` constructor of the grid `kind` names.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn grid_auto<O: Opaque>(
    kind: i32,
    w: *const SpatixAabb<O::S>,
    sample: *const SpatixAabb<O::S>,
    n: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe {
        match kind {
            k if k == SpatixKind::SweepGrid as i32 => auto(w, sample, n, out, SweepGrid::auto),
            k if k == SpatixKind::UniformGrid as i32 => auto(w, sample, n, out, UniformGrid::auto),
            k if k == SpatixKind::LooseGrid as i32 => auto(w, sample, n, out, LooseGrid::auto),
            _ => guard(|| {
                Err(Failure::new(
                    SpatixStatus::InvalidParameter,
                    format!("invalid parameter: {kind} is not the kind of a dynamic grid"),
                ))
            }),
        }
    }
}

/// `PackedIndex::build`.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn packed_index_build<O: Opaque>(
    boxes: *const SpatixAabb<O::S>,
    values: *const u64,
    n: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let items = items(boxes, values, n, SpatixAabb::to_aabb)?;
            Ok(Box::new(PackedIndex::build(items)?))
        })
    }
}

/// `KdTree::build`.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn kd_tree_build<O: Opaque>(
    points: *const SpatixPoint<O::S>,
    values: *const u64,
    n: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let items = items(points, values, n, |p: SpatixPoint<O::S>| {
                Ok(Aabb::point(p.to_point()?)?)
            })?;
            let points = items.into_iter().map(|(b, v)| (b.min, v));
            Ok(Box::new(KdTree::build(points)?))
        })
    }
}

/// `spatix_index_*_new`: the dynamic structure `kind` names, set up for `total` elements like
/// the `n` of `sample` (`ListedIndex::for_sample`).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn index_new<O: Opaque>(
    kind: i32,
    w: *const SpatixAabb<O::S>,
    sample: *const SpatixAabb<O::S>,
    n: usize,
    total: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    /// Sets up a dynamic structure; refuses a static one.
    struct New<S> {
        world: Aabb<S>,
        sample: Vec<Aabb<S>>,
        total: usize,
    }
    impl<S: AbiScalar> UseKind<S> for New<S> {
        type Output = Result<Box<dyn Index<S>>, Failure>;
        fn dynamic<I: Structure<S> + ListedIndex<S, u64>>(self) -> Self::Output {
            Ok(Box::new(I::for_sample(
                self.world,
                &self.sample,
                self.total,
            )?))
        }
        fn fixed<I: Structure<S> + ListedStatic<S, u64>>(self) -> Self::Output {
            Err(Failure::unsupported(
                "empty form (it is built once: spatix_index_*_build)",
                I::NAME,
            ))
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let sample = each(sample, n, "sample", SpatixAabb::to_aabb)?;
            let world = world(w)?;
            index::with_kind(
                kind,
                New {
                    world,
                    sample,
                    total,
                },
            )?
        })
    }
}

/// `spatix_index_*_build`: the structure `kind` names holding the `n` elements, built in one
/// go where it can be (`ListedIndex::with_items`, `ListedStatic::build_from`).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn index_build<O: Opaque>(
    kind: i32,
    w: *const SpatixAabb<O::S>,
    boxes: *const SpatixAabb<O::S>,
    values: *const u64,
    n: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    /// Builds any structure; a static one does without the world.
    struct Build<S> {
        world: Option<Aabb<S>>,
        items: Vec<(Aabb<S>, u64)>,
    }
    impl<S: AbiScalar> UseKind<S> for Build<S> {
        type Output = Result<Box<dyn Index<S>>, Failure>;
        fn dynamic<I: Structure<S> + ListedIndex<S, u64>>(self) -> Self::Output {
            let world = self.world.ok_or_else(|| Failure::null("world"))?;
            Ok(Box::new(I::with_items(world, self.items)?))
        }
        fn fixed<I: Structure<S> + ListedStatic<S, u64>>(self) -> Self::Output {
            Ok(Box::new(I::build_from(self.items)?))
        }
    }
    // SAFETY: forwarded contract.
    unsafe {
        create(out, || {
            let items = items(boxes, values, n, SpatixAabb::to_aabb)?;
            let world = if w.is_null() { None } else { Some(world(w)?) };
            index::with_kind(kind, Build { world, items })?
        })
    }
}

/// `spatix_index_*_view_open`: a packed index or kd-tree read in place from the caller's
/// bytes, which outlive it (the entry point's contract).
///
/// # Safety
/// See module docs; `bytes` stays valid and unchanged for `len` bytes until the index is
/// destroyed.
pub(crate) unsafe fn view_open<O: Opaque>(
    bytes: *const u8,
    len: usize,
    out: *mut *mut O,
) -> SpatixStatus
where
    O::S: ViewValue,
{
    // SAFETY: forwarded contract: the bytes live, unchanged, as long as the view (until
    // destroy), which is what the `'static` the view is given stands for here.
    unsafe { create(out, || index::view(slice(bytes, len, "bytes")?)) }
}

/// `spatix_*_load`: the structure the header names.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn load<O: Opaque>(
    bytes: *const u8,
    len: usize,
    out: *mut *mut O,
) -> SpatixStatus {
    // SAFETY: forwarded contract.
    unsafe { create(out, || index::load(slice(bytes, len, "bytes")?)) }
}

/// Destroys an index; null is accepted and does nothing.
///
/// # Safety
/// See module docs; afterwards the pointer is dangling.
pub(crate) unsafe fn destroy<O: Opaque>(p: *mut O) -> SpatixStatus {
    guard(|| {
        if p.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { checked(p) }?;
        // SAFETY: checked: a live object this library boxed; the caller gives it up. The tag
        // is cleared first, so that a use after destroy is refused while the memory is not
        // yet reused.
        let mut object = unsafe { Box::from_raw(p) };
        object.object_mut().tag = 0;
        drop(object);
        Ok(())
    })
}

/// Which structure the index is.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn kind<O: Opaque>(p: *const O, out: *mut SpatixKind) -> SpatixStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { write(out, index(p)?.kind(), "out") })
}

/// The number of elements.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn len<O: Opaque>(p: *const O, out: *mut usize) -> SpatixStatus {
    // SAFETY: forwarded contract.
    guard(|| unsafe { write(out, index(p)?.len(), "out") })
}

/// Inserts one element.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn insert<O: Opaque>(
    p: *mut O,
    aabb: *const SpatixAabb<O::S>,
    value: u64,
    handle: *mut u64,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let aabb = unsafe { read(aabb, "box") }?.to_aabb()?;
        if handle.is_null() {
            return Err(Failure::null("handle"));
        }
        // SAFETY: forwarded contract.
        let h = unsafe { index_mut(p) }?.mutate()?.insert(aabb, value)?;
        // SAFETY: forwarded contract.
        unsafe { write(handle, h.to_bits(), "handle") }
    })
}

/// Removes one element, writing its value to `value` unless that is null.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn remove<O: Opaque>(p: *mut O, handle: u64, value: *mut u64) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let removed = unsafe { index_mut(p) }?
            .mutate()?
            .remove(Handle::from_bits(handle))
            .ok_or(spatix::Error::StaleHandle)?;
        if !value.is_null() {
            // SAFETY: non-null, so writable by the contract.
            unsafe { write(value, removed, "value") }?;
        }
        Ok(())
    })
}

/// Moves one element.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn update<O: Opaque>(
    p: *mut O,
    handle: u64,
    aabb: *const SpatixAabb<O::S>,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let aabb = unsafe { read(aabb, "box") }?.to_aabb()?;
        // SAFETY: forwarded contract.
        let index = unsafe { index_mut(p) }?;
        Ok(index.mutate()?.update(Handle::from_bits(handle), aabb)?)
    })
}

/// Moves `n` elements, stopping at the first failure, then maintains.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn update_many<O: Opaque>(
    p: *mut O,
    handles: *const u64,
    boxes: *const SpatixAabb<O::S>,
    n: usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let handles = unsafe { slice(handles, n, "handles") }?;
        // SAFETY: forwarded contract.
        let boxes = unsafe { slice(boxes, n, "boxes") }?;
        // SAFETY: forwarded contract.
        let index = unsafe { index_mut(p) }?.mutate()?;
        let mut outcome = Ok(());
        for (i, (h, b)) in handles.iter().zip(boxes).enumerate() {
            let done = b
                .to_aabb()
                .and_then(|b| Ok(index.update(Handle::from_bits(*h), b)?));
            if let Err(e) = done {
                outcome = Err(Failure::new(
                    e.status(),
                    format!("element {i}: {}", e.text()),
                ));
                break;
            }
        }
        index.maintain();
        outcome
    })
}

/// The box a C mover wrote, unchecked (spatix refuses an invalid one).
fn moved<S: AbiScalar>(
    mover: unsafe extern "C" fn(
        *mut c_void,
        u64,
        *mut u64,
        *const SpatixAabb<S>,
        *mut SpatixAabb<S>,
    ),
    context: *mut c_void,
    handle: Handle,
    value: &mut u64,
    old: &Aabb<S>,
) -> Aabb<S> {
    let old = SpatixAabb::from_aabb(old);
    let mut new = old;
    // SAFETY: the caller's callback, with pointers to live locals for the duration of the call.
    unsafe { mover(context, handle.to_bits(), value, &old, &mut new) };
    Aabb {
        min: Point::new(new.min_x, new.min_y),
        max: Point::new(new.max_x, new.max_y),
    }
}

/// Moves every element with a C callback (`SpatialIndex::update_all`).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn update_all<O: Opaque>(
    p: *mut O,
    mover: UpdateFn<O::S>,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let mover = mover.ok_or_else(|| Failure::null("callback"))?;
        // SAFETY: forwarded contract.
        let index = unsafe { index_mut(p) }?.mutate()?;
        Ok(index.update_all(&mut |h, v, old| moved(mover, context, h, v, old))?)
    })
}

/// Moves every element with a C callback on all threads (`ParallelPairs::par_update_all`).
///
/// # Safety
/// See module docs; the callback runs on several threads at once.
pub(crate) unsafe fn par_update_all<O: Opaque>(
    p: *mut O,
    mover: UpdateFn<O::S>,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let mover = mover.ok_or_else(|| Failure::null("callback"))?;
        let shared = Shared(context);
        // SAFETY: forwarded contract.
        let index = unsafe { index_mut(p) }?.mutate()?;
        index.par_update_all(&|h, v, old| moved(mover, shared.get(), h, v, old))
    })
}

/// `SpatialIndex::maintain`.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn maintain<O: Opaque>(p: *mut O) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        unsafe { index_mut(p) }?.mutate()?.maintain();
        Ok(())
    })
}

/// One element's box and value (either output may be null).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn get<O: Opaque>(
    p: *const O,
    handle: u64,
    aabb: *mut SpatixAabb<O::S>,
    value: *mut u64,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let (b, v) = unsafe { index(p) }?
            .get(Handle::from_bits(handle))
            .ok_or(spatix::Error::StaleHandle)?;
        if !aabb.is_null() {
            // SAFETY: non-null, so writable by the contract.
            unsafe { write(aabb, SpatixAabb::from_aabb(&b), "box") }?;
        }
        if !value.is_null() {
            // SAFETY: non-null, so writable by the contract.
            unsafe { write(value, v, "value") }?;
        }
        Ok(())
    })
}

/// A radius, refused with `InvalidParameter` unless finite and non-negative.
fn checked_radius<S: AbiScalar>(radius: S) -> Result<S, Failure> {
    if radius >= S::ZERO && radius.into().is_finite() {
        Ok(radius)
    } else {
        Err(Failure::new(
            SpatixStatus::InvalidParameter,
            "invalid parameter: the radius must be finite and >= 0",
        ))
    }
}

/// A query's input, read and checked.
pub(crate) enum Ask<S> {
    /// Intersecting a box.
    Area(Aabb<S>),
    /// Within a radius of a point.
    Within(Point<S>, S),
}

impl<S: AbiScalar> Ask<S> {
    /// A rectangle query.
    ///
    /// # Safety
    /// `area` is null or readable.
    pub(crate) unsafe fn area(area: *const SpatixAabb<S>) -> Result<Self, Failure> {
        // SAFETY: forwarded contract.
        Ok(Self::Area(unsafe { read(area, "area") }?.to_aabb()?))
    }

    /// A radius query.
    pub(crate) fn within(x: S, y: S, radius: S) -> Result<Self, Failure> {
        Ok(Self::Within(
            SpatixPoint { x, y }.to_point()?,
            checked_radius(radius)?,
        ))
    }

    /// Runs the query.
    fn run(&self, index: &dyn Index<S>, visit: index::Visit<'_>) {
        let _ = match self {
            Self::Area(area) => index.query(area, visit),
            Self::Within(p, r) => index.within(*p, *r, visit),
        };
    }
}

/// A query, to a C visitor.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn query<O: Opaque>(
    p: *const O,
    ask: impl FnOnce() -> Result<Ask<O::S>, Failure>,
    visit: SpatixItemFn,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let visit = visit.ok_or_else(|| Failure::null("callback"))?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: the caller's callback and context.
        ask()?.run(index, &mut |item| flow(unsafe { visit(context, item) }));
        Ok(())
    })
}

/// A query, into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn query_fill<O: Opaque>(
    p: *const O,
    ask: impl FnOnce() -> Result<Ask<O::S>, Failure>,
    buf: *mut SpatixItem,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        let ask = ask()?;
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, count, |push| {
                ask.run(index, push);
                Ok(())
            })
        }
    })
}

/// The `k` nearest, to a C visitor or into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn nearest<O: Opaque>(
    p: *const O,
    x: O::S,
    y: O::S,
    k: usize,
    visit: SpatixNeighborFn,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let visit = visit.ok_or_else(|| Failure::null("callback"))?;
        let point = SpatixPoint { x, y }.to_point()?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: the caller's callback and context.
        let _ = index.nearest(point, k, &mut |n| flow(unsafe { visit(context, n) }));
        Ok(())
    })
}

/// The `k` nearest, into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn nearest_fill<O: Opaque>(
    p: *const O,
    x: O::S,
    y: O::S,
    k: usize,
    buf: *mut SpatixNeighbor,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        let point = SpatixPoint { x, y }.to_point()?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, count, |push| {
                let _ = index.nearest(point, k, push);
                Ok(())
            })
        }
    })
}

/// Every hit of a ray, nearest first, to a C visitor.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn raycast<O: Opaque>(
    p: *const O,
    ray: *const SpatixRay<O::S>,
    visit: SpatixHitFn,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let visit = visit.ok_or_else(|| Failure::null("callback"))?;
        // SAFETY: forwarded contract.
        let ray = unsafe { read(ray, "ray") }?.to_ray()?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: the caller's callback and context.
        let _ = index.raycast(&ray, &mut |hit| flow(unsafe { visit(context, hit) }));
        Ok(())
    })
}

/// Every hit of a ray, nearest first, into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn raycast_fill<O: Opaque>(
    p: *const O,
    ray: *const SpatixRay<O::S>,
    buf: *mut SpatixHit,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let ray = unsafe { read(ray, "ray") }?.to_ray()?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, count, |push| {
                let _ = index.raycast(&ray, push);
                Ok(())
            })
        }
    })
}

/// Every intersecting pair, to a C visitor.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn pairs<O: Opaque>(
    p: *const O,
    visit: SpatixPairFn,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let visit = visit.ok_or_else(|| Failure::null("callback"))?;
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: the caller's callback and context.
        let _ = index.pairs(&mut |a, b| flow(unsafe { visit(context, a, b) }));
        Ok(())
    })
}

/// Every intersecting pair, into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn pairs_fill<O: Opaque>(
    p: *const O,
    buf: *mut SpatixPair,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, count, |push| {
                let _ = index.pairs(&mut |a, b| push(SpatixPair { a, b }));
                Ok(())
            })
        }
    })
}

/// Every intersecting pair, found on all threads, to a C visitor called on all of them.
///
/// # Safety
/// See module docs; the callback runs on several threads at once.
pub(crate) unsafe fn par_pairs<O: Opaque>(
    p: *const O,
    visit: SpatixPairFn,
    context: *mut c_void,
) -> SpatixStatus {
    guard(|| {
        let visit = visit.ok_or_else(|| Failure::null("callback"))?;
        let shared = Shared(context);
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: the caller's callback and context, which it declared safe on many threads.
        let _ = index.par_pairs(&|a, b| flow(unsafe { visit(shared.get(), a, b) }))?;
        Ok(())
    })
}

/// Every intersecting pair, found on all threads, into a buffer.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn par_pairs_fill<O: Opaque>(
    p: *const O,
    buf: *mut SpatixPair,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, count, |push| {
                index.par_collect_pairs(&mut |a, b| push(SpatixPair { a, b }))
            })
        }
    })
}

/// The byte form, into a buffer (`BufferTooSmall` with the length needed when short).
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn save<O: Opaque>(
    p: *const O,
    buf: *mut u8,
    capacity: usize,
    len: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let bytes = unsafe { index(p) }?.to_bytes();
        // SAFETY: forwarded contract.
        unsafe {
            fill(buf, capacity, len, |push| {
                for b in bytes {
                    let _ = push(b);
                }
                Ok(())
            })
        }
    })
}

/// A batch's inputs, read and checked.
pub(crate) enum Batch<S> {
    /// Rectangle queries.
    Areas(Vec<Aabb<S>>),
    /// Radius queries.
    Within(Vec<Point<S>>, S),
    /// k-nearest queries.
    Nearest(Vec<Point<S>>, usize),
    /// Rays (first hits).
    Rays(Vec<spatix::Ray<S>>),
}

/// Each of `n` inputs at `p` converted, failing with the first bad one's position.
///
/// # Safety
/// `p` is null or readable for `n` elements.
unsafe fn each<T: Copy, U>(
    p: *const T,
    n: usize,
    what: &str,
    convert: impl Fn(T) -> Result<U, Failure>,
) -> Result<Vec<U>, Failure> {
    let mut out = reserve(n, what)?;
    // SAFETY: forwarded contract.
    let inputs = unsafe { slice(p, n, what) }?;
    for (i, x) in inputs.iter().enumerate() {
        out.push(
            convert(*x)
                .map_err(|e| Failure::new(e.status(), format!("{what} {i}: {}", e.text())))?,
        );
    }
    Ok(out)
}

impl<S: AbiScalar> Batch<S> {
    /// `n` rectangles.
    ///
    /// # Safety
    /// `areas` is null or readable for `n` boxes.
    pub(crate) unsafe fn areas(areas: *const SpatixAabb<S>, n: usize) -> Result<Self, Failure> {
        // SAFETY: forwarded contract.
        Ok(Self::Areas(unsafe {
            each(areas, n, "areas", SpatixAabb::to_aabb)
        }?))
    }

    /// `n` points and one radius.
    ///
    /// # Safety
    /// `points` is null or readable for `n` points.
    pub(crate) unsafe fn within(
        points: *const SpatixPoint<S>,
        n: usize,
        radius: S,
    ) -> Result<Self, Failure> {
        let radius = checked_radius(radius)?;
        // SAFETY: forwarded contract.
        let points = unsafe { each(points, n, "points", SpatixPoint::to_point) }?;
        Ok(Self::Within(points, radius))
    }

    /// `n` points and one k.
    ///
    /// # Safety
    /// `points` is null or readable for `n` points.
    pub(crate) unsafe fn nearest(
        points: *const SpatixPoint<S>,
        n: usize,
        k: usize,
    ) -> Result<Self, Failure> {
        // SAFETY: forwarded contract.
        let points = unsafe { each(points, n, "points", SpatixPoint::to_point) }?;
        Ok(Self::Nearest(points, k))
    }

    /// `n` rays.
    ///
    /// # Safety
    /// `rays` is null or readable for `n` rays.
    pub(crate) unsafe fn rays(rays: *const SpatixRay<S>, n: usize) -> Result<Self, Failure> {
        // SAFETY: forwarded contract.
        Ok(Self::Rays(unsafe {
            each(rays, n, "rays", SpatixRay::to_ray)
        }?))
    }

    /// How many queries.
    fn len(&self) -> usize {
        match self {
            Self::Areas(v) => v.len(),
            Self::Within(v, _) | Self::Nearest(v, _) => v.len(),
            Self::Rays(v) => v.len(),
        }
    }
}

/// What a batch answers into: an item, a neighbour or a hit buffer.
pub(crate) trait Answer: Sized {
    /// Runs `batch` on `index`, giving each answer to `visit` with its query's position;
    /// `Internal` if the batch's answers are not this type (a bug of the forwarders).
    fn run<S: AbiScalar>(
        batch: &Batch<S>,
        index: &dyn Index<S>,
        visit: index::VisitBatch<'_, Self>,
    ) -> Result<(), Failure>;
}

/// The failure of a forwarder pairing a batch with the wrong buffer type.
fn mismatch() -> Failure {
    Failure::new(
        SpatixStatus::Internal,
        "internal error: batch and buffer types differ",
    )
}

impl Answer for SpatixItem {
    fn run<S: AbiScalar>(
        batch: &Batch<S>,
        index: &dyn Index<S>,
        visit: index::VisitBatch<'_, Self>,
    ) -> Result<(), Failure> {
        match batch {
            Batch::Areas(areas) => index.query_batch(areas, visit),
            Batch::Within(points, radius) => index.within_batch(points, *radius, visit),
            _ => return Err(mismatch()),
        }
        Ok(())
    }
}

impl Answer for SpatixNeighbor {
    fn run<S: AbiScalar>(
        batch: &Batch<S>,
        index: &dyn Index<S>,
        visit: index::VisitBatch<'_, Self>,
    ) -> Result<(), Failure> {
        let Batch::Nearest(points, k) = batch else {
            return Err(mismatch());
        };
        index.nearest_batch(points, *k, visit);
        Ok(())
    }
}

impl Answer for SpatixHit {
    fn run<S: AbiScalar>(
        batch: &Batch<S>,
        index: &dyn Index<S>,
        visit: index::VisitBatch<'_, Self>,
    ) -> Result<(), Failure> {
        let Batch::Rays(rays) = batch else {
            return Err(mismatch());
        };
        index.raycast_batch(rays, visit);
        Ok(())
    }
}

/// A batch of queries answered on all threads into one buffer: query `i`'s answers are
/// `buf[offsets[i] .. offsets[i + 1]]` (`offsets` has room for `n + 1`, and is written in
/// full even when `buf` is short), their total into `*count`.
///
/// # Safety
/// See module docs.
pub(crate) unsafe fn batch<O: Opaque, R: Answer>(
    p: *const O,
    batch: impl FnOnce() -> Result<Batch<O::S>, Failure>,
    buf: *mut R,
    capacity: usize,
    offsets: *mut usize,
    count: *mut usize,
) -> SpatixStatus {
    guard(|| {
        // SAFETY: forwarded contract.
        let index = unsafe { index(p) }?;
        let batch = batch()?;
        let n = batch.len();
        if offsets.is_null() {
            return Err(Failure::null("offsets"));
        }
        if !offsets.is_aligned() {
            return Err(Failure::new(
                SpatixStatus::InvalidParameter,
                "invalid parameter: offsets are misaligned",
            ));
        }
        // Offsets `done..=upto` start at `total`; `done <= upto + 1 <= n + 1` throughout.
        let close = |upto: usize, total: usize, done: &mut usize| {
            while *done <= upto {
                // SAFETY: `offsets` is writable for `n + 1` entries (the contract), and
                // `*done <= upto <= n`.
                unsafe { offsets.add(*done).write(total) };
                *done += 1;
            }
        };
        let (mut done, mut total) = (0usize, 0usize);
        // SAFETY: forwarded contract.
        let filled = unsafe {
            fill(buf, capacity, count, |push| {
                R::run(&batch, index, &mut |i, answer| {
                    close(i.min(n), total, &mut done);
                    total += 1;
                    let _ = push(answer);
                })
            })
        };
        close(n, total, &mut done);
        filled
    })
}
