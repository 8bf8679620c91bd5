//! `check_invariants`: band membership and order, band bounds, and the slot table against
//! the positions.

use super::SweepGrid;
use crate::base::handle::NIL;
use crate::contract::Validates;
use crate::{Error, Scalar};

/// An [`Error::InvariantViolated`] with a message.
fn broken(message: String) -> Error {
    Error::InvariantViolated(message)
}

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The slot table: generations as long as positions, every live slot's position holds
    /// it, the free list lists free slots once.
    fn check_slots(&self, live: usize) -> Result<(), Error> {
        if self.generations.len() != self.positions.len() {
            return Err(broken(format!(
                "{} positions but {} generations in the slot table",
                self.positions.len(),
                self.generations.len()
            )));
        }
        let mut in_use = 0;
        for (slot, &p) in self.positions.iter().enumerate() {
            if p != NIL {
                in_use += 1;
                if self.owners.get(p as usize) != Some(&(slot as u32)) {
                    return Err(broken(format!(
                        "slot {slot} points at position {p}, which does not hold it"
                    )));
                }
            }
        }
        if in_use != live {
            return Err(broken(format!("{in_use} slots in use for {live} elements")));
        }
        let mut listed = vec![false; self.positions.len()];
        for &slot in &self.free {
            let i = slot as usize;
            if i >= self.positions.len() || self.positions[i] != NIL || listed[i] {
                return Err(broken(format!(
                    "free slot {slot} is out of range, in use, or listed twice"
                )));
            }
            listed[i] = true;
        }
        Ok(())
    }
}

impl<S: Scalar, T> Validates for SweepGrid<S, T> {
    /// Checks every invariant: the arrays agree in length; bands cover the positions in
    /// order; every element is in the band of its `min.y`, has a valid box and a value, and
    /// is sorted by `min.x` within its band (gaps included); the bands' reach and width bound
    /// their elements' (exactly, for bands not marked loose); the largest reach bounds every
    /// band's; the slot table and the positions are inverse; the free slots are free, listed
    /// once, and the live count is right.
    fn do_check_invariants(&self) -> Result<(), Error> {
        let total = self.owners.len();
        if self.boxes.len() != total || self.values.len() != total {
            return Err(broken(format!(
                "{total} owners but {} boxes and {} values",
                self.boxes.len(),
                self.values.len()
            )));
        }
        let count = self.bands.len();
        if self.starts.len() != count + 1
            || self.starts[0] != 0
            || self.starts[count] as usize != total
        {
            return Err(broken(format!(
                "band starts {:?}.. do not cover the {total} positions",
                &self.starts[..self.starts.len().min(4)]
            )));
        }
        let mut live = 0;
        for b in 0..count {
            if self.starts[b] > self.starts[b + 1] {
                return Err(broken(format!("band {b} starts after band {}", b + 1)));
            }
            let range = self.range(b);
            let mut exact = super::Band::<S>::EMPTY;
            for p in range.clone() {
                let e = &self.boxes[p];
                if p > range.start && self.boxes[p - 1].min.x > e.min.x {
                    return Err(broken(format!("band {b} is not sorted at position {p}")));
                }
                let owner = self.owners[p];
                if owner == NIL {
                    if self.values[p].is_some() || e.min.y != S::INFINITY {
                        return Err(broken(format!("gap at position {p} holds an element")));
                    }
                    continue;
                }
                live += 1;
                if !e.is_valid() || self.values[p].is_none() {
                    return Err(broken(format!(
                        "position {p} holds an invalid box or no value"
                    )));
                }
                if self.band_of(e.min.y) as usize != b {
                    return Err(broken(format!(
                        "position {p} (band {b}) holds an element of band {}",
                        self.band_of(e.min.y)
                    )));
                }
                if self.positions.get(owner as usize) != Some(&(p as u32)) {
                    return Err(broken(format!(
                        "position {p} holds slot {owner}, whose position is not {p}"
                    )));
                }
                exact.reach = exact.reach.max(self.band_of(e.max.y) - b as u32);
                exact.width = exact.width.max_s(e.max.x - e.min.x);
            }
            let band = &self.bands[b];
            let bounded = band.reach >= exact.reach && band.width >= exact.width;
            let tight = band.reach == exact.reach && band.width == exact.width;
            if !bounded || !(band.loose || tight) {
                return Err(broken(format!(
                    "band {b} keeps reach {} and width {:?}, its elements {} and {:?} (loose: {})",
                    band.reach,
                    band.width.to_f64(),
                    exact.reach,
                    exact.width.to_f64(),
                    band.loose
                )));
            }
            if band.reach > self.max_reach {
                return Err(broken(format!(
                    "band {b} reaches {} bands up, past the largest reach {}",
                    band.reach, self.max_reach
                )));
            }
        }
        if live != self.len {
            return Err(broken(format!(
                "{} elements counted, {live} stored",
                self.len
            )));
        }
        self.check_slots(live)
    }
}
