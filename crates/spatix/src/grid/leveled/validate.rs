//! The structural self-check.

use super::{Band, Level, Leveled, Place};
use crate::base::handle::NIL;
use crate::base::pool::{band_count, band_shift};
use crate::contract::Validates;
use crate::{Error, Scalar};

fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar> Level<S> {
    /// The level's parameters and its row table: the size bound fits the cells, every
    /// allocated row and every released row is a distinct `cols`-wide run of `heads`, and
    /// together they cover it.
    fn validate_rows(&self, i: usize) -> Result<(), Error> {
        let l = &self.lattice;
        if !(self.fit >= S::ZERO && self.reach >= self.fit) {
            return fail(format!(
                "level {i}: size bound {:?} or reach {:?}",
                self.fit, self.reach
            ));
        }
        let fits = l.len() == 1
            || self.reach + self.max_overhang + self.max_overhang + l.margin() * S::from_f64(4.0)
                <= l.cell_size;
        if !(self.overhang >= S::ZERO && self.overhang <= self.max_overhang) {
            return fail(format!(
                "level {i}: overhang {:?} outside 0..={:?}",
                self.overhang, self.max_overhang
            ));
        }
        if !fits || !(l.inv_cell * l.cell_size).is_finite() {
            return fail(format!(
                "level {i}: cells of {:?} cannot hold boxes up to {:?}",
                l.cell_size, self.fit
            ));
        }
        if self.shift != band_shift(l.rows, l.cols, super::BAND_CELLS)
            || self.bands.len() != band_count(l.rows, self.shift)
        {
            return fail(format!(
                "level {i}: {} bands of 2^{} rows for {} rows of {} cells",
                self.bands.len(),
                self.shift,
                l.rows,
                l.cols
            ));
        }
        for (b, band) in self.bands.iter().enumerate() {
            let first = (b as u32) << self.shift;
            let rows = l.rows.min(first + (1 << self.shift)) - first;
            band.validate_rows(i, b, rows, l.cols as usize)?;
        }
        Ok(())
    }
}

impl<S: Scalar> Band<S> {
    /// The band's row table (band `b` of level `i`, of `rows` rows of `cols` cells): every
    /// allocated row and every released row is a distinct `cols`-wide run of `heads`, and
    /// together they cover it.
    fn validate_rows(&self, i: usize, b: usize, rows: u32, cols: usize) -> Result<(), Error> {
        if self.rows.len() != rows as usize || self.row_len.len() != rows as usize {
            return fail(format!(
                "level {i} band {b}: row tables do not match its {rows} rows"
            ));
        }
        if self.heads.len() % cols != 0 {
            return fail(format!(
                "level {i} band {b}: {} heads is not a whole number of rows",
                self.heads.len()
            ));
        }
        let mut owner = vec![false; self.heads.len() / cols];
        let mut claim = |at: u32, what: &str| {
            let at = at as usize;
            if at % cols != 0 || at >= self.heads.len() || owner[at / cols] {
                return fail(format!(
                    "level {i} band {b}: {what} row at {at} is misplaced or shared"
                ));
            }
            owner[at / cols] = true;
            Ok(())
        };
        for (cy, &at) in self.rows.iter().enumerate() {
            if at == NIL {
                if self.row_len[cy] != 0 {
                    return fail(format!(
                        "level {i} band {b}: row {cy} has no cells but counts elements"
                    ));
                }
            } else {
                claim(at, "an allocated")?;
            }
        }
        let mut at = self.free_row;
        while at != NIL {
            claim(at, "a released")?;
            at = self.heads[at as usize];
        }
        if owner.iter().any(|&owned| !owned) {
            return fail(format!(
                "level {i} band {b}: a row of heads is neither in use nor released"
            ));
        }
        Ok(())
    }
}

impl<S: Scalar, T> Leveled<S, T> {
    /// Checks the list of one cell; returns its length.
    fn validate_list(&self, head: u32, place: Place, seen: &mut [bool]) -> Result<usize, Error> {
        let Place { level, cx, cy } = place;
        let list = || format!("level {level} cell ({cx}, {cy})");
        self.levels[level].pool(cy).check_list(head, list, |at, node| {
                let slot = node.item;
                if !self.slots.is_live(slot) || seen[slot as usize] {
                    return fail(format!(
                        "level {level} cell ({cx}, {cy}) lists slot {slot}, which is dead or listed twice"
                    ));
                }
                seen[slot as usize] = true;
                if self.node_of.get(slot) != at {
                    return fail(format!(
                        "slot {slot} is listed by node {at}, not the one node_of names"
                    ));
                }
                let b = self.slots.aabb(slot);
                if node.data != b.min {
                    return fail(format!(
                        "slot {slot}'s node carries {:?}, not its corner {:?}",
                        node.data, b.min
                    ));
                }
                if self.place(b).map(|p| p.level) != Some(level) {
                    return fail(format!(
                        "slot {slot} is listed in level {level}, but belongs in {:?}",
                        self.place(b)
                    ));
                }
                let l = &self.levels[level];
                if self.home.get(slot) as usize != l.lattice.index(cx, cy) {
                    return fail(format!(
                        "slot {slot} is listed in cell ({cx}, {cy}), not its home"
                    ));
                }
                let drift = l.drift(b.min, cx, cy);
                if drift > l.overhang + l.lattice.margin() {
                    return fail(format!(
                        "slot {slot} lies {drift:?} outside cell ({cx}, {cy}) of level {level}, whose overhang is {:?}",
                        l.overhang
                    ));
                }
            Ok(())
        })
    }
}

impl<S: Scalar, T> Validates for &Leveled<S, T> {
    /// Every live element is listed exactly once, in the cell of its corner in the first level
    /// that fits its box, by a node that carries its corner and that `node_of` names; every
    /// list entry names a live element; the counts of rows, levels and the pool add up.
    fn do_check_invariants(&self) -> Result<(), Error> {
        self.slots.check()?;
        for (i, level) in self.levels.iter().enumerate() {
            level.validate_rows(i)?;
            if i + 1 < self.levels.len()
                && !(level.fit.is_finite() && level.fit < self.levels[i + 1].fit)
            {
                return fail(format!(
                    "level {i} does not hold smaller boxes than the next"
                ));
            }
        }
        let slot_count = self
            .slots
            .iter()
            .map(|item| item.handle.slot() as usize + 1)
            .max()
            .unwrap_or(0);
        if self.node_of.len() < slot_count || self.home.len() < slot_count {
            return fail(format!(
                "node_of covers {} of {slot_count} slots",
                self.node_of.len()
            ));
        }
        let mut seen = vec![false; slot_count];
        let mut total = 0usize;
        for (i, level) in self.levels.iter().enumerate() {
            let mut in_level = 0usize;
            for cy in 0..level.lattice.rows {
                let mut in_row = 0usize;
                for (cx, &head) in level.row_heads(cy).unwrap_or_default().iter().enumerate() {
                    let place = Place {
                        level: i,
                        cx: cx as u32,
                        cy,
                    };
                    in_row += self.validate_list(head, place, &mut seen)?;
                }
                if level.row_len(cy) as usize != in_row {
                    return fail(format!(
                        "level {i} row {cy} counts {} elements but lists {in_row}",
                        level.row_len(cy)
                    ));
                }
                in_level += in_row;
            }
            for band in &level.bands {
                band.pool
                    .check_counts(band.row_len.iter().map(|&n| n as usize).sum())?;
            }
            if level.len != in_level {
                return fail(format!(
                    "level {i} counts {} elements but lists {in_level}",
                    level.len
                ));
            }
            total += in_level;
        }
        if total != self.slots.len() {
            return fail(format!(
                "{total} elements listed, {} live",
                self.slots.len()
            ));
        }
        Ok(())
    }
}
