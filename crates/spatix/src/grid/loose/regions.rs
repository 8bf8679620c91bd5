//! The loose grid's shape: its non-empty loose cells.

use core::ops::ControlFlow;

use super::LooseGrid;
use crate::Scalar;
use crate::base::handle::NIL;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind};

impl<S: Scalar, T> Regions<S> for LooseGrid<S, T> {
    /// Every loose cell that holds elements, row by row from the lower-left corner: the
    /// region queries test it by (a box enclosing its elements, which only grows until
    /// `maintain` shrinks it to them), depth 0, and how many elements it holds (each element
    /// is in one loose cell).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        for (cell, &head) in self.heads.iter().enumerate() {
            if head != NIL {
                visit(&Region {
                    bounds: self.region(cell),
                    depth: 0,
                    kind: RegionKind::Cell,
                    elements: self.elements.items(head).count(),
                })?;
            }
        }
        ControlFlow::Continue(())
    }
}
