//! The full structural self-check.

use super::runs::cap_for;
use super::{FREE, MxCifQuadtree, quadrant};
use crate::contract::Validates;
use crate::tree::{Frame, check_free_groups};
use crate::{Error, Scalar};

fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar, T> MxCifQuadtree<S, T> {
    /// The used runs and the free runs tile the element arrays exactly.
    fn validate_runs(&self, mut runs: Vec<(u32, u32)>) -> Result<(), Error> {
        let Some(free) = self.runs.free_runs() else {
            return fail("a free run list is broken, or the free entries miscounted".into());
        };
        runs.extend(free);
        runs.sort_unstable();
        let mut end = 0u64;
        for &(start, cap) in &runs {
            if u64::from(start) != end {
                return fail(format!("runs overlap or leave a gap at entry {end}"));
            }
            end += u64::from(cap);
        }
        if end != self.runs.allocated() as u64 {
            return fail(format!(
                "runs cover {end} of {} entries",
                self.runs.allocated()
            ));
        }
        Ok(())
    }
}

impl<S: Scalar, T> Validates for MxCifQuadtree<S, T> {
    /// Checks the tree shape, that every element sits in exactly the node its clamped box
    /// descends to (so elements of different subtrees never touch), the copies of the boxes,
    /// the places, the runs (used and free ones tile the element arrays) and the free groups.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        let n_nodes = self.base.nodes.len();
        if n_nodes == 0 || (n_nodes - 1) % 4 != 0 || self.frames.len() != n_nodes {
            return fail(format!("{n_nodes} nodes is not a root plus groups of four"));
        }
        let mut reached = vec![false; n_nodes];
        let mut seen = vec![false; self.places.len()];
        let mut runs = Vec::new();
        let mut listed = 0usize;
        let mut stack = vec![Frame::root(self.base.world)];
        while let Some(f) = stack.pop() {
            let at = f.node as usize;
            if std::mem::replace(&mut reached[at], true) {
                return fail(format!("node {at} is reachable twice"));
            }
            if u32::from(f.depth) > self.base.config.max_depth {
                return fail(format!("node {at} is deeper than max_depth"));
            }
            let kept = self.frames.get(at);
            if kept.is_none_or(|k| {
                (k.aabb, k.node, k.depth, k.edges) != (f.aabb, f.node, f.depth, f.edges)
            }) {
                return fail(format!("node {at}'s recorded frame is not its box"));
            }
            let node = self.base.nodes[at];
            if node.len == FREE {
                return fail(format!("free node {at} is reachable"));
            }
            if node.len > node.cap
                || (node.cap != 0 && (cap_for(node.cap) != node.cap || node.len == 0))
            {
                return fail(format!(
                    "node {at} holds {} in a run of {}",
                    node.len, node.cap
                ));
            }
            if node.cap > 0 {
                runs.push((node.start, node.cap));
            }
            if node.is_branch() {
                let g = node.first_child as usize;
                if g == 0 || (g - 1) % 4 != 0 || g + 4 > n_nodes {
                    return fail(format!("branch {at} points at bad child group {g}"));
                }
                stack.extend(f.children(node.first_child));
            } else if node.len > self.base.config.max_elements
                && f.can_split(self.base.config.max_depth)
            {
                return fail(format!("leaf {at} overflows, yet could split"));
            }
            let (boxes, slots) = self.elements(&node);
            for (i, (b, &e)) in boxes.iter().zip(slots).enumerate() {
                if !self.slots.is_live(e) || std::mem::replace(&mut seen[e as usize], true) {
                    return fail(format!("node {at} lists slot {e}, dead or listed before"));
                }
                if b != self.slots.aabb(e) {
                    return fail(format!("node {at} holds a stale copy of slot {e}'s box"));
                }
                let c = self.filed_box(b);
                if !f.fits(&c) || (node.is_branch() && quadrant(f.mid(), &c).is_some()) {
                    return fail(format!(
                        "slot {e} is in node {at}, not in the node its box descends to"
                    ));
                }
                let place = &self.places[e as usize];
                let entry = node.start + i as u32;
                if place.node != f.node || place.at != entry {
                    return fail(format!("slot {e}'s place is not node {at}, entry {entry}"));
                }
            }
            listed += boxes.len();
        }
        if listed != self.slots.len() {
            return fail(format!(
                "{listed} elements in nodes, {} in the slot table",
                self.slots.len()
            ));
        }
        self.validate_runs(runs)?;
        check_free_groups(
            &reached,
            self.base.free_group,
            |g| self.base.nodes[g].first_child,
            |i| self.base.nodes[i].len == FREE,
        )
    }
}
