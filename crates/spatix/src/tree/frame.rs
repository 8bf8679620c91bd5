//! Node geometry: node boxes are never stored, but computed on the way down from the world box
//! and carried by traversals in a [`Frame`].

use super::MAX_DEPTH;
use crate::base::stack::ArrayStack;
use crate::search::nearest::Pending;
use crate::{Aabb, Point, Scalar};

/// Sides of a node's box that lie on the world's border.
pub(crate) const LEFT: u8 = 1;
pub(crate) const RIGHT: u8 = 2;
pub(crate) const BOTTOM: u8 = 4;
pub(crate) const TOP: u8 = 8;

/// A node with the box and depth computed on the way down, as traversals carry it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Frame<S> {
    pub(crate) aabb: Aabb<S>,
    pub(crate) node: u32,
    pub(crate) depth: u8,
    /// Which sides lie on the world's border (elements beyond them are clamped onto them).
    pub(crate) edges: u8,
}

/// Most entries a depth-first walk keeps pending: 3 siblings per level plus 4, for the deepest
/// tree allowed.
pub(crate) const MAX_PENDING: usize = 3 * MAX_DEPTH as usize + 4;

/// Explicit traversal stack of the queries, on the caller's stack: never the heap.
pub(crate) type Stack<S> = ArrayStack<Frame<S>, MAX_PENDING>;

/// The same walk over node indices only (maintenance passes).
pub(crate) type NodeStack = ArrayStack<u32, MAX_PENDING>;

impl<S: Scalar> Frame<S> {
    pub(crate) fn root(world: Aabb<S>) -> Self {
        Self {
            aabb: world,
            node: 0,
            depth: 0,
            edges: LEFT | RIGHT | BOTTOM | TOP,
        }
    }

    /// Where the node splits: its centre, clamped so that rounding (subnormals) can never put
    /// a child outside its parent.
    #[inline]
    pub(crate) fn mid(&self) -> Point<S> {
        let b = &self.aabb;
        let c = b.center();
        Point::new(
            c.x.max_s(b.min.x).min_s(b.max.x),
            c.y.max_s(b.min.y).min_s(b.max.y),
        )
    }

    /// Child `i` (0: lower left, 1: lower right, 2: upper left, 3: upper right) of the group
    /// starting at `first_child`, given the split point `mid`.
    #[inline]
    pub(crate) fn child(&self, first_child: u32, i: u32, mid: Point<S>) -> Self {
        let b = &self.aabb;
        let right = i & 1 == 1;
        let top = i & 2 == 2;
        let (x0, x1) = if right {
            (mid.x, b.max.x)
        } else {
            (b.min.x, mid.x)
        };
        let (y0, y1) = if top {
            (mid.y, b.max.y)
        } else {
            (b.min.y, mid.y)
        };
        let keep = (if right { RIGHT } else { LEFT }) | (if top { TOP } else { BOTTOM });
        Self {
            aabb: Aabb {
                min: Point::new(x0, y0),
                max: Point::new(x1, y1),
            },
            node: first_child + i,
            depth: self.depth + 1,
            edges: self.edges & keep,
        }
    }

    /// The four children, whose nodes start at `first_child`.
    #[inline]
    pub(crate) fn children(&self, first_child: u32) -> [Self; 4] {
        let mid = self.mid();
        // Spelled out, not `[0, 1, 2, 3].map(..)`: `array::map` is a generic of `core` that a
        // caller's codegen unit may call out of line, once per node of every traversal.
        [
            self.child(first_child, 0, mid),
            self.child(first_child, 1, mid),
            self.child(first_child, 2, mid),
            self.child(first_child, 3, mid),
        ]
    }

    /// Bit `i` set for each child `i` that a box overlapping this node overlaps (closed),
    /// found by comparing the box with the split point only.
    #[inline]
    pub(crate) fn quadrants(mid: Point<S>, b: &Aabb<S>) -> u8 {
        let left = b.min.x <= mid.x;
        let right = b.max.x >= mid.x;
        let bottom = b.min.y <= mid.y;
        let top = b.max.y >= mid.y;
        u8::from(left & bottom)
            | u8::from(right & bottom) << 1
            | u8::from(left & top) << 2
            | u8::from(right & top) << 3
    }

    /// Whether this node owns the point `q` (which lies in the world): the half-open box,
    /// closed on the world's far border. Sibling nodes own disjoint parts of their parent, so
    /// exactly one leaf owns any point of the world. Used to report each result once.
    #[inline]
    pub(crate) fn owns(&self, q: Point<S>) -> bool {
        q.x >= self.aabb.min.x
            && (q.x < self.aabb.max.x || self.edges & RIGHT != 0)
            && q.y >= self.aabb.min.y
            && (q.y < self.aabb.max.y || self.edges & TOP != 0)
    }

    /// Whether a (clamped) box lies strictly inside [`Frame::reach`]: then every leaf it
    /// overlaps lies beneath this node (tight quadtree), and the descent of an MX-CIF tree
    /// passes through this node (each split line it crosses on the way lies strictly beside
    /// the box).
    #[inline]
    pub(crate) fn fits(&self, c: &Aabb<S>) -> bool {
        let r = self.reach();
        r.min.x < c.min.x && c.max.x < r.max.x && r.min.y < c.min.y && c.max.y < r.max.y
    }

    /// This frame waiting in a best-first search with `key`.
    #[inline]
    pub(crate) fn pending(&self, key: S) -> Pending<S> {
        Pending {
            key,
            node: self.node,
            aux: u32::from(self.depth) | u32::from(self.edges) << 8,
            aabb: self.aabb,
        }
    }

    /// The frame a best-first search entry stands for.
    #[inline]
    pub(crate) fn from_pending(p: &Pending<S>) -> Self {
        Self {
            aabb: p.aabb,
            node: p.node,
            depth: p.aux as u8,
            edges: (p.aux >> 8) as u8,
        }
    }

    /// The box grown to infinity across world-border sides: it contains the true position of
    /// every element filed here, even one outside the world. Used for distance bounds.
    #[inline]
    pub(crate) fn reach(&self) -> Aabb<S> {
        let mut r = self.aabb;
        if self.edges & LEFT != 0 {
            r.min.x = -S::INFINITY;
        }
        if self.edges & RIGHT != 0 {
            r.max.x = S::INFINITY;
        }
        if self.edges & BOTTOM != 0 {
            r.min.y = -S::INFINITY;
        }
        if self.edges & TOP != 0 {
            r.max.y = S::INFINITY;
        }
        r
    }

    /// Whether the box `b` (which overlaps this node) overlaps more than one of its
    /// children: it covers one of the node's midlines.
    #[inline]
    pub(crate) fn straddles(&self, b: &Aabb<S>) -> bool {
        Self::quadrants(self.mid(), b).count_ones() > 1
    }

    /// Whether splitting this node would separate the elements with the boxes `boxes` (which
    /// overlap it): at most half of them straddle its children.
    pub(crate) fn separates(&self, boxes: impl Iterator<Item = Aabb<S>>) -> bool {
        let (mut n, mut straddling) = (0usize, 0usize);
        for b in boxes {
            n += 1;
            straddling += usize::from(self.straddles(&b));
        }
        2 * straddling <= n
    }

    /// Whether a leaf here may split: above the depth limit, and with room to halve on both
    /// axes. A node too thin to halve (a world of zero width or height, or coordinates at the
    /// limit of float precision) would hand all its elements to its children alike, level
    /// after level.
    #[inline]
    pub(crate) fn can_split(&self, max_depth: u32) -> bool {
        if u32::from(self.depth) >= max_depth {
            return false;
        }
        let (b, mid) = (&self.aabb, self.mid());
        b.min.x < mid.x && mid.x < b.max.x && b.min.y < mid.y && mid.y < b.max.y
    }
}
