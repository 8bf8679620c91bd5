//! Area queries, k-nearest search and ray casts: each visits the bands that may hold a match
//! (the band of an element is that of its `min.y`, and each band knows how many bands up its
//! elements reach), and inside a band the run of positions a binary search on `min.x` finds
//! (each band knows its widest element).

use core::ops::ControlFlow;

use super::SweepGrid;
use crate::base::handle::NIL;
use crate::contract::probe::Watch;
use crate::contract::{Cast, Hits, Nearest, Searches, Visits};
use crate::search::nearest::{Pending, Search};
use crate::search::ray::{RaySearch, cast_tree};
use crate::{Aabb, Handle, Neighbor, Point, Scalar};

impl<S: Scalar, T> SweepGrid<S, T> {
    /// The first position of band `b` whose element may reach `x` or further right: every
    /// element before it ends left of `x` (its `min.x` is below `x` minus the band's widest
    /// element, with a margin for the rounding of widths).
    #[inline]
    pub(super) fn first_reaching(&self, b: usize, x: S) -> usize {
        let range = self.range(b);
        let w = self.bands[b].width;
        let t = x - w;
        let t = t - (x.abs_s() + w) * S::RELATIVE_SLACK;
        range.start + self.boxes[range].partition_point(|e| e.min.x < t)
    }

    /// The bands whose elements may meet the rows `y0..=y1` (inclusive): from the band of
    /// `y0` less the largest reach, up to the band of `y1`; `visit(b)` for those whose own
    /// reach gets to the band of `y0`.
    #[inline]
    fn bands_meeting(
        &self,
        y0: S,
        y1: S,
        mut visit: impl FnMut(usize) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let (lo, hi) = (self.band_of(y0), self.band_of(y1));
        for b in lo.saturating_sub(self.max_reach)..=hi {
            if b + self.bands[b as usize].reach >= lo {
                visit(b as usize)?;
            }
        }
        ControlFlow::Continue(())
    }

    /// The handle of the element at live position `p`.
    #[inline]
    pub(super) fn handle_at(&self, p: usize) -> Handle {
        let slot = self.owners[p];
        Handle::new(slot, self.generations[slot as usize])
    }

    /// Offers the elements of band `b` near `point` to `search`: outward from the point's
    /// `x` on both sides, each side stopping once the `x` distance alone exceeds the bound.
    fn nearest_in(
        &self,
        b: usize,
        point: Point<S>,
        search: &mut Search<'_, S>,
        watch: &mut impl Watch<S>,
    ) {
        self.watch_band(watch, b);
        let range = self.range(b);
        let boxes = &self.boxes[range.clone()];
        let split = range.start + boxes.partition_point(|e| e.min.x < point.x);
        for p in split..range.end {
            let e = &self.boxes[p];
            if gap_key(point.x, e.min.x) > search.bound() {
                break;
            }
            if self.owners[p] != NIL {
                watch.candidate(|| self.handle_at(p));
                let d = e.distance_key(point);
                if d <= search.bound() {
                    search.offer(self.handle_at(p), d);
                }
            }
        }
        let w = self.bands[b].width;
        for p in (range.start..split).rev() {
            let e = &self.boxes[p];
            let reach = e.min.x + w + (point.x.abs_s() + e.min.x.abs_s() + w) * S::RELATIVE_SLACK;
            if gap_key(reach, point.x) > search.bound() {
                break;
            }
            if self.owners[p] != NIL {
                watch.candidate(|| self.handle_at(p));
                let d = e.distance_key(point);
                if d <= search.bound() {
                    search.offer(self.handle_at(p), d);
                }
            }
        }
    }
}

impl<S: Scalar, T> Searches<S, T> for SweepGrid<S, T> {
    /// Every element meeting `area` once (`query`).
    #[inline]
    fn do_query<W: Watch<S>, F: Visits<S, T>>(
        &self,
        area: &Aabb<S>,
        watch: &mut W,
        mut visit: F,
    ) -> ControlFlow<()> {
        if self.len == 0 {
            return ControlFlow::Continue(());
        }
        self.bands_meeting(area.min.y, area.max.y, |b| {
            self.watch_band(watch, b);
            let end = self.range(b).end;
            for p in self.first_reaching(b, area.min.x)..end {
                let e = &self.boxes[p];
                if e.min.x > area.max.x {
                    break;
                }
                self.watch_position(watch, p);
                if e.intersects(area) {
                    visit(self.item(p))?;
                }
            }
            ControlFlow::Continue(())
        })
    }

    /// Bands outward from the point's, alternating up and down; a band is searched only if
    /// its rows can hold an element within the current bound, and each direction stops once
    /// no band further on can. Inside a band, positions outward from the point's `x`, each
    /// side stopping once the `x` distance alone exceeds the bound.
    #[inline]
    fn do_nearest<'w, W: Watch<S>>(
        &self,
        nearest: Nearest<'w, S>,
        watch: &mut W,
    ) -> &'w [Neighbor<S>] {
        let Nearest(point, k, workspace) = nearest;
        {
            let mut search = workspace.begin_exact(k);
            let count = self.bands.len();
            let home = self.band_of(point.y) as usize;
            let (mut up, mut down) = (home, home);
            let (mut up_done, mut down_done) = (false, home == 0);
            while !((up_done && down_done) || search.has_all(self.len)) {
                if !up_done {
                    if up >= count
                        || (up > home && gap_key(point.y, self.floor_y(up)) > search.bound())
                    {
                        up_done = true;
                    } else {
                        self.nearest_in(up, point, &mut search, watch);
                        up += 1;
                    }
                }
                if !down_done {
                    let c = down - 1;
                    let top = |reach: u32| self.ceil_y(c + reach as usize);
                    if gap_key(top(self.max_reach), point.y) > search.bound() {
                        down_done = true;
                    } else {
                        if gap_key(top(self.bands[c].reach), point.y) <= search.bound() {
                            self.nearest_in(c, point, &mut search, watch);
                        }
                        down = c;
                        down_done = c == 0;
                    }
                }
            }
        }
        workspace.finish()
    }

    /// Ordered traversal ([`cast_tree`]): every band the ray may cross is queued by where the
    /// ray enters its rows (widened for rounding); a band's turn tests the elements whose
    /// `x` extent may meet the ray over those rows, and a hit is reported once no waiting
    /// band could hold an earlier one.
    #[inline]
    fn do_raycast_all<W: Watch<S>, F: Hits<S, T>>(
        &self,
        cast: Cast<'_, S, F>,
        watch: &mut W,
    ) -> ControlFlow<()> {
        let Cast(ray, workspace, visit) = cast;
        let mut search = workspace.begin_ray();
        for b in 0..self.bands.len() {
            if self.range(b).is_empty() {
                continue;
            }
            let rows = Aabb {
                min: Point::new(-S::INFINITY, self.floor_y(b)),
                max: Point::new(S::INFINITY, self.ceil_y(b + self.bands[b].reach as usize)),
            };
            if let Some(key) = rows.ray_entry_conservative(ray) {
                search.push_region(Pending {
                    key,
                    node: b as u32,
                    aux: 0,
                    aabb: rows,
                });
            }
        }
        let x_at = |t: S| {
            if ray.direction.x == S::ZERO {
                ray.origin.x
            } else {
                ray.origin.x + t * ray.direction.x
            }
        };
        let expand = |rows: Pending<S>, search: &mut RaySearch<'_, S>| {
            let Some((t0, t1)) = rows.aabb.ray_span_conservative(ray) else {
                return;
            };
            let (x0, x1) = (x_at(t0), x_at(t1));
            let margin = (x0.abs_s() + x1.abs_s() + ray.origin.x.abs_s()) * S::RELATIVE_SLACK;
            let (lo, hi) = (x0.min_s(x1) - margin, x0.max_s(x1) + margin);
            let b = rows.node as usize;
            self.watch_band(watch, b);
            for p in self.first_reaching(b, lo)..self.range(b).end {
                let e = &self.boxes[p];
                if e.min.x > hi {
                    break;
                }
                if self.owners[p] != NIL {
                    watch.candidate(|| self.handle_at(p));
                    if let Some(t) = e.entry_unchecked(ray) {
                        search.push_hit(t, p as u32);
                    }
                }
            }
        };
        cast_tree(&mut search, self, expand, visit)
    }
}

/// The distance key ([`Aabb::distance_key`]) of the gap from coordinate `from` up to `to` on
/// one axis (zero when `to <= from`): a lower bound on the key of anything beyond `to`, seen
/// from `from`. Taken from the coordinates themselves, clamped to the finite range, so that
/// a difference beyond the type's maximum never reads as infinite.
#[inline]
fn gap_key<S: Scalar>(from: S, to: S) -> S {
    if to <= from {
        return S::ZERO;
    }
    let at = |v: S| Point::new(v.max_s(-S::MAX).min_s(S::MAX), S::ZERO);
    Aabb {
        min: at(to),
        max: at(to),
    }
    .distance_key(at(from))
}
