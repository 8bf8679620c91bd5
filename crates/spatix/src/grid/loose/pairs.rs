//! All intersecting pairs, loose cell by loose cell.
//!
//! Every element is in exactly one loose cell, so every intersecting pair of elements belongs
//! to one loose cell, or to exactly one pair of loose cells whose regions meet. Each loose
//! cell tests its own elements among themselves, and each pair of loose cells is tested by
//! exactly one of the two:
//! * two regular cells (boxes within reach of their squares) can only meet when they are
//!   neighbours, so each regular cell takes its neighbours behind it in row-major order
//!   (west and the three below), reading the elements of theirs that face it from the bands
//!   saved while they were paired (see `bands.rs`) instead of walking their lists; when the
//!   reach lets regions meet cells further away, it takes its neighbours ahead of it instead,
//!   walking their lists;
//! * a regular cell takes the irregular cells listed in the tight cells under its square
//!   grown by the reach, each in the tight cell owning the lower-left corner of the overlap
//!   of that grown square and the irregular cell's listing box;
//! * two irregular cells are taken by the tight cell owning the lower-left corner of the
//!   overlap of their listing boxes, in a pass over the tight cells.
//!
//! No pair of loose cells is ever tested twice. The elements of a loose cell are copied to
//! the stack (sequential reads: `maintain` leaves every list one run of nodes), those of a
//! partner cell (or of a band) filtered by the other's region, and the pairs tested
//! branch-free, a band's elements only against the cell's elements near the side it faces;
//! hits are reported in batches through the slot table.

use core::ops::ControlFlow;

use super::LooseGrid;
use super::bands::{Band, Bands, CAP, Entry};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Aabb, Item, Point, Scalar};

/// Partner cells gathered before their elements are tested; more are taken in several
/// rounds.
const BLOCK: usize = 32;

/// Hits waiting to be reported: room for one element against a full round, and more.
const PENDING: usize = 4 * CAP;

/// A loose cell and its region (and, for an irregular cell listed in the current tight
/// cell, its `FIRST_COL | FIRST_ROW` bits there).
#[derive(Clone, Copy, Default)]
struct Listed<S> {
    region: Aabb<S>,
    cell: u32,
    first: u32,
}

/// An irregular cell's listing starts in the current tight cell's column.
const FIRST_COL: u32 = 1;
/// An irregular cell's listing starts in the current tight cell's row.
const FIRST_ROW: u32 = 2;
/// Both: a pair of irregular cells is handled in a tight cell when their flags together make
/// this (the later of their starting columns, and rows, is the tight cell's).
const BOTH: u32 = FIRST_COL | FIRST_ROW;

/// Whether two irregular cells listed in a tight cell meet and the tight cell owns the
/// corner of their listings' overlap.
#[inline]
fn owned_overlap<S: Scalar>(a: &Listed<S>, b: &Listed<S>) -> bool {
    (a.first | b.first == BOTH) & meet(&a.region, &b.region)
}

/// Closed box intersection without short-circuits: which comparison fails is unpredictable.
#[inline]
fn meet<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    (a.min.x <= b.max.x) & (b.min.x <= a.max.x) & (a.min.y <= b.max.y) & (b.min.y <= a.max.y)
}

/// The stack memory of one pair pass.
struct Scratch<S> {
    /// Partners of the loose cell being paired.
    partners: [Listed<S>; BLOCK],
    /// A block of the current tight cell's list.
    listed: [Listed<S>; BLOCK],
    /// The elements of the loose cell being paired.
    own: [Entry<S>; CAP],
    /// Those of them near its west side, and near its south side.
    own_west: [Entry<S>; CAP],
    own_south: [Entry<S>; CAP],
    /// Elements of the current partner that reach the paired cell's region.
    other: [Entry<S>; CAP],
    /// Hits not yet reported.
    pending: [(u32, u32); PENDING],
    pending_len: usize,
    /// How many elements of the paired cell `own` holds (`None` if they did not fit).
    own_len: Option<usize>,
    /// The bands of the cells behind the one being paired.
    bands: Bands<S>,
}

impl<S: Scalar> Scratch<S> {
    fn new() -> Self {
        Self {
            partners: [Listed::default(); BLOCK],
            listed: [Listed::default(); BLOCK],
            own: [Entry::default(); CAP],
            own_west: [Entry::default(); CAP],
            own_south: [Entry::default(); CAP],
            other: [Entry::default(); CAP],
            pending: [(0, 0); PENDING],
            pending_len: 0,
            own_len: None,
            bands: Bands::new(),
        }
    }

    /// Makes room for `room` more hits, reporting the pending ones if needed.
    #[inline]
    fn reserve<T, F>(&mut self, room: usize, slots: &Slots<S, T>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if self.pending_len + room > PENDING {
            self.flush(slots, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// Reports the pending hits.
    fn flush<T, F>(&mut self, slots: &Slots<S, T>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let n = core::mem::take(&mut self.pending_len);
        slots.visit_pairs(&self.pending[..n], visit)
    }
}

/// Tests `a` against every entry of `others`, appending the hits (branch-free) to `pending`,
/// which has room for them.
#[inline]
fn test_all<S: Scalar>(
    a: &Entry<S>,
    others: &[Entry<S>],
    pending: &mut [(u32, u32); PENDING],
    len: &mut usize,
) {
    let mut n = *len;
    for b in others {
        pending[n] = (a.slot, b.slot);
        n += usize::from(meet(&a.aabb, &b.aabb));
    }
    *len = n;
}

/// The cell-level state of one loose cell's pairing: the partners gathered so far, and
/// whether its own pairs are still to be tested.
struct Pairing<S> {
    cell: Listed<S>,
    partners: usize,
    own: bool,
}

impl<S: Scalar, T> LooseGrid<S, T> {
    /// Part `part` of `parts` of the pair pass: that share of the loose rows, then that share
    /// of the tight rows. Every pair is taken by exactly one loose cell or one tight cell,
    /// so any split is exact.
    #[inline]
    pub(super) fn pairs_in_band<F>(&self, part: u32, parts: u32, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut s = Scratch::new();
        let share = |n: u32| {
            let n = u64::from(n);
            let at = |k: u32| (n * u64::from(k) / u64::from(parts)) as u32;
            at(part)..at(part + 1)
        };
        let rows = share(self.loose.rows);
        let first = rows.start;
        for cy in rows {
            s.bands.start_row(cy > first);
            for cx in 0..self.loose.cols {
                self.pairs_of_cell(cx, cy, &mut s, &mut visit)?;
            }
        }
        if self.tight.irregular > 0 {
            for ty in share(self.tight.lattice.rows) {
                for tx in 0..self.tight.lattice.cols {
                    self.pairs_in_tight_cell(tx, ty, &mut s, &mut visit)?;
                }
            }
        }
        s.flush(&self.slots, &mut visit)
    }

    /// The pairs loose cell `(cx, cy)` takes: its own, and if it is regular, those with its
    /// regular neighbours behind it (ahead of it when regions reach past the neighbours) and
    /// with the irregular cells whose listings meet its square grown by the reach where the
    /// tight cell owns their corner.
    #[inline(never)]
    fn pairs_of_cell<F>(
        &self,
        cx: u32,
        cy: u32,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let cell = self.loose.index(cx, cy);
        if self.heads[cell] == NIL {
            s.bands.save_nothing(cx);
            return ControlFlow::Continue(());
        }
        let square = self.loose.square(cx, cy);
        let b = self.boxes[cell];
        let mut p = Pairing {
            cell: Listed {
                region: self.region_of(&b, &square),
                cell: cell as u32,
                first: 0,
            },
            partners: 0,
            own: true,
        };
        let regular = !self.is_irregular(&b, &square);
        // The neighbours behind whose bands were saved (and whether each is the west one),
        // paired once `own` is copied; the others are walked as partners.
        let mut saved = [(Band::Nothing, false); 4];
        if regular && self.pair_radius == 1 {
            let (cols, cx0) = (self.loose.cols, cx.saturating_sub(1));
            let mut behind = [None; 4];
            if cx > 0 {
                behind[0] = Some((s.bands.west(cx), cx - 1, cy, true));
            }
            if cy > 0 {
                for (at, x) in behind[1..].iter_mut().zip(cx0..=(cx + 1).min(cols - 1)) {
                    *at = Some((s.bands.below(x), x, cy - 1, false));
                }
            }
            for (k, (band, x, y, is_west)) in behind.into_iter().flatten().enumerate() {
                if band == Band::Walk {
                    self.offer_regular(&mut p, x, y, s, visit)?;
                } else {
                    saved[k] = (band, is_west);
                }
            }
        } else if regular {
            // Neighbours ahead: the rest of this row, then the rows above.
            let ahead = self.block(cx, cy, self.pair_radius);
            for (x, y) in ahead
                .cells()
                .filter(|&(x, y)| y > cy || (y == cy && x > cx))
            {
                self.offer_regular(&mut p, x, y, s, visit)?;
            }
        }
        if regular && self.tight.irregular > 0 {
            self.offer_irregular(&mut p, &square, s, visit)?;
        }
        self.pair_cell(&mut p, s, visit)?;
        // This cell's elements that can meet a band: those within `pad` of its west side
        // (for the west band) and of its south side (for the bands below).
        let sides = match s.own_len {
            Some(n) if saved.iter().any(|(b, _)| *b != Band::Nothing) => {
                let (west_to, south_to) = (square.min.x + self.pad(), square.min.y + self.pad());
                let (mut w, mut south) = (0, 0);
                for i in 0..n {
                    let e = s.own[i];
                    s.own_west[w] = e;
                    w += usize::from(e.aabb.min.x <= west_to);
                    s.own_south[south] = e;
                    south += usize::from(e.aabb.min.y <= south_to);
                }
                Some((w, south))
            }
            _ => None,
        };
        for (band, is_west) in saved {
            let Band::Saved { row, start, len } = band else {
                continue;
            };
            // The band's elements that reach this cell's region (branch-free), then their
            // pairs.
            let mut m = 0;
            for i in start..start + len {
                let e = s.bands.entry(row, i);
                s.other[m] = e;
                m += usize::from(meet(&e.aabb, &p.cell.region));
            }
            for i in 0..m {
                let e = s.other[i];
                match sides {
                    Some((w, south)) => {
                        let n = if is_west { w } else { south };
                        s.reserve(n, &self.slots, visit)?;
                        let own = if is_west { &s.own_west } else { &s.own_south };
                        test_all(&e, &own[..n], &mut s.pending, &mut s.pending_len);
                    }
                    None => {
                        // Too many to copy: walk this cell's list (reporting directly).
                        s.flush(&self.slots, visit)?;
                        let head = self.heads[p.cell.cell as usize];
                        self.pair_list(e.slot, &e.aabb, head, visit)?;
                    }
                }
            }
        }
        match s.own_len {
            _ if !regular || self.pair_radius != 1 => s.bands.save_nothing(cx),
            Some(n) => s.bands.save(cx, &s.own[..n], &square, self.pad()),
            None => s.bands.save_walk(cx),
        }
        ControlFlow::Continue(())
    }

    /// Reports the pairs of element `slot` (box `b`) with the elements of the list from node
    /// `at` on that meet it.
    fn pair_list<F>(&self, slot: u32, b: &Aabb<S>, mut at: u32, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        while at != NIL {
            let y = self.elements.link(at);
            at = y.next;
            if b.intersects(&y.data) {
                visit(self.slots.item(slot), self.slots.item(y.item))?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Adds regular loose cell `(x, y)` to the partners if it holds elements and its region
    /// meets the paired cell's.
    #[inline]
    fn offer_regular<F>(
        &self,
        p: &mut Pairing<S>,
        x: u32,
        y: u32,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let cell = self.loose.index(x, y);
        if self.heads[cell] == NIL {
            return ControlFlow::Continue(());
        }
        let square = self.loose.square(x, y);
        let b = &self.boxes[cell];
        if self.is_irregular(b, &square) {
            return ControlFlow::Continue(());
        }
        let region = self.region_of(b, &square);
        if meet(&region, &p.cell.region) {
            let partner = Listed {
                region,
                cell: cell as u32,
                first: 0,
            };
            self.add_partner(p, partner, s, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// Adds the irregular loose cells whose regions meet the paired (regular) cell's, each
    /// from the tight cell owning the lower-left corner of the overlap of its listing and the
    /// paired cell's square grown by the reach (which holds the paired cell's region).
    fn offer_irregular<F>(
        &self,
        p: &mut Pairing<S>,
        square: &Aabb<S>,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let pad = Aabb {
            min: Point::new(square.min.x - self.pad(), square.min.y - self.pad()),
            max: Point::new(square.max.x + self.pad(), square.max.y + self.pad()),
        };
        let range = self.tight.lattice.range(&pad);
        for (tx, ty) in range.cells() {
            for other in self.tight.listed(tx, ty) {
                let other = other as usize;
                if self.heads[other] == NIL {
                    continue;
                }
                let region = self.region(other);
                if !meet(&region, &p.cell.region) {
                    continue;
                }
                let (x0, y0) = self.listing_start(other);
                if x0.max(range.x0) == tx && y0.max(range.y0) == ty {
                    let partner = Listed {
                        region,
                        cell: other as u32,
                        first: 0,
                    };
                    self.add_partner(p, partner, s, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs of irregular loose cells tight cell `(tx, ty)` owns: both listed here, their
    /// regions meeting, the corner of their listings' overlap here. A long list is paired in
    /// blocks: each block among itself, then against the rest of the list.
    fn pairs_in_tight_cell<F>(
        &self,
        tx: u32,
        ty: u32,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let t = &self.tight;
        let mut start = t.heads[t.lattice.index(tx, ty)];
        while start != NIL {
            let mut n = 0;
            let mut at = start;
            while at != NIL && n < BLOCK {
                let link = t.lists.link(at);
                s.listed[n] = self.listed(link.item, tx, ty);
                at = link.next;
                n += 1;
            }
            for i in 0..n {
                let a = s.listed[i];
                let mut p = Pairing {
                    cell: a,
                    partners: 0,
                    own: false,
                };
                for j in i + 1..n {
                    if owned_overlap(&a, &s.listed[j]) {
                        let partner = s.listed[j];
                        self.add_partner(&mut p, partner, s, visit)?;
                    }
                }
                let mut rest = at;
                while rest != NIL {
                    let link = t.lists.link(rest);
                    rest = link.next;
                    let b = self.listed(link.item, tx, ty);
                    if owned_overlap(&a, &b) {
                        self.add_partner(&mut p, b, s, visit)?;
                    }
                }
                self.pair_cell(&mut p, s, visit)?;
            }
            start = at;
        }
        ControlFlow::Continue(())
    }

    /// Irregular loose cell `cell` as listed in tight cell `(tx, ty)`.
    #[inline]
    fn listed(&self, cell: u32, tx: u32, ty: u32) -> Listed<S> {
        let (x0, y0) = self.listing_start(cell as usize);
        Listed {
            region: self.region(cell as usize),
            cell,
            first: (u32::from(x0 == tx) * FIRST_COL) | (u32::from(y0 == ty) * FIRST_ROW),
        }
    }

    /// Adds a partner, pairing the gathered ones first if there is no room left.
    #[inline]
    fn add_partner<F>(
        &self,
        p: &mut Pairing<S>,
        partner: Listed<S>,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if p.partners == BLOCK {
            self.pair_cell(p, s, visit)?;
        }
        s.partners[p.partners] = partner;
        p.partners += 1;
        ControlFlow::Continue(())
    }

    /// The pairs among the paired cell's elements (the first time), and between them and
    /// those of the partners gathered; then forgets those partners.
    #[inline(never)]
    fn pair_cell<F>(&self, p: &mut Pairing<S>, s: &mut Scratch<S>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let (own, partners) = (p.own, p.partners);
        p.own = false;
        p.partners = 0;
        let a = &p.cell;
        let mut n = 0;
        let mut at = self.heads[a.cell as usize];
        while at != NIL && n < CAP {
            let link = self.elements.link(at);
            s.own[n] = Entry {
                aabb: link.data,
                slot: link.item,
            };
            at = link.next;
            n += 1;
        }
        if at != NIL {
            s.own_len = None;
            return self.pair_crowded(a, own, partners, s, visit);
        }
        s.own_len = Some(n);
        if own {
            for i in 0..n {
                s.reserve(n, &self.slots, visit)?;
                let e = s.own[i];
                test_all(&e, &s.own[i + 1..n], &mut s.pending, &mut s.pending_len);
            }
        }
        for p in 0..partners {
            let b = s.partners[p];
            let mut at = self.heads[b.cell as usize];
            while at != NIL {
                // The partner's elements that reach this cell's region, in rounds.
                let mut m = 0;
                while at != NIL && m < CAP {
                    let link = self.elements.link(at);
                    s.other[m] = Entry {
                        aabb: link.data,
                        slot: link.item,
                    };
                    m += usize::from(meet(&link.data, &a.region));
                    at = link.next;
                }
                for i in 0..m {
                    s.reserve(n, &self.slots, visit)?;
                    let e = s.other[i];
                    test_all(&e, &s.own[..n], &mut s.pending, &mut s.pending_len);
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// [`LooseGrid::pair_cell`] for a loose cell too crowded to copy: its list is walked.
    fn pair_crowded<F>(
        &self,
        a: &Listed<S>,
        own: bool,
        partners: usize,
        s: &mut Scratch<S>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        // Report what is pending first: the walk below reports directly.
        s.flush(&self.slots, visit)?;
        let mut at = self.heads[a.cell as usize];
        while at != NIL {
            let x = self.elements.link(at);
            at = x.next;
            if own {
                self.pair_list(x.item, &x.data, x.next, visit)?;
            }
            for b in &s.partners[..partners] {
                if x.data.intersects(&b.region) {
                    self.pair_list(x.item, &x.data, self.heads[b.cell as usize], visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

/// Parts: part `k` of `n` is that share of the loose rows and that share of the tight rows.
/// Every pair is taken by exactly one loose or tight cell, so the parts need no coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for LooseGrid<S, T> {
    type Part = (u32, u32);
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<(u32, u32)>, _: &mut ()) {
        let count = (target as u32).clamp(1, self.loose.rows.max(1));
        parts.clear();
        parts.extend((0..count).map(|k| (k, count)));
    }

    fn pairs_of_part<F>(&self, &(part, parts): &(u32, u32), visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        self.pairs_in_band(part, parts, visit)
    }
}

impl<S: Scalar, T> Pairs<S, T> for LooseGrid<S, T> {
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()> {
        self.pairs_in_band(0, 1, visit)
    }
}
