//! The two coordinate types, f32 and f64, behind one sealed trait, and their distance keys.

use core::fmt::Debug;
use core::ops::{Add, Div, Mul, Neg, Sub};

mod sealed {
    /// The crate's private half of [`Scalar`](super::Scalar): the distance keys that every
    /// nearest search ranks by.
    ///
    /// A key is a strictly increasing function of the true distance that never overflows:
    /// the distance itself up to `2^(MAX_EXP - 4)`, and beyond it the excess over that
    /// threshold divided by four (distances reach `2·sqrt(2)·MAX` between opposite corners
    /// of the range), so distances beyond `MAX` still rank, to four ulps, instead of tying at
    /// infinity.
    pub trait Sealed: Sized {
        /// The smallest sum of squares free of underflow's rounding: `MIN_POSITIVE · 2^54`.
        const SAFE_LOW: Self;
        /// The key of the distance from `(px, py)` to `[x0, x1] × [y0, y1]`, for the cases
        /// the fast path leaves (squares that overflow or underflow).
        fn key_rescaled(x0: Self, x1: Self, px: Self, y0: Self, y1: Self, py: Self) -> Self;
        /// The distance a key stands for, infinite beyond `MAX`.
        fn key_distance(self) -> Self;
        /// The distance a key stands for, in `f64` (infinite beyond `f64::MAX`).
        fn key_distance_f64(self) -> f64;
    }

    /// Where keys stop being the distance: 2^1020 and 2^124.
    const KNEE_F64: f64 = 1.1235582092889474e307;
    const KNEE_F32: f64 = 2.1267647932558654e37;

    /// The key of a distance `d / 4` (computed without overflow) with the knee `knee`.
    #[inline]
    const fn compress(quarter: f64, knee: f64) -> f64 {
        if quarter <= knee * 0.25 {
            quarter * 4.0
        } else {
            quarter + knee * 0.75
        }
    }

    /// The distance of a key with the knee `knee`.
    #[inline]
    fn expand(key: f64, knee: f64) -> f64 {
        if key <= knee {
            key
        } else {
            (key - knee) * 4.0 + knee
        }
    }

    /// `|v - [lo, hi]|` (0 inside) of values scaled alike.
    #[inline]
    fn axis_excess(lo: f64, hi: f64, v: f64) -> f64 {
        (lo - v).max(v - hi).max(0.0)
    }

    impl Sealed for f32 {
        const SAFE_LOW: f32 = f32::MIN_POSITIVE * (1u64 << 54) as f32;
        #[cold]
        fn key_rescaled(x0: f32, x1: f32, px: f32, y0: f32, y1: f32, py: f32) -> f32 {
            // In f64, where differences and squares of any f32 are finite and normal.
            let f = f64::from;
            let (dx, dy) = (
                axis_excess(f(x0), f(x1), f(px)),
                axis_excess(f(y0), f(y1), f(py)),
            );
            compress((dx * dx + dy * dy).sqrt() * 0.25, KNEE_F32) as f32
        }
        #[inline]
        fn key_distance(self) -> f32 {
            // The key of a distance of exactly MAX: up to it, rounding (of the key, and of
            // its expansion) must not turn the distance into infinity.
            const MAX_KEY: f32 = compress(f32::MAX as f64 * 0.25, KNEE_F32) as f32;
            if f64::from(self) <= KNEE_F32 {
                self
            } else if self <= MAX_KEY {
                expand(f64::from(self), KNEE_F32).min(f64::from(f32::MAX)) as f32
            } else {
                expand(f64::from(self), KNEE_F32) as f32
            }
        }
        #[inline]
        fn key_distance_f64(self) -> f64 {
            expand(f64::from(self), KNEE_F32)
        }
    }

    impl Sealed for f64 {
        const SAFE_LOW: f64 = f64::MIN_POSITIVE * (1u64 << 54) as f64;
        #[cold]
        fn key_rescaled(x0: f64, x1: f64, px: f64, y0: f64, y1: f64, py: f64) -> f64 {
            let (dx, dy) = (axis_excess(x0, x1, px), axis_excess(y0, y1, py));
            let big = dx.max(dy);
            if big <= 1.0 {
                // Tiny: the differences are exact enough; scale them up by 2^600 before
                // squaring (the larger then lies in [2^-474, 2^600]).
                const UP: f64 = 4.149515568880993e180;
                let (a, b) = (dx * UP, dy * UP);
                return (a * a + b * b).sqrt() / UP;
            }
            // Huge: quarters of the coordinates, so that differences cannot overflow, then
            // scaled down by 2^600 before squaring.
            const DOWN: f64 = 2.409919865102884e-181;
            let q = |v: f64| v * 0.25;
            let (a, b) = (
                axis_excess(q(x0), q(x1), q(px)) * DOWN,
                axis_excess(q(y0), q(y1), q(py)) * DOWN,
            );
            compress((a * a + b * b).sqrt() / DOWN, KNEE_F64)
        }
        #[inline]
        fn key_distance(self) -> f64 {
            // The key of a distance of exactly MAX: up to it, rounding must not turn the
            // distance into infinity.
            const MAX_KEY: f64 = compress(f64::MAX * 0.25, KNEE_F64);
            let d = expand(self, KNEE_F64);
            if d.is_infinite() && self <= MAX_KEY {
                f64::MAX
            } else {
                d
            }
        }
        #[inline]
        fn key_distance_f64(self) -> f64 {
            expand(self, KNEE_F64)
        }
    }
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
    /// The square root.
    ///
    /// ```
    /// use spatix::Scalar;
    /// assert_eq!(Scalar::sqrt_s(9.0f32), 3.0);
    /// ```
    fn sqrt_s(self) -> Self;
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
            #[inline]
            fn sqrt_s(self) -> Self {
                self.sqrt()
            }
        }
    };
}
impl_scalar!(f32);
impl_scalar!(f64);
