//! The coordinate types the package indexes in, `f32` and `f64`, and how other values are
//! narrowed to them (shared by the array and Arrow readers).

use numpy::Element;
use spatix::Scalar;

/// A scalar both spatix and numpy know: the library's [`Scalar`], as a numpy element.
pub(crate) trait PyScalar: Scalar + Element {
    /// Whether values of another dtype beyond this one's range are clamped to its largest
    /// finite value on the way in (`f32`: the command line's `--f32` rule, so that a finite
    /// `1e300` is `3.4e38` rather than an infinity numpy's cast makes of it).
    const CLAMPS: bool;
}

impl PyScalar for f32 {
    const CLAMPS: bool = true;
}

impl PyScalar for f64 {
    const CLAMPS: bool = false;
}

/// `v` in `S`: rounded to the nearest `S`, and, where `S` [clamps](PyScalar::CLAMPS), a
/// finite value beyond its range to its largest finite value with its sign.
#[inline]
pub(crate) fn narrow<S: PyScalar>(v: f64) -> S {
    let max = S::MAX.to_f64();
    if S::CLAMPS && v.is_finite() {
        S::from_f64(v.clamp(-max, max))
    } else {
        S::from_f64(v)
    }
}
