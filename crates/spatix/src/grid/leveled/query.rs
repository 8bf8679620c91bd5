//! Area queries, k-nearest search and ray casts, over every level.
//!
//! Each element is filed once, so nothing needs de-duplicating: an element is found in the
//! one cell of its corner, which every search visits because it widens by the level's `reach`.

use core::ops::ControlFlow;

use super::{Corner, Level, Leveled, MAX_LEVELS};
use crate::base::handle::NIL;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::{Aabb, Neighbor, Point, Scalar};

use crate::grid::lattice::{RayWalk, Rings, settled};

/// The box a level's element with this corner may occupy: `[corner, corner + reach]`. Rounding
/// is monotone, so the computed upper corner is never below the true box's.
#[inline]
fn reach_box<S: Scalar>(corner: Point<S>, reach: S) -> Aabb<S> {
    Aabb {
        min: corner,
        max: Point::new(corner.x + reach, corner.y + reach),
    }
}

impl<S: Scalar, T> Leveled<S, T> {
    /// Calls `visit` with each node filed in the cells of `level` whose corners may belong
    /// to a box intersecting `area` (corner within `[area.min - reach, area.max]`), from the
    /// cells that may hold such corners (widened by the level's spread).
    #[inline]
    pub(crate) fn near_area<W: Watch<S>>(
        &self,
        level: &Level<S>,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: impl FnMut(Corner<S>) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let l = &level.lattice;
        let lo = Point::new(area.min.x - level.reach, area.min.y - level.reach);
        let (below, above) = level.spread();
        let (x0, x1) = (l.col(area.min.x - above), l.col(area.max.x + below));
        for cy in l.row(area.min.y - above)..=l.row(area.max.y + below) {
            let Some(row) = level.row_heads(cy) else {
                continue;
            };
            let pool = level.pool(cy);
            if W::ACTIVE {
                for cx in x0..=x1 {
                    if row[cx as usize] != NIL {
                        watch.region(|| level.cell_region(cx, cy));
                    }
                }
            }
            for &head in &row[x0 as usize..=x1 as usize] {
                let mut at = head;
                while at != NIL {
                    let node = pool.link(at);
                    at = node.next;
                    watch.candidate(|| self.slots.handle(node.item));
                    let c = node.data;
                    if lo.x <= c.x && c.x <= area.max.x && lo.y <= c.y && c.y <= area.max.y {
                        visit(node)?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }
}

impl<S: Scalar, T> Searches<S, T> for &Leveled<S, T> {
    /// Every element whose box intersects `area`: a corner inside the area decides without
    /// reading the box.
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        for level in self.levels.iter().filter(|l| l.len > 0) {
            self.near_area(level, area, watch, |node| {
                if area.contains_point(node.data) || self.slots.aabb(node.item).intersects(area) {
                    visit(self.slots.item(node.item))?;
                }
                ControlFlow::Continue(())
            })?;
        }
        ControlFlow::Continue(())
    }

    /// Best-first across levels: each level searches rings of cells outward from the point,
    /// and the next ring searched is always the one, of any level, with the smallest lower
    /// bound (the ring's distance less the level's `reach`); the search stops when that bound
    /// reaches the k-th best distance, or once every element is among the best (`k` at least
    /// `len`). A corner's reach box bounds the distance before the true box is read.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let mut search = workspace.begin_exact(k);
            // Per level: its rings and the next ring to search (past `last`: done).
            let mut rings: [Option<(Rings, i64)>; MAX_LEVELS] = [None; MAX_LEVELS];
            for (state, level) in rings.iter_mut().zip(&self.levels) {
                if level.len > 0 {
                    *state = Some((level.lattice.rings(point), 0));
                }
            }
            let grow = |level: &Level<S>| level.spread().1.to_f64();
            loop {
                let mut next: Option<(usize, f64)> = None;
                for (i, state) in rings.iter().enumerate() {
                    if let Some((ring, r)) = state {
                        let reach = ring.reach(*r, grow(&self.levels[i]));
                        if next.is_none_or(|(_, best)| reach < best) {
                            next = Some((i, reach));
                        }
                    }
                }
                let Some((i, reach)) = next else { break };
                if settled(search.bound(), reach) || search.has_all(self.slots.len()) {
                    break;
                }
                let level = &self.levels[i];
                let Some((ring, r)) = &mut rings[i] else {
                    break;
                };
                ring.cells(*r, |cx, cy| {
                    let mut at = level.head(cx, cy);
                    if at != NIL {
                        watch.region(|| level.cell_region(cx, cy));
                    }
                    let pool = level.pool(cy);
                    while at != NIL {
                        let node = pool.link(at);
                        at = node.next;
                        watch.candidate(|| self.slots.handle(node.item));
                        let near = reach_box(node.data, level.reach).distance_key(point);
                        if near <= search.bound() {
                            let d = self.slots.aabb(node.item).distance_key(point);
                            search.offer(self.slots.handle(node.item), d);
                        }
                    }
                });
                *r += 1;
                if *r > ring.last {
                    rings[i] = None;
                }
            }
        }
        workspace.finish()
    }

    /// One conservative walk per level along the ray ([`RayWalk`], widened by the level's
    /// `reach` on the high sides), merged: the next cell walked is always the one, of any
    /// level, whose bound is smallest, and recorded hits up to that bound are reported first.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, mut visit) = cast;
        let mut search = workspace.begin_ray();
        type Walk<'a, S> = Option<(RayWalk<'a, S>, (u32, u32, S))>;
        let mut walks: [Walk<'_, S>; MAX_LEVELS] = [None; MAX_LEVELS];
        for (state, level) in walks.iter_mut().zip(&self.levels) {
            if level.len > 0 {
                let (below, above) = level.spread();
                let mut walk = level.lattice.walk(ray, below, above);
                *state = walk.next().map(|cell| (walk, cell));
            }
        }
        loop {
            let mut next: Option<(usize, S)> = None;
            for (i, state) in walks.iter().enumerate() {
                if let Some((_, (_, _, bound))) = state {
                    if next.is_none_or(|(_, best)| *bound < best) {
                        next = Some((i, *bound));
                    }
                }
            }
            let Some((i, bound)) = next else { break };
            search.report_until(bound, &self.slots, &mut visit)?;
            let level = &self.levels[i];
            let Some((walk, current)) = &mut walks[i] else {
                break;
            };
            let (cx, cy, _) = *current;
            let mut at = level.head(cx, cy);
            if at != NIL {
                watch.region(|| level.cell_region(cx, cy));
            }
            let pool = level.pool(cy);
            while at != NIL {
                let node = pool.link(at);
                at = node.next;
                watch.candidate(|| self.slots.handle(node.item));
                if reach_box(node.data, level.reach)
                    .entry_unchecked(ray)
                    .is_some()
                {
                    if let Some(t) = self.slots.aabb(node.item).entry_unchecked(ray) {
                        search.push_hit(t, node.item);
                    }
                }
            }
            match walk.next() {
                Some(cell) => *current = cell,
                None => walks[i] = None,
            }
        }
        search.report_until(S::INFINITY, &self.slots, &mut visit)
    }
}
