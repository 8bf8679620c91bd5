//! The tight grid: a coarser lattice whose cells list the irregular loose cells reaching them.

use crate::Scalar;
use crate::base::handle::NIL;
use crate::base::pool::{Items, ListPool};
use crate::grid::lattice::{CellRange, Lattice};

/// `maintain` lays the tight lists out in order once the loose cells listed or delisted since
/// the last time reach this fraction of the entries.
const PACK_ONE_IN: usize = 4;

/// The tight grid of a [`LooseGrid`](super::LooseGrid).
#[derive(Clone, Debug)]
pub(super) struct Tight<S> {
    pub(super) lattice: Lattice<S>,
    /// Row-major heads of the tight cells' lists.
    pub(super) heads: Vec<u32>,
    /// The lists: each node names an irregular loose cell.
    pub(super) lists: ListPool,
    /// Number of irregular loose cells (each listed in at least one tight cell).
    pub(super) irregular: usize,
}

impl<S: Scalar> Tight<S> {
    pub(super) fn new(lattice: Lattice<S>) -> Self {
        Self {
            lattice,
            heads: vec![NIL; lattice.len()],
            lists: ListPool::default(),
            irregular: 0,
        }
    }

    /// The irregular loose cells listed in tight cell `(tx, ty)`.
    #[inline]
    pub(super) fn listed(&self, tx: u32, ty: u32) -> Items<'_> {
        self.lists.items(self.heads[self.lattice.index(tx, ty)])
    }

    /// Moves loose cell `cell` from the tight cells of `was` to those of `now` (only the
    /// difference is touched); `None` for a cell not listed.
    #[inline(never)]
    pub(super) fn relist(&mut self, cell: usize, was: Option<CellRange>, now: Option<CellRange>) {
        if was == now {
            return;
        }
        match (was, now) {
            (None, Some(_)) => self.irregular += 1,
            (Some(_), None) => self.irregular -= 1,
            _ => {}
        }
        if let Some(range) = was {
            for (tx, ty) in outside(range, now) {
                let head = &mut self.heads[self.lattice.index(tx, ty)];
                let found = self.lists.remove(head, cell as u32);
                debug_assert!(found, "a loose cell is listed under its whole listing box");
            }
        }
        if let Some(range) = now {
            for (tx, ty) in outside(range, was) {
                let head = &mut self.heads[self.lattice.index(tx, ty)];
                self.lists.push(head, cell as u32);
            }
        }
    }

    /// Lays the lists out in order if enough of them changed since the last time.
    pub(super) fn pack_if_scattered(&mut self) {
        if self.lists.relinked() * PACK_ONE_IN >= self.lists.in_use().max(1) {
            let heads = &mut self.heads;
            self.lists.compact(|visit| heads.iter_mut().for_each(visit));
        }
    }

    pub(super) fn clear(&mut self) {
        self.heads.fill(NIL);
        self.lists.clear();
        self.irregular = 0;
    }

    pub(super) fn memory_bytes(&self) -> usize {
        self.heads.capacity() * size_of::<u32>() + self.lists.memory_bytes()
    }
}

/// The cells of `range` that are not in `other`, row by row; only those are visited (plus
/// one step per row), so a box growing by a strip costs the strip.
fn outside(range: CellRange, other: Option<CellRange>) -> impl Iterator<Item = (u32, u32)> {
    let end = range.x1 + 1;
    (range.y0..=range.y1).flat_map(move |ty| {
        let (left, right) = match other {
            Some(o) if o.y0 <= ty && ty <= o.y1 => (
                range.x0..end.min(o.x0.max(range.x0)),
                range.x0.max(o.x1 + 1).min(end)..end,
            ),
            _ => (range.x0..end, end..end),
        };
        left.chain(right).map(move |tx| (tx, ty))
    })
}
