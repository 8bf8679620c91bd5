//! Points (and vectors) in the plane.

use super::Scalar;

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
#[cfg_attr(
    feature = "views",
    derive(zerocopy::FromBytes, zerocopy::Immutable, zerocopy::KnownLayout)
)]
#[repr(C)]
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

    /// Squared Euclidean distance to another point, rounded: it overflows to infinity beyond
    /// about `1e154` (`f64`; `1.8e19` for `f32`) and underflows to 0 below the reciprocal, so
    /// rank by [`Point::distance`] where coordinates may be that large or small.
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
