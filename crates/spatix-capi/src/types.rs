//! The plain C types of the ABI: boxes, points and rays of either precision, the items,
//! pairs, neighbours and hits that queries report, and the callback types.

use core::ffi::c_void;

use spatix::{Aabb, Handle, Point, Ray, Scalar};

use crate::status::{Failure, SpatixStatus};

/// A closed axis-aligned box: `min_x <= max_x`, `min_y <= max_y`, every coordinate finite.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpatixAabb<S> {
    /// Left edge.
    pub min_x: S,
    /// Bottom edge.
    pub min_y: S,
    /// Right edge.
    pub max_x: S,
    /// Top edge.
    pub max_y: S,
}

impl<S: Scalar> SpatixAabb<S> {
    /// The box as spatix's, refused with `SPATIX_STATUS_INVALID_BOX` when invalid.
    pub(crate) fn to_aabb(self) -> Result<Aabb<S>, Failure> {
        Ok(Aabb::new(
            Point::new(self.min_x, self.min_y),
            Point::new(self.max_x, self.max_y),
        )?)
    }

    /// spatix's box as the C type.
    pub(crate) fn from_aabb(b: &Aabb<S>) -> Self {
        Self {
            min_x: b.min.x,
            min_y: b.min.y,
            max_x: b.max.x,
            max_y: b.max.y,
        }
    }
}

/// A point.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpatixPoint<S> {
    /// Horizontal coordinate.
    pub x: S,
    /// Vertical coordinate.
    pub y: S,
}

impl<S: Scalar> SpatixPoint<S> {
    /// The point as spatix's, refused with `SPATIX_STATUS_INVALID_BOX` unless finite.
    pub(crate) fn to_point(self) -> Result<Point<S>, Failure> {
        let p = Point::new(self.x, self.y);
        if p.is_finite() {
            Ok(p)
        } else {
            Err(Failure::new(
                SpatixStatus::InvalidBox,
                "invalid point: a coordinate is NaN or infinite",
            ))
        }
    }
}

/// A ray: from `origin` along `direction` (finite, non-zero) up to `max_t` (in units of
/// `direction`, may be infinite).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpatixRay<S> {
    /// Where the ray starts (`t = 0`), horizontally.
    pub origin_x: S,
    /// Where the ray starts, vertically.
    pub origin_y: S,
    /// Direction, horizontal part.
    pub direction_x: S,
    /// Direction, vertical part.
    pub direction_y: S,
    /// How far the ray reaches.
    pub max_t: S,
}

impl<S: Scalar> SpatixRay<S> {
    /// The ray as spatix's, refused with `SPATIX_STATUS_INVALID_PARAMETER` when invalid.
    pub(crate) fn to_ray(self) -> Result<Ray<S>, Failure> {
        Ok(Ray::new(
            Point::new(self.origin_x, self.origin_y),
            Point::new(self.direction_x, self.direction_y),
            self.max_t,
        )?)
    }
}

/// An element found: its handle and its user value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpatixItem {
    /// The element's handle.
    pub handle: u64,
    /// The element's user value.
    pub value: u64,
}

impl SpatixItem {
    /// The item of a spatix element with a `u64` value.
    pub(crate) fn of<S>(item: spatix::Item<'_, S, u64>) -> Self {
        Self::new(item.handle, *item.value)
    }

    /// The item of a handle and value.
    pub(crate) fn new(handle: Handle, value: u64) -> Self {
        Self {
            handle: handle.to_bits(),
            value,
        }
    }
}

/// Two elements whose boxes intersect, each pair reported once.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpatixPair {
    /// One element.
    pub a: SpatixItem,
    /// The other element.
    pub b: SpatixItem,
}

/// A neighbour found by a k-nearest query: the element and its distance (from the query
/// point to the nearest point of its box; in `double` for both precisions, exactly).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpatixNeighbor {
    /// The element.
    pub item: SpatixItem,
    /// Its distance.
    pub distance: f64,
}

/// An element hit by a ray, and where the ray enters its box (in `double` for both
/// precisions, exactly).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpatixHit {
    /// The element.
    pub item: SpatixItem,
    /// The ray parameter at which the ray enters the box.
    pub t: f64,
}

pub use crate::kinds::SpatixKind;

/// A visitor of elements: return 0 to go on, anything else to stop the query early.
pub type SpatixItemFn = Option<unsafe extern "C" fn(context: *mut c_void, item: SpatixItem) -> i32>;

/// A visitor of pairs: return 0 to go on, anything else to stop the pass early.
pub type SpatixPairFn =
    Option<unsafe extern "C" fn(context: *mut c_void, a: SpatixItem, b: SpatixItem) -> i32>;

/// A visitor of neighbours, nearest first: return 0 to go on, anything else to stop early.
pub type SpatixNeighborFn =
    Option<unsafe extern "C" fn(context: *mut c_void, neighbor: SpatixNeighbor) -> i32>;

/// A visitor of ray hits, nearest first: return 0 to go on, anything else to stop early.
pub type SpatixHitFn = Option<unsafe extern "C" fn(context: *mut c_void, hit: SpatixHit) -> i32>;

/// The moving callback of an update-all pass: `new_box` starts as a copy of `old_box`; write
/// the element's new box there (and change `*value` if wanted).
pub(crate) type UpdateFn<S> = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        handle: u64,
        value: *mut u64,
        old_box: *const SpatixAabb<S>,
        new_box: *mut SpatixAabb<S>,
    ),
>;
