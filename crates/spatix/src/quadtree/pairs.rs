//! All intersecting pairs, leaf by leaf.

use core::ops::ControlFlow;

use super::{BRANCH, Frame, Quadtree, Stack};
use crate::handle::NIL;
use crate::{Aabb, Item, Point, Scalar};

/// Leaves up to this size are copied to the stack before their pairs are tested.
const GATHER: usize = 48;

/// An element of the leaf being paired: its box, the lower-left corner of its clamped box
/// and its slot.
#[derive(Clone, Copy, Default)]
struct Entry<S> {
    aabb: Aabb<S>,
    corner: Point<S>,
    slot: u32,
}

/// Whether two elements of leaf `f` intersect and `f` is the leaf that reports them.
#[inline(always)]
fn hit<S: Scalar>(f: &Frame<S>, a: &Entry<S>, b: &Entry<S>) -> bool {
    a.aabb.intersects(&b.aabb)
        && f.owns(Point::new(
            a.corner.x.max_s(b.corner.x),
            a.corner.y.max_s(b.corner.y),
        ))
}

impl<S: Scalar, T> Quadtree<S, T> {
    /// The seed's cache-friendly pass over the leaves below `start`: walk them in tree order and test the pairs
    /// within each leaf. A pair listed together in several leaves is reported only by the
    /// leaf that owns the lower-left corner of the intersection of their clamped boxes, so
    /// each exactly once, with no per-call memory.
    pub(super) fn pairs_below<F>(&self, start: Frame<S>, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut buf = [Entry::default(); GATHER];
        let mut stack = Stack::new();
        stack.push(start);
        while let Some(f) = stack.pop() {
            let node = self.nodes[f.node as usize];
            if node.count == BRANCH {
                for child in f.children(node.first_child).into_iter().rev() {
                    stack.push(child);
                }
                continue;
            }
            let n = node.count as usize;
            if n < 2 {
                continue;
            }
            let entry = |slot: u32| {
                let aabb = *self.slots.aabb(slot);
                Entry {
                    aabb,
                    corner: self.world.closest_point(aabb.min),
                    slot,
                }
            };
            if n <= GATHER {
                for (dst, slot) in buf.iter_mut().zip(self.links.items(node.first_child)) {
                    *dst = entry(slot);
                }
                for i in 1..n {
                    let a = buf[i];
                    for b in &buf[..i] {
                        if hit(&f, &a, b) {
                            visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                        }
                    }
                }
            } else {
                // A crowded leaf at the depth limit: walk the list against its own tail.
                let mut at = node.first_child;
                while at != NIL {
                    let link = self.links.link(at);
                    let a = entry(link.item);
                    for slot in self.links.items(link.next) {
                        let b = entry(slot);
                        if hit(&f, &a, &b) {
                            visit(self.slots.item(a.slot), self.slots.item(b.slot))?;
                        }
                    }
                    at = link.next;
                }
            }
        }
        ControlFlow::Continue(())
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T: Sync> crate::ParallelPairs<S, T> for Quadtree<S, T> {
    /// Splits the tree into subtrees (breadth first, until there are about eight per
    /// thread) and runs the leaf pass on each in parallel; a pair is reported by the leaf
    /// that owns it, so the parts need no coordination.
    fn par_for_each_pair<F>(&self, visit: F) -> ControlFlow<()>
    where
        F: Fn(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()> + Sync,
    {
        use rayon::prelude::*;
        let target = rayon::current_num_threads() * 8;
        let mut parts = vec![Frame::root(self.world)];
        while parts.len() < target {
            let mut next = Vec::with_capacity(parts.len() * 4);
            for f in &parts {
                let node = self.nodes[f.node as usize];
                if node.count == BRANCH {
                    next.extend(f.children(node.first_child));
                } else {
                    next.push(*f);
                }
            }
            if next.len() == parts.len() {
                break;
            }
            parts = next;
        }
        parts
            .par_iter()
            .try_for_each(|f| self.pairs_below(*f, &visit))
    }
}
