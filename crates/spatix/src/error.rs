//! The crate's error type.

use core::fmt;

/// Everything that can go wrong in spatix. No operation panics on bad input; it returns one
/// of these instead.
///
/// # Example
/// ```
/// use spatix::{Aabb, Error, Point};
/// let err = Aabb::new(Point::new(f64::NAN, 0.0), Point::new(1.0, 1.0)).unwrap_err();
/// assert_eq!(err, Error::InvalidAabb);
/// assert_eq!(err.to_string(), "invalid box: a coordinate is NaN or infinite, or min > max");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A box had a NaN or infinite coordinate, or `min > max` on an axis.
    InvalidAabb,
    /// The handle does not name a live element of this structure (it was removed, or it
    /// belongs to another structure).
    StaleHandle,
    /// A tuning parameter is out of range; the text says which and why.
    InvalidParameter(&'static str),
    /// The structure already holds the most elements it can address (2^32 - 2).
    CapacityExceeded,
    /// The box is larger than the structure accepts: a [`PointGrid`](crate::PointGrid) holds
    /// only boxes no larger than its bound (`max - min <= 2 * max_half_extent` on each axis).
    BoxTooLarge,
    /// `check_invariants` found the structure inconsistent; the text says where.
    InvariantViolated(String),
    /// Bytes given to a `from_bytes` are not a structure's byte form (cut short, of another
    /// version, structure, scalar or value type, or inconsistent); the text says what.
    Corrupt(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidAabb => {
                f.write_str("invalid box: a coordinate is NaN or infinite, or min > max")
            }
            Self::StaleHandle => f.write_str("stale handle: the element was removed or never here"),
            Self::InvalidParameter(why) => write!(f, "invalid parameter: {why}"),
            Self::CapacityExceeded => f.write_str("capacity exceeded: too many elements"),
            Self::BoxTooLarge => {
                f.write_str("box too large: larger than the structure's bound on element size")
            }
            Self::InvariantViolated(why) => write!(f, "invariant violated: {why}"),
            Self::Corrupt(why) => write!(f, "corrupt bytes: {why}"),
        }
    }
}

impl std::error::Error for Error {}
