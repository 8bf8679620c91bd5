//! Closed axis-aligned boxes.

use super::{Point, Scalar};
use crate::Error;

// `Point::distance` lives here, beside the box distance it is written with, so that points
// need nothing of boxes.
impl<S: Scalar> Point<S> {
    /// Euclidean distance to another point, without overflow or underflow in between:
    /// within a few ulps of the true distance, infinite only when it exceeds the type's
    /// maximum ([`Aabb::distance_to_point`] of a zero-size box).
    ///
    /// ```
    /// # use spatix::Point;
    /// assert_eq!(Point::new(0.0f64, 0.0).distance(Point::new(3.0, 4.0)), 5.0);
    /// // Squares beyond f64::MAX, rescaled: within a few ulps.
    /// let d = Point::new(0.0f64, 0.0).distance(Point::new(3e200, 4e200));
    /// assert!((d - 5e200).abs() <= 4.0 * f64::EPSILON * 5e200);
    /// assert!(Point::new(0.0f64, 0.0).distance(Point::new(1e-200, 0.0)) > 0.0);
    /// assert_eq!(Point::new(-3e38f32, 0.0).distance(Point::new(3e38, 0.0)), f32::INFINITY);
    /// // A distance of exactly MAX is finite.
    /// let half = f64::MAX / 2.0;
    /// assert!(Point::new(-half, 0.0).distance(Point::new(half, 0.0)) >= f64::MAX * (1.0 - 4.0 * f64::EPSILON));
    /// let half = f32::MAX / 2.0;
    /// assert!(Point::new(-half, 0.0).distance(Point::new(half, 0.0)) >= f32::MAX * (1.0 - 4.0 * f32::EPSILON));
    /// ```
    #[inline]
    pub fn distance(self, other: Self) -> S {
        Aabb {
            min: other,
            max: other,
        }
        .distance_to_point(self)
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
#[cfg_attr(
    feature = "views",
    derive(zerocopy::FromBytes, zerocopy::Immutable, zerocopy::KnownLayout)
)]
#[repr(C)]
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

    /// `self` if it is valid, else [`Error::InvalidParameter`]: the check of the grids' and
    /// the sweep grid's `world` parameter (the quadtrees refuse an invalid world with
    /// [`Error::InvalidAabb`], through [`validated`](Self::validated)).
    pub(crate) fn valid_world(self) -> Result<Self, Error> {
        if self.is_valid() {
            Ok(self)
        } else {
            Err(Error::InvalidParameter(
                "world must be a valid box (finite, min <= max)",
            ))
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

    /// Squared Euclidean distance from `p` to the nearest point of the box (0 inside),
    /// rounded like [`Point::distance_2`]: rank by [`Aabb::distance_to_point`] where squares
    /// may overflow or underflow.
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

    /// Euclidean distance from `p` to the nearest point of the box (0 inside), without
    /// overflow or underflow in between (squares out of range are rescaled): within a few
    /// ulps of the true distance, infinite only when it exceeds the type's maximum. What
    /// every `nearest` search reports.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(0.0f64, 0.0), Point::new(1.0, 1.0))?;
    /// assert_eq!(a.distance_to_point(Point::new(4.0, 5.0)), 5.0);
    /// let within_ulps = |d: f64, exact: f64| (d - exact).abs() <= 4.0 * f64::EPSILON * exact;
    /// assert!(within_ulps(a.distance_to_point(Point::new(1.0 + 3e200, 1.0 + 4e200)), 5e200));
    /// assert!(within_ulps(a.distance_to_point(Point::new(-1.7e308, 0.5)), 1.7e308));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn distance_to_point(&self, p: Point<S>) -> S {
        self.distance_key(p).key_distance()
    }

    /// What nearest searches rank by: a strictly increasing function of the distance from
    /// `p` to the box that never overflows, equal to [`Aabb::distance_to_point`] up to
    /// `2^(MAX_EXP - 4)` (see `sealed::Sealed`). Ordinary magnitudes take one multiply-add and
    /// a square root; squares that would overflow or underflow are rescaled.
    #[inline]
    pub(crate) fn distance_key(&self, p: Point<S>) -> S {
        let dx = (self.min.x - p.x).max_s(p.x - self.max.x).max_s(S::ZERO);
        let dy = (self.min.y - p.y).max_s(p.y - self.max.y).max_s(S::ZERO);
        let sum = dx * dx + dy * dy;
        // At or above SAFE_LOW, squares are free of underflow's rounding (an addend below the
        // normal range errs by far less than the sum's last bit); up to MAX, of overflow.
        if sum >= S::SAFE_LOW && sum <= S::MAX {
            sum.sqrt_s()
        } else if sum == S::ZERO && dx == S::ZERO && dy == S::ZERO {
            S::ZERO
        } else {
            S::key_rescaled(self.min.x, self.max.x, p.x, self.min.y, self.max.y, p.y)
        }
    }

    /// Whether the distance from `p` to the box ([`Aabb::distance_to_point`]) is at most
    /// `radius`, for any finite coordinates (a radius of infinity holds every box).
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let a = Aabb::new(Point::new(3.0f32, 4.0), Point::new(5.0, 5.0))?;
    /// assert!(a.within_distance(Point::new(0.0, 0.0), 5.0));
    /// assert!(!a.within_distance(Point::new(0.0, 0.0), 4.9));
    /// assert!(a.within_distance(Point::new(-3e38, 0.0), f32::INFINITY));
    /// let tiny = Aabb::point(Point::new(1e-30f32, 0.0))?; // squares of 1e-30 underflow in f32
    /// assert!(tiny.within_distance(Point::new(0.0, 0.0), 1e-30));
    /// assert!(!tiny.within_distance(Point::new(0.0, 0.0), 0.9e-30));
    /// # Ok::<(), spatix::Error>(())
    /// ```
    #[inline]
    pub fn within_distance(&self, p: Point<S>, radius: S) -> bool {
        self.distance_to_point(p) <= radius
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

    /// Where the bulk of `sample` lies: a world to size a structure for, robust to stray
    /// elements. Per axis, the 0.5% and 99.5% quantiles of the boxes' centres, widened by a
    /// thirty-second of that span and by the 99.5% quantile of the boxes' extents, and never
    /// beyond the box around all of them; then kept within ±MAX/4, so that its width and
    /// height are finite. Elements outside it are still stored by every structure (in border
    /// cells or nodes), so a few far-away ones cost what a few near ones do, where the box
    /// around all of them would make the cells of a grid as large as the stray distance.
    /// Invalid boxes are ignored; `None` if no box is valid.
    ///
    /// ```
    /// # use spatix::{Aabb, Point};
    /// let mut sample: Vec<Aabb<f64>> = (0..1000)
    ///     .map(|i| Aabb::point(Point::new((i % 100) as f64, (i / 100) as f64 * 10.0)))
    ///     .collect::<Result<_, _>>()?;
    /// sample.push(Aabb::point(Point::new(1e9, 1e9))?); // a stray point
    /// let world = Aabb::bulk_of(&sample).unwrap();
    /// assert!(world.max.x < 200.0 && world.max.y < 200.0);
    /// let extremes = [Aabb::point(Point::new(-1e308f64, 0.0))?, Aabb::point(Point::new(1e308, 0.0))?];
    /// assert!(Aabb::bulk_of(&extremes).unwrap().size().x.is_finite());
    /// # Ok::<(), spatix::Error>(())
    /// ```
    pub fn bulk_of(sample: &[Self]) -> Option<Self> {
        let valid: Vec<&Self> = sample.iter().filter(|b| b.is_valid()).collect();
        let n = valid.len();
        if n == 0 {
            return None;
        }
        let half = |a: S, b: S| a.to_f64() * 0.5 + b.to_f64() * 0.5;
        let mut extents: Vec<f64> = valid
            .iter()
            .map(|b| (b.max.x.to_f64() - b.min.x.to_f64()).max(b.max.y.to_f64() - b.min.y.to_f64()))
            .collect();
        let extent = bulk_range(&mut extents).1;
        // Per axis: the bulk of the centres, widened, within all the boxes (a generic
        // function rather than closures behind `&dyn Fn`: one indirect call per box and
        // axis cost more than the quantiles).
        fn axis<S: Scalar, B: Copy>(
            valid: &[B],
            extent: f64,
            centre: impl Fn(B) -> f64,
            low: impl Fn(B) -> S,
            high: impl Fn(B) -> S,
        ) -> (S, S) {
            let quarter = S::MAX.to_f64() * 0.25;
            let mut c: Vec<f64> = valid.iter().map(|&b| centre(b)).collect();
            let (a, b) = bulk_range(&mut c);
            let grow = (b - a) / 32.0 + extent;
            let (all_low, all_high) = valid
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &b| {
                    (lo.min(low(b).to_f64()), hi.max(high(b).to_f64()))
                });
            let from = (a - grow).max(all_low).clamp(-quarter, quarter);
            let to = (b + grow).min(all_high).clamp(-quarter, quarter);
            (S::from_f64(from), S::from_f64(to.max(from)))
        }
        let (x0, x1) = axis(
            &valid,
            extent,
            |b: &Self| half(b.min.x, b.max.x),
            |b| b.min.x,
            |b| b.max.x,
        );
        let (y0, y1) = axis(
            &valid,
            extent,
            |b: &Self| half(b.min.y, b.max.y),
            |b| b.min.y,
            |b| b.max.y,
        );
        Some(Self {
            min: Point::new(x0, y0),
            max: Point::new(x1, y1),
        })
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

/// Where the bulk of `values` lies: their 0.5% and 99.5% quantiles (the least and the greatest
/// below 200 values), so that a few strays, however far, do not move either end. Reorders
/// `values`; `values` must not be empty.
pub(crate) fn bulk_range(values: &mut [f64]) -> (f64, f64) {
    let n = values.len();
    let trim = n / 200;
    let lo = *values.select_nth_unstable_by(trim, f64::total_cmp).1;
    let hi = *values
        .select_nth_unstable_by(n - 1 - trim, f64::total_cmp)
        .1;
    (lo, hi)
}
