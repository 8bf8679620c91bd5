//! Ray casting shared by every structure: the ray, the hit, the exact ray-box entry test that
//! every structure and the oracle use for elements, a conservative test for cells and nodes,
//! and the ordered search that reports hits in ascending entry distance.

use core::cmp::Ordering;
use core::ops::ControlFlow;

use crate::base::slots::Elements;
use crate::search::nearest::{Pending, sift_up};
use crate::{Aabb, Handle, Item, Point, Scalar};

/// A ray: the points `origin + t * direction` for `0 <= t <= max_t`.
///
/// `t` is measured in units of `direction` (with a unit direction, `t` is the distance).
/// `max_t` may be infinite. A ray with a non-finite origin or direction, a zero direction or a
/// negative or NaN `max_t` is invalid: [`Ray::new`] rejects it and a cast with it (built by hand
/// through the public fields) hits nothing.
///
/// # Example
/// ```
/// use spatix::{Aabb, Point, Ray};
/// let ray = Ray::new(Point::new(0.0f32, 1.0), Point::new(1.0, 0.0), f32::INFINITY)?;
/// let wall = Aabb::new(Point::new(5.0, 0.0), Point::new(6.0, 2.0))?;
/// assert_eq!(wall.ray_entry(&ray), Some(5.0));
/// assert_eq!(ray.at(2.5), Point::new(2.5, 1.0));
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Ray<S> {
    /// Where the ray starts (`t = 0`).
    pub origin: Point<S>,
    /// The ray's direction: a finite, non-zero vector.
    pub direction: Point<S>,
    /// How far the ray reaches, in units of `direction`; may be infinite.
    pub max_t: S,
}

impl<S: Scalar> Ray<S> {
    /// A ray from `origin` along `direction`, up to `max_t`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`](crate::Error::InvalidParameter) for a non-finite origin or
    /// direction, a zero direction, or a negative or NaN `max_t`.
    ///
    /// ```
    /// use spatix::{Point, Ray};
    /// assert!(Ray::new(Point::new(0.0, 0.0), Point::new(0.0, 0.0), 1.0).is_err());
    /// assert!(Ray::new(Point::new(0.0, 0.0), Point::new(0.0, -2.0), 1.0).is_ok());
    /// ```
    pub fn new(origin: Point<S>, direction: Point<S>, max_t: S) -> Result<Self, crate::Error> {
        let ray = Self {
            origin,
            direction,
            max_t,
        };
        if ray.is_valid() {
            Ok(ray)
        } else {
            Err(crate::Error::InvalidParameter(
                "a ray needs a finite origin, a finite non-zero direction and max_t >= 0",
            ))
        }
    }

    /// Whether [`Ray::new`] would accept this ray.
    ///
    /// ```
    /// use spatix::{Point, Ray};
    /// let ray = Ray { origin: Point::new(0.0, 0.0), direction: Point::new(1.0, 0.0), max_t: f64::NAN };
    /// assert!(!ray.is_valid());
    /// ```
    pub fn is_valid(&self) -> bool {
        self.origin.is_finite()
            && self.direction.is_finite()
            && (self.direction.x != S::ZERO || self.direction.y != S::ZERO)
            && self.max_t >= S::ZERO
    }

    /// The point at parameter `t`.
    ///
    /// ```
    /// use spatix::{Point, Ray};
    /// let ray = Ray::new(Point::new(1.0, 1.0), Point::new(2.0, 0.0), 10.0)?;
    /// assert_eq!(ray.at(1.5), Point::new(4.0, 1.0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn at(&self, t: S) -> Point<S> {
        Point::new(
            self.origin.x + t * self.direction.x,
            self.origin.y + t * self.direction.y,
        )
    }
}

/// The first element a ray hits: its handle and the ray parameter where the ray enters its box
/// (0 when the ray starts inside it).
///
/// # Example
/// ```
/// use spatix::{Aabb, BruteForce, Point, Ray, SpatialIndex, SpatialQuery, Workspace};
/// let mut index = BruteForce::<f64, &str>::new();
/// let wall = index.insert(Aabb::new(Point::new(4.0, -1.0), Point::new(5.0, 1.0))?, "wall")?;
/// let ray = Ray::new(Point::new(0.0, 0.0), Point::new(1.0, 0.0), 100.0)?;
/// let hit = index.raycast(&ray, &mut Workspace::new()).unwrap();
/// assert_eq!((hit.handle, hit.t), (wall, 4.0));
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit<S> {
    /// The element hit.
    pub handle: Handle,
    /// Where the ray enters the element's box.
    pub t: S,
}

/// The interval of `t` over which `origin + t * d` lies within `[lo, hi]` on one axis, or
/// `None` when the ray runs parallel to the axis outside the slab. Never NaN: `d` is finite.
#[inline]
fn slab<S: Scalar>(o: S, d: S, lo: S, hi: S) -> Option<(S, S)> {
    if d == S::ZERO {
        return (lo <= o && o <= hi).then_some((-S::INFINITY, S::INFINITY));
    }
    let (a, b) = ((lo - o) / d, (hi - o) / d);
    Some(if a <= b { (a, b) } else { (b, a) })
}

impl<S: Scalar> Aabb<S> {
    /// The ray parameter at which `ray` enters this box (0 if it starts inside), or `None` if it
    /// misses the box within `0..=max_t` (or is invalid). Boxes are closed: grazing an edge or
    /// a corner is a hit.
    ///
    /// Every structure reports exactly the elements for which this returns `Some`, with this `t`.
    ///
    /// ```
    /// use spatix::{Aabb, Point, Ray};
    /// let b = Aabb::new(Point::new(2.0, 2.0), Point::new(4.0, 4.0))?;
    /// let diagonal = Ray::new(Point::new(0.0, 0.0), Point::new(1.0, 1.0), 10.0)?;
    /// assert_eq!(b.ray_entry(&diagonal), Some(2.0));
    /// let short = Ray::new(Point::new(0.0, 0.0), Point::new(1.0, 1.0), 1.0)?;
    /// assert_eq!(b.ray_entry(&short), None);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn ray_entry(&self, ray: &Ray<S>) -> Option<S> {
        if !ray.is_valid() {
            return None;
        }
        self.entry_unchecked(ray)
    }

    /// [`Aabb::ray_entry`] for a ray already known to be valid.
    #[inline]
    pub(crate) fn entry_unchecked(&self, ray: &Ray<S>) -> Option<S> {
        let (x0, x1) = slab(ray.origin.x, ray.direction.x, self.min.x, self.max.x)?;
        let (y0, y1) = slab(ray.origin.y, ray.direction.y, self.min.y, self.max.y)?;
        let enter = x0.max_s(y0).max_s(S::ZERO);
        let exit = x1.min_s(y1).min_s(ray.max_t);
        (enter <= exit && enter.is_finite()).then_some(enter)
    }

    /// The canonical point where `ray` enters this box, given `t` from [`Aabb::ray_entry`]:
    /// the ray's point at `t`, clamped into the box so that rounding cannot put it outside.
    ///
    /// Structures that list an element in several cells or leaves report it only from the one
    /// whose region owns this point, so each hit is reported once; every cell or leaf computes
    /// the same point, because it depends only on the ray and the element.
    #[inline]
    pub(crate) fn entry_point(&self, ray: &Ray<S>, t: S) -> Point<S> {
        self.closest_point(ray.at(t))
    }

    /// The interval of the ray's parameter over which it may cross this region, robust to
    /// rounding: the region (whose sides may be infinite, for cells and nodes that reach past
    /// the world's border) is widened by a relative margin before the exact test, and the
    /// interval is widened again, so a region the ray touches in exact arithmetic is never
    /// pruned and its true entry is never below the returned start. `None` when the ray
    /// surely misses it.
    #[inline]
    pub(crate) fn ray_span_conservative(&self, ray: &Ray<S>) -> Option<(S, S)> {
        let finite = |v: S| if v.is_finite() { v.abs_s() } else { S::ZERO };
        let margin = |lo: S, hi: S| {
            (finite(lo).max_s(finite(hi)) * S::RELATIVE_SLACK).max_s(S::MIN_POSITIVE)
        };
        let (mx, my) = (
            margin(self.min.x, self.max.x),
            margin(self.min.y, self.max.y),
        );
        let (x0, x1) = slab(
            ray.origin.x,
            ray.direction.x,
            self.min.x - mx,
            self.max.x + mx,
        )?;
        let (y0, y1) = slab(
            ray.origin.y,
            ray.direction.y,
            self.min.y - my,
            self.max.y + my,
        )?;
        let widen = |t: S| t.abs_s() * S::RELATIVE_SLACK;
        let enter = x0.max_s(y0);
        if enter == S::INFINITY {
            // Only reachable at an infinite parameter, where no element is ever hit.
            return None;
        }
        let enter = (enter - widen(enter)).max_s(S::ZERO);
        let exit = x1.min_s(y1);
        let exit = (exit + widen(exit)).min_s(ray.max_t);
        (enter <= exit).then_some((enter, exit))
    }

    /// The start of [`Aabb::ray_span_conservative`]: a lower bound of the ray's entry.
    #[inline]
    pub(crate) fn ray_entry_conservative(&self, ray: &Ray<S>) -> Option<S> {
        self.ray_span_conservative(ray).map(|(enter, _)| enter)
    }
}

/// A hit waiting to be reported: its entry parameter and the element's internal index (see
/// [`Elements`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hit<S> {
    pub(crate) t: S,
    pub(crate) slot: u32,
}

/// Orders hits by `t`, then by index, so the order is total and deterministic.
#[inline]
fn hit_before<S: Scalar>(a: &Hit<S>, b: &Hit<S>) -> bool {
    match a.t.partial_cmp(&b.t) {
        Some(Ordering::Less) => true,
        Some(Ordering::Greater) => false,
        _ => a.slot < b.slot,
    }
}

/// One ray cast in progress: a min-heap of regions (cells, nodes) by conservative entry `t`,
/// and a min-heap of element hits by exact entry `t`. A hit is reported once no region still
/// waiting could hold an earlier one.
pub(crate) struct RaySearch<'w, S> {
    pub(crate) queue: &'w mut Vec<Pending<S>>,
    pub(crate) hits: &'w mut Vec<Hit<S>>,
}

impl<'w, S: Scalar> RaySearch<'w, S> {
    /// A cast over emptied region and hit heaps.
    pub(crate) fn new(queue: &'w mut Vec<Pending<S>>, hits: &'w mut Vec<Hit<S>>) -> Self {
        queue.clear();
        hits.clear();
        Self { queue, hits }
    }
}

impl<S: Scalar> RaySearch<'_, S> {
    /// Queues a region; `pending.key` is its conservative entry parameter.
    #[inline]
    pub(crate) fn push_region(&mut self, pending: Pending<S>) {
        self.queue.push(pending);
        sift_up(self.queue, |a, b| a.key < b.key);
    }

    /// The region with the smallest entry parameter, if any.
    #[inline]
    pub(crate) fn pop_region(&mut self) -> Option<Pending<S>> {
        crate::search::nearest::pop_min(self.queue, |a, b| a.key < b.key)
    }

    /// The entry parameter of the next region (infinity when none is waiting).
    #[inline]
    pub(crate) fn next_region(&self) -> S {
        self.queue.first().map_or(S::INFINITY, |p| p.key)
    }

    /// Records that the ray enters the element at internal index `slot` at `t`.
    #[inline]
    pub(crate) fn push_hit(&mut self, t: S, slot: u32) {
        self.hits.push(Hit { t, slot });
        sift_up(self.hits, hit_before);
    }

    /// Reports, in order, every recorded hit with `t <= bound` (or every hit, when `bound` is
    /// infinite); stops early if the visitor breaks.
    pub(crate) fn report_until<T, F>(
        &mut self,
        bound: S,
        elements: &impl Elements<S, T>,
        visit: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
    {
        while let Some(&first) = self.hits.first() {
            if first.t > bound && bound < S::INFINITY {
                break;
            }
            crate::search::nearest::pop_min(self.hits, hit_before);
            visit(elements.item(first.slot), first.t)?;
        }
        ControlFlow::Continue(())
    }
}

/// Best-first ray traversal of a tree, written once for every tree: `expand(region, search)`
/// pushes the region's children (with [`Aabb::ray_entry_conservative`] keys) and records the
/// hits of the elements it owns; hits are reported as soon as no waiting region can precede
/// them.
pub(crate) fn cast_tree<S: Scalar, T, F>(
    search: &mut RaySearch<'_, S>,
    elements: &impl Elements<S, T>,
    mut expand: impl FnMut(Pending<S>, &mut RaySearch<'_, S>),
    mut visit: F,
) -> ControlFlow<()>
where
    F: FnMut(Item<'_, S, T>, S) -> ControlFlow<()>,
{
    while let Some(region) = search.pop_region() {
        expand(region, search);
        let bound = search.next_region();
        search.report_until(bound, elements, &mut visit)?;
    }
    search.report_until(S::INFINITY, elements, &mut visit)
}
