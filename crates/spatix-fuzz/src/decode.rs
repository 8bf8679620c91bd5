//! The byte-level decoder shared by the drivers: coordinates, points, boxes and picks.

use spatix::{Aabb, Point, Scalar};

use crate::WORLD;

/// Reads the input a byte at a time; past the end it yields zeros, so every input decodes.
pub(crate) struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    pub(crate) fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub(crate) fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// An index below `len` (`None` if `len` is 0); always reads two bytes.
    pub(crate) fn pick(&mut self, len: usize) -> Option<usize> {
        let i = usize::from(self.u16());
        (len > 0).then(|| i % len)
    }

    /// A coordinate: mostly small lattice values around the world (so boxes meet, touch and
    /// straddle cell and node borders), sometimes a value from the table of hard cases, and
    /// sometimes arbitrary bits.
    pub(crate) fn coord<S: Scalar>(&mut self) -> S {
        let b = self.u8();
        match b {
            0..=199 => S::from_f64(f64::from(b) * 0.75 - 10.0),
            200..=239 => S::from_f64(HARD[usize::from(b - 200) % HARD.len()]),
            _ => {
                let bits = u64::from_le_bytes(core::array::from_fn(|_| self.u8()));
                S::from_f64(f64::from_bits(bits))
            }
        }
    }

    pub(crate) fn point<S: Scalar>(&mut self) -> Point<S> {
        Point::new(self.coord(), self.coord())
    }

    /// A box (not validated: it may be inverted or hold NaN).
    pub(crate) fn aabb<S: Scalar>(&mut self) -> Aabb<S> {
        Aabb {
            min: self.point(),
            max: self.point(),
        }
    }

    /// An element's box: a box, or for structures of points a point (two coordinates, as a
    /// zero-size box).
    pub(crate) fn element<S: Scalar>(&mut self, points: bool) -> Aabb<S> {
        if points {
            let p = self.point();
            Aabb { min: p, max: p }
        } else {
            self.aabb()
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
}

/// Coordinates that break naive code.
const HARD: &[f64] = &[
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN,
    f32::MAX as f64,
    f32::MIN as f64,
    1e-310,
    -1e-310,
    f32::MIN_POSITIVE as f64,
    -0.0,
    0.0,
    WORLD,
    WORLD / 2.0,
    WORLD / 4.0,
    WORLD + 1e-9,
    -1e-9,
    1e7 + 0.5,
    1e7 - 0.5,
    -1e7,
    1e15,
    -1e15,
    1e300,
    -1e200,
    1e154,
    -1e154,
    1e-200,
    -1e-300,
    3e38,
    -3e38,
    1e20,
    0.1,
    8.0,
    16.0,
];
