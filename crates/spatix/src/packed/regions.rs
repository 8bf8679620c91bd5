//! The packed index's shape: its nodes by level, and what a search tells its probe.

use core::ops::ControlFlow;

use super::Tree;
use crate::Scalar;
use crate::contract::Regions;
use crate::contract::probe::{Region, RegionKind, Watch};

impl<S: Scalar, T> Tree<'_, S, T> {
    /// Tells `watch` that a search tested the elements at positions `first..end`.
    #[inline]
    pub(super) fn watch_elements<W: Watch<S>>(&self, watch: &mut W, first: u32, end: u32) {
        if W::ACTIVE {
            for i in first..end {
                watch.candidate(|| self.elements.handle(i));
            }
        }
    }
}

impl<S: Scalar, T> Regions<S> for Tree<'_, S, T> {
    /// Every node, root first, level by level: its union box, its level as the depth (1 for
    /// the nodes just above the elements, which are the [`RegionKind::Leaf`]s and list them;
    /// the nodes above are [`RegionKind::Node`]s and list none).
    fn do_visit_regions<F: FnMut(&Region<S>) -> ControlFlow<()>>(
        &self,
        mut visit: F,
    ) -> ControlFlow<()> {
        let span = self.span() as usize;
        for level in (1..self.levels.len()).rev() {
            let below = self.elements_per_node(level);
            for (k, bounds) in self.level(level).iter().enumerate() {
                let (kind, elements) = if level == 1 {
                    (RegionKind::Leaf, below.min(span - k * below))
                } else {
                    (RegionKind::Node, 0)
                };
                visit(&Region {
                    bounds: *bounds,
                    depth: level as u32,
                    kind,
                    elements,
                })?;
            }
        }
        ControlFlow::Continue(())
    }
}
