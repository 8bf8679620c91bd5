//! The structural self-check.

use super::{LooseGrid, empty};
use crate::base::handle::NIL;
use crate::contract::Validates;
use crate::{Error, Scalar};

impl<S: Scalar, T> LooseGrid<S, T> {
    /// The tight lists: each loose cell with a box is listed exactly once in every tight cell
    /// under that box, and nowhere else.
    fn validate_tight(&self) -> Result<(), Error> {
        let fail = |why: String| Err(Error::InvariantViolated(why));
        let mut count = vec![0usize; self.heads.len()];
        let mut last_seen = vec![usize::MAX; self.heads.len()];
        let mut total = 0usize;
        let tight = &self.tight;
        for ty in 0..tight.lattice.rows {
            for tx in 0..tight.lattice.cols {
                let index = tight.lattice.index(tx, ty);
                let list = || format!("tight cell ({tx}, {ty})");
                let length = tight.lists.check_list(tight.heads[index], list, |_, link| {
                    let cell = link.item as usize;
                    if cell >= self.heads.len() {
                        return fail(format!(
                            "tight cell ({tx}, {ty}) lists loose cell {cell} out of range"
                        ));
                    }
                    if last_seen[cell] == index {
                        return fail(format!(
                            "tight cell ({tx}, {ty}) lists loose cell {cell} twice"
                        ));
                    }
                    last_seen[cell] = index;
                    if !self
                        .tight_range(&self.boxes[cell], &self.square(cell))
                        .is_some_and(|r| r.contains(tx, ty))
                    {
                        return fail(format!(
                            "tight cell ({tx}, {ty}) lists loose cell {cell}, whose box is not over it"
                        ));
                    }
                    count[cell] += 1;
                    Ok(())
                })?;
                total += length;
            }
        }
        let mut irregular = 0;
        for (cell, b) in self.boxes.iter().enumerate() {
            let range = self.tight_range(b, &self.square(cell));
            irregular += usize::from(range.is_some());
            let want = range.map_or(0, |r| r.area());
            if count[cell] != want {
                return fail(format!(
                    "loose cell {cell} is listed in {} tight cells instead of {want}",
                    count[cell]
                ));
            }
            if *b != empty() && !b.is_valid() {
                return fail(format!("loose cell {cell} has a malformed box"));
            }
        }
        if irregular != tight.irregular {
            return fail(format!(
                "{irregular} irregular loose cells, but {} counted",
                tight.irregular
            ));
        }
        tight.lists.check_counts(total)
    }
}

impl<S: Scalar, T> Validates for LooseGrid<S, T> {
    /// Every live element is listed exactly once, in its home cell, with an exact copy of its
    /// box, inside the cell's region; `node_of` names its node; the overhang is within the
    /// reach; every irregular loose cell is listed exactly once in every tight cell under its
    /// listing box, and nothing else is listed; the pools' counts and free lists add up.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        self.loose.check(self.heads.len())?;
        if self.boxes.len() != self.heads.len() {
            return Err(Error::InvariantViolated(
                "loose boxes and heads differ in number".into(),
            ));
        }
        self.tight.lattice.check(self.tight.heads.len())?;
        let fail = |why: String| Err(Error::InvariantViolated(why));
        if !(self.overhang == -S::INFINITY
            || (S::ZERO <= self.overhang && self.overhang <= self.reach))
        {
            return fail(format!("overhang {:?} out of 0..=reach", self.overhang));
        }
        if self.home.len() != self.node_of.len() {
            return fail("home and node_of differ in length".into());
        }
        let mut listed = vec![false; self.node_of.len()];
        let mut total = 0usize;
        for (cell, &head) in self.heads.iter().enumerate() {
            let region = self.region(cell);
            let list = || format!("loose cell {cell}");
            let length = self.elements.check_list(head, list, |at, link| {
                let slot = link.item;
                if !self.slots.is_live(slot) || slot as usize >= listed.len() {
                    return fail(format!("loose cell {cell} lists dead slot {slot}"));
                }
                if listed[slot as usize] {
                    return fail(format!("slot {slot} is listed twice"));
                }
                listed[slot as usize] = true;
                if self.node_of[slot as usize] != at {
                    return fail(format!("node_of[{slot}] does not name its node {at}"));
                }
                let aabb = self.slots.aabb(slot);
                if link.data != *aabb {
                    return fail(format!("the node of slot {slot} holds a stale box"));
                }
                if self.home[slot as usize] as usize != cell {
                    return fail(format!(
                        "slot {slot} is listed in loose cell {cell}, not its home"
                    ));
                }
                if !region.contains(aabb) {
                    return fail(format!(
                        "loose cell {cell}'s region does not enclose slot {slot}"
                    ));
                }
                Ok(())
            })?;
            total += length;
        }
        if total != self.slots.len() || total != self.elements.in_use() {
            return fail(format!(
                "{total} elements listed, {} stored, {} nodes in use",
                self.slots.len(),
                self.elements.in_use()
            ));
        }
        if self.node_of.len()
            < self
                .slots
                .iter()
                .map(|i| i.handle.slot() as usize + 1)
                .max()
                .unwrap_or(0)
        {
            return fail("node_of is shorter than the slot table".into());
        }
        if let Some(slot) = (0..self.node_of.len()).find(|&s| !listed[s] && self.node_of[s] != NIL)
        {
            return fail(format!("free slot {slot} still names a node"));
        }
        let free = self.elements.free_len()?;
        if free + self.elements.in_use() != self.elements.allocated() {
            return fail(format!(
                "{free} free and {} used element nodes, but {} allocated",
                self.elements.in_use(),
                self.elements.allocated()
            ));
        }
        self.validate_tight()
    }
}
