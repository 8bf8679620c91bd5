//! The structural self-check.

use super::{Layered, Moving, Part, on_part};
use crate::contract::Validates;
use crate::{Error, Scalar, SpatialIndex, StaticIndex};

impl<S: Scalar, T, A: SpatialIndex<S, u32>, L: SpatialIndex<S, u32>, St: StaticIndex<S, u32>>
    Validates for Layered<S, T, A, L, St>
{
    /// Every part is consistent; every live element is in the part its route names, under
    /// its route's handle, with its layered slot as value and the same box; an agent fits the
    /// threshold; only static elements are in the static part; the counts of static elements
    /// waiting and of those marked gone in the static part are right; the parts hold nothing
    /// else.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        self.agents.check_invariants()?;
        self.large.check_invariants()?;
        self.statics.check_invariants()?;
        let fail = |why: String| Err(Error::InvariantViolated(why));
        if self.dead > self.statics.len() {
            return fail(format!(
                "{} elements of the static part's {} are marked gone",
                self.dead,
                self.statics.len()
            ));
        }
        let (agents, large, built) = self.part_lens();
        if agents + large + built != self.slots.len() {
            return fail(format!(
                "the parts hold {agents} + {large} + {built} elements, the index {}",
                self.slots.len()
            ));
        }
        let (mut pending, mut routed_built) = (0, 0);
        for item in self.slots.iter() {
            let slot = item.handle.slot();
            let route = self.routes[slot as usize];
            let Some(e) = on_part!(self, route.part, |p| p.get(route.inner)) else {
                return fail(format!("slot {slot} is not in the {:?} part", route.part));
            };
            if *e.value != slot || e.aabb != item.aabb {
                return fail(format!(
                    "slot {slot}'s entry in the {:?} part names slot {} with box {:?}",
                    route.part, e.value, e.aabb
                ));
            }
            match (route.part, route.is_static) {
                (Part::Static, false) => {
                    return fail(format!("slot {slot} is in the static part but not static"));
                }
                (Part::Static, true) => routed_built += 1,
                (_, is_static) => pending += usize::from(is_static),
            }
            if route.part == Part::Agents && self.part_for(&item.aabb) != Moving::Agents {
                return fail(format!("slot {slot} is too large for the agents part"));
            }
        }
        if pending != self.pending || routed_built != built {
            return fail(format!(
                "{pending} static elements wait and {routed_built} are built, the index counts {} and {built}",
                self.pending
            ));
        }
        Ok(())
    }
}
