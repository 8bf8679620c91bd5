//! Index-linked lists backed by one free-listed node array (no container per cell), shared
//! by every structure that files elements in cells or leaves.
//!
//! A list is just its head (`u32`, [`NIL`] when empty), kept by its owner (a grid cell, a
//! quadtree leaf). All lists of a structure share one [`ListPool`], so there is no container
//! per cell, and freed nodes are reused: a running simulation stops allocating once warm.

use crate::base::handle::NIL;

/// One node of an index-linked list: the next node, the element slot it carries and, for
/// lists that keep a copy of something per entry (the loose quadtree and the loose grid keep
/// each element's box, the point grids each element's corner
/// beside it, so that walking a list reads nothing else), that data.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct Link<D = ()> {
    pub(crate) next: u32,
    pub(crate) item: u32,
    pub(crate) data: D,
}

const _: () = assert!(size_of::<Link>() == 8);

/// [`ListPool::move_nodes`] streams the nodes through a ring buffer when they move by fewer
/// positions than this, or than a sixteenth of them.
const MIN_WINDOW: usize = 4096;

/// The node array of every list of one structure, with a free list threaded through `next`.
#[derive(Clone, Debug)]
pub(crate) struct ListPool<D = ()> {
    links: Vec<Link<D>>,
    /// Ring buffer of [`ListPool::move_nodes`]' streaming pass (a power of two long, or
    /// empty).
    window: Vec<Link<D>>,
    free: u32,
    in_use: usize,
    /// Nodes linked or unlinked since the lists were last laid out in order by
    /// [`ListPool::compact`]: how scattered the lists may be.
    relinked: usize,
}

impl<D> Default for ListPool<D> {
    fn default() -> Self {
        Self {
            links: Vec::new(),
            window: Vec::new(),
            free: NIL,
            in_use: 0,
            relinked: 0,
        }
    }
}

impl ListPool {
    /// Pushes `item` at the front of the list whose head is `head`.
    #[inline]
    pub(crate) fn push(&mut self, head: &mut u32, item: u32) {
        self.push_with(head, item, ());
    }
}

impl<D: Copy + Default> ListPool<D> {
    /// Pushes `item`, with its data, at the front of the list whose head is `head`; returns
    /// the node it now occupies.
    #[inline]
    pub(crate) fn push_with(&mut self, head: &mut u32, item: u32, data: D) -> u32 {
        let link = Link {
            next: *head,
            item,
            data,
        };
        *head = if self.free != NIL {
            let at = self.free;
            self.free = self.links[at as usize].next;
            self.links[at as usize] = link;
            at
        } else {
            self.links.push(link);
            (self.links.len() - 1) as u32
        };
        self.in_use += 1;
        self.relinked += 1;
        *head
    }

    /// Unlinks the first node carrying `item` from the list; returns whether one was found.
    #[inline]
    pub(crate) fn remove(&mut self, head: &mut u32, item: u32) -> bool {
        let mut prev = NIL;
        let mut at = *head;
        while at != NIL {
            let link = self.links[at as usize];
            if link.item == item {
                if prev == NIL {
                    *head = link.next;
                } else {
                    self.links[prev as usize].next = link.next;
                }
                self.release(at);
                return true;
            }
            prev = at;
            at = link.next;
        }
        false
    }

    /// Removes node `at` from the list whose head is `head`, in O(1): the head node's item
    /// and data move into `at` and the head node is released. Returns the item that moved
    /// (now carried by node `at`, so its owner must record that), or `None` when `at` was the
    /// head itself.
    #[inline]
    pub(crate) fn remove_node(&mut self, head: &mut u32, at: u32) -> Option<u32> {
        let first = *head;
        let front = self.links[first as usize];
        *head = front.next;
        self.release(first);
        (first != at).then(|| {
            let node = &mut self.links[at as usize];
            node.item = front.item;
            node.data = front.data;
            front.item
        })
    }

    /// Returns one node to the free list (its item becomes `NIL`, which marks free nodes).
    #[inline]
    pub(crate) fn release(&mut self, at: u32) {
        self.links[at as usize].item = NIL;
        self.links[at as usize].next = self.free;
        self.free = at;
        self.in_use -= 1;
        self.relinked += 1;
    }

    /// The node at `at`.
    #[inline]
    pub(crate) fn link(&self, at: u32) -> Link<D> {
        self.links[at as usize]
    }

    /// The data of the node at `at`, to change it in place.
    #[inline]
    pub(crate) fn data_mut(&mut self, at: u32) -> &mut D {
        &mut self.links[at as usize].data
    }

    /// Every node, in place: after [`ListPool::compact`], the lists one after another.
    #[inline]
    pub(crate) fn nodes(&self) -> &[Link<D>] {
        &self.links
    }

    /// Gives every node the data `data` returns for its item, if any, in parallel on
    /// rayon's pool (free nodes included: their data is never read).
    #[cfg(feature = "rayon")]
    pub(crate) fn par_set_data(&mut self, data: impl Fn(u32) -> Option<D> + Sync)
    where
        D: Send,
    {
        use rayon::prelude::*;
        self.links.par_iter_mut().for_each(|link| {
            if let Some(d) = data(link.item) {
                link.data = d;
            }
        });
    }

    /// Gives every node the data `data` returns for its item, if any, on the calling thread
    /// (one band's pool of a parallel pass over bands).
    #[cfg(feature = "rayon")]
    pub(crate) fn set_data(&mut self, data: impl Fn(u32) -> Option<D>) {
        for link in &mut self.links {
            if let Some(d) = data(link.item) {
                link.data = d;
            }
        }
    }

    /// Re-points a node's `next` (used when moving whole nodes between lists).
    #[inline]
    pub(crate) fn set_next(&mut self, at: u32, next: u32) {
        self.links[at as usize].next = next;
    }

    /// Counts one node moved between lists by hand (with [`ListPool::set_next`]), so that
    /// [`ListPool::relinked`] knows the lists are less in order.
    #[inline]
    pub(crate) fn note_relink(&mut self) {
        self.relinked += 1;
    }

    /// The items of the list starting at `head`, front to back.
    #[inline]
    pub(crate) fn items(&self, head: u32) -> Items<'_, D> {
        Items {
            pool: self,
            at: head,
        }
    }

    /// Reserves room for `additional` more nodes.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.links.reserve(additional);
    }

    /// Nodes linked or unlinked since the last [`ListPool::compact`].
    #[inline]
    pub(crate) fn relinked(&self) -> usize {
        self.relinked
    }

    /// Whether the nodes relinked since the last compaction reach half of those in use, or
    /// `at_least`, whichever is more: compacting then is paid for by as many relinks as it
    /// moves (amortised O(1)), which keeps the lists close to traversal order even for a
    /// structure whose `maintain` is never called. Building by insertion alone compacts at
    /// every doubling.
    #[inline]
    pub(crate) fn scattered_after(&self, at_least: usize) -> bool {
        2 * self.relinked >= self.in_use.max(at_least)
    }

    /// Moves the nodes so that the lists occupy consecutive nodes, in the order in which
    /// `heads` presents their heads and each front to back, followed by the free nodes, and
    /// updates the heads: walking the lists in that order then reads the nodes sequentially.
    /// `heads` must present every list of the pool, in the same order each time it is called
    /// (it is called twice). O(nodes), in place, and cheap when the nodes are nearly in order
    /// already.
    pub(crate) fn compact(&mut self, heads: impl FnMut(&mut dyn FnMut(&mut u32))) {
        self.compact_with(heads, false);
    }

    /// [`ListPool::compact`] for one band of a [`BandPools`]: the ring buffer serves lags up
    /// to a sixteenth of the nodes allocated, with no floor, and is sized for that at once,
    /// so that it grows only when the pool does (a warm frame allocates nothing, whichever
    /// band's lag peaks); larger lags take the permutation.
    /// Once laid out, the pool keeps room for a quarter more nodes than it uses (room for
    /// half as many again when it lacks it), so that elements crossing bands from frame to frame
    /// do not grow it: a band's share of the nodes varies, where a whole pool's does not.
    pub(crate) fn compact_band(&mut self, heads: impl FnMut(&mut dyn FnMut(&mut u32))) {
        self.compact_with(heads, true);
        if self.links.capacity() < self.in_use + self.in_use / 4 {
            let room = self.in_use + self.in_use / 2;
            self.links.reserve_exact(room - self.links.len());
        }
    }

    fn compact_with(&mut self, mut heads: impl FnMut(&mut dyn FnMut(&mut u32)), band: bool) {
        // Each node's destination, kept in its `next` until the nodes are in place.
        let (mut to, mut lag) = (0u32, 0u32);
        // Gives the nodes of the list from `at` the next destinations, in list order, and
        // returns the first.
        let mut assign = |links: &mut [Link<D>], mut at: u32| {
            let first = to;
            while at != NIL {
                let next = links[at as usize].next;
                links[at as usize].next = to;
                lag = lag.max(at.abs_diff(to));
                to += 1;
                at = next;
            }
            first
        };
        heads(&mut |head: &mut u32| {
            let first = assign(&mut self.links, *head);
            if *head != NIL {
                *head = first;
            }
        });
        assign(&mut self.links, self.free);
        debug_assert_eq!(to as usize, self.links.len(), "heads must hold every list");
        self.move_nodes(lag as usize, band, |_, _| {});
        // Every list is now a run that ends where the next one starts.
        let mut start = None;
        heads(&mut |head: &mut u32| {
            if *head != NIL {
                if let Some(from) = start {
                    self.thread(from, *head);
                }
                start = Some(*head);
            }
        });
        let in_use = self.in_use as u32;
        if let Some(from) = start {
            self.thread(from, in_use);
        }
        let allocated = self.links.len() as u32;
        self.free = if in_use < allocated { in_use } else { NIL };
        self.thread(in_use, allocated);
        self.relinked = 0;
    }

    /// Moves every node to the position held in its `next` (a permutation of the positions,
    /// no node moving by more than `lag`), calling `finish(at, node)` on each node in
    /// position order just before it is stored there (its `next` is still its position).
    fn move_nodes(&mut self, lag: usize, band: bool, mut finish: impl FnMut(u32, &mut Link<D>)) {
        let n = self.links.len();
        let (ring, sized_for) = if band {
            let most = self.links.capacity() / 16;
            (lag <= most, most)
        } else {
            (lag < (n / 16).max(MIN_WINDOW), lag)
        };
        let size = (2 * sized_for + 1).next_power_of_two();
        // A band's window is sized on every compaction, whichever way it goes, so that it
        // grows only when the pool does.
        if (ring || band) && self.window.len() < size {
            self.window.resize(size, Link::default());
        }
        if ring {
            // One streaming pass: each node is read into a ring buffer (of more than
            // `2 * lag` nodes, kept for the next time) at its destination, which is stored
            // `lag` steps later, once every node bound for it has been read (and after its
            // own occupant was).
            let mask = self.window.len() - 1;
            for i in 0..n + lag {
                if i < n {
                    let link = self.links[i];
                    self.window[link.next as usize & mask] = link;
                }
                if i >= lag {
                    let at = i - lag;
                    let mut link = self.window[at & mask];
                    finish(at as u32, &mut link);
                    self.links[at] = link;
                }
            }
        } else {
            self.permute();
            for (at, link) in (0u32..).zip(&mut self.links) {
                finish(at, link);
            }
        }
    }

    /// Moves every node to the position held in its `next` (a permutation of the positions).
    ///
    /// Following the permutation's cycles directly would chase one dependent, cache-missing
    /// load per node; instead a first pass (American flag sort) moves each node into its
    /// bucket of consecutive positions, walking the array sequentially and writing to one
    /// cursor per bucket, and a second pass follows the cycles within each cache-sized bucket.
    fn permute(&mut self) {
        const BUCKETS: usize = 1024;
        const MIN_WIDTH: usize = 256;
        let n = self.links.len();
        let width = n.div_ceil(BUCKETS).max(MIN_WIDTH);
        let buckets = n.div_ceil(width);
        let bucket = |link: &Link<D>| link.next as usize / width;
        let mut cursor = [0usize; BUCKETS];
        for (b, c) in cursor.iter_mut().enumerate().take(buckets) {
            *c = b * width;
        }
        for b in 0..buckets {
            let end = ((b + 1) * width).min(n);
            while cursor[b] < end {
                let mut carried = self.links[cursor[b]];
                let mut home = bucket(&carried);
                while home != b {
                    // Skip what already belongs there, then drop the node and carry on with
                    // the one it displaces.
                    while bucket(&self.links[cursor[home]]) == home {
                        cursor[home] += 1;
                    }
                    carried = core::mem::replace(&mut self.links[cursor[home]], carried);
                    cursor[home] += 1;
                    home = bucket(&carried);
                }
                self.links[cursor[b]] = carried;
                cursor[b] += 1;
            }
        }
        for i in 0..n {
            let mut carried = self.links[i];
            while carried.next as usize != i {
                carried = core::mem::replace(&mut self.links[carried.next as usize], carried);
            }
            self.links[i] = carried;
        }
    }

    /// Links the nodes `from..to` one to the next, the last to `NIL`.
    fn thread(&mut self, from: u32, to: u32) {
        for at in from..to {
            self.links[at as usize].next = if at + 1 < to { at + 1 } else { NIL };
        }
    }

    /// Drops every list; keeps the memory.
    pub(crate) fn clear(&mut self) {
        self.links.clear();
        self.free = NIL;
        self.in_use = 0;
        self.relinked = 0;
    }

    /// Nodes currently linked into some list.
    pub(crate) fn in_use(&self) -> usize {
        self.in_use
    }

    /// Nodes on the free list, counted by walking it (for invariant checks).
    pub(crate) fn free_len(&self) -> Result<usize, crate::Error> {
        let mut n = 0;
        let mut at = self.free;
        while at != NIL {
            n += 1;
            if n > self.links.len() {
                return Err(crate::Error::InvariantViolated(
                    "the list pool's free list has a cycle".into(),
                ));
            }
            at = self.links[at as usize].next;
        }
        Ok(n)
    }

    /// Walks the list starting at `head` for a self-check, calling `visit(at, node)` on each
    /// node; fails if the list links to a node out of range or has a cycle (`list` names it
    /// in the message). Returns its length.
    pub(crate) fn check_list(
        &self,
        head: u32,
        list: impl Fn() -> String,
        mut visit: impl FnMut(u32, Link<D>) -> Result<(), crate::Error>,
    ) -> Result<usize, crate::Error> {
        let mut at = head;
        let mut length = 0usize;
        while at != NIL {
            if at as usize >= self.links.len() {
                return Err(crate::Error::InvariantViolated(format!(
                    "{} links to node {at} out of range",
                    list()
                )));
            }
            length += 1;
            if length > self.links.len() {
                return Err(crate::Error::InvariantViolated(format!(
                    "the list of {} has a cycle",
                    list()
                )));
            }
            let node = self.links[at as usize];
            visit(at, node)?;
            at = node.next;
        }
        Ok(length)
    }

    /// Checks that the nodes in use are the `listed` ones the structure's lists hold and that
    /// every other node is on the free list (none leaked).
    pub(crate) fn check_counts(&self, listed: usize) -> Result<(), crate::Error> {
        let fail = |why: String| Err(crate::Error::InvariantViolated(why));
        if self.in_use != listed {
            return fail(format!(
                "the pool counts {} nodes in use but the lists hold {listed}",
                self.in_use
            ));
        }
        let free = self.free_len()?;
        if free + self.in_use != self.links.len() {
            return fail(format!(
                "{free} free and {} used nodes, but {} allocated",
                self.in_use,
                self.links.len()
            ));
        }
        Ok(())
    }

    /// Total nodes ever allocated (in use + free).
    pub(crate) fn allocated(&self) -> usize {
        self.links.len()
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        (self.links.capacity() + self.window.capacity()) * size_of::<Link<D>>()
    }

    /// The part of [`ListPool::memory_bytes`] that is the compaction's reusable ring buffer.
    #[cfg(test)]
    pub(crate) fn window_bytes(&self) -> usize {
        self.window.capacity() * size_of::<Link<D>>()
    }
}

/// Iterator over the items of one index-linked list.
pub(crate) struct Items<'a, D = ()> {
    pool: &'a ListPool<D>,
    at: u32,
}

impl<D: Copy + Default> Iterator for Items<'_, D> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.at == NIL {
            return None;
        }
        let link = self.pool.links[self.at as usize];
        self.at = link.next;
        Some(link.item)
    }
}

/// Relinks tolerated in one band's pool before it is packed, however few nodes it holds
/// ([`ListPool::scattered_after`]): a band holds a share of the lists, so its compaction
/// costs a share of the whole pool's.
pub(crate) const BAND_SCATTERED_AFTER_AT_LEAST: usize = 256;

/// At most this many bands in a [`BandPools`]: enough that rayon can balance them over 16
/// threads, few enough that each band's pool is worth its bookkeeping.
const MAX_BANDS: u32 = 64;

/// At least this many cells in a band of a [`BandPools`] (unless the grid has fewer): a
/// small grid gains nothing from parallel bands, and a band of many cells holds many nodes,
/// whose count varies little from frame to frame as elements cross bands.
const MIN_BAND_CELLS: u64 = 4096;

/// The bands of a grid of `rows` rows of `cols` cells: `2^shift` rows each, this `shift`,
/// the least that makes at most [`MAX_BANDS`] bands, each of at least `min_cells` cells
/// unless one band holds every row. It depends on the grid's shape only, never on the
/// thread count. [`BandPools`] asks [`MIN_BAND_CELLS`].
pub(crate) fn band_shift(rows: u32, cols: u32, min_cells: u64) -> u32 {
    let mut shift = 0;
    while (rows.max(1) - 1) >> shift >= MAX_BANDS
        || (u64::from(cols) << shift < min_cells && (1u64 << shift) < u64::from(rows))
    {
        shift += 1;
    }
    shift
}

/// How many bands of `2^shift` rows cover `rows` rows (at least one).
pub(crate) fn band_count(rows: u32, shift: u32) -> usize {
    (((rows.max(1) - 1) >> shift) + 1) as usize
}

/// The lists of a grid's cells in one [`ListPool`] per *band*, a run of `2^shift` rows: each
/// cell's list lives in its band's pool, so bands can be relinked on different threads. The
/// bands depend only on the row count, never on the thread count, so a serial and a parallel
/// pass that apply each band's links and unlinks in the same order leave the same nodes.
#[derive(Clone, Debug, Default)]
pub(crate) struct BandPools<D = ()> {
    pools: Vec<ListPool<D>>,
    shift: u32,
}

impl<D: Copy + Default> BandPools<D> {
    /// Pools for `rows` rows of `cols` cells: at most [`MAX_BANDS`] bands of a power-of-two
    /// number of rows, each of at least [`MIN_BAND_CELLS`] cells unless it holds every row.
    pub(crate) fn new(rows: u32, cols: u32) -> Self {
        let shift = band_shift(rows, cols, MIN_BAND_CELLS);
        Self {
            pools: (0..band_count(rows, shift))
                .map(|_| ListPool::default())
                .collect(),
            shift,
        }
    }

    /// The band of row `row`.
    #[inline]
    pub(crate) fn band(&self, row: u32) -> usize {
        (row >> self.shift) as usize
    }

    /// Rows per band (the last band may have fewer): `2^shift`.
    #[inline]
    pub(crate) fn shift(&self) -> u32 {
        self.shift
    }

    /// The pool holding row `row`'s lists.
    #[inline]
    pub(crate) fn of_row(&self, row: u32) -> &ListPool<D> {
        &self.pools[self.band(row)]
    }

    /// The pool holding row `row`'s lists, to change them.
    #[inline]
    pub(crate) fn of_row_mut(&mut self, row: u32) -> &mut ListPool<D> {
        let band = self.band(row);
        &mut self.pools[band]
    }

    /// Every band's pool, in row order.
    #[inline]
    pub(crate) fn pools(&self) -> &[ListPool<D>] {
        &self.pools
    }

    /// Every band's pool, in row order, to change them.
    #[inline]
    pub(crate) fn pools_mut(&mut self) -> &mut [ListPool<D>] {
        &mut self.pools
    }

    /// Nodes linked or unlinked in any band since its last compaction.
    pub(crate) fn relinked(&self) -> usize {
        self.pools.iter().map(ListPool::relinked).sum()
    }

    /// Reserves room for `additional` more nodes, shared evenly among the bands.
    pub(crate) fn reserve(&mut self, additional: usize) {
        let each = additional.div_ceil(self.pools.len());
        for pool in &mut self.pools {
            pool.reserve(each);
        }
    }

    /// Drops every list; keeps the memory.
    pub(crate) fn clear(&mut self) {
        self.pools.iter_mut().for_each(ListPool::clear);
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.pools.capacity() * size_of::<ListPool<D>>()
            + self.pools.iter().map(ListPool::memory_bytes).sum::<usize>()
    }

    /// [`ListPool::build`] for every band at once: `heads` holds the lists of `row_len` heads
    /// per row, row after row; `entries` is called twice and must emit the same
    /// `(list, item, data)` entries both times (lists as indices into `heads`).
    pub(crate) fn build(
        &mut self,
        heads: &mut [u32],
        row_len: usize,
        entries: impl Fn(&mut dyn FnMut(usize, u32, D)),
    ) {
        // Each list's node count, then its first node within its band's pool.
        let mut next = vec![0u32; heads.len()];
        entries(&mut |list, _, _| next[list] += 1);
        let band_len = row_len << self.shift;
        for ((pool, heads), next) in self
            .pools
            .iter_mut()
            .zip(heads.chunks_mut(band_len.max(1)))
            .zip(next.chunks_mut(band_len.max(1)))
        {
            let mut total = 0u32;
            for (head, count) in heads.iter_mut().zip(next.iter_mut()) {
                *head = if *count == 0 { NIL } else { total };
                (total, *count) = (total + *count, total);
            }
            pool.links.clear();
            pool.links.resize(total as usize, Link::default());
            pool.free = NIL;
            pool.in_use = total as usize;
            pool.relinked = 0;
        }
        let shift = self.shift;
        entries(&mut |list, item, data| {
            let band = list.checked_div(row_len).unwrap_or(0) >> shift;
            let at = next[list];
            next[list] += 1;
            self.pools[band].links[at as usize] = Link {
                next: at + 1,
                item,
                data,
            };
        });
        for (list, (&head, &end)) in heads.iter().zip(&next).enumerate() {
            if head != NIL {
                let band = (list / row_len.max(1)) >> shift;
                self.pools[band].links[end as usize - 1].next = NIL;
            }
        }
    }
}
