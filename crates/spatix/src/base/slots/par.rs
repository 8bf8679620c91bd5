//! The parallel frame's first pass over a slot table ([`Slots::par_update`]).

use super::Slots;
use crate::{Aabb, Error, Handle, Scalar};

/// [`Slots::par_update`]: chunks of slots are at least this long, so that a small table is
/// not cut finer than a rayon task is worth.
const MIN_UPDATE_CHUNK: usize = 1024;

/// [`Slots::par_update`]: chunks per thread, so that rayon can balance chunks whose
/// elements cost `f` unequal work.
const UPDATE_CHUNKS_PER_THREAD: usize = 8;

/// The elements [`Slots::par_update`] left for the structure to move with its serial update,
/// in slot order, and the first refusal.
pub(crate) struct Moved<S> {
    lists: Vec<Vec<(u32, Aabb<S>)>>,
    used: usize,
    /// Slots per chunk: chunk `k`'s list holds slots of `k * chunk..(k + 1) * chunk`.
    chunk: usize,
    refused: Option<Error>,
}

impl<S: Copy> Moved<S> {
    /// The elements to move and their new boxes, in slot order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, Aabb<S>)> + '_ {
        self.lists[..self.used].iter().flatten().copied()
    }

    /// The elements to move, one list per chunk of slots, in slot order.
    pub(crate) fn chunks(&self) -> &[Vec<(u32, Aabb<S>)>] {
        &self.lists[..self.used]
    }
}

impl<S: Scalar, T> Slots<S, T> {
    /// The first pass of a structure's parallel `update_all`
    /// ([`ParallelPairs::par_update_all`](crate::ParallelPairs::par_update_all)): calls `f`
    /// on every live element, in chunks of slots on rayon's pool, and sorts each new box
    /// that differs from the old one:
    /// - an invalid box is refused ([`Error::InvalidAabb`]): the element keeps its box;
    /// - otherwise `keep(slot, old, new, acc)` decides, reading only what the structure's
    ///   serial update would decide by for this element: `Ok(true)` if the serial update
    ///   would change nothing but the box (and what `acc`, the chunk's copy of a running
    ///   maximum such as an overhang, records), and the box is written at once; `Ok(false)`
    ///   if it would re-file the element: the element keeps its old box and is returned in
    ///   [`Moved`], for the caller to apply with its serial update, in slot order;
    ///   `Err(e)` if the serial update would refuse it.
    ///
    /// The chunks' accumulators, each started from `init`, are combined by `reduce` (which
    /// must treat `init` as an identity). Applying the returned moves in order then leaves
    /// the state the serial `update_all` leaves, which calls `f` in slot order too, provided
    /// no move changes what `keep` reads for another element. Hand the [`Moved`] back with
    /// [`Slots::moved_applied`] so that its memory serves the next call: once warm, the pass
    /// allocates nothing.
    pub(crate) fn par_update<F, K, A, R>(
        &mut self,
        f: &F,
        keep: K,
        init: A,
        reduce: R,
    ) -> (Moved<S>, A)
    where
        F: Fn(Handle, &mut T, &Aabb<S>) -> Aabb<S> + Sync,
        K: Fn(u32, &Aabb<S>, &Aabb<S>, &mut A) -> Result<bool, Error> + Sync,
        A: Copy + Send + Sync,
        R: Fn(A, A) -> A + Sync,
        T: Send,
    {
        use rayon::prelude::*;
        let n = self.boxes.len();
        let chunk = n
            .div_ceil(rayon::current_num_threads() * UPDATE_CHUNKS_PER_THREAD)
            .max(MIN_UPDATE_CHUNK);
        let chunks = n.div_ceil(chunk);
        let mut lists = core::mem::take(&mut self.moved);
        if lists.len() < chunks {
            lists.resize_with(chunks, Vec::new);
        }
        let generations = &self.generations[..];
        let (acc, refused) = self
            .boxes
            .par_chunks_mut(chunk)
            .zip(self.values.par_chunks_mut(chunk))
            .zip(&mut lists[..chunks])
            .enumerate()
            .map(|(k, ((boxes, values), list))| {
                list.clear();
                let mut acc = init;
                let mut refused = None;
                let first = k * chunk;
                for (i, (b, value)) in boxes.iter_mut().zip(values).enumerate() {
                    let Some(value) = value else { continue };
                    let slot = (first + i) as u32;
                    let old = *b;
                    let new = f(Handle::new(slot, generations[first + i]), value, &old);
                    if new == old {
                        continue;
                    }
                    let decided = if new.is_valid() {
                        keep(slot, &old, &new, &mut acc)
                    } else {
                        Err(Error::InvalidAabb)
                    };
                    match decided {
                        Ok(true) => *b = new,
                        Ok(false) => list.push((slot, new)),
                        Err(e) => {
                            refused.get_or_insert(e);
                        }
                    }
                }
                (acc, refused)
            })
            .reduce(
                || (init, None),
                |(a, ra), (b, rb)| (reduce(a, b), ra.or(rb)),
            );
        (
            Moved {
                lists,
                used: chunks,
                chunk,
                refused,
            },
            acc,
        )
    }

    /// Writes the new box of every element of `moved`, in parallel by chunk of slots (for a
    /// structure that re-filed them without writing their boxes).
    pub(crate) fn par_set_moved(&mut self, moved: &Moved<S>)
    where
        S: Send + Sync,
    {
        use rayon::prelude::*;
        self.boxes
            .par_chunks_mut(moved.chunk)
            .zip(moved.chunks())
            .enumerate()
            .for_each(|(k, (boxes, list))| {
                for &(slot, aabb) in list {
                    boxes[slot as usize - k * moved.chunk] = aabb;
                }
            });
    }

    /// Takes back the memory of a [`Moved`] once its moves are applied.
    pub(crate) fn moved_applied(&mut self, moved: Moved<S>) -> Result<(), Error> {
        self.moved = moved.lists;
        moved.refused.map_or(Ok(()), Err)
    }

    /// Every slot's box, in slot order (freed slots hold stale boxes).
    pub(crate) fn boxes(&self) -> &[Aabb<S>] {
        &self.boxes
    }
}
