//! The trees' shape as regions: every node, parents before children, with its depth.

use core::ops::ControlFlow;

use super::{Frame, Stack, TreeBase};
use crate::contract::probe::{Region, RegionKind};
use crate::{Aabb, Scalar};

impl<S: Scalar, N: Copy> TreeBase<S, N> {
    /// Visits every node, parents before children, as a [`Region`]: a branch is a
    /// [`RegionKind::Node`], a leaf a [`RegionKind::Leaf`]. `node(frame, n)` tells the node's
    /// box (the frame's own, or a loose one), the first of its four children for a branch,
    /// and how many elements it lists itself.
    pub(crate) fn regions(
        &self,
        node: impl Fn(&Frame<S>, N) -> (Aabb<S>, Option<u32>, usize),
        mut visit: impl FnMut(&Region<S>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut stack = Stack::new();
        stack.push(Frame::root(self.world));
        while let Some(f) = stack.pop() {
            let (bounds, first_child, elements) = node(&f, self.nodes[f.node as usize]);
            visit(&Region {
                bounds,
                depth: u32::from(f.depth),
                kind: if first_child.is_some() {
                    RegionKind::Node
                } else {
                    RegionKind::Leaf
                },
                elements,
            })?;
            if let Some(first_child) = first_child {
                for child in f.children(first_child).into_iter().rev() {
                    stack.push(child);
                }
            }
        }
        ControlFlow::Continue(())
    }
}
