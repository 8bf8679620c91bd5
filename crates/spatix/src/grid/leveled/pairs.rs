//! All intersecting pairs: within each level, each cell against itself and its forward
//! neighbours; across levels, each element of a coarser level against the finer levels' cells
//! around it.
//!
//! Every element is filed once, so each pair is found once: within a level, two elements in
//! the same cell are paired in that cell, and two in neighbouring cells only from the one
//! that comes first in row order (a cell pairs with its east neighbour and its three
//! neighbours in the row above: half the 8-neighbourhood). Cells are at least `reach` wide,
//! so intersecting elements of a level are never farther apart than that. Across levels, a
//! pair is found only from its coarser element, which searches each finer level as an area
//! query would.

use core::ops::{ControlFlow, Range};

use super::{Corner, Level, Leveled};
use crate::base::handle::NIL;
use crate::contract::probe::Quiet;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Item, Point, Scalar};

/// Entries of a cell gathered on the stack at once; a more crowded cell is paired in blocks.
const BLOCK: usize = 64;

/// Candidate pairs (corners close enough) collected before their true boxes are read and
/// tested, in one tight loop whose cache misses overlap.
const CANDIDATES: usize = 512;

/// Whether two corners of a level are close enough for their boxes to intersect: both are at
/// most `reach` apart on each axis. Rounding is monotone, so this never rejects a pair whose
/// exact difference is within `reach`. Written without short-circuits, which would branch
/// unpredictably.
#[inline]
fn near<S: Scalar>(a: Point<S>, b: Point<S>, reach: S) -> bool {
    ((a.x - b.x).abs_s() <= reach) & ((a.y - b.y).abs_s() <= reach)
}

/// A block of a cell's entries paired with other lists ([`Leveled::against`]), and where
/// the candidates go.
struct Against<'c, S> {
    block: &'c [(Point<S>, u32)],
    reach: S,
    candidates: &'c mut Candidates,
}

/// Pairs of slots whose corners are near, waiting for the exact test.
struct Candidates {
    pairs: [(u32, u32); CANDIDATES],
    len: usize,
}

impl Candidates {
    /// Appends the pairs of `b` with the entries of `block` whose corners are near it
    /// (branch-free, the length kept in a register); the caller leaves room for a block.
    #[inline]
    fn near_pairs<S: Scalar>(&mut self, block: &[(Point<S>, u32)], b: (Point<S>, u32), reach: S) {
        let mut len = self.len;
        for &(a, sa) in block {
            self.pairs[len] = (sa, b.1);
            len += usize::from(near(a, b.0, reach));
        }
        self.len = len;
    }
}

impl<S: Scalar, T> Leveled<S, T> {
    /// The pairs owned by rows `rows` of level `i`: those within the level whose first
    /// element (in cell order) lies in these rows, and those of the level's elements in
    /// these rows with the elements of finer levels. Any split of the rows is exact.
    pub(crate) fn pairs_in_rows<F>(
        &self,
        i: usize,
        rows: Range<u32>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let level = &self.levels[i];
        if level.len == 0 {
            return ControlFlow::Continue(());
        }
        let mut candidates = Candidates {
            pairs: [(0, 0); CANDIDATES],
            len: 0,
        };
        for cy in rows.clone() {
            self.pairs_in_row(level, cy, &mut candidates, visit)?;
        }
        self.test(&mut candidates, visit)?;
        let finer = &self.levels[..i];
        if finer.iter().all(|l| l.len == 0) {
            return ControlFlow::Continue(());
        }
        for cy in rows {
            let pool = level.pool(cy);
            for &head in level.row_heads(cy).unwrap_or_default() {
                let mut at = head;
                while at != NIL {
                    let node = pool.link(at);
                    at = node.next;
                    self.pairs_across(node.item, finer, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The pairs of one row of a level: each cell with itself and its forward neighbours.
    fn pairs_in_row<F>(
        &self,
        level: &Level<S>,
        cy: u32,
        candidates: &mut Candidates,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let Some(row) = level.row_heads(cy) else {
            return ControlFlow::Continue(());
        };
        let nodes = level.pool(cy).nodes();
        let (above, above_nodes) = if cy + 1 < level.lattice.rows {
            (level.row_heads(cy + 1), level.pool(cy + 1).nodes())
        } else {
            (None, nodes)
        };
        let head_at = |heads: Option<&[u32]>, cx: Option<usize>| {
            heads
                .zip(cx)
                .and_then(|(h, x)| h.get(x).copied())
                .unwrap_or(NIL)
        };
        let reach = level.reach;
        let mut block = [(Point::<S>::default(), 0u32); BLOCK];
        for (cx, &head) in row.iter().enumerate() {
            if head == NIL {
                continue;
            }
            let east = head_at(Some(row), Some(cx + 1));
            let north = [
                head_at(above, cx.checked_sub(1)),
                head_at(above, Some(cx)),
                head_at(above, Some(cx + 1)),
            ];
            let mut start = head;
            while start != NIL {
                let mut n = 0;
                let mut at = start;
                while at != NIL && n < BLOCK {
                    let node = nodes[at as usize];
                    block[n] = (node.data, node.item);
                    at = node.next;
                    n += 1;
                }
                let block = &block[..n];
                for (j, &a) in block.iter().enumerate() {
                    if candidates.len + BLOCK > CANDIDATES {
                        self.test(candidates, visit)?;
                    }
                    candidates.near_pairs(&block[j + 1..], a, reach);
                }
                // The rest of this cell's list (later blocks), then the neighbours: the
                // east one in this row's band, the three north in the next row's.
                start = at;
                let mut against = Against {
                    block,
                    reach,
                    candidates: &mut *candidates,
                };
                self.against(&mut against, nodes, start, visit)?;
                self.against(&mut against, nodes, east, visit)?;
                for list in north {
                    self.against(&mut against, above_nodes, list, visit)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// The candidate pairs of `a.block`'s entries with those of the list from `list` among
    /// `nodes`.
    #[inline(always)]
    fn against<F>(
        &self,
        a: &mut Against<'_, S>,
        nodes: &[Corner<S>],
        list: u32,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut at = list;
        while at != NIL {
            let node = nodes[at as usize];
            at = node.next;
            if a.candidates.len + BLOCK > CANDIDATES {
                self.test(a.candidates, visit)?;
            }
            a.candidates
                .near_pairs(a.block, (node.data, node.item), a.reach);
        }
        ControlFlow::Continue(())
    }

    /// Reads the candidates' boxes, reports those that intersect, and empties the list.
    #[inline]
    fn test<F>(&self, candidates: &mut Candidates, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let len = core::mem::take(&mut candidates.len);
        // First keep the pairs that intersect, without branching (so that the box reads of
        // many candidates are in flight at once), then report them.
        let mut kept = 0;
        for at in 0..len {
            let (a, b) = candidates.pairs[at];
            candidates.pairs[kept] = (a, b);
            kept += usize::from(self.slots.aabb(a).intersects_branchless(self.slots.aabb(b)));
        }
        for &(a, b) in &candidates.pairs[..kept] {
            visit(self.slots.item(a), self.slots.item(b))?;
        }
        ControlFlow::Continue(())
    }

    /// The pairs of one element with the elements of the finer levels: an area query with its
    /// box on each (a corner inside the box decides without reading the other box).
    fn pairs_across<F>(&self, slot: u32, finer: &[Level<S>], visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let e = self.slots.aabb(slot);
        for level in finer.iter().filter(|l| l.len > 0) {
            self.near_area(level, e, &mut Quiet, |node| {
                if e.contains_point(node.data) || self.slots.aabb(node.item).intersects(e) {
                    visit(self.slots.item(slot), self.slots.item(node.item))?;
                }
                ControlFlow::Continue(())
            })?;
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Pairs<S, T> for &Leveled<S, T> {
    /// Every intersecting pair, each exactly once.
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, mut visit: F) -> ControlFlow<()> {
        for (i, level) in self.levels.iter().enumerate() {
            self.pairs_in_rows(i, 0..level.lattice.rows, &mut visit)?;
        }
        ControlFlow::Continue(())
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T> Leveled<S, T> {
    /// Parts of the pair pass: each level's rows cut into bands; every band reports only the
    /// pairs it owns (see [`Leveled::pairs_in_rows`]), so the bands need no coordination.
    pub(crate) fn pair_parts(&self, target: usize, parts: &mut Vec<(usize, Range<u32>)>) {
        let levels = self.levels.iter().enumerate().filter(|(_, l)| l.len > 0);
        parts.clear();
        parts.extend(levels.flat_map(|(i, l)| {
            let bands = crate::par::even_ranges(l.lattice.rows, target);
            bands.map(move |rows| (i, rows))
        }));
    }
}
