//! Exact arithmetic for the oracles, independent of the library's floating point: every finite
//! `f64` (and so every `f32`) is an integer multiple of 2^-1074 below 2^1024, so it becomes an
//! integer of at most 2098 bits, built from its bits; differences, squares and their sums are
//! then computed exactly on unsigned big integers (little-endian `u64` limbs). A squared distance
//! comes out as an integer times 2^-2148. Used by the conformance suite and the fuzz judge
//! (`spatix-fuzz` includes this file), so neither judges distances with the arithmetic it tests.

use core::cmp::Ordering;

use spatix::{Aabb, Point, Scalar};

/// An unsigned integer: `limbs · 2^(64 · low)`, little-endian limbs with no zero limb at
/// either end (zero has no limbs and `low` 0). The low zero limbs are counted rather than
/// stored, so that the integers of ordinary magnitudes (about 2^1074 times a float) keep one
/// or two limbs, and their arithmetic stays cheap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Big {
    low: usize,
    limbs: Vec<u64>,
}

impl Big {
    fn trimmed(mut low: usize, mut v: Vec<u64>) -> Self {
        while v.last() == Some(&0) {
            v.pop();
        }
        let zeros = v.iter().take_while(|&&l| l == 0).count();
        if zeros == v.len() {
            return Self::zero();
        }
        v.drain(..zeros);
        low += zeros;
        Self { low, limbs: v }
    }

    fn zero() -> Self {
        Self {
            low: 0,
            limbs: Vec::new(),
        }
    }

    fn small(v: u64) -> Self {
        Self::trimmed(0, vec![v])
    }

    fn is_zero(&self) -> bool {
        self.limbs.is_empty()
    }

    /// One past the highest limb.
    fn top(&self) -> usize {
        self.low + self.limbs.len()
    }

    /// The limb of weight `2^(64 · i)`.
    fn limb(&self, i: usize) -> u64 {
        i.checked_sub(self.low)
            .and_then(|k| self.limbs.get(k))
            .copied()
            .unwrap_or(0)
    }

    /// `self * 2^bits`.
    fn shl(&self, bits: u32) -> Self {
        if self.is_zero() {
            return self.clone();
        }
        let (limbs, bits) = ((bits / 64) as usize, bits % 64);
        let mut v = Vec::with_capacity(self.limbs.len() + 1);
        let mut carry = 0u64;
        for &l in &self.limbs {
            if bits == 0 {
                v.push(l);
            } else {
                v.push((l << bits) | carry);
                carry = l >> (64 - bits);
            }
        }
        v.push(carry);
        Self::trimmed(self.low + limbs, v)
    }

    fn add(&self, other: &Self) -> Self {
        if self.is_zero() {
            return other.clone();
        }
        if other.is_zero() {
            return self.clone();
        }
        let low = self.low.min(other.low);
        let top = self.top().max(other.top());
        let mut v = Vec::with_capacity(top - low + 1);
        let mut carry = 0u128;
        for i in low..top {
            let s = u128::from(self.limb(i)) + u128::from(other.limb(i)) + carry;
            v.push(s as u64);
            carry = s >> 64;
        }
        v.push(carry as u64);
        Self::trimmed(low, v)
    }

    /// `self - other`; requires `self >= other`.
    fn sub(&self, other: &Self) -> Self {
        assert!(*self >= *other, "exact: negative difference");
        if other.is_zero() {
            return self.clone();
        }
        let low = self.low.min(other.low);
        let mut v = Vec::with_capacity(self.top() - low);
        let mut borrow = 0i128;
        for i in low..self.top() {
            let mut d = i128::from(self.limb(i)) - i128::from(other.limb(i)) - borrow;
            borrow = i128::from(d < 0);
            if d < 0 {
                d += 1 << 64;
            }
            v.push(d as u64);
        }
        Self::trimmed(low, v)
    }

    fn mul(&self, other: &Self) -> Self {
        if self.is_zero() || other.is_zero() {
            return Self::zero();
        }
        let mut v = vec![0u64; self.limbs.len() + other.limbs.len()];
        for (i, &a) in self.limbs.iter().enumerate() {
            let mut carry = 0u128;
            for (j, &b) in other.limbs.iter().enumerate() {
                let t = u128::from(a) * u128::from(b) + u128::from(v[i + j]) + carry;
                v[i + j] = t as u64;
                carry = t >> 64;
            }
            v[i + other.limbs.len()] = carry as u64;
        }
        Self::trimmed(self.low + other.low, v)
    }
}

impl PartialOrd for Big {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Big {
    fn cmp(&self, other: &Self) -> Ordering {
        self.top().cmp(&other.top()).then_with(|| {
            let low = self.low.min(other.low);
            (low..self.top())
                .rev()
                .map(|i| self.limb(i).cmp(&other.limb(i)))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        })
    }
}

/// A finite `f64` as (negative, |v| · 2^1074), from its bits.
fn fixed(v: f64) -> (bool, Big) {
    assert!(v.is_finite(), "exact: {v} is not finite");
    let bits = v.to_bits();
    let negative = bits >> 63 == 1;
    let exponent = ((bits >> 52) & 0x7ff) as u32;
    let fraction = bits & ((1 << 52) - 1);
    let (mantissa, shift) = if exponent == 0 {
        (fraction, 0)
    } else {
        (fraction | (1 << 52), exponent - 1)
    };
    (negative, Big::small(mantissa).shl(shift))
}

/// `|a - b| · 2^1074`, exactly.
fn difference(a: f64, b: f64) -> Big {
    let ((na, ma), (nb, mb)) = (fixed(a), fixed(b));
    if na != nb {
        ma.add(&mb)
    } else if ma >= mb {
        ma.sub(&mb)
    } else {
        mb.sub(&ma)
    }
}

/// The exact order of two finite values, from their bits (no float comparison): the bits of
/// a non-negative float grow with its value, so the magnitude bits, negated for a negative
/// float, are an integer key in the floats' order (with -0 and +0 equal).
pub(crate) fn order(a: f64, b: f64) -> Ordering {
    fn key(v: f64) -> i64 {
        assert!(v.is_finite(), "exact: {v} is not finite");
        let bits = v.to_bits();
        let magnitude = (bits & !(1 << 63)) as i64;
        if bits >> 63 == 1 {
            -magnitude
        } else {
            magnitude
        }
    }
    key(a).cmp(&key(b))
}

/// The gap along one axis from `v` to `[lo, hi]` (0 inside), times 2^1074.
fn gap(lo: f64, hi: f64, v: f64) -> Big {
    if order(v, lo) == Ordering::Less {
        difference(lo, v)
    } else if order(v, hi) == Ordering::Greater {
        difference(v, hi)
    } else {
        Big::zero()
    }
}

/// The exact squared distance from `(px, py)` to the box `[x0, x1] × [y0, y1]`, times 2^2148.
pub(crate) fn distance_2(x0: f64, y0: f64, x1: f64, y1: f64, px: f64, py: f64) -> Big {
    let (gx, gy) = (gap(x0, x1, px), gap(y0, y1, py));
    gx.mul(&gx).add(&gy.mul(&gy))
}

/// [`distance_2`] from `p` to the box `b`.
pub(crate) fn box_distance_2<S: Scalar>(b: &Aabb<S>, p: Point<S>) -> Big {
    let f = Scalar::to_f64;
    distance_2(
        f(b.min.x),
        f(b.min.y),
        f(b.max.x),
        f(b.max.y),
        f(p.x),
        f(p.y),
    )
}

/// The tolerance within which a distance the library computed must match the exact one: a
/// relative one in bits of the squares (a few ulps of `S`), and an absolute one, `S`'s
/// smallest subnormal (subnormal results have few bits).
pub(crate) fn tolerance<S: Scalar>() -> (u32, f64) {
    if S::MAX.to_f64() > f64::from(f32::MAX) {
        (40, 5e-324)
    } else {
        (18, f64::from(f32::from_bits(1)))
    }
}

/// Whether `b` may be reported within the finite, non-negative `radius` of `p` (its exact
/// distance is at most the radius, to the tolerance), and whether it must be (at most the
/// radius less the tolerance): a distance rounded either way is accepted in between.
pub(crate) fn within<S: Scalar>(b: &Aabb<S>, p: Point<S>, radius: S) -> (bool, bool) {
    let (bits, ulp) = tolerance::<S>();
    let (d2, r) = (box_distance_2(b, p), radius.to_f64());
    let r2 = square(r);
    let may = at_most(&d2, &r2, bits) || d2 <= square(r + ulp);
    let must = clearly_at_most(&d2, &r2, bits) && d2 <= square((r - ulp).max(0.0));
    (may, must)
}

/// `v²` times 2^2148 for a finite `v`: on the scale of [`distance_2`].
pub(crate) fn square(v: f64) -> Big {
    let (_, m) = fixed(v);
    m.mul(&m)
}

/// Whether `a <= b · (1 + 2^-bits)`: `a` is no more than `b`, up to a relative tolerance.
pub(crate) fn at_most(a: &Big, b: &Big, bits: u32) -> bool {
    a.shl(bits) <= b.shl(bits).add(b)
}

/// Whether `a · (1 + 2^-bits) <= b`: `a` is below `b` by more than the relative tolerance.
fn clearly_at_most(a: &Big, b: &Big, bits: u32) -> bool {
    a.shl(bits).add(a) <= b.shl(bits)
}

/// Whether `reported` is the distance whose exact square is `exact_2`, within a relative
/// 2^-`bits` on the squares or within `ulp` (the type's smallest subnormal: subnormal
/// results have few bits); an infinite `reported` is right only when the true distance is at
/// least `max` (the type's largest value), up to the same tolerance.
pub(crate) fn distance_matches(
    reported: f64,
    exact_2: &Big,
    max: f64,
    ulp: f64,
    bits: u32,
) -> bool {
    if reported == f64::INFINITY {
        return at_most(&square(max), exact_2, bits);
    }
    if reported.is_nan() || reported < 0.0 || !reported.is_finite() {
        return false;
    }
    let r2 = square(reported);
    let relative = at_most(&r2, exact_2, bits) && at_most(exact_2, &r2, bits);
    // |r - d| <= ulp: what matters among the subnormals (elsewhere r ± ulp rounds to r in
    // f64, and this asks for the exact distance).
    let absolute =
        square((reported - ulp).max(0.0)) <= *exact_2 && *exact_2 <= square(reported + ulp);
    relative || absolute
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of a `Big` below 2^128.
    fn to_u128(b: &Big) -> u128 {
        assert!(b.top() <= 2, "{b:?} does not fit");
        u128::from(b.limb(0)) | (u128::from(b.limb(1)) << 64)
    }

    #[test]
    fn arithmetic_with_counted_low_limbs_agrees_with_u128() {
        let mut values = Vec::new();
        for v in [0u64, 1, 3, 0xdead_beef, 1 << 40, u64::MAX] {
            for shift in [0u32, 1, 24, 63, 64, 65] {
                if 64 - v.leading_zeros() + shift > 127 {
                    continue;
                }
                values.push((Big::small(v).shl(shift), u128::from(v) << shift));
            }
        }
        for (a, x) in &values {
            assert_eq!(to_u128(a), *x);
            for (b, y) in &values {
                assert_eq!(a.cmp(b), x.cmp(y), "{x} vs {y}");
                assert_eq!(a == b, x == y);
                if let Some(sum) = x.checked_add(*y) {
                    assert_eq!(to_u128(&a.add(b)), sum);
                }
                if x >= y {
                    assert_eq!(to_u128(&a.sub(b)), x - y);
                }
                if let Some(product) = x.checked_mul(*y) {
                    assert_eq!(to_u128(&a.mul(b)), product);
                }
            }
        }
    }

    #[test]
    fn squares_of_extremes_are_exact_and_ordered() {
        // 3-4-5 at every scale, where f64 squares overflow or underflow.
        for s in [1.0, 1e-300, 1e300, 5e-324 * 4.0] {
            let d2 = distance_2(0.0, 0.0, 0.0, 0.0, 3.0 * s, 4.0 * s);
            assert!(
                distance_matches(5.0 * s, &d2, f64::MAX, 5e-324, 40),
                "scale {s}"
            );
            if s >= f64::MIN_POSITIVE {
                assert!(!distance_matches(
                    5.0 * s * (1.0 + 1e-9),
                    &d2,
                    f64::MAX,
                    5e-324,
                    40
                ));
            }
        }
        // the case: from (1e200, 1e200), (1e200, 0) is nearer than (0, 0)
        let near = distance_2(1e200, 0.0, 1e200, 0.0, 1e200, 1e200);
        let far = distance_2(0.0, 0.0, 0.0, 0.0, 1e200, 1e200);
        assert!(near < far);
        // opposite extremes: the distance exceeds MAX, so only infinity matches
        let beyond = distance_2(-f64::MAX, 0.0, -f64::MAX, 0.0, f64::MAX, 0.0);
        assert!(distance_matches(
            f64::INFINITY,
            &beyond,
            f64::MAX,
            5e-324,
            40
        ));
        assert!(!distance_matches(f64::MAX, &beyond, f64::MAX, 5e-324, 40));
        assert!(!distance_matches(
            f64::INFINITY,
            &square(1e300),
            f64::MAX,
            5e-324,
            40
        ));
    }

    #[test]
    fn order_is_the_float_order() {
        let v = [
            -f64::MAX,
            -1e300,
            -1.0,
            -5e-324,
            -0.0,
            0.0,
            5e-324,
            1e-300,
            1.0,
            f64::MAX,
        ];
        for a in v {
            for b in v {
                assert_eq!(order(a, b), a.partial_cmp(&b).unwrap(), "{a} vs {b}");
            }
        }
    }
}
