//! The levels' shape: every level's non-empty cells.

use core::ops::ControlFlow;

use super::Leveled;
use crate::Scalar;
use crate::base::handle::NIL;
use crate::contract::probe::{Region, RegionKind};

impl<S: Scalar, T> Leveled<S, T> {
    /// Every cell that lists elements, level by level (finest first), row by row from the
    /// lower-left corner: its nominal square (an element is filed once, in the cell of its
    /// box's lower-left corner, clamped into the level's cells, and sticks out of it by up to
    /// the level's largest size), the level as the depth, and how many elements it lists.
    pub(crate) fn regions_impl<F>(&self, mut visit: F) -> ControlFlow<()>
    where
        F: FnMut(&Region<S>) -> ControlFlow<()>,
    {
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
                            bounds: l.square(cx, cy),
                            depth: depth as u32,
                            kind: RegionKind::Cell,
                            elements: self.pool.items(head).count(),
                        })?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}
