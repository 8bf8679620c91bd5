//! The driver of the static structures (built once, then only read): the operations edit a
//! data set, and every read builds the structure and the oracle from the current data set
//! (if it changed), then compares them.
//!
//! The encoding is the dynamic driver's, so the same corpus drives both: ops 0 – 3 add an
//! element to the data set (a box, or for structures of points a point: two coordinates),
//! 4 removes one, 5 and 6 replace one's box, 7 builds now, 8 may clear the data set, 14 tries
//! a stale, foreign or forged handle, and the rest are the reads of [`Judge::read`]. A data
//! set with an invalid element must be refused with `Error::InvalidAabb`; the driver then
//! drops the invalid elements and builds again.

use spatix::prelude::*;
use spatix::{Aabb, BruteForce, Error, Handle, Scalar};

use crate::decode::Bytes;
use crate::judge::{Judge, Live, fail};
use crate::op::Op;

/// What the driver knows of one static target.
struct Rebuilt<S: Scalar, Q, B> {
    build: B,
    points: bool,
    /// The data set the next build takes: (box, value), in input order.
    elements: Vec<(Aabb<S>, u64)>,
    /// Whether `elements` changed since the last build.
    dirty: bool,
    /// The last build and the oracle built from the same data.
    sut: Option<Q>,
    judge: Judge<S>,
    /// The handles of the last build's elements, in input order.
    live: Vec<Live>,
    /// Handles of earlier builds: stale, whatever their slot.
    old: Vec<Handle>,
    next_id: u64,
}

/// Decodes `data` into edits of a data set and reads of the structure `build` makes from it,
/// and checks each read against the oracle. `points`: the structure stores points (its
/// elements are decoded as points, zero-size boxes, and `build` takes `aabb.min`). Exported as
/// `drive_built`, for the regression tests' deliberately broken builds.
///
/// # Panics
/// On any difference from the oracle, as [`crate::run`] does.
///
/// ```
/// // Three boxes, then reads: the packed index built from them answers as the oracle does.
/// let input = [0, 10, 10, 20, 20, 0, 30, 30, 40, 40, 9, 0, 0, 99, 99];
/// spatix_fuzz::drive_built::<f32, _, _>(&input, false, |data| {
///     spatix::PackedIndex::build(data.iter().copied())
/// });
/// ```
pub fn drive<S, Q, B>(data: &[u8], points: bool, build: B)
where
    S: Scalar,
    Q: SpatialQuery<S, u64> + Sync,
    B: Fn(&[(Aabb<S>, u64)]) -> Result<Q, Error>,
{
    let mut r = Rebuilt {
        build,
        points,
        elements: Vec::new(),
        dirty: true,
        sut: None,
        judge: Judge::new(),
        live: Vec::new(),
        old: Vec::new(),
        next_id: 0,
    };
    let mut input = Bytes::new(data);
    let mut step = 0usize;
    while !input.is_empty() {
        let op = input.u8();
        r.apply(op, &mut input, step);
        if let Some(sut) = &r.sut {
            r.judge.check(sut, &r.live, step, op);
        }
        step += 1;
    }
    r.rebuild(step);
    if let Some(sut) = &r.sut {
        r.judge.pairs(sut, step);
    }
}

impl<S, Q, B> Rebuilt<S, Q, B>
where
    S: Scalar,
    Q: SpatialQuery<S, u64> + Sync,
    B: Fn(&[(Aabb<S>, u64)]) -> Result<Q, Error>,
{
    fn apply(&mut self, op: u8, input: &mut Bytes<'_>, step: usize) {
        match Op::of(op) {
            Op::Insert | Op::InsertOwn => {
                let b = input.element(self.points);
                self.elements.push((b, self.next_id));
                self.next_id += 1;
                self.dirty = true;
            }
            Op::Remove => {
                if let Some(i) = input.pick(self.elements.len()) {
                    self.elements.swap_remove(i);
                    self.dirty = true;
                }
            }
            Op::Update | Op::UpdateAll => {
                let b = input.element(self.points);
                if let Some(i) = input.pick(self.elements.len()) {
                    self.elements[i].0 = b;
                    self.dirty = true;
                }
            }
            Op::Maintain => self.rebuild(step),
            Op::Clear => {
                if input.u8() < 16 {
                    self.elements.clear();
                    self.dirty = true;
                }
            }
            Op::Stale => {
                self.rebuild(step);
                self.misuse(input, step);
            }
            Op::Query | Op::Nearest | Op::Within | Op::Ray | Op::Pairs => {
                self.rebuild(step);
                let sut = self.sut.as_ref().expect("built");
                self.judge.read(sut, op, input, step);
            }
        }
    }

    /// Builds the structure and the oracle from the data set, if it changed. A data set with
    /// an invalid element must be refused; the invalid elements are then dropped.
    fn rebuild(&mut self, step: usize) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        self.old.extend(self.live.drain(..).map(|e| e.sut));
        if self.elements.iter().any(|(b, _)| !b.is_valid()) {
            let got = (self.build)(&self.elements).map(|_| ());
            if !matches!(got, Err(Error::InvalidAabb)) {
                fail(
                    step,
                    "build",
                    &self.elements,
                    &got,
                    &Err::<(), _>(Error::InvalidAabb),
                );
            }
            self.elements.retain(|(b, _)| b.is_valid());
        }
        let sut = match (self.build)(&self.elements) {
            Ok(sut) => sut,
            Err(e) => fail(step, "build", &self.elements, &e, &"Ok"),
        };
        self.judge.oracle = BruteForce::new();
        let listed = sut.iter().count();
        if listed != self.elements.len() {
            fail(
                step,
                "iter after build",
                &self.elements,
                &listed,
                &"every element",
            );
        }
        // `iter` lists each element once, in the structure's own order (input order for a
        // store by input position, tree order for the kd-tree): the values, all distinct,
        // match its elements to the input's.
        let mut by_value: Vec<(u64, Handle, Aabb<S>)> = sut
            .iter()
            .map(|item| (*item.value, item.handle, item.aabb))
            .collect();
        by_value.sort_unstable_by_key(|e| e.0);
        for &(b, id) in &self.elements {
            let found = by_value
                .binary_search_by_key(&id, |e| e.0)
                .ok()
                .map(|at| by_value[at]);
            let Some((_, handle, aabb)) = found.filter(|e| e.2 == b) else {
                fail(step, "iter after build", &(b, id), &found, &"the element");
            };
            if sut.get(handle).is_none_or(|item| *item.value != id) {
                fail(step, "get after build", &(b, id), &handle, &"the element");
            }
            self.live.push(Live {
                sut: handle,
                oracle: self.judge.oracle.insert(aabb, id).expect("a valid box"),
            });
        }
        self.sut = Some(sut);
    }

    /// A handle of an earlier build, one of the oracle's, one of the current build's with a
    /// slot past the end, or arbitrary bits: `get` must find nothing (unless it names a live
    /// element).
    fn misuse(&self, input: &mut Bytes<'_>, step: usize) {
        let which = usize::from(input.u16());
        let raw = u64::from(input.u16()) | u64::from(input.u16()) << 32;
        let (n, live) = (self.live.len(), &self.live);
        let handle = match which % 4 {
            0 if !self.old.is_empty() => self.old[which / 4 % self.old.len()],
            1 if n > 0 => live[which / 4 % n].oracle,
            2 if n > 0 => {
                let past = (n + which / 4) as u64;
                Handle::from_bits(live[0].sut.to_bits() & !0xffff_ffff | past)
            }
            _ => Handle::from_bits(raw),
        };
        if live.iter().any(|e| e.sut == handle) {
            return;
        }
        let sut = self.sut.as_ref().expect("built");
        if let Some(item) = sut.get(handle) {
            fail(step, "stale handle accepted", &handle, &item, &());
        }
    }
}
