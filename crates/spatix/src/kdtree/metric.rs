//! The distance arithmetic of the searches. On ordinary data (every coordinate zero or of a
//! magnitude between about 10^-12 and 10^18 in `f32`, 10^-138 and 10^153 in `f64`) the plain
//! squared distance `dx² + dy²` neither overflows nor underflows, and the searches use it
//! ([`Squared`]: as fast as arithmetic gets). Anywhere else they rank by [`Scaled`]
//! distances: the difference vector is scaled by a power of two to unit size before it is
//! squared, so a far point never ties with another at infinity and a near one never ties at
//! zero.

use crate::{Aabb, Point, Scalar};

/// How a search measures: per-axis differences from the query point, a ranking key made of
/// two of them, and the squared distance a search reports.
///
/// Both functions are monotone, which is what makes the searches exact: `diff(q, c)` is
/// non-decreasing in `-c` and zero where `c == q`, `key(dx, dy)` non-decreasing in `|dx|` and
/// in `|dy|`. A region's offsets from the query point (to the split lines crossed) are then
/// never larger than a point's differences, and neither is the region's key.
pub(super) trait Metric<S: Scalar>: Copy {
    /// A per-axis difference.
    type D: Copy + Default + PartialOrd;
    /// A ranking key.
    type K: Copy + Default + PartialOrd;

    /// The difference `q - c` along one axis, in the metric's units.
    fn diff(self, q: S, c: S) -> Self::D;

    /// The ranking key of the difference vector `(dx, dy)`.
    fn key(self, dx: Self::D, dy: Self::D) -> Self::K;

    /// A key as the nearest-neighbour search ranks it, in `S` (monotone).
    fn rank(self, key: Self::K) -> S;

    /// The larger magnitude of the differences from `q` to `lo` and to `hi`: along one axis,
    /// how far the farthest point of `[lo, hi]` lies from `q`.
    fn span(self, q: S, lo: S, hi: S) -> Self::D;

    /// Keys that bracket distance `radius`: a point whose key is below the first lies within
    /// `radius`, one whose key is above the second beyond it, however the keys and the
    /// contract's distance ([`Aabb::distance_to_point`]) round. They are the radius's key
    /// narrowed and widened by [`Scalar::RELATIVE_SLACK`] (hundreds of ulps, where either
    /// rounds by a few), and the second is infinite, taking every point, for a radius beyond
    /// every distance.
    fn radius_keys(self, radius: S) -> (Self::K, Self::K);
}

/// The plain squared distance: exact to rounding wherever squares are normal and finite.
#[derive(Clone, Copy, Debug)]
pub(super) struct Squared;

impl<S: Scalar> Metric<S> for Squared {
    type D = S;
    type K = S;

    #[inline(always)]
    fn diff(self, q: S, c: S) -> S {
        q - c
    }

    #[inline(always)]
    fn key(self, dx: S, dy: S) -> S {
        dx * dx + dy * dy
    }

    #[inline(always)]
    fn rank(self, key: S) -> S {
        key
    }

    #[inline(always)]
    fn span(self, q: S, lo: S, hi: S) -> S {
        (q - lo).abs_s().max_s((q - hi).abs_s())
    }

    #[inline]
    fn radius_keys(self, radius: S) -> (S, S) {
        // Callers use this metric only for ordinary radii: the square is normal (or zero)
        // and far below MAX.
        let square = radius * radius;
        (
            square * (S::ONE - S::RELATIVE_SLACK),
            square * (S::ONE + S::RELATIVE_SLACK),
        )
    }
}

/// Euclidean distances computed without overflow or underflow, in `f64`: each difference
/// vector is scaled by a power of two to unit length before it is squared (a hypotenuse
/// without libm), and the result is scaled by a power of two chosen per query so that every
/// distance from the query point to the tree's points fits in `S` (for `f32` trees the
/// differences of two `f32`s, in `f64`, are exact or nearly so).
#[derive(Clone, Copy, Debug)]
pub(super) struct Scaled {
    /// Whether differences are taken of halved coordinates (in `f64` trees whose
    /// coordinates reach half of `f64::MAX`, where `q - c` could overflow).
    half: bool,
    /// The power of two every key is scaled by.
    exp: i32,
}

impl Scaled {
    /// The scaling for queries from `q` over points in `bounds`, so that every key fits in
    /// `S`.
    pub(super) fn for_query<S: Scalar>(bounds: &Aabb<S>, q: Point<S>) -> Self {
        let far = [
            bounds.min.x,
            bounds.min.y,
            bounds.max.x,
            bounds.max.y,
            q.x,
            q.y,
        ]
        .iter()
        .map(|c| c.to_f64().abs())
        .fold(0.0, f64::max);
        let mut scaled = Self {
            half: far > f64::MAX / 2.0,
            exp: 0,
        };
        let span = |q: S, lo: S, hi: S| {
            let (a, b) = (scaled.diff(q, lo), scaled.diff(q, hi));
            a.abs().max(b.abs())
        };
        let widest =
            span(q.x, bounds.min.x, bounds.max.x).max(span(q.y, bounds.min.y, bounds.max.y));
        if widest > 0.0 {
            // A key is below 4 · 2^exponent(widest) · 2^exp, and S's largest value is at
            // least 2^exponent(max).
            scaled.exp = exponent(S::MAX.to_f64()) - exponent(widest) - 3;
        }
        scaled
    }

    /// The difference vector scaled by a power of two to unit size: `(sx² + sy², e)` with
    /// the squared length `(sx² + sy²) · 4^e` (`e` is `None` for the zero vector).
    fn unit(dx: f64, dy: f64) -> (f64, Option<i32>) {
        let m = dx.abs().max(dy.abs());
        if m == 0.0 {
            return (0.0, None);
        }
        let e = exponent(m);
        let (sx, sy) = (scale(dx, -e), scale(dy, -e));
        (sx * sx + sy * sy, Some(e))
    }

    /// The difference vector's length, scaled by `2^extra` (the search's scale or none).
    fn length(self, dx: f64, dy: f64, extra: i32) -> f64 {
        match Self::unit(dx, dy) {
            (squares, Some(e)) => scale(squares.sqrt(), e + extra),
            (_, None) => 0.0,
        }
    }
}

impl<S: Scalar> Metric<S> for Scaled {
    type D = f64;
    type K = f64;

    #[inline]
    fn diff(self, q: S, c: S) -> f64 {
        let (q, c) = (q.to_f64(), c.to_f64());
        if self.half { q * 0.5 - c * 0.5 } else { q - c }
    }

    #[inline]
    fn key(self, dx: f64, dy: f64) -> f64 {
        self.length(dx, dy, self.exp)
    }

    #[inline]
    fn rank(self, key: f64) -> S {
        S::from_f64(key)
    }

    #[inline]
    fn span(self, q: S, lo: S, hi: S) -> f64 {
        self.diff(q, lo).abs().max(self.diff(q, hi).abs())
    }

    fn radius_keys(self, radius: S) -> (f64, f64) {
        // Narrowed and widened before scaling: `scale` is monotone but loses the slack's
        // bits where the scaled radius is subnormal.
        let r = radius.to_f64();
        let r = if self.half { r * 0.5 } else { r };
        let slack = S::RELATIVE_SLACK.to_f64();
        (
            scale(r * (1.0 - slack), self.exp),
            scale(r * (1.0 + slack), self.exp),
        )
    }
}

/// The binary exponent of a positive finite `x`: `2^e <= x < 2^(e+1)`.
fn exponent(x: f64) -> i32 {
    let biased = ((x.to_bits() >> 52) & 0x7ff) as i32;
    if biased == 0 {
        // Subnormal: scaled into the normal range first (exactly).
        exponent(x * pow2(64)) - 64
    } else {
        biased - 1023
    }
}

/// `2^n` for `n` in the normal range (-1022..=1023).
fn pow2(n: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// `x · 2^n`, in steps that stay in the normal range (exact unless the result overflows or
/// is subnormal, and monotone in `x` either way).
fn scale(mut x: f64, mut n: i32) -> f64 {
    while n > 1000 {
        x *= pow2(1000);
        n -= 1000;
    }
    while n < -1000 {
        x *= pow2(-1000);
        n += 1000;
    }
    x * pow2(n)
}

/// Where a tree's coordinates lie: whether every search from an ordinary point may use
/// [`Squared`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Magnitudes {
    /// Every coordinate is ordinary ([`Magnitudes::ordinary`]).
    ordinary: bool,
}

/// The ordinary range of magnitudes of `S`: with every coordinate zero or in `[low, high]`,
/// a difference is zero or at least `low · ε / 2`, whose square is normal, and two squares
/// of differences add up to less than `S::MAX`.
fn ordinary_range<S: Scalar>() -> (f64, f64) {
    let epsilon = S::RELATIVE_SLACK.to_f64() / 256.0;
    let low = S::MIN_POSITIVE.to_f64().sqrt() / epsilon;
    let high = S::MAX.to_f64().sqrt() / 4.0;
    (low, high)
}

impl Magnitudes {
    /// Whether a coordinate (or a radius) is zero or of an ordinary magnitude.
    #[inline]
    pub(super) fn ordinary<S: Scalar>(c: S) -> bool {
        let (low, high) = ordinary_range::<S>();
        let a = c.to_f64().abs();
        a == 0.0 || (low <= a && a <= high)
    }

    /// The magnitudes of the points whose bounds are `bounds` and whose smallest non-zero
    /// coordinate magnitude is `smallest` (infinite if none).
    pub(super) fn of<S: Scalar>(bounds: &Aabb<S>, smallest: S) -> Self {
        let (low, _) = ordinary_range::<S>();
        let corners = [bounds.min.x, bounds.min.y, bounds.max.x, bounds.max.y];
        Self {
            ordinary: corners.into_iter().all(Self::ordinary) && smallest.to_f64() >= low,
        }
    }

    /// Whether every coordinate is ordinary: what the byte form saves.
    pub(super) fn all_ordinary(self) -> bool {
        self.ordinary
    }

    /// The magnitudes the byte form saved.
    pub(super) fn saved(ordinary: bool) -> Self {
        Self { ordinary }
    }

    /// Whether a search from `q` may use [`Squared`].
    #[inline]
    pub(super) fn squares_safe<S: Scalar>(self, q: Point<S>) -> bool {
        self.ordinary && Self::ordinary(q.x) && Self::ordinary(q.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponents_and_scales_are_exact_over_the_whole_range() {
        for (x, e) in [
            (1.0, 0),
            (1.5, 0),
            (2.0, 1),
            (0.75, -1),
            (f64::MAX, 1023),
            (f64::MIN_POSITIVE, -1022),
            (f64::from_bits(1), -1074),
            (f64::from_bits(3), -1073),
        ] {
            assert_eq!(exponent(x), e, "{x:e}");
        }
        assert_eq!(scale(1.0, -1074), f64::from_bits(1));
        assert_eq!(scale(f64::from_bits(1), 1074), 1.0);
        assert_eq!(scale(f64::from_bits(1), 2097), pow2(1023));
        assert_eq!(scale(pow2(-1000) * 3.0, 2000), pow2(1000) * 3.0);
        assert_eq!(scale(pow2(1000) * 3.0, -2000), pow2(-1000) * 3.0);
        assert_eq!(scale(f64::MAX, 1), f64::INFINITY);
    }

    #[test]
    fn scaled_lengths_match_a_hypotenuse_everywhere() {
        let s = Scaled {
            half: false,
            exp: 0,
        };
        for (dx, dy) in [
            (3.0, 4.0),
            (-3e300, 4e300),
            (3e-320, -4e-320),
            (1e-300, 0.0),
            (0.0, -7e-310),
            (1e308, 1e308),
        ] {
            let want = f64::hypot(dx, dy);
            let got = s.length(dx, dy, 0);
            assert!(
                (got - want).abs() <= want * 1e-15 + f64::from_bits(8),
                "{dx:e} {dy:e}: {got:e} against {want:e}"
            );
        }
        assert!(s.length(1.5e308, 1.5e308, 0).is_infinite());
        assert_eq!(s.length(1e308, 1e308, -1), f64::hypot(0.5e308, 0.5e308));
    }
}
