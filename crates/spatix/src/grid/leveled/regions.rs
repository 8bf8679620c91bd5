//! The levels' shape: every level's non-empty cells.

use core::ops::ControlFlow;

use super::{Level, Leveled};
use crate::base::handle::NIL;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind};
use crate::{Aabb, Point, Scalar};

impl<S: Scalar> Level<S> {
    /// The box the corners filed in cell `(cx, cy)` lie in: its square, grown by how far an
    /// element moved since the last `maintain` may have taken its corner out of it.
    pub(crate) fn cell_region(&self, cx: u32, cy: u32) -> Aabb<S> {
        let square = self.lattice.square(cx, cy);
        let o = self.overhang;
        Aabb {
            min: Point::new(square.min.x - o, square.min.y - o),
            max: Point::new(square.max.x + o, square.max.y + o),
        }
    }
}

impl<S: Scalar, T> Regions<S> for &Leveled<S, T> {
    /// Every cell that lists elements, level by level (finest first), row by row from the
    /// lower-left corner: the box its elements' corners lie in ([`Level::cell_region`]: an
    /// element is filed once, in the cell of its box's lower-left corner, clamped into the
    /// level's cells, and sticks out of it by up to the level's largest size), the level as
    /// the depth, and how many elements it lists.
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        for (depth, level) in self.levels.iter().enumerate() {
            if level.len == 0 {
                continue;
            }
            let l = &level.lattice;
            for cy in 0..l.rows {
                let Some(row) = level.row_heads(cy) else {
                    continue;
                };
                for (cx, &head) in (0..l.cols).zip(row) {
                    if head != NIL {
                        visit(&Region {
                            bounds: level.cell_region(cx, cy),
                            depth: depth as u32,
                            kind: RegionKind::Cell,
                            elements: level.pool(cy).items(head).count(),
                        })?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}
