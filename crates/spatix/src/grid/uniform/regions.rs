//! The grid's shape: its non-empty cells.

use core::ops::ControlFlow;

use super::UniformGrid;
use crate::Scalar;
use crate::base::handle::NIL;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind};

impl<S: Scalar, T> Regions<S> for UniformGrid<S, T> {
    /// Every cell that lists elements, row by row from the lower-left corner: its nominal
    /// square (the border cells also list the elements outside the world), depth 0, and the
    /// number of elements it lists (an element is listed in every cell its box overlaps).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        let l = &self.lattice;
        for cy in 0..l.rows {
            let pool = self.pools.of_row(cy);
            for cx in 0..l.cols {
                let head = self.cells[l.index(cx, cy)];
                if head != NIL {
                    visit(&Region {
                        bounds: l.square(cx, cy),
                        depth: 0,
                        kind: RegionKind::Cell,
                        elements: pool.items(head).count(),
                    })?;
                }
            }
        }
        ControlFlow::Continue(())
    }
}
