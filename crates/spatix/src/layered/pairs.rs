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
