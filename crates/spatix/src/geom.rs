//! Scalars, points and closed axis-aligned boxes.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

use crate::Error;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The coordinate type: `f32` or `f64`.
///
/// The trait is sealed; every structure in the crate is generic over it.
///
/// # Example
/// ```
/// use spatix::Scalar;
/// fn mid<S: Scalar>(a: S, b: S) -> S { (a + b) * S::HALF }
/// assert_eq!(mid(1.0f32, 2.0), 1.5);
/// ```
pub trait Scalar:
    sealed::Sealed
    + Copy
    + Default
    + Debug
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// 0.5.
    const HALF: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// The largest finite value.
    const MAX: Self;
    /// The smallest positive normal value.
    const MIN_POSITIVE: Self;
    /// A relative margin (a few hundred ulps) that covers the rounding of one ray-box test;
    /// used to widen cells and nodes so that a ray is never pruned from a region it touches.
    const RELATIVE_SLACK: Self;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// Lossless (f32) or exact (f64) conversion to `f64`.
    fn to_f64(self) -> f64;
    /// Conversion from `f64`, rounding to nearest.
    fn from_f64(v: f64) -> Self;
    /// Saturating conversion to `i64` (NaN becomes 0).
    fn to_i64(self) -> i64;
    /// The absolute value.
    fn abs_s(self) -> Self;
    /// The smaller of two values (the other one if either is NaN).
    #[inline]
    fn min_s(self, other: Self) -> Self {
        if other < self { other } else { self }
    }
    /// The larger of two values (the other one if either is NaN).
    #[inline]
    fn max_s(self, other: Self) -> Self {
        if other > self { other } else { self }
    }
}

macro_rules! impl_scalar {
    ($t:ty) => {
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            const INFINITY: Self = <$t>::INFINITY;
            const MAX: Self = <$t>::MAX;
            const MIN_POSITIVE: Self = <$t>::MIN_POSITIVE;
            const RELATIVE_SLACK: Self = 256.0 * <$t>::EPSILON;
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline]
            fn abs_s(self) -> Self {
                self.abs()
            }
        }
    };
}
impl_scalar!(f32);
impl_scalar!(f64);

/// A point (or a vector) in the plane.
///
/// # Example
/// ```
/// use spatix::Point;
/// let p = Point::new(1.0f64, 2.0);
/// assert_eq!(p.x + p.y, 3.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Point<S> {
    /// Horizontal coordinate.
    pub x: S,
    /// Vertical coordinate.
    pub y: S,
}

impl<S: Scalar> Point<S> {
    /// A point from its coordinates.
    ///
    /// ```
    /// # use spatix::Point;
    /// assert_eq!(Point::new(3.0f32, 4.0).y, 4.0);
    /// ```
    #[inline]
    pub const fn new(x: S, y: S) -> Self {
        Self { x, y }
    }

    /// Squared Euclidean distance to another point.
    ///
    /// ```
    /// # use spatix::Point;
    /// assert_eq!(Point::new(0.0f64, 0.0).distance_2(Point::new(3.0, 4.0)), 25.0);
    /// ```
    #[inline]
    pub fn distance_2(self, other: Self) -> S {
        let dx = self.x - other.x;
        let dy = self.y - other.y;
        dx * dx + dy * dy
    }

    /// Whether both coordinates are finite.
    ///
    /// ```
    /// # use spatix::Point;
    /// assert!(!Point::new(f32::NAN, 0.0).is_finite());
    /// ```
    #[inline]
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

/// A closed axis-aligned box: it contains its boundary, so boxes that only touch intersect.
///
/// The fields are public so a game can build boxes cheaply every frame; every structure
/// validates a box when it is inserted or moved, so a NaN, infinite or inverted box is
/// rejected there with [`Error::InvalidAabb`]. [`Aabb::new`] validates up front.
///
/// # Example
/// ```
/// use spatix::{Aabb, Point};
/// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1.0, 1.0))?;
/// let b = Aabb::new(Point::new(1.0f32, 1.0), Point::new(2.0, 2.0))?;
/// assert!(a.intersects(&b)); // touching corners count
/// # Ok::<(), spatix::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Aabb<S> {
    /// Lower-left corner.
    pub min: Point<S>,
    /// Upper-right corner.
    pub max: Point<S>,
}

impl<S: Scalar> Aabb<S> {
    /// A box from its corners.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if a coordinate is NaN or infinite, or `min > max` on an axis.
    ///
    /// ```
    /// use spatix::{Aabb, Error, Point};
    /// assert!(Aabb::new(Point::new(0.0f64, 0.0), Point::new(1.0, 1.0)).is_ok());
    /// assert_eq!(Aabb::new(Point::new(2.0f64, 0.0), Point::new(1.0, 1.0)), Err(Error::InvalidAabb));
    /// ```
    pub fn new(min: Point<S>, max: Point<S>) -> Result<Self, Error> {
        Self { min, max }.validated()
    }

    /// A box of zero size at a point.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if a coordinate is NaN or infinite.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let p = Aabb::point(Point::new(1.0f32, 2.0))?;
    /// assert_eq!(p.min, p.max);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn point(p: Point<S>) -> Result<Self, Error> {
        Self::new(p, p)
    }

    /// A box from its centre and its half extents (half width, half height).
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] if the result is not a valid box (negative half extent,
    /// NaN, infinity or overflow).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let b = Aabb::from_center_half_extents(Point::new(5.0f64, 5.0), Point::new(1.0, 2.0))?;
    /// assert_eq!(b.min, Point::new(4.0, 3.0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn from_center_half_extents(center: Point<S>, half: Point<S>) -> Result<Self, Error> {
        if !(half.x >= S::ZERO && half.y >= S::ZERO) {
            return Err(Error::InvalidAabb);
        }
        Self::new(
            Point::new(center.x - half.x, center.y - half.y),
            Point::new(center.x + half.x, center.y + half.y),
        )
    }

    /// `self` if it is valid, else [`Error::InvalidAabb`]: the check every structure applies
    /// to the boxes it is given.
    ///
    /// # Errors
    /// [`Error::InvalidAabb`] for a NaN or infinite coordinate or an inverted axis.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let bad = Aabb { min: Point::new(0.0f32, f32::NAN), max: Point::new(1.0, 1.0) };
    /// assert!(bad.validated().is_err());
    /// ```
    #[inline]
    pub fn validated(self) -> Result<Self, Error> {
        if self.is_valid() {
            Ok(self)
        } else {
            Err(Error::InvalidAabb)
        }
    }

    /// Whether every coordinate is finite and `min <= max` on both axes.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// assert!(Aabb { min: Point::new(0.0f64, 0.0), max: Point::new(0.0, 0.0) }.is_valid());
    /// ```
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.min.is_finite()
            && self.max.is_finite()
            && self.min.x <= self.max.x
            && self.min.y <= self.max.y
    }

    /// Closed intersection test: boxes that share only an edge or a corner intersect.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1.0, 1.0))?;
    /// let b = Aabb::new(Point::new(1.0f32, 0.5), Point::new(3.0, 0.7))?;
    /// assert!(a.intersects(&b));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn intersects(&self, other: &Self) -> bool {
        self.min.x <= other.max.x
            && other.min.x <= self.max.x
            && self.min.y <= other.max.y
            && other.min.y <= self.max.y
    }

    /// [`Aabb::intersects`] without short-circuits: all four comparisons, combined with `&`,
    /// so that a loop testing many boxes against one compiles to vector compares.
    #[inline]
    pub(crate) fn intersects_branchless(&self, other: &Self) -> bool {
        (self.min.x <= other.max.x)
            & (other.min.x <= self.max.x)
            & (self.min.y <= other.max.y)
            & (other.min.y <= self.max.y)
    }

    /// Whether `other` lies entirely inside `self` (boundaries included).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f64, 0.0), Point::new(4.0, 4.0))?;
    /// assert!(a.contains(&a));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn contains(&self, other: &Self) -> bool {
        self.min.x <= other.min.x
            && other.max.x <= self.max.x
            && self.min.y <= other.min.y
            && other.max.y <= self.max.y
    }

    /// Whether the point lies inside the box or on its boundary.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1.0, 1.0))?;
    /// assert!(a.contains_point(Point::new(1.0, 0.0)));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn contains_point(&self, p: Point<S>) -> bool {
        self.min.x <= p.x && p.x <= self.max.x && self.min.y <= p.y && p.y <= self.max.y
    }

    /// The smallest box containing both.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::point(Point::new(0.0f64, 3.0))?;
    /// let b = Aabb::point(Point::new(2.0f64, 1.0))?;
    /// assert_eq!(a.union(&b), Aabb::new(Point::new(0.0, 1.0), Point::new(2.0, 3.0))?);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn union(&self, other: &Self) -> Self {
        Self {
            min: Point::new(self.min.x.min_s(other.min.x), self.min.y.min_s(other.min.y)),
            max: Point::new(self.max.x.max_s(other.max.x), self.max.y.max_s(other.max.y)),
        }
    }

    /// The centre of the box.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(2.0, 4.0))?;
    /// assert_eq!(a.center(), Point::new(1.0, 2.0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn center(&self) -> Point<S> {
        Point::new(
            self.min.x * S::HALF + self.max.x * S::HALF,
            self.min.y * S::HALF + self.max.y * S::HALF,
        )
    }

    /// Width and height.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(2.0, 4.0))?;
    /// assert_eq!(a.size(), Point::new(2.0, 4.0));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn size(&self) -> Point<S> {
        Point::new(self.max.x - self.min.x, self.max.y - self.min.y)
    }

    /// The point of the box nearest to `p` (`p` itself when inside).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1.0, 1.0))?;
    /// assert_eq!(a.closest_point(Point::new(3.0, 0.5)), Point::new(1.0, 0.5));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn closest_point(&self, p: Point<S>) -> Point<S> {
        Point::new(
            p.x.max_s(self.min.x).min_s(self.max.x),
            p.y.max_s(self.min.y).min_s(self.max.y),
        )
    }

    /// Squared Euclidean distance from `p` to the nearest point of the box (0 inside).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f32, 0.0), Point::new(1.0, 1.0))?;
    /// assert_eq!(a.distance_2_to_point(Point::new(4.0, 5.0)), 25.0);
    /// assert_eq!(a.distance_2_to_point(Point::new(0.5, 0.5)), 0.0);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn distance_2_to_point(&self, p: Point<S>) -> S {
        let dx = (self.min.x - p.x).max_s(p.x - self.max.x).max_s(S::ZERO);
        let dy = (self.min.y - p.y).max_s(p.y - self.max.y).max_s(S::ZERO);
        dx * dx + dy * dy
    }

    /// Whether the distance from `p` to the box is at most `radius`, exact even where squaring
    /// would overflow (a radius of infinity holds every box).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(3.0f32, 4.0), Point::new(5.0, 5.0))?;
    /// assert!(a.within_distance(Point::new(0.0, 0.0), 5.0));
    /// assert!(!a.within_distance(Point::new(0.0, 0.0), 4.9));
    /// assert!(a.within_distance(Point::new(-3e38, 0.0), f32::INFINITY));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn within_distance(&self, p: Point<S>, radius: S) -> bool {
        let radius_2 = radius * radius;
        let d2 = self.distance_2_to_point(p);
        if radius_2.is_finite() {
            d2 <= radius_2
        } else {
            // Squares overflow: compare lengths in f64 instead (exact inputs for f32; hypot
            // does not overflow before its result does).
            let axis = |lo: S, hi: S, v: S| {
                let (lo, hi, v) = (lo.to_f64(), hi.to_f64(), v.to_f64());
                (lo - v).max(v - hi).max(0.0)
            };
            let dx = axis(self.min.x, self.max.x, p.x);
            let dy = axis(self.min.y, self.max.y, p.y);
            dx.hypot(dy) <= radius.to_f64()
        }
    }

    /// The box `point ± radius`, saturated at ±MAX so that huge and infinite radii still
    /// give a valid box. Rounding is monotonic, so every box at distance `<= radius` from
    /// `point` intersects it; `within` reports only elements that do, which also rules out
    /// those that [`Aabb::within_distance`] admits only because a difference rounded down
    /// to the radius.
    #[inline]
    pub(crate) fn around(point: Point<S>, radius: S) -> Self {
        let lo = |v: S| (v - radius).max_s(-S::MAX);
        let hi = |v: S| (v + radius).min_s(S::MAX);
        Self {
            min: Point::new(lo(point.x), lo(point.y)),
            max: Point::new(hi(point.x), hi(point.y)),
        }
    }

    /// This box with every coordinate clamped into `bounds`: a box outside the bounds becomes
    /// a (possibly zero-size) box on their border. Used to file out-of-world elements in
    /// border cells.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let world = Aabb::new(Point::new(0.0f64, 0.0), Point::new(10.0, 10.0))?;
    /// let far = Aabb::new(Point::new(20.0f64, -5.0), Point::new(30.0, 5.0))?;
    /// assert_eq!(far.clamped_to(&world), Aabb::new(Point::new(10.0, 0.0), Point::new(10.0, 5.0))?);
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn clamped_to(&self, bounds: &Self) -> Self {
        Self {
            min: bounds.closest_point(self.min),
            max: bounds.closest_point(self.max),
        }
    }
}
