//! The f64 entry points: each a one-line forward to the generic body in `crate::ops`.
//!
//! Source of truth: `f32.rs`; `f64.rs` is generated from it (the precision replaced in every
//! name) by `SPATIX_BLESS=1 cargo test -p spatix-capi --test header`, which checks it.
//!
//! Thread safety: functions taking `const SpatixIndexF64 *` (queries) may run on any number
//! of threads at once on the same index; functions taking `SpatixIndexF64 *` (creation,
//! mutation, destroy) need the index to themselves. Different indexes are independent.
//! Every pointer argument must be null or valid for what its documentation says.
#![allow(clippy::missing_safety_doc)] // The module docs and `crate::ops` state the contract.

use core::ffi::c_void;

use spatix::{LooseGrid, SweepGrid, UniformGrid};

use crate::ops::{self, Ask, Batch, opaque};
use crate::status::SpatixStatus;
use crate::types::{
    SpatixAabb, SpatixHit, SpatixHitFn, SpatixItem, SpatixItemFn, SpatixKind, SpatixNeighbor,
    SpatixNeighborFn, SpatixPair, SpatixPairFn, SpatixPoint, SpatixRay,
};

/// An index of f64 boxes (or points) with `uint64_t` values: opaque, made by a
/// `spatix_*_f64_new` / `_build` or `spatix_index_f64_load`, freed by
/// `spatix_index_f64_destroy`.
pub struct SpatixIndexF64(ops::Object<f64>);
opaque!(SpatixIndexF64, f64);

/// The mover of `spatix_index_f64_update_all`: called once per element with its handle, a
/// pointer to its value (which it may change), its box, and `new_box`, a copy of the box
/// to overwrite with the element's new box.
pub type SpatixUpdateFnF64 = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        handle: u64,
        value: *mut u64,
        old_box: *const SpatixAabb<f64>,
        new_box: *mut SpatixAabb<f64>,
    ),
>;

/// A new, empty `SweepGrid` over `world` with bands `band_height` tall, into `*out`.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_sweep_grid_f64_new(
    world: *const SpatixAabb<f64>,
    band_height: f64,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::grid_new(world, band_height, out, SweepGrid::new) }
}

/// A `SweepGrid` holding `boxes[i]` with value `values[i]` for `i < n`, its band height
/// chosen from the boxes, built in one go (`SweepGrid::build_auto`, faster than `n`
/// inserts). Queries give each element's handle with its value (a query over a box that
/// covers every element finds them all).
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_sweep_grid_f64_build(
    world: *const SpatixAabb<f64>,
    boxes: *const SpatixAabb<f64>,
    values: *const u64,
    n: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::sweep_grid_build(world, boxes, values, n, out) }
}

/// A new, empty grid over `world` of the structure `kind` (`SPATIX_KIND_SWEEP_GRID`,
/// `SPATIX_KIND_UNIFORM_GRID` or `SPATIX_KIND_LOOSE_GRID`; anything else answers
/// `SPATIX_STATUS_INVALID_PARAMETER`), its band height or cell size chosen for boxes like the
/// `n` of `sample` (the structures' `auto` constructors; the sample is not inserted).
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_grid_f64_auto(
    kind: i32,
    world: *const SpatixAabb<f64>,
    sample: *const SpatixAabb<f64>,
    n: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::grid_auto(kind, world, sample, n, out) }
}

/// A new, empty `UniformGrid` over `world` with square cells of side `cell_size`.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_uniform_grid_f64_new(
    world: *const SpatixAabb<f64>,
    cell_size: f64,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::grid_new(world, cell_size, out, UniformGrid::new) }
}

/// A new, empty `LooseGrid` over `world` with loose cells of side `cell_size`.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_loose_grid_f64_new(
    world: *const SpatixAabb<f64>,
    cell_size: f64,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::grid_new(world, cell_size, out, LooseGrid::new) }
}

/// A static `PackedIndex` of `boxes[i]` with value `values[i]` for `i < n` (insert,
/// remove and update answer `SPATIX_STATUS_UNSUPPORTED`).
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_packed_index_f64_build(
    boxes: *const SpatixAabb<f64>,
    values: *const u64,
    n: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::packed_index_build(boxes, values, n, out) }
}

/// A static `KdTree` of `points[i]` with value `values[i]` for `i < n` (points are boxes
/// of size zero to the queries; insert, remove, update and the parallel pair pass answer
/// `SPATIX_STATUS_UNSUPPORTED`).
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_kd_tree_f64_build(
    points: *const SpatixPoint<f64>,
    values: *const u64,
    n: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::kd_tree_build(points, values, n, out) }
}

/// A new, empty index of the dynamic structure `kind` (a `SpatixKind`) over `world`, set up for `total`
/// elements like the `n` of `sample` (its cells, bands or depth chosen from them, room
/// reserved for `total`; the sample is not inserted). A static kind
/// (`SPATIX_KIND_PACKED_INDEX`, `SPATIX_KIND_KD_TREE`) answers `SPATIX_STATUS_UNSUPPORTED`
/// (build it with `spatix_index_f64_build`), a number that is no kind
/// `SPATIX_STATUS_INVALID_PARAMETER`.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_new(
    kind: i32,
    world: *const SpatixAabb<f64>,
    sample: *const SpatixAabb<f64>,
    n: usize,
    total: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::index_new(kind, world, sample, n, total, out) }
}

/// An index of the structure `kind` (a `SpatixKind`) holding `boxes[i]` with value `values[i]` for `i < n`,
/// built in one go where the structure has a bulk build: a dynamic kind over `world`, set up
/// for the boxes; a static kind built once (`world` may be null; a kd-tree holds each box's
/// lower-left corner). Queries give each element's handle with its value.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_build(
    kind: i32,
    world: *const SpatixAabb<f64>,
    boxes: *const SpatixAabb<f64>,
    values: *const u64,
    n: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::index_build(kind, world, boxes, values, n, out) }
}

/// A packed index or kd-tree read in place from the `len` bytes at `bytes` (its byte form,
/// from `spatix_index_f64_save` or a saved file mapped into memory): opening copies nothing
/// and builds nothing beyond one pass that checks the bytes. The bytes must start at a
/// multiple of 64 in memory (`mmap` and `aligned_alloc(64, ...)` give that; a packed index's
/// need only 8), and must stay valid and unchanged until `spatix_index_f64_destroy` of the
/// index: free or unmap them only after.
/// Bytes of another structure answer `SPATIX_STATUS_UNSUPPORTED` (load them with
/// `spatix_index_f64_load`); damaged, misaligned or f64 bytes `SPATIX_STATUS_CORRUPT_BYTES`.
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_view_open(
    bytes: *const u8,
    len: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded (the bytes outlive the index).
    unsafe { ops::view_open(bytes, len, out) }
}

/// The index whose byte form (from `spatix_index_f64_save`) is the `len` bytes at `bytes`,
/// of whichever structure they hold; `SPATIX_STATUS_CORRUPT_BYTES` for anything else
/// (including an f64 index's bytes).
///
/// Thread safety: any thread; the new index belongs to the caller.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_load(
    bytes: *const u8,
    len: usize,
    out: *mut *mut SpatixIndexF64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::load(bytes, len, out) }
}

/// Frees an index (null: nothing to do). The pointer is invalid afterwards.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_destroy(index: *mut SpatixIndexF64) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::destroy(index) }
}

/// Which structure the index is, into `*out`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_kind(
    index: *const SpatixIndexF64,
    out: *mut SpatixKind,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::kind(index, out) }
}

/// The number of elements, into `*out`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_len(
    index: *const SpatixIndexF64,
    out: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::len(index, out) }
}

/// Inserts `*box` with `value`; its handle into `*handle`.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_insert(
    index: *mut SpatixIndexF64,
    aabb: *const SpatixAabb<f64>,
    value: u64,
    handle: *mut u64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::insert(index, aabb, value, handle) }
}

/// Removes the element `handle`; its value into `*value` unless `value` is null.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_remove(
    index: *mut SpatixIndexF64,
    handle: u64,
    value: *mut u64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::remove(index, handle, value) }
}

/// Moves the element `handle` to `*box`.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_update(
    index: *mut SpatixIndexF64,
    handle: u64,
    aabb: *const SpatixAabb<f64>,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::update(index, handle, aabb) }
}

/// The bulk frame update: moves `handles[i]` to `boxes[i]` for `i < n` in order, then
/// maintains the index. Stops at the first invalid box or stale handle (its status; the
/// message names the element), the elements before it moved.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_update_many(
    index: *mut SpatixIndexF64,
    handles: *const u64,
    boxes: *const SpatixAabb<f64>,
    n: usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::update_many(index, handles, boxes, n) }
}

/// Moves every element, in the structure's storage order, to the box `mover` writes
/// (`SpatialIndex::update_all`: the fastest frame update of a `SweepGrid`). A box written
/// invalid leaves its element where it was and the call answers `SPATIX_STATUS_INVALID_BOX`
/// after moving the others.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_update_all(
    index: *mut SpatixIndexF64,
    mover: SpatixUpdateFnF64,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::update_all(index, mover, context) }
}

/// `spatix_index_f64_update_all` on all threads: `mover` runs on several threads at once
/// (each element once), so it and `context` must be safe for that.
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_par_update_all(
    index: *mut SpatixIndexF64,
    mover: SpatixUpdateFnF64,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::par_update_all(index, mover, context) }
}

/// Lets the structure tidy up after a batch of updates (`SpatialIndex::maintain`).
///
/// Thread safety: exclusive: no other call may use this index meanwhile.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_maintain(index: *mut SpatixIndexF64) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::maintain(index) }
}

/// The element `handle`'s box into `*box` and value into `*value` (either may be null).
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_get(
    index: *const SpatixIndexF64,
    handle: u64,
    aabb: *mut SpatixAabb<f64>,
    value: *mut u64,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::get(index, handle, aabb, value) }
}

/// Calls `visit` with every element whose box intersects `*area` (closed boxes: touching
/// counts) until it returns non-zero.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_query(
    index: *const SpatixIndexF64,
    area: *const SpatixAabb<f64>,
    visit: SpatixItemFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::query(index, || Ask::area(area), visit, context) }
}

/// `spatix_index_f64_query` into `buf` (room for `capacity` items); the number found into
/// `*count`, and `SPATIX_STATUS_BUFFER_TOO_SMALL` if it is over `capacity` (the first
/// `capacity` are written).
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_query_fill(
    index: *const SpatixIndexF64,
    area: *const SpatixAabb<f64>,
    buf: *mut SpatixItem,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::query_fill(index, || Ask::area(area), buf, capacity, count) }
}

/// Calls `visit` with every element whose box is within `radius` of `(x, y)`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_within(
    index: *const SpatixIndexF64,
    x: f64,
    y: f64,
    radius: f64,
    visit: SpatixItemFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::query(index, || Ask::within(x, y, radius), visit, context) }
}

/// `spatix_index_f64_within` into a buffer, as `spatix_index_f64_query_fill`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_within_fill(
    index: *const SpatixIndexF64,
    x: f64,
    y: f64,
    radius: f64,
    buf: *mut SpatixItem,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::query_fill(index, || Ask::within(x, y, radius), buf, capacity, count) }
}

/// Calls `visit` with the `k` elements nearest `(x, y)`, nearest first.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_nearest(
    index: *const SpatixIndexF64,
    x: f64,
    y: f64,
    k: usize,
    visit: SpatixNeighborFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::nearest(index, x, y, k, visit, context) }
}

/// The `k` elements nearest `(x, y)`, nearest first, into a buffer, as
/// `spatix_index_f64_query_fill`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_nearest_fill(
    index: *const SpatixIndexF64,
    x: f64,
    y: f64,
    k: usize,
    buf: *mut SpatixNeighbor,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::nearest_fill(index, x, y, k, buf, capacity, count) }
}

/// Calls `visit` with every element `*ray` hits, nearest first.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_raycast(
    index: *const SpatixIndexF64,
    ray: *const SpatixRay<f64>,
    visit: SpatixHitFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::raycast(index, ray, visit, context) }
}

/// Every element `*ray` hits, nearest first, into a buffer, as
/// `spatix_index_f64_query_fill`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_raycast_fill(
    index: *const SpatixIndexF64,
    ray: *const SpatixRay<f64>,
    buf: *mut SpatixHit,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::raycast_fill(index, ray, buf, capacity, count) }
}

/// Calls `visit` with every pair of elements whose boxes intersect, each pair once.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_pairs(
    index: *const SpatixIndexF64,
    visit: SpatixPairFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::pairs(index, visit, context) }
}

/// Every intersecting pair into a buffer, as `spatix_index_f64_query_fill`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_pairs_fill(
    index: *const SpatixIndexF64,
    buf: *mut SpatixPair,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::pairs_fill(index, buf, capacity, count) }
}

/// `spatix_index_f64_pairs` on all threads: `visit` runs on several threads at once, so
/// it and `context` must be safe for that; once one call returns non-zero, the others stop
/// soon after.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_par_pairs(
    index: *const SpatixIndexF64,
    visit: SpatixPairFn,
    context: *mut c_void,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::par_pairs(index, visit, context) }
}

/// Rectangle queries `areas[i]` for `i < n`, answered on all threads (rayon's global pool):
/// query `i`'s items are `buf[offsets[i] .. offsets[i + 1]]`. `offsets` has room for
/// `n + 1` entries and is written in full; the total into `*count`, and
/// `SPATIX_STATUS_BUFFER_TOO_SMALL` if over `capacity` (the first `capacity` are written, in
/// order). Allocates its working memory per call.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_query_batch(
    index: *const SpatixIndexF64,
    areas: *const SpatixAabb<f64>,
    n: usize,
    buf: *mut SpatixItem,
    capacity: usize,
    offsets: *mut usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe {
        ops::batch(
            index,
            || Batch::areas(areas, n),
            buf,
            capacity,
            offsets,
            count,
        )
    }
}

/// Radius queries around `points[i]` for `i < n`, one `radius`, answered on all threads, as
/// `spatix_index_f64_query_batch`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_within_batch(
    index: *const SpatixIndexF64,
    points: *const SpatixPoint<f64>,
    n: usize,
    radius: f64,
    buf: *mut SpatixItem,
    capacity: usize,
    offsets: *mut usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe {
        let batch = || Batch::within(points, n, radius);
        ops::batch(index, batch, buf, capacity, offsets, count)
    }
}

/// The `k` nearest of each of `points[i]` for `i < n`, nearest first, answered on all
/// threads, as `spatix_index_f64_query_batch`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_nearest_batch(
    index: *const SpatixIndexF64,
    points: *const SpatixPoint<f64>,
    n: usize,
    k: usize,
    buf: *mut SpatixNeighbor,
    capacity: usize,
    offsets: *mut usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe {
        let batch = || Batch::nearest(points, n, k);
        ops::batch(index, batch, buf, capacity, offsets, count)
    }
}

/// The first hit (none or one) of each of `rays[i]` for `i < n`, found on all threads, as
/// `spatix_index_f64_query_batch`.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_raycast_batch(
    index: *const SpatixIndexF64,
    rays: *const SpatixRay<f64>,
    n: usize,
    buf: *mut SpatixHit,
    capacity: usize,
    offsets: *mut usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe {
        ops::batch(
            index,
            || Batch::rays(rays, n),
            buf,
            capacity,
            offsets,
            count,
        )
    }
}

/// Every intersecting pair, found on all threads, into a buffer, as
/// `spatix_index_f64_pairs_fill` (the order differs). Allocates its working memory per call.
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_par_pairs_fill(
    index: *const SpatixIndexF64,
    buf: *mut SpatixPair,
    capacity: usize,
    count: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::par_pairs_fill(index, buf, capacity, count) }
}

/// The index's byte form into `buf` (room for `capacity` bytes), its length into `*len`;
/// `SPATIX_STATUS_BUFFER_TOO_SMALL` if longer (call with `capacity` 0 to learn the length).
///
/// Thread safety: shared: any number of threads may query the same index at once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn spatix_index_f64_save(
    index: *const SpatixIndexF64,
    buf: *mut u8,
    capacity: usize,
    len: *mut usize,
) -> SpatixStatus {
    // SAFETY: the module's contract, forwarded.
    unsafe { ops::save(index, buf, capacity, len) }
}
