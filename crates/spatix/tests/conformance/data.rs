//! Data variants: proptest strategies for boxes, points, query areas and radii in a small square
//! world, so that collisions are frequent.
//!
//! Everything is generated in `f64` and converted to the scalar under test when an operation is
//! applied ([`Bx::to`]), so one strategy serves `f32` and `f64` alike; a failing case prints the
//! `f64` values it was generated from. Far-away coordinates stay below 1e15 so that squared
//! distances never overflow `f32`.

use std::fmt;

use proptest::prelude::*;
use proptest::sample::select;
use spatix::{Aabb, Point, Ray, Scalar};

/// A square world `[min, min + side]²`, the box the structure under test is built with.
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct World {
    pub(crate) min: f64,
    pub(crate) side: f64,
}

impl World {
    /// `[0, 100]²`: quadtree splits at 50, 25, 12.5, … land on the lattice of [`Variant::Degenerate`].
    pub(crate) const W100: Self = Self {
        min: 0.0,
        side: 100.0,
    };
    /// `[-64, 64]²`: negative coordinates, and power-of-two cells (8, 16, 32) align with its edges.
    pub(crate) const W128: Self = Self {
        min: -64.0,
        side: 128.0,
    };

    pub(crate) fn max(self) -> f64 {
        self.min + self.side
    }

    /// The coordinate at fraction `f` of the side (0 is the lower edge, 1 the upper edge).
    pub(crate) fn at(self, f: f64) -> f64 {
        self.min + self.side * f
    }

    /// The world as a box of the scalar under test.
    pub(crate) fn aabb<S: Scalar>(self) -> Aabb<S> {
        Bx::new(self.min, self.min, self.max(), self.max()).to()
    }
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{:?}, {:?}]²", self.min, self.max())
    }
}

/// A box as generated: `f64` corners, possibly invalid (NaN, infinite, inverted).
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Bx {
    pub(crate) min: [f64; 2],
    pub(crate) max: [f64; 2],
}

impl Bx {
    pub(crate) const fn new(x0: f64, y0: f64, x1: f64, y1: f64) -> Self {
        Self {
            min: [x0, y0],
            max: [x1, y1],
        }
    }

    /// A zero-size box.
    pub(crate) const fn point(x: f64, y: f64) -> Self {
        Self::new(x, y, x, y)
    }

    /// The box spanned by two corners in any order.
    fn spanned(a: (f64, f64), b: (f64, f64)) -> Self {
        Self::new(a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1))
    }

    fn around(cx: f64, cy: f64, hw: f64, hh: f64) -> Self {
        Self::new(cx - hw, cy - hh, cx + hw, cy + hh)
    }

    /// The box in the scalar under test (rounded to nearest; rounding is monotone, so a valid
    /// `f64` box stays valid).
    /// The box in `S`, finite coordinates beyond `S`'s range saturated at ±MAX (so that
    /// extreme `f64` data stays valid in `f32`; NaN and infinity stay invalid).
    pub(crate) fn to<S: Scalar>(self) -> Aabb<S> {
        Aabb {
            min: Point::new(saturated(self.min[0]), saturated(self.min[1])),
            max: Point::new(saturated(self.max[0]), saturated(self.max[1])),
        }
    }
}

impl fmt::Debug for Bx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{:?}, {:?} .. {:?}, {:?}]",
            self.min[0], self.min[1], self.max[0], self.max[1]
        )
    }
}

/// A point as generated, possibly non-finite.
#[derive(Clone, Copy, PartialEq)]
pub(crate) struct Pt(pub(crate) f64, pub(crate) f64);

impl Pt {
    /// The point in `S`, saturated like [`Bx::to`].
    pub(crate) fn to<S: Scalar>(self) -> Point<S> {
        Point::new(saturated(self.0), saturated(self.1))
    }
}

/// `v` in `S`, a finite value beyond `S`'s range saturated at ±MAX.
fn saturated<S: Scalar>(v: f64) -> S {
    if v.is_finite() {
        S::from_f64(v.clamp(-S::MAX.to_f64(), S::MAX.to_f64()))
    } else {
        S::from_f64(v)
    }
}

impl fmt::Debug for Pt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({:?}, {:?})", self.0, self.1)
    }
}

/// The shape of the data a random sequence inserts and moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Centres uniform over the world, half sizes uniform in `[0, 4)`: arbitrary floats.
    Uniform,
    /// Four tight clusters (one on the world's centre, where a quadtree splits first).
    Clustered,
    /// Small boxes plus one "dragon" in 40, up to 1.2 times the world's side.
    MixedSizes,
    /// A handful of distinct boxes and points, inserted over and over: deep subdivision,
    /// quadratic pair counts, ties everywhere in nearest.
    Coincident,
    /// Boxes straddling the world's edges, enclosing it, touching it from outside, or far away
    /// (up to 1e15).
    OutOfWorld,
    /// Zero-size points, zero-width lines, and boxes whose corners lie on a lattice of the
    /// world's dyadic split lines (side / 2^k) or on even integers: edges and corners touch
    /// exactly.
    Degenerate,
    /// Half the boxes uniform over the world, half with coordinates of any magnitude up to
    /// ±MAX and down to subnormals, tiny and huge mixed on one box, pairs of values 1e154 to
    /// 1e308 apart (saturated at ±MAX in `f32`): squares of distances overflow and underflow.
    Extreme,
}

impl Variant {
    pub(crate) const ALL: [Self; 7] = [
        Self::Uniform,
        Self::Clustered,
        Self::MixedSizes,
        Self::Coincident,
        Self::OutOfWorld,
        Self::Degenerate,
        Self::Extreme,
    ];
}

/// A magnitude anywhere in `f32`'s or `f64`'s range (log-uniform), in the band where squares
/// overflow `f64`, or one of the extremes.
fn magnitude() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (-45.0..38.5f64).prop_map(|e| 10f64.powf(e)),
        3 => (-310.0..308.2f64).prop_map(|e| 10f64.powf(e)),
        3 => (154.0..308.2f64).prop_map(|e| 10f64.powf(e)),
        1 => select(vec![f64::MAX, f64::from(f32::MAX), 5e-324, f64::MIN_POSITIVE, 0.0]),
    ]
}

/// A coordinate of any magnitude and sign.
fn extreme() -> impl Strategy<Value = f64> {
    (magnitude(), any::<bool>()).prop_map(|(m, negative)| if negative { -m } else { m })
}

/// A fraction of the side on the dyadic lattice `j / 2^k`, `k <= 7`, `0 <= j <= 2^k`: the lines
/// where a quadtree over the world splits, down to depth 7. Shrinks towards 0.
fn dyadic() -> impl Strategy<Value = f64> {
    (0u32..=7, 0u32..=128).prop_map(|(k, j)| f64::from(j >> (7 - k)) / f64::from(1u32 << k))
}

/// A coordinate on the dyadic lattice of the world.
fn lattice(world: World) -> impl Strategy<Value = f64> {
    dyadic().prop_map(move |f| world.at(f))
}

/// A coordinate on even integers across the world (and one step beyond each edge).
fn even(world: World) -> impl Strategy<Value = f64> {
    let steps = (world.side / 2.0) as i32;
    (-1..=steps + 1).prop_map(move |i| world.min + 2.0 * f64::from(i))
}

/// Valid boxes of a variant.
pub(crate) fn boxes(variant: Variant, world: World) -> BoxedStrategy<Bx> {
    let w = world;
    match variant {
        Variant::Uniform => (0.0..1.0f64, 0.0..1.0f64, 0.0..4.0f64, 0.0..4.0f64)
            .prop_map(move |(u, v, hw, hh)| Bx::around(w.at(u), w.at(v), hw, hh))
            .boxed(),
        Variant::Clustered => {
            const CENTRES: [(f64, f64); 4] = [(0.5, 0.5), (0.25, 0.25), (0.7, 0.6), (0.9, 0.1)];
            let offset = (-1.0..1.0f64, -1.0..1.0f64).prop_map(|(a, b)| a + b);
            (0..CENTRES.len(), offset.clone(), offset, 0.1..3.0f64, 0.1..3.0f64)
                .prop_map(move |(c, dx, dy, hw, hh)| {
                    let spread = w.side * 0.03;
                    let (fx, fy) = CENTRES[c];
                    Bx::around(w.at(fx) + spread * dx, w.at(fy) + spread * dy, hw, hh)
                })
                .boxed()
        }
        Variant::MixedSizes => prop_oneof![
            39 => (0.0..1.0f64, 0.0..1.0f64, 0.5..2.5f64, 0.5..2.5f64)
                .prop_map(move |(u, v, hw, hh)| Bx::around(w.at(u), w.at(v), hw, hh)),
            1 => (0.0..1.0f64, 0.0..1.0f64, 0.1..0.6f64, 0.1..0.6f64).prop_map(move |(u, v, fw, fh)| {
                Bx::around(w.at(u), w.at(v), w.side * fw, w.side * fh)
            }),
        ]
        .boxed(),
        Variant::Coincident => {
            let c = w.at(0.5);
            select(vec![
                Bx::point(c, c),
                Bx::point(c, c),
                Bx::around(c, c, 5.0, 5.0),
                Bx::around(c, c, 5.0, 5.0),
                Bx::new(w.at(0.25), w.at(0.25), c, c),
                Bx::point(w.min, w.min),
                Bx::point(w.max(), w.max()),
                Bx::new(w.min, w.min, w.max(), w.max()),
            ])
            .boxed()
        }
        Variant::OutOfWorld => {
            let far = select(vec![-1e15, -1e6, -16_777_216.0, -1e3, 1e3, 16_777_216.0, 1e6, 1e15]);
            let far_size = select(vec![0.0, 1.0, 1e3]);
            let margin = select(vec![0.0, 0.125, 1.0, 1e6]);
            prop_oneof![
                // straddling or just beyond the edges
                4 => (-0.5..1.5f64, -0.5..1.5f64, 0.0..10.0f64, 0.0..10.0f64)
                    .prop_map(move |(u, v, hw, hh)| Bx::around(w.at(u), w.at(v), hw, hh)),
                // far away on one or both axes
                2 => (far.clone(), far, far_size.clone(), far_size, any::<bool>()).prop_map(
                    move |(x, y, sx, sy, one_axis)| {
                        let y = if one_axis { w.at(0.5) } else { y };
                        Bx::new(x, y, x + sx, y + sy)
                    }
                ),
                // enclosing the world
                1 => (margin.clone(), margin).prop_map(move |(a, b)| {
                    Bx::new(w.min - a, w.min - b, w.max() + b, w.max() + a)
                }),
                // touching the world's edge from outside
                2 => (0..4usize, lattice(w), select(vec![0.0, 1.0, 8.0])).prop_map(
                    move |(edge, t, d)| match edge {
                        0 => Bx::new(w.max(), t, w.max() + d, t + d),
                        1 => Bx::new(w.min - d, t, w.min, t + d),
                        2 => Bx::new(t, w.max(), t + d, w.max() + d),
                        _ => Bx::new(t, w.min - d, t + d, w.min),
                    }
                ),
            ]
            .boxed()
        }
        Variant::Extreme => prop_oneof![
            1 => boxes(Variant::Uniform, w),
            1 => (extreme(), extreme(), prop_oneof![Just(0.0), magnitude()], prop_oneof![Just(0.0), magnitude()])
                .prop_map(|(x, y, bw, bh)| {
                    let beyond = |v: f64, d: f64| if (v + d).is_finite() { v + d } else { v };
                    Bx::new(x, y, beyond(x, bw), beyond(y, bh))
                }),
        ]
        .boxed(),
        Variant::Degenerate => prop_oneof![
            3 => (lattice(w), lattice(w)).prop_map(|(x, y)| Bx::point(x, y)),
            3 => (lattice(w), lattice(w), lattice(w), lattice(w))
                .prop_map(|(a, b, c, d)| Bx::spanned((a, b), (c, d))),
            4 => (even(w), even(w), select(vec![0.0, 1.0, 2.0, 4.0]), select(vec![0.0, 2.0, 4.0]))
                .prop_map(|(x, y, bw, bh)| Bx::new(x, y, x + bw, y + bh)),
            1 => (lattice(w), even(w), select(vec![2.0, 8.0, 32.0]), any::<bool>()).prop_map(
                |(a, b, len, vertical)| {
                    if vertical {
                        Bx::new(a, b, a, b + len)
                    } else {
                        Bx::new(b, a, b + len, a)
                    }
                }
            ),
        ]
        .boxed(),
    }
}

/// How [`corrupt`] breaks a valid box.
#[derive(Clone, Copy, Debug)]
enum Corruption {
    NanMinX,
    NanMaxY,
    InfMaxX,
    NegInfMinY,
    InfMinX,
    InvertX,
    InvertY,
    AllNan,
}

fn corrupt(mut b: Bx, how: Corruption) -> Bx {
    let below = |v: f64| v - 1.0 - v.abs() * 0.5;
    match how {
        Corruption::NanMinX => b.min[0] = f64::NAN,
        Corruption::NanMaxY => b.max[1] = f64::NAN,
        Corruption::InfMaxX => b.max[0] = f64::INFINITY,
        Corruption::NegInfMinY => b.min[1] = f64::NEG_INFINITY,
        Corruption::InfMinX => b.min[0] = f64::INFINITY,
        Corruption::InvertX => b.max[0] = below(b.min[0]),
        Corruption::InvertY => b.max[1] = below(b.min[1]),
        Corruption::AllNan => b = Bx::point(f64::NAN, f64::NAN),
    }
    b
}

/// Invalid boxes: a valid box of the variant with one coordinate made NaN or infinite, or one
/// axis inverted.
pub(crate) fn invalid_boxes(variant: Variant, world: World) -> BoxedStrategy<Bx> {
    let how = select(vec![
        Corruption::NanMinX,
        Corruption::NanMaxY,
        Corruption::InfMaxX,
        Corruption::NegInfMinY,
        Corruption::InfMinX,
        Corruption::InvertX,
        Corruption::InvertY,
        Corruption::AllNan,
    ]);
    (boxes(variant, world), how)
        .prop_map(|(b, how)| corrupt(b, how))
        .boxed()
}

/// Query areas: the variant's own boxes, lattice regions of any size, the whole world, a huge
/// box, and now and then an invalid area (which must match nothing).
pub(crate) fn areas(variant: Variant, world: World) -> BoxedStrategy<Bx> {
    let w = world;
    prop_oneof![
        6 => boxes(variant, w),
        6 => (lattice(w), lattice(w), lattice(w), lattice(w))
            .prop_map(|(a, b, c, d)| Bx::spanned((a, b), (c, d))),
        3 => (0.0..1.0f64, 0.0..1.0f64, 0.0..0.3f64, 0.0..0.3f64).prop_map(move |(u, v, fw, fh)| {
            Bx::new(w.at(u), w.at(v), w.at(u + fw), w.at(v + fh))
        }),
        1 => Just(Bx::new(w.min, w.min, w.max(), w.max())),
        1 => Just(Bx::new(-1e15, -1e15, 1e15, 1e15)),
        1 => invalid_boxes(variant, w),
    ]
    .boxed()
}

/// Query points for nearest and within: centres of the variant's boxes, lattice points, points
/// in and around the world, far points, and now and then a non-finite point.
pub(crate) fn points(variant: Variant, world: World) -> BoxedStrategy<Pt> {
    let w = world;
    prop_oneof![
        8 => boxes(variant, w).prop_map(|b| Pt(b.min[0] / 2.0 + b.max[0] / 2.0, b.min[1] / 2.0 + b.max[1] / 2.0)),
        4 => (lattice(w), lattice(w)).prop_map(|(x, y)| Pt(x, y)),
        4 => (-0.5..1.5f64, -0.5..1.5f64).prop_map(move |(u, v)| Pt(w.at(u), w.at(v))),
        1 => select(vec![Pt(-1e6, 3.0), Pt(1e6, 1e6), Pt(0.5, -1e15)]),
        1 => select(vec![
            Pt(f64::NAN, 0.0),
            Pt(0.0, f64::NAN),
            Pt(f64::INFINITY, 1.0),
            Pt(1.0, f64::NEG_INFINITY),
        ]),
    ]
    .boxed()
}

/// A ray as generated: origin, direction, reach (possibly invalid: a NaN, a zero direction, a
/// negative reach).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ry {
    pub(crate) origin: Pt,
    pub(crate) direction: Pt,
    pub(crate) max_t: f64,
}

impl Ry {
    /// The ray, built field by field so that invalid rays reach the structure too.
    pub(crate) fn to<S: Scalar>(self) -> Ray<S> {
        Ray {
            origin: self.origin.to(),
            direction: self.direction.to(),
            max_t: S::from_f64(self.max_t),
        }
    }
}

/// Rays of every kind: from element centres, lattice points and outside the world; along the
/// axes (the grid and tree boundaries' worst case), diagonals, random and nearly axis-parallel
/// directions; short, long and infinite reaches; and a few invalid ones.
pub(crate) fn rays(variant: Variant, world: World) -> BoxedStrategy<Ry> {
    let directions = prop_oneof![
        4 => select(vec![Pt(1.0, 0.0), Pt(-1.0, 0.0), Pt(0.0, 1.0), Pt(0.0, -1.0)]),
        3 => select(vec![Pt(1.0, 1.0), Pt(-1.0, 1.0), Pt(0.5, -0.5), Pt(-2.0, -2.0)]),
        6 => (-1.0..1.0f64, -1.0..1.0f64).prop_map(|(x, y)| Pt(x, y)),
        1 => select(vec![Pt(1.0, 1e-30), Pt(-1e-12, 1.0), Pt(3.0, -1e-7)]),
        1 => select(vec![Pt(0.0, 0.0), Pt(f64::NAN, 1.0), Pt(f64::INFINITY, 0.0)]),
    ];
    let reaches = prop_oneof![
        2 => Just(f64::INFINITY),
        4 => 0.0..world.side * 1.5,
        1 => select(vec![0.0, world.side / 16.0, 1e300]),
        1 => select(vec![-1.0, f64::NAN]),
    ];
    (points(variant, world), directions, reaches)
        .prop_map(|(origin, direction, max_t)| Ry {
            origin,
            direction,
            max_t,
        })
        .boxed()
}

/// Radii for within: zero, lattice values (exact distances to lattice boxes), arbitrary values,
/// infinity (which matches everything), and the invalid negative and NaN radii (which must
/// match nothing).
pub(crate) fn radii(world: World) -> BoxedStrategy<f64> {
    prop_oneof![
        2 => Just(0.0),
        4 => (0u32..=40).prop_map(|i| f64::from(i) * 0.5),
        3 => 0.0..world.side / 2.0,
        1 => select(vec![-1.0, f64::NAN, f64::INFINITY]),
        1 => magnitude(),
    ]
    .boxed()
}
