//! All intersecting pairs: the tree joined with itself (the dual-tree self-join).
//!
//! The pairs below a branch are those within each child plus those across each two children;
//! the pairs across two disjoint subtrees whose loose boxes meet are found by splitting one of
//! them into its children, down to two leaves. Two elements in different leaves meet in
//! exactly one such call (the one for the two children of their deepest common ancestor that
//! hold them), so each pair is reported once with no bookkeeping, and a pair of elements with
//! far-apart centres is found all the same, since loose boxes enclose the whole elements.

use core::ops::ControlFlow;

use super::{LooseQuadtree, nothing};
use crate::base::handle::NIL;
use crate::base::slots::Slots;
use crate::contract::{Pairs, VisitsPairs};
use crate::tree::BRANCH;
use crate::{Aabb, Item, Point, Scalar};

/// Elements gathered on the stack at once from one leaf (crowded leaves at the depth limit
/// are taken in several rounds).
const CHUNK: usize = 64;

/// Candidate pairs waiting to be reported: room for one element against a full chunk, and
/// more.
const PENDING: usize = 4 * CHUNK;

/// Pairs whose items are looked up together before any is reported.
const REPORT: usize = 32;

/// One gathered element: its box, copied out of its list node, and its slot.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    slot: u32,
}

/// Closed box intersection without short-circuits: which comparison fails is unpredictable.
#[inline(always)]
fn meet<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    (a.min.x <= b.max.x) & (b.min.x <= a.max.x) & (a.min.y <= b.max.y) & (b.min.y <= a.max.y)
}

/// Half the perimeter of a box (never NaN, unlike the area of an unbounded one).
#[inline]
fn extent<S: Scalar>(b: &Aabb<S>) -> S {
    let s = b.size();
    s.x + s.y
}

/// Pairs found but not yet reported, and their reporting in batches.
struct Pending {
    pairs: [(u32, u32); PENDING],
    len: usize,
}

impl Pending {
    /// Records the pairs of `a` with each of `others` whose boxes meet (branch-free); there
    /// must be room for all of `others`.
    #[inline]
    fn test<S: Scalar>(&mut self, a: &Entry<S>, others: &[Entry<S>]) {
        let mut len = self.len;
        for b in others {
            self.pairs[len] = (a.slot, b.slot);
            len += usize::from(meet(&a.aabb, &b.aabb));
        }
        self.len = len;
    }

    /// Makes room for `room` more pairs, reporting the pending ones if needed.
    #[inline]
    fn reserve<S: Scalar, T, F>(
        &mut self,
        room: usize,
        slots: &Slots<S, T>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        if self.len + room > PENDING {
            self.flush(slots, visit)?;
        }
        ControlFlow::Continue(())
    }

    /// Reports the pending pairs: the items of a few dozen are looked up in one tight loop
    /// before any is reported, so that the cache misses of those lookups (pairs are found in
    /// space order, far from slot order) overlap.
    fn flush<S: Scalar, T, F>(&mut self, slots: &Slots<S, T>, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let n = core::mem::take(&mut self.len);
        for chunk in self.pairs[..n].chunks(REPORT) {
            let mut items = [None; REPORT];
            for (item, &(a, b)) in items.iter_mut().zip(chunk) {
                *item = Some((slots.item(a), slots.item(b)));
            }
            for &(a, b) in items.iter().flatten() {
                visit(a, b)?;
            }
        }
        ControlFlow::Continue(())
    }
}

/// One run of the pair pass: the tree, the visitor, and the stack memory of the whole pass
/// (the elements of the two leaves being paired, and the pairs found but not yet reported).
pub(super) struct PairPass<'t, S, T, F> {
    tree: &'t LooseQuadtree<S, T>,
    visit: F,
    own: [Entry<S>; CHUNK],
    other: [Entry<S>; CHUNK],
    pending: Pending,
}

impl<'t, S: Scalar, T, F> PairPass<'t, S, T, F>
where
    F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
{
    /// Runs `part` of the pass (the whole pass is `within(0)`) and reports what it found.
    #[inline]
    pub(super) fn run(
        tree: &'t LooseQuadtree<S, T>,
        visit: F,
        part: impl FnOnce(&mut Self) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut pass = Self {
            tree,
            visit,
            own: [Entry::default(); CHUNK],
            other: [Entry::default(); CHUNK],
            pending: Pending {
                pairs: [(0, 0); PENDING],
                len: 0,
            },
        };
        part(&mut pass)?;
        pass.pending.flush(&tree.slots, &mut pass.visit)
    }

    /// Every intersecting pair of elements below node `n`, each once.
    pub(super) fn within(&mut self, n: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let node = tree.base.nodes[n as usize];
        if node.count != BRANCH {
            return self.in_leaf(node.first_child);
        }
        let g = node.first_child;
        for c in g..g + 4 {
            self.within(c)?;
        }
        for a in g..g + 3 {
            for b in a + 1..g + 4 {
                if tree.loose[a as usize].intersects(&tree.loose[b as usize]) {
                    self.across(a, b)?;
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Every intersecting pair with one element below `a` and the other below `b` (two
    /// disjoint subtrees whose loose boxes meet), each once: the larger of two branches is
    /// split into its children whose boxes meet the other side's, until one side is a leaf,
    /// whose elements are then gathered once and taken down the other side.
    fn across(&mut self, a: u32, b: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let (na, nb) = (tree.base.nodes[a as usize], tree.base.nodes[b as usize]);
        let (la, lb) = (&tree.loose[a as usize], &tree.loose[b as usize]);
        let (split, keep) = match (na.count == BRANCH, nb.count == BRANCH) {
            (false, _) => return self.leaf_against(na.first_child, b),
            (true, false) => return self.leaf_against(nb.first_child, a),
            (true, true) if extent(la) >= extent(lb) => (na.first_child, b),
            (true, true) => (nb.first_child, a),
        };
        let kept = tree.loose[keep as usize];
        for c in split..split + 4 {
            if tree.loose[c as usize].intersects(&kept) {
                self.across(c, keep)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Every intersecting pair with one element in the leaf whose list is `head` and one
    /// below node `other`: the leaf's elements that meet `other`'s loose box are gathered (in
    /// chunks), and each chunk is taken down `other`.
    #[inline(never)]
    fn leaf_against(&mut self, head: u32, other: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let filter = tree.loose[other as usize];
        let mut at = head;
        while at != NIL {
            let (n, bounds, rest) = gather(tree, at, &filter, &mut self.own);
            at = rest;
            if n > 0 {
                self.chunk_against(n, &bounds, other)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Every intersecting pair of one of the `n` gathered elements (whose boxes' union is
    /// `bounds`) with an element below `node`: down the children whose loose box meets
    /// `bounds`, and at the leaves, their elements that meet `bounds`, gathered in chunks.
    #[inline(never)]
    fn chunk_against(&mut self, n: usize, bounds: &Aabb<S>, node: u32) -> ControlFlow<()> {
        let tree = self.tree;
        let nd = tree.base.nodes[node as usize];
        if nd.count == BRANCH {
            let g = nd.first_child;
            for c in g..g + 4 {
                if tree.loose[c as usize].intersects(bounds) {
                    self.chunk_against(n, bounds, c)?;
                }
            }
            return ControlFlow::Continue(());
        }
        let mut more = nd.first_child;
        while more != NIL {
            let (m, _, after) = gather(tree, more, bounds, &mut self.other);
            more = after;
            self.pairs_of_chunks(n, m)?;
        }
        ControlFlow::Continue(())
    }

    /// The intersecting pairs among the elements of one leaf (list `head`): each chunk of
    /// its elements against itself, then against the rest of the list.
    fn in_leaf(&mut self, head: u32) -> ControlFlow<()> {
        let (tree, everything) = (self.tree, everything());
        let mut at = head;
        while at != NIL {
            let (n, _, rest) = gather(tree, at, &everything, &mut self.own);
            at = rest;
            for i in 1..n {
                self.pending.reserve(i, &tree.slots, &mut self.visit)?;
                self.pending.test(&self.own[i], &self.own[..i]);
            }
            let mut more = rest;
            while more != NIL {
                let (m, _, after) = gather(tree, more, &everything, &mut self.other);
                more = after;
                self.pairs_of_chunks(n, m)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// Tests the first `n` gathered elements of one side against the first `m` of the other.
    #[inline(never)]
    fn pairs_of_chunks(&mut self, n: usize, m: usize) -> ControlFlow<()> {
        let (own, other) = if n <= m {
            (&self.own[..n], &self.other[..m])
        } else {
            (&self.other[..m], &self.own[..n])
        };
        for a in own {
            self.pending
                .reserve(other.len(), &self.tree.slots, &mut self.visit)?;
            self.pending.test(a, other);
        }
        ControlFlow::Continue(())
    }
}

/// The box that meets every box.
fn everything<S: Scalar>() -> Aabb<S> {
    Aabb {
        min: Point::new(-S::INFINITY, -S::INFINITY),
        max: Point::new(S::INFINITY, S::INFINITY),
    }
}

/// Copies into `into` the elements of the list from `at` on whose box meets `filter`, until
/// it is full; returns how many, their bounds, and where the list resumes.
#[inline]
fn gather<S: Scalar, T>(
    tree: &LooseQuadtree<S, T>,
    mut at: u32,
    filter: &Aabb<S>,
    into: &mut [Entry<S>; CHUNK],
) -> (usize, Aabb<S>, u32) {
    let (mut n, mut bounds) = (0, nothing());
    while at != NIL && n < CHUNK {
        let link = tree.links.link(at);
        into[n] = Entry {
            aabb: link.data,
            slot: link.item,
        };
        let keep = meet(&link.data, filter);
        if keep {
            bounds = bounds.union(&link.data);
        }
        n += usize::from(keep);
        at = link.next;
    }
    (n, bounds, at)
}

/// A part of the loose quadtree's pair pass: the pairs below a node, or across two disjoint
/// subtrees whose loose boxes meet.
#[cfg(feature = "rayon")]
#[derive(Clone, Copy)]
pub(crate) enum Part {
    Within(u32),
    Across(u32, u32),
}

/// Parts: cut breadth first, a branch into its four subtrees and the pairs of its children
/// whose loose boxes meet, until there are enough. The parts partition the pairs, so they
/// need no coordination.
#[cfg(feature = "rayon")]
impl<S: Scalar, T> crate::par::PairParts<S, T> for LooseQuadtree<S, T> {
    type Part = Part;
    type Scratch = ();

    fn pair_parts(&self, target: usize, parts: &mut Vec<Part>, _: &mut ()) {
        parts.clear();
        parts.push(Part::Within(0));
        while parts.len() < target {
            // One level down: each branch of the cut gives way to its first child, and its
            // other children and their meeting pairs join the end.
            let before = parts.len();
            for i in 0..before {
                let Part::Within(n) = parts[i] else { continue };
                let node = self.base.nodes[n as usize];
                if node.count != BRANCH {
                    continue;
                }
                let g = node.first_child;
                parts[i] = Part::Within(g);
                parts.extend((g + 1..g + 4).map(Part::Within));
                for a in g..g + 3 {
                    let meets =
                        |&b: &u32| self.loose[a as usize].intersects(&self.loose[b as usize]);
                    parts.extend((a + 1..g + 4).filter(meets).map(|b| Part::Across(a, b)));
                }
            }
            if parts.len() == before {
                break;
            }
        }
    }

    fn pairs_of_part<F>(&self, part: &Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        PairPass::run(self, visit, |pass| match *part {
            Part::Within(n) => pass.within(n),
            Part::Across(a, b) => pass.across(a, b),
        })
    }
}

impl<S: Scalar, T> Pairs<S, T> for LooseQuadtree<S, T> {
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, visit: F) -> ControlFlow<()> {
        PairPass::run(self, visit, |pass| pass.within(0))
    }
}
