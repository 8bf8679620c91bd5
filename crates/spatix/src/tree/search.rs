//! Best-first searches over a tree's frames: k-nearest and ray casts.

use core::ops::ControlFlow;

use super::Frame;
use crate::base::slots::Slots;
use crate::search::nearest::{Pending, Search};
use crate::search::ray::{RaySearch, cast_tree};
use crate::{Aabb, Item, Neighbor, Point, Ray, Scalar, Workspace};

/// Best-first k-nearest search over a tree's frames: nodes come off a min-queue by the distance
/// to their box grown to infinity across world borders (so out-of-world elements are bounded
/// too), and the search stops when the nearest pending node is farther than the k-th best so
/// far. `node(frame, search)` offers the node's candidates and returns, for a branch, the
/// first of its four children.
pub(crate) fn nearest_in_frames<S: Scalar>(
    world: Aabb<S>,
    point: Point<S>,
    k: usize,
    workspace: &mut Workspace<S>,
    mut node: impl FnMut(&Frame<S>, &mut Search<'_, S>) -> Option<u32>,
) -> &[Neighbor<S>] {
    let mut search = workspace.begin_exact(k);
    let pending = |f: &Frame<S>| f.pending(f.reach().distance_key(point));
    search.push(pending(&Frame::root(world)));
    while let Some(p) = search.pop() {
        if p.key > search.bound() {
            break;
        }
        let f = Frame::from_pending(&p);
        if let Some(first_child) = node(&f, &mut search) {
            for child in f.children(first_child) {
                let next = pending(&child);
                if next.key <= search.bound() {
                    search.push(next);
                }
            }
        }
    }
    workspace.finish()
}

/// Ordered ray traversal of a tree's frames ([`cast_tree`]): nodes come off a min-queue by
/// where the ray may enter them (their box grown to infinity across world borders, widened
/// for rounding). `node(frame, search)` records the node's hits and returns, for a branch,
/// the first of its four children.
pub(crate) fn cast_frames<S: Scalar, T, F>(
    world: Aabb<S>,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
    slots: &Slots<S, T>,
    mut node: impl FnMut(&Frame<S>, &mut RaySearch<'_, S>) -> Option<u32>,
    visit: F,
) -> ControlFlow<()>
where
    F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
{
    let mut search = workspace.begin_ray();
    let pending = |f: &Frame<S>| f.reach().ray_entry_conservative(ray).map(|t| f.pending(t));
    if let Some(root) = pending(&Frame::root(world)) {
        search.push_region(root);
    }
    let expand = |p: Pending<S>, search: &mut RaySearch<'_, S>| {
        let f = Frame::from_pending(&p);
        if let Some(first_child) = node(&f, search) {
            for child in f.children(first_child) {
                if let Some(next) = pending(&child) {
                    search.push_region(next);
                }
            }
        }
    };
    cast_tree(&mut search, slots, expand, visit)
}
