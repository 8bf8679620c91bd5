//! The structural self-check.

use super::{Layered, Part, on_part};
use crate::{Error, Scalar, SpatialIndex};

impl<S, T, A, L, St> Layered<S, T, A, L, St>
where
    S: Scalar,
    A: SpatialIndex<S, u32>,
    L: SpatialIndex<S, u32>,
    St: SpatialIndex<S, u32>,
{
    /// Every part is consistent; every live element is in the part its route names, under
    /// its route's handle, with its layered slot as value and the same box; an agent fits the
    /// threshold; the parts hold nothing else.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.slots.check()?;
        self.agents.check_invariants()?;
        self.large.check_invariants()?;
        self.statics.check_invariants()?;
        let fail = |why: String| Err(Error::InvariantViolated(why));
        let (agents, large, statics) = self.part_lens();
        if agents + large + statics != self.slots.len() {
            return fail(format!(
                "the parts hold {agents} + {large} + {statics} elements, the index {}",
                self.slots.len()
            ));
        }
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
            if route.part == Part::Agents && self.part_for(item.aabb) != Part::Agents {
                return fail(format!("slot {slot} is too large for the agents part"));
            }
        }
        Ok(())
    }
}
