//! Every intersecting pair, by a simultaneous traversal of the tree with itself.

use core::ops::ControlFlow;

use super::{Tree, bits, overlapping};
use crate::contract::{Pairs, VisitsPairs};
use crate::{Item, Scalar};

impl<S: Scalar, T> Tree<'_, S, T> {
    /// The pairs a call reports: at level 0 a pair of elements (or nothing, for one element
    /// alone), above it the pairs of the calls it makes one level down ([`Self::calls`]).
    /// Recursion is as deep as the tree; the calls of level 1 make theirs (pairs of
    /// elements) in their own loop, with no recursive call per pair (one per pair cost the
    /// rebuilt frame 6%).
    pub(super) fn pairs_of<F>(&self, call: Call, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        match call {
            Call::Within(0, _) => ControlFlow::Continue(()),
            Call::Across(0, i, j) => visit(self.elements.at(i), self.elements.at(j)),
            Call::Within(1, _) | Call::Across(1, ..) => self.calls(call, |below| match below {
                Call::Across(_, i, j) => visit(self.elements.at(i), self.elements.at(j)),
                Call::Within(..) => ControlFlow::Continue(()),
            }),
            _ => self.calls(call, |below| self.pairs_of(below, visit)),
        }
    }

    /// The calls one level down that `call` (above level 0) makes, in order:
    /// - the pairs beneath a node are those beneath each child, and those across each two
    ///   children whose boxes intersect (each unordered pair of children once, so each pair
    ///   of elements once);
    /// - the pairs across two nodes whose boxes intersect are those across each child of the
    ///   one and child of the other that intersect: only the children of `a` that meet
    ///   `b`'s box, and those of `b` that meet `a`'s, can be part of a pair.
    #[inline]
    fn calls(&self, call: Call, mut make: impl FnMut(Call) -> ControlFlow<()>) -> ControlFlow<()> {
        match call {
            Call::Within(level, node) => {
                let (first, end) = self.children(level, node);
                let below = &self.level(level as usize - 1)[first as usize..end as usize];
                for (i, a) in (first..).zip(below) {
                    make(Call::Within(level - 1, i))?;
                    let later = &below[(i - first + 1) as usize..];
                    for j in bits(overlapping(later, a)) {
                        make(Call::Across(level - 1, i, i + 1 + j))?;
                    }
                }
            }
            Call::Across(level, a, b) => {
                let nodes = self.level(level as usize);
                let (box_a, box_b) = (&nodes[a as usize], &nodes[b as usize]);
                let kids = self.level(level as usize - 1);
                let (a0, a1) = self.children(level, a);
                let (b0, b1) = self.children(level, b);
                let near_b = overlapping(&kids[a0 as usize..a1 as usize], box_b);
                let near_a = overlapping(&kids[b0 as usize..b1 as usize], box_a);
                for i in bits(near_b) {
                    let i = a0 + i;
                    let kid = &kids[i as usize];
                    for j in bits(near_a) {
                        let j = b0 + j;
                        if kids[j as usize].intersects(kid) {
                            make(Call::Across(level - 1, i, j))?;
                        }
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Pairs<S, T> for Tree<'_, S, T> {
    /// The pairs among the elements beneath the root.
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, mut visit: F) -> ControlFlow<()> {
        if self.root().is_none() {
            return ControlFlow::Continue(());
        }
        self.pairs_of(Call::Within(self.depth(), 0), &mut visit)
    }
}

/// One call of the pair recursion (and a part of the parallel pass): the pairs beneath node
/// `node` of level `level`, or across nodes `a` and `b` of level `level` whose boxes meet. At
/// level 0 the nodes are elements.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Call {
    /// The pairs beneath a node: `(level, node)`.
    Within(u32, u32),
    /// The pairs across two nodes whose boxes meet: `(level, a, b)`.
    Across(u32, u32, u32),
}

/// Parts: the recursion unrolled from the root down, a level at a time, until there are at
/// least `target` parts or the parts reach the nodes above the elements. Each part is a call
/// the recursion makes, and together they make every call it makes below them, so every
/// pair is reported once.
impl<S: Scalar, T> Tree<'_, S, T> {
    /// The parts of the pair pass (`PairParts::pair_parts`): the calls of the recursion,
    /// unrolled from the root a level at a time until there are `target` of them.
    #[cfg(feature = "rayon")]
    pub(super) fn pair_parts(&self, target: usize, parts: &mut Vec<Call>) {
        parts.clear();
        if self.root().is_none() {
            return;
        }
        let mut level = self.depth();
        parts.push(Call::Within(level, 0));
        while parts.len() < target && level > 1 {
            let old = parts.len();
            for k in 0..old {
                let _ = self.calls(parts[k], |below| {
                    parts.push(below);
                    ControlFlow::Continue(())
                });
            }
            parts.drain(..old);
            level -= 1;
        }
    }
}

/// The parallel pair pass over an index or a view: the same calls on the same tree.
macro_rules! pair_parts {
    (impl<$($lt:lifetime)?> $structure:ty) => {
        #[cfg(feature = "rayon")]
        impl<$($lt,)? S: $crate::Scalar, T> $crate::par::PairParts<S, T> for $structure {
            type Part = $crate::packed::pairs::Call;
            type Scratch = ();

            fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>, _: &mut ()) {
                self.tree().pair_parts(target, parts);
            }

            fn pairs_of_part<F>(&self, part: &Self::Part, visit: &mut F) -> core::ops::ControlFlow<()>
            where
                F: FnMut($crate::Item<'_, S, T>, $crate::Item<'_, S, T>) -> core::ops::ControlFlow<()>,
            {
                self.tree().pairs_of(*part, visit)
            }
        }

        #[cfg(feature = "rayon")]
        impl<$($lt,)? S: $crate::Scalar, T> $crate::par::UpdateParts<S, T> for $structure {}
    };
}
#[cfg(feature = "views")]
pub(super) use pair_parts;

pair_parts!(impl<> super::PackedIndex<S, T>);
