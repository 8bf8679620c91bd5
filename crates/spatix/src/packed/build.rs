//! The bulk build: Hilbert keys, a radix sort, and bottom-up packing, as steps that the
//! serial build and the parallel one (feature `rayon`) both run, each its own way where it
//! differs.

#[cfg(feature = "rayon")]
use rayon::prelude::*;

use super::{PackedConfig, PackedIndex};
use crate::base::handle::NIL;
use crate::base::slots::StaticSlots;
use crate::geom::bulk_range;
use crate::{Aabb, Error, Scalar};

/// Cells per axis of the grid the curve is drawn on, less one.
const GRID_MAX: f64 = 65535.0;

/// Most boxes whose centres place the curve (evenly strided through the input).
const SAMPLE: usize = 4096;

/// Elements per task of the parallel build: validation, keys and the scatter of the sort.
#[cfg(feature = "rayon")]
pub(super) const CHUNK: usize = 1 << 15;

/// The range of the centres (at half scale) of some boxes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Centres {
    lo: [f64; 2],
    hi: [f64; 2],
}

impl Centres {
    /// The range of no centre.
    const NONE: Self = Self {
        lo: [f64::INFINITY; 2],
        hi: [f64::NEG_INFINITY; 2],
    };

    /// Validates `aabb` and widens the range to its centre.
    #[inline]
    fn add<S: Scalar>(&mut self, aabb: Aabb<S>) -> Result<Aabb<S>, Error> {
        let aabb = aabb.validated()?;
        for ((lo, hi), c) in self.lo.iter_mut().zip(&mut self.hi).zip(half_centre(&aabb)) {
            (*lo, *hi) = (lo.min(c), hi.max(c));
        }
        Ok(aabb)
    }

    /// The range of both ranges' centres.
    #[cfg(feature = "rayon")]
    fn merge(self, other: Self) -> Self {
        let pick = |a: usize| (self.lo[a].min(other.lo[a]), self.hi[a].max(other.hi[a]));
        let ((x0, x1), (y0, y1)) = (pick(0), pick(1));
        Self {
            lo: [x0, y0],
            hi: [x1, y1],
        }
    }
}

/// The validated input, in input order: the boxes, the values (each taken once, when they
/// are gathered into curve order) and the range of the centres.
struct Input<S, T> {
    boxes: Vec<Aabb<S>>,
    values: Vec<Option<T>>,
    centres: Centres,
}

impl<S: Scalar, T> Input<S, T> {
    /// Validates and collects the input, stopping at the first invalid box.
    fn collect(items: impl Iterator<Item = (Aabb<S>, T)>) -> Result<Self, Error> {
        let (lower, _) = items.size_hint();
        let mut boxes = Vec::with_capacity(lower);
        let mut values = Vec::with_capacity(lower);
        let mut centres = Centres::NONE;
        for (aabb, value) in items {
            let aabb = centres.add(aabb)?;
            if boxes.len() >= NIL as usize {
                return Err(Error::CapacityExceeded);
            }
            boxes.push(aabb);
            values.push(Some(value));
        }
        Ok(Self {
            boxes,
            values,
            centres,
        })
    }

    /// Collects the input (one more than the capacity at most), then validates the boxes and
    /// takes their range in parallel: the same error as [`Input::collect`]'s, since a box
    /// at or below the capacity is validated before the capacity is checked.
    #[cfg(feature = "rayon")]
    fn par_collect(items: impl IntoIterator<Item = (Aabb<S>, T)>) -> Result<Self, Error> {
        let (boxes, values): (Vec<Aabb<S>>, Vec<Option<T>>) = items
            .into_iter()
            .take(NIL as usize + 1)
            .map(|(aabb, value)| (aabb, Some(value)))
            .unzip();
        let centres = boxes
            .par_chunks(CHUNK)
            .map(|run| {
                let mut centres = Centres::NONE;
                for &aabb in run {
                    centres.add(aabb)?;
                }
                Ok(centres)
            })
            .try_reduce(|| Centres::NONE, |a, b| Ok(a.merge(b)))?;
        if boxes.len() > NIL as usize {
            return Err(Error::CapacityExceeded);
        }
        Ok(Self {
            boxes,
            values,
            centres,
        })
    }
}

/// The Hilbert curve over where the data lies: the grid of 2^16 × 2^16 cells that spans the
/// bulk of the boxes' centres (per axis, their 0.5% and 99.5% quantiles in a sample, widened
/// by a thirty-second of that span). Centres beyond it are clamped to the border cells, so a
/// few stray boxes, however far, leave the rest of the data spread over the whole grid (over
/// the box around all the centres, one box at 1e9 among boxes over 2·10^4 put them all in one
/// cell, and the tree lost its order). Coordinates are taken at half scale so that no
/// difference of finite values overflows.
#[derive(Clone, Copy, Debug)]
pub(super) struct Curve {
    origin: [f64; 2],
    /// Cells per half unit, on each axis (0 when the centres do not spread on it).
    scale: [f64; 2],
}

impl Curve {
    /// The curve over the bulk of the centres of `boxes`, never beyond `all`, the range of
    /// all of them (so that the curve's grid stays aligned with data on a lattice).
    fn over_bulk<S: Scalar>(boxes: &[Aabb<S>], all: Centres) -> Self {
        let Centres { mut lo, mut hi } = all;
        if boxes.is_empty() {
            return Self::over([0.0; 2], [0.0; 2]);
        }
        let step = boxes.len().div_ceil(SAMPLE);
        let mut sample: Vec<f64> = Vec::with_capacity(boxes.len().min(SAMPLE));
        for a in 0..2 {
            sample.clear();
            sample.extend(boxes.iter().step_by(step).map(|b| half_centre(b)[a]));
            let (from, to) = bulk_range(&mut sample);
            let grow = (to - from) / 32.0;
            (lo[a], hi[a]) = (lo[a].max(from - grow), hi[a].min(to + grow));
        }
        Self::over(lo, hi)
    }

    /// The curve over centres (at half scale) spanning `lo..=hi`.
    fn over(lo: [f64; 2], hi: [f64; 2]) -> Self {
        let scale = |a: usize| {
            let width = hi[a] - lo[a];
            if width > 0.0 { GRID_MAX / width } else { 0.0 }
        };
        Self {
            origin: lo,
            scale: [scale(0), scale(1)],
        }
    }

    /// The origin and the scale, `[origin x, origin y, scale x, scale y]`: what the byte form
    /// saves.
    pub(super) fn parts(&self) -> [f64; 4] {
        [self.origin[0], self.origin[1], self.scale[0], self.scale[1]]
    }

    /// The curve whose [`Curve::parts`] are `parts`, if they make one.
    pub(super) fn from_parts(parts: [f64; 4]) -> Option<Self> {
        let curve = Self {
            origin: [parts[0], parts[1]],
            scale: [parts[2], parts[3]],
        };
        curve.is_valid().then_some(curve)
    }

    /// Whether the origin is finite and the scales not negative (nor NaN), as every curve
    /// [`Curve::over`] draws (a scale is infinite over centres a subnormal width apart).
    pub(super) fn is_valid(&self) -> bool {
        self.origin.iter().all(|o| o.is_finite()) && self.scale.iter().all(|&s| s >= 0.0)
    }

    /// The keys of all the boxes, ready to sort.
    fn keys<S: Scalar>(&self, boxes: &[Aabb<S>]) -> Keys {
        let mut keys = vec![0; boxes.len()];
        let counts = self.keys_into(boxes, 0, &mut keys);
        Keys { keys, counts }
    }

    /// The keys of all the boxes, computed in parallel runs of [`CHUNK`] boxes, and the
    /// histograms of each run.
    #[cfg(feature = "rayon")]
    fn par_keys<S: Scalar>(&self, boxes: &[Aabb<S>]) -> (Vec<u64>, Vec<Counts>) {
        let mut keys = vec![0; boxes.len()];
        let counts = keys
            .par_chunks_mut(CHUNK)
            .zip(boxes.par_chunks(CHUNK))
            .enumerate()
            .map(|(c, (out, run))| self.keys_into(run, c * CHUNK, out))
            .collect();
        (keys, counts)
    }

    /// Writes `(key << 32) | index` for each of `boxes` (the first of which is element
    /// `first`) to `out`, and returns their histograms. The keys are computed 64 at a time
    /// into a buffer before being counted and stored: the key arithmetic then runs without
    /// the histogram's memory updates in between (measured 40% faster at 1M boxes).
    fn keys_into<S: Scalar>(&self, boxes: &[Aabb<S>], first: usize, out: &mut [u64]) -> Counts {
        let mut counts = Counts::default();
        let mut buffer = [0u32; 64];
        let mut index = first as u64;
        for (run, out) in boxes.chunks(buffer.len()).zip(out.chunks_mut(buffer.len())) {
            for (key, b) in buffer.iter_mut().zip(run) {
                *key = self.key(b);
            }
            for (&key, slot) in buffer.iter().zip(out) {
                *slot = u64::from(key) << 32 | index;
                counts.add(*slot);
                index += 1;
            }
        }
        counts
    }

    /// The key of a box: the Hilbert index of the grid cell of its centre.
    #[inline]
    pub(super) fn key<S: Scalar>(&self, aabb: &Aabb<S>) -> u32 {
        let c = half_centre(aabb);
        // `as` saturates (and maps NaN to 0); the key only orders, so rounding is harmless.
        let cell = |a: usize| (((c[a] - self.origin[a]) * self.scale[a]) as u32).min(0xFFFF);
        hilbert(cell(0), cell(1))
    }
}

/// Half the centre of a box, in f64 (exact for f32; never overflows).
#[inline]
fn half_centre<S: Scalar>(aabb: &Aabb<S>) -> [f64; 2] {
    let h = |lo: S, hi: S| lo.to_f64() * 0.25 + hi.to_f64() * 0.25;
    [h(aabb.min.x, aabb.max.x), h(aabb.min.y, aabb.max.y)]
}

/// The index of cell `(x, y)` (each below 2^16) along the Hilbert curve of order 16, which
/// starts at cell (0, 0): consecutive indices are neighbouring cells. Branch-free: the
/// curve's state machine (which quadrant, in which orientation, at each of the 16 levels)
/// is run as parallel prefix scans over all the levels' bits at once (four rounds of
/// doubling), then the index bits are read off and interleaved.
#[inline]
pub(super) fn hilbert(x: u32, y: u32) -> u32 {
    const LOW: u32 = 0xFFFF;
    // Per level: a, b say how the quadrant maps the orientation; c, d track the state.
    let a = x ^ y;
    let b = LOW ^ a;
    let c = LOW ^ (x | y);
    let d = x & (y ^ LOW);
    let mut pa = a | (b >> 1);
    let mut pb = (a >> 1) ^ a;
    let mut pc = ((c >> 1) ^ (b & (d >> 1))) ^ c;
    let mut pd = ((a & (c >> 1)) ^ (d >> 1)) ^ d;
    for shift in [2, 4] {
        let (a, b, c, d) = (pa, pb, pc, pd);
        pa = (a & (a >> shift)) ^ (b & (b >> shift));
        pb = (a & (b >> shift)) ^ (b & ((a ^ b) >> shift));
        pc ^= (a & (c >> shift)) ^ (b & (d >> shift));
        pd ^= (b & (c >> shift)) ^ ((a ^ b) & (d >> shift));
    }
    let (a, b, c, d) = (pa, pb, pc, pd);
    pc ^= (a & (c >> 8)) ^ (b & (d >> 8));
    pd ^= (b & (c >> 8)) ^ ((a ^ b) & (d >> 8));
    // Undo the scan's last step, then recover the two index bits of every level.
    let a = pc ^ (pc >> 1);
    let b = pd ^ (pd >> 1);
    let i0 = x ^ y;
    let i1 = b | (LOW ^ (i0 | a));
    (spread(i1) << 1) | spread(i0)
}

/// The low 16 bits of `v` moved to the even bit positions.
#[inline]
fn spread(v: u32) -> u32 {
    let v = (v | (v << 8)) & 0x00FF_00FF;
    let v = (v | (v << 4)) & 0x0F0F_0F0F;
    let v = (v | (v << 2)) & 0x3333_3333;
    (v | (v << 1)) & 0x5555_5555
}

/// Bits per digit of the radix sort: four passes of 256 buckets cover a 32-bit key (measured
/// faster here than three of 2048 or two of 65536, and than `sort_unstable` on the `u64`s).
const DIGIT_BITS: usize = 8;
const DIGITS: usize = 32 / DIGIT_BITS;
const RADIX: usize = 1 << DIGIT_BITS;

#[inline]
fn digit(key: u64, d: usize) -> usize {
    (key >> (32 + DIGIT_BITS * d)) as usize & (RADIX - 1)
}

/// The histograms of every digit of some keys.
#[derive(Clone, Debug)]
pub(super) struct Counts([[u32; RADIX]; DIGITS]);

impl Default for Counts {
    fn default() -> Self {
        Self([[0; RADIX]; DIGITS])
    }
}

impl Counts {
    /// Counts the digits of `key`.
    #[inline]
    pub(super) fn add(&mut self, key: u64) {
        for (d, count) in self.0.iter_mut().enumerate() {
            count[digit(key, d)] += 1;
        }
    }

    /// Whether digit `d` differs between some of the `n` keys counted.
    fn varies(&self, d: usize, n: usize) -> bool {
        self.0[d].iter().all(|&c| c as usize != n)
    }

    /// The first output position of each bucket of digit `d`.
    fn starts(&self, d: usize) -> [u32; RADIX] {
        let mut starts = self.0[d];
        let mut at = 0;
        for c in starts.iter_mut() {
            at += core::mem::replace(c, at);
        }
        starts
    }
}

/// Curve keys ready for the radix sort: `(key << 32) | index` per element, and the
/// histograms of their digits.
pub(super) struct Keys {
    pub(super) keys: Vec<u64>,
    pub(super) counts: Counts,
}

impl Keys {
    /// The element indices in ascending key order, ties by index.
    pub(super) fn into_order(self) -> Vec<u32> {
        let Self { mut keys, counts } = self;
        let n = keys.len();
        let mut scratch = vec![0; n];
        let mut order = vec![0; n];
        radix_sort(&mut keys, &mut scratch, &counts, DIGITS, &mut order);
        order
    }
}

/// Writes the indices of `keys` (whose histograms are `counts`) to `order` in ascending key
/// order, ties by their order in `keys`: a least-significant-digit radix sort (stable) on
/// the digits below `digits` that some keys differ in, whose last pass writes the indices
/// alone. `scratch` (as long as `keys`) holds the keys between passes; both are overwritten.
fn radix_sort(
    keys: &mut [u64],
    scratch: &mut [u64],
    counts: &Counts,
    digits: usize,
    order: &mut [u32],
) {
    let n = keys.len();
    let Some(last) = (0..digits).rev().find(|&d| counts.varies(d, n)) else {
        for (index, &key) in order.iter_mut().zip(keys.iter()) {
            *index = key as u32;
        }
        return;
    };
    let (mut from, mut to) = (keys, scratch);
    for d in (0..last).filter(|&d| counts.varies(d, n)) {
        let mut at = counts.starts(d);
        for &key in from.iter() {
            let slot = &mut at[digit(key, d)];
            to[*slot as usize] = key;
            *slot += 1;
        }
        core::mem::swap(&mut from, &mut to);
    }
    let mut at = counts.starts(last);
    for &key in from.iter() {
        let slot = &mut at[digit(key, last)];
        order[*slot as usize] = key as u32;
        *slot += 1;
    }
}

/// [`Keys::into_order`] in parallel, for keys computed in runs of [`CHUNK`] with the
/// histograms `runs`, with the values (in input order) gathered into the same order: one
/// most-significant-digit pass on the highest digit that varies scatters the runs in
/// parallel into that digit's 256 buckets (each run writes its own part of every bucket, in
/// order, so the pass is stable), carrying the values with the keys and writing each key
/// with its place in its bucket in place of its index (the index goes to a table of its
/// own, cut like the buckets); then the buckets are radix-sorted on the lower digits in
/// parallel, each on its own, and each gathers its values and indices by those places.
/// Every value is moved between slices that each thread holds alone: safe code.
#[cfg(feature = "rayon")]
pub(super) fn par_order<T: Send>(
    mut keys: Vec<u64>,
    runs: &[Counts],
    mut values: Vec<Option<T>>,
) -> (Vec<u32>, Vec<T>) {
    let n = keys.len();
    let mut all = Counts::default();
    for run in runs {
        for (total, count) in all.0.iter_mut().zip(&run.0) {
            for (t, c) in total.iter_mut().zip(count) {
                *t += c;
            }
        }
    }
    let take = |v: &mut Option<T>| v.take().expect("every value is gathered once");
    let Some(top) = (0..DIGITS).rev().find(|&d| all.varies(d, n)) else {
        let order = keys.par_iter().map(|&key| key as u32).collect();
        return (order, values.par_iter_mut().map(take).collect());
    };
    let mut buckets = vec![0; n];
    let mut indices = vec![0u32; n];
    let mut moved: Vec<Option<T>> = (0..n).into_par_iter().map(|_| None).collect();
    // Each run's part of each bucket (keys, indices, values), bucket by bucket, then run by
    // run within one, and where that part starts in its bucket.
    type Part<'a, T> = (&'a mut [u64], &'a mut [u32], &'a mut [Option<T>], u32);
    let mut parts: Vec<Vec<Part<'_, T>>> = runs.iter().map(|_| Vec::with_capacity(RADIX)).collect();
    let (mut rest, mut rest_indices, mut rest_values) = (
        buckets.as_mut_slice(),
        indices.as_mut_slice(),
        moved.as_mut_slice(),
    );
    for b in 0..RADIX {
        let mut start = 0;
        for (part, run) in parts.iter_mut().zip(runs) {
            let len = run.0[top][b] as usize;
            let (keys, keys_tail) = core::mem::take(&mut rest).split_at_mut(len);
            let (indices, indices_tail) = core::mem::take(&mut rest_indices).split_at_mut(len);
            let (values, values_tail) = core::mem::take(&mut rest_values).split_at_mut(len);
            part.push((keys, indices, values, start));
            (rest, rest_indices, rest_values) = (keys_tail, indices_tail, values_tail);
            start += len as u32;
        }
    }
    keys.par_chunks(CHUNK)
        .zip(values.par_chunks_mut(CHUNK))
        .zip(parts)
        .for_each(|((run, values), mut part)| {
            let mut at = [0; RADIX];
            for (&key, value) in run.iter().zip(values) {
                let b = digit(key, top);
                let (keys, indices, moved, start) = &mut part[b];
                keys[at[b]] = (key & !u64::from(u32::MAX)) | u64::from(*start + at[b] as u32);
                indices[at[b]] = key as u32;
                moved[at[b]] = value.take();
                at[b] += 1;
            }
        });
    drop(values);
    let mut order = vec![0; n];
    let mut sorted: Vec<Option<T>> = (0..n).into_par_iter().map(|_| None).collect();
    let mut jobs = Vec::with_capacity(RADIX);
    let (mut from, mut to, mut out) = (
        buckets.as_mut_slice(),
        keys.as_mut_slice(),
        order.as_mut_slice(),
    );
    let (mut from_indices, mut from_values, mut out_values) = (
        indices.as_mut_slice(),
        moved.as_mut_slice(),
        sorted.as_mut_slice(),
    );
    for &len in &all.0[top] {
        let len = len as usize;
        let (bucket, from_rest) = core::mem::take(&mut from).split_at_mut(len);
        let (scratch, to_rest) = core::mem::take(&mut to).split_at_mut(len);
        let (order, out_rest) = core::mem::take(&mut out).split_at_mut(len);
        let (indices, indices_rest) = core::mem::take(&mut from_indices).split_at_mut(len);
        let (values, values_rest) = core::mem::take(&mut from_values).split_at_mut(len);
        let (gathered, gathered_rest) = core::mem::take(&mut out_values).split_at_mut(len);
        jobs.push((bucket, scratch, order, indices, values, gathered));
        (from, to, out) = (from_rest, to_rest, out_rest);
        (from_indices, from_values, out_values) = (indices_rest, values_rest, gathered_rest);
    }
    jobs.into_par_iter()
        .for_each(|(bucket, scratch, order, indices, values, gathered)| {
            let mut counts = Counts::default();
            for &key in bucket.iter() {
                counts.add(key);
            }
            // The places in the bucket, in key order (ties by place: by input index).
            radix_sort(bucket, scratch, &counts, top, order);
            for (place, value) in order.iter_mut().zip(gathered) {
                *value = values[*place as usize].take();
                *place = indices[*place as usize];
            }
        });
    (order, sorted.par_iter_mut().map(take).collect())
}

/// The union box of a run of boxes.
pub(super) fn union<S: Scalar>(run: &[Aabb<S>]) -> Aabb<S> {
    run.iter().skip(1).fold(run[0], |u, b| u.union(b))
}

/// The node levels over `boxes` (in curve order): each run of `node_size` boxes of a level
/// gets its union box in the next, up to a single root. `unions(from, to)` writes the union
/// of each run of `node_size` boxes of `from` to `to` (one per run), for each level.
/// Returns the nodes, level 1 first, and the levels' offsets (`levels[l - 1]..levels[l]` for
/// level `l`).
fn pack<S: Scalar>(
    boxes: &[Aabb<S>],
    node_size: usize,
    unions: impl Fn(&[Aabb<S>], &mut [Aabb<S>]),
) -> (Vec<Aabb<S>>, Vec<u32>) {
    let Some(&first) = boxes.first() else {
        return (Vec::new(), vec![0]);
    };
    // Level sizes: at least one level (a root above a single element), up to one node.
    let mut lens = vec![boxes.len().div_ceil(node_size)];
    while let Some(&len) = lens.last().filter(|&&len| len > 1) {
        lens.push(len.div_ceil(node_size));
    }
    let mut nodes = vec![first; lens.iter().sum()];
    let mut levels = Vec::with_capacity(lens.len() + 1);
    levels.push(0u32);
    unions(boxes, &mut nodes[..lens[0]]);
    levels.push(lens[0] as u32);
    for &len in &lens[1..] {
        let (start, end) = (
            levels[levels.len() - 2] as usize,
            levels[levels.len() - 1] as usize,
        );
        let (below, above) = nodes.split_at_mut(end);
        unions(&below[start..], &mut above[..len]);
        levels.push((end + len) as u32);
    }
    (nodes, levels)
}

/// Writes the union of each run of `node_size` boxes of `from` to `to`.
fn unions<S: Scalar>(from: &[Aabb<S>], to: &mut [Aabb<S>], node_size: usize) {
    for (node, run) in to.iter_mut().zip(from.chunks(node_size)) {
        *node = union(run);
    }
}

/// [`unions`] on rayon's threads, in runs of nodes.
#[cfg(feature = "rayon")]
fn par_unions<S: Scalar>(from: &[Aabb<S>], to: &mut [Aabb<S>], node_size: usize) {
    /// Nodes per task.
    const NODES: usize = 1024;
    to.par_chunks_mut(NODES)
        .zip(from.par_chunks(NODES * node_size))
        .for_each(|(to, from)| unions(from, to, node_size));
}

/// The values in curve order: `slots[p]` is the input index of the element at position `p`
/// (the serial build's; the parallel one gathers them with its sort, [`par_order`]).
fn in_curve_order<T>(values: &mut [Option<T>], slots: &[u32]) -> Vec<T> {
    slots
        .iter()
        .map(|&i| {
            values[i as usize]
                .take()
                .expect("the sorted keys hold every input index once")
        })
        .collect()
}

impl<S: Scalar, T> PackedIndex<S, T> {
    /// Validates and collects the input, sorts it along the curve, gathers boxes and values
    /// into curve order and packs the nodes.
    pub(super) fn build_with(
        items: impl Iterator<Item = (Aabb<S>, T)>,
        config: PackedConfig,
    ) -> Result<Self, Error> {
        let Input {
            boxes,
            mut values,
            centres,
        } = Input::collect(items)?;
        let curve = Curve::over_bulk(&boxes, centres);
        let slots = curve.keys(&boxes).into_order();
        let sorted: Vec<Aabb<S>> = slots.iter().map(|&i| boxes[i as usize]).collect();
        drop(boxes);
        let values = in_curve_order(&mut values, &slots);
        let node_size = config.node_size as usize;
        let (nodes, levels) = pack(&sorted, node_size, |from, to| unions(from, to, node_size));
        let elements = StaticSlots::new(sorted, values, slots);
        Ok(Self::assemble(config, curve, elements, nodes, levels))
    }

    /// The index of the sorted elements and their nodes.
    fn assemble(
        config: PackedConfig,
        curve: Curve,
        elements: StaticSlots<S, T>,
        nodes: Vec<Aabb<S>>,
        levels: Vec<u32>,
    ) -> Self {
        let index = Self {
            config,
            elements,
            nodes,
            levels,
            curve,
        };
        debug_assert_eq!(index.check_curve_order(), Ok(()), "the build's order");
        index
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T: Send> PackedIndex<S, T> {
    /// [`PackedIndex::build_with`] on rayon's threads: validation, keys, the sort with the
    /// values' gather, the gather of the boxes, the node levels and the slot table in
    /// parallel; collecting the input and the curve's sample on one thread.
    pub(super) fn par_build_with(
        items: impl IntoIterator<Item = (Aabb<S>, T)>,
        config: PackedConfig,
    ) -> Result<Self, Error> {
        let Input {
            boxes,
            values,
            centres,
        } = Input::par_collect(items)?;
        let curve = Curve::over_bulk(&boxes, centres);
        let (keys, runs) = curve.par_keys(&boxes);
        let (slots, values) = par_order(keys, &runs, values);
        let sorted: Vec<Aabb<S>> = slots.par_iter().map(|&i| boxes[i as usize]).collect();
        drop(boxes);
        let node_size = config.node_size as usize;
        let (nodes, levels) = pack(&sorted, node_size, |from, to| {
            par_unions(from, to, node_size);
        });
        let elements = StaticSlots::par_new(sorted, values, slots);
        Ok(Self::assemble(config, curve, elements, nodes, levels))
    }
}
