//! Pairs: each part's own, then those across two parts, found by querying one part with the
//! boxes of the other. Elements of the static part marked gone are skipped.

use core::ops::ControlFlow;

use super::Layered;
use crate::contract::{Pairs, VisitsPairs};
use crate::{Item, Scalar, SpatialIndex, SpatialQuery, StaticIndex};

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Pairs<S, T> for Layered<S, T, A, L, St>
{
    /// Each part's own pairs, then the pairs across each two parts.
    #[inline]
    fn do_for_each_pair<F: VisitsPairs<S, T>>(&self, mut visit: F) -> ControlFlow<()> {
        let mut report = |a: Item<'_, S, u32>, b: Item<'_, S, u32>| {
            visit(self.item(a.value), self.item(b.value))
        };
        self.agents.for_each_pair(&mut report)?;
        self.large.for_each_pair(&mut report)?;
        across(&self.agents, &self.large, &mut report)?;
        // The static part's elements come second in each of its pairs.
        let mut built = |a: Item<'_, S, u32>, b: Item<'_, S, u32>| {
            if self.is_built(&b) {
                report(a, b)
            } else {
                ControlFlow::Continue(())
            }
        };
        across(&self.agents, &self.statics, &mut built)?;
        across(&self.large, &self.statics, &mut built)?;
        self.statics.for_each_pair(|a, b| {
            if self.is_built(&a) {
                built(a, b)
            } else {
                ControlFlow::Continue(())
            }
        })
    }
}

/// Every intersecting pair of an element of `p` and one of `q`: each element of the smaller
/// of the two is a query on the other.
fn across<S, P, Q, F>(p: &P, q: &Q, report: &mut F) -> ControlFlow<()>
where
    S: Scalar,
    P: SpatialQuery<S, u32>,
    Q: SpatialQuery<S, u32>,
    F: FnMut(Item<'_, S, u32>, Item<'_, S, u32>) -> ControlFlow<()>,
{
    if p.len() <= q.len() {
        for a in p.iter() {
            q.query(&a.aabb, |b| report(a, b))?;
        }
    } else {
        for b in q.iter() {
            p.query(&b.aabb, |a| report(a, b))?;
        }
    }
    ControlFlow::Continue(())
}

/// One part of [`Layered`]'s parallel pair pass: a part of one part's own pass, or a run of
/// layered slots whose elements meet the other parts.
#[cfg(feature = "rayon")]
#[derive(Clone, Debug)]
pub(crate) enum LayeredPart<PA, PL, PS> {
    Agents(PA),
    Large(PL),
    Static(PS),
    /// The elements of these layered slots, each against the parts it meets across (as
    /// [`across`] pairs them: from the smaller part of each two).
    Across(core::ops::Range<u32>),
}

/// The parallel pair pass: each part's own parts, and runs of layered slots for the pairs
/// across parts.
#[cfg(feature = "rayon")]
impl<S, T, A, L, St> crate::par::PairParts<S, T> for Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32> + crate::par::PairParts<S, u32>,
    L: SpatialIndex<S, u32> + crate::par::PairParts<S, u32>,
    St: StaticIndex<S, u32> + crate::par::PairParts<S, u32>,
{
    type Part = LayeredPart<A::Part, L::Part, St::Part>;
    /// The parts' lists of parts (and their own scratch), kept between passes.
    type Scratch = (
        (Vec<A::Part>, A::Scratch),
        (Vec<L::Part>, L::Scratch),
        (Vec<St::Part>, St::Scratch),
    );

    fn pair_parts(&self, target: usize, parts: &mut Vec<Self::Part>, scratch: &mut Self::Scratch) {
        let ((a, sa), (l, sl), (st, sst)) = scratch;
        parts.clear();
        self.agents.pair_parts(target, a, sa);
        parts.extend(a.drain(..).map(LayeredPart::Agents));
        self.large.pair_parts(target, l, sl);
        parts.extend(l.drain(..).map(LayeredPart::Large));
        self.statics.pair_parts(target, st, sst);
        parts.extend(st.drain(..).map(LayeredPart::Static));
        let slots = self.routes.len() as u32;
        parts.extend(crate::par::even_ranges(slots, target).map(LayeredPart::Across));
    }

    fn pairs_of_part<F>(&self, part: &Self::Part, visit: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, Item<'_, S, T>) -> ControlFlow<()>,
    {
        let mut report = |a: Item<'_, S, u32>, b: Item<'_, S, u32>| {
            visit(self.item(a.value), self.item(b.value))
        };
        match part {
            LayeredPart::Agents(p) => self.agents.pairs_of_part(p, &mut report),
            LayeredPart::Large(p) => self.large.pairs_of_part(p, &mut report),
            LayeredPart::Static(p) => self.statics.pairs_of_part(p, &mut |a, b| {
                if self.is_built(&a) && self.is_built(&b) {
                    report(a, b)
                } else {
                    ControlFlow::Continue(())
                }
            }),
            LayeredPart::Across(slots) => self.across_slots(slots.clone(), &mut report),
        }
    }
}

#[cfg(feature = "rayon")]
impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Layered<S, T, A, L, St>
{
    /// The pairs across parts of the elements in layered slots `slots`: each element of the
    /// smaller part of each two parts (as [`across`] chooses it) queries the other part with
    /// its box; static elements no longer built are skipped.
    fn across_slots<F>(&self, slots: core::ops::Range<u32>, report: &mut F) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, u32>, Item<'_, S, u32>) -> ControlFlow<()>,
    {
        let (agents, large, statics) = (self.agents.len(), self.large.len(), self.statics.len());
        for slot in slots {
            if !self.slots.is_live(slot) {
                continue;
            }
            let route = self.routes[slot as usize];
            let aabb = self.slots.aabb(slot);
            let me = Item {
                handle: route.inner,
                aabb: *aabb,
                value: &slot,
            };
            // The static part's elements that are still built, met by `me`.
            let with_built = |report: &mut F| {
                self.statics.query(aabb, |b| {
                    if self.is_built(&b) {
                        report(me, b)
                    } else {
                        ControlFlow::Continue(())
                    }
                })
            };
            match route.part {
                super::Part::Agents => {
                    if agents <= large {
                        self.large.query(aabb, |b| report(me, b))?;
                    }
                    if agents <= statics {
                        with_built(report)?;
                    }
                }
                super::Part::Large => {
                    if agents > large {
                        self.agents.query(aabb, |b| report(me, b))?;
                    }
                    if large <= statics {
                        with_built(report)?;
                    }
                }
                super::Part::Static => {
                    if agents > statics {
                        self.agents.query(aabb, |b| report(me, b))?;
                    }
                    if large > statics {
                        self.large.query(aabb, |b| report(me, b))?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}
