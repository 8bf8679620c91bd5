//! The driver of the dynamic structures: a sequence of mutations and queries, each applied to
//! the structure and to the oracle.

use core::fmt::Debug;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use spatix::prelude::*;
use spatix::{Aabb, Error, Handle, Point, Scalar};

use crate::decode::Bytes;
use crate::judge::{Judge, Live, fail};
use crate::op::Op;

/// An insert of another kind (the layered index's `insert_static`).
pub(crate) type Insert<S, I> = fn(&mut I, Aabb<S>, u64) -> Result<Handle, Error>;

/// The new box of each element in a frame (op 6), from its handle and its current box.
pub(crate) type Move<'a, S> = &'a (dyn Fn(Handle, &Aabb<S>) -> Aabb<S> + Sync);

/// Another way to run a frame (`ParallelPairs::par_update_all`): op 6 calls it instead of
/// `update_all`.
pub(crate) type Frame<S, I> = fn(&mut I, Move<'_, S>) -> Result<(), Error>;

/// How a dynamic target differs from the plain contract.
pub(crate) struct Options<S, I> {
    /// The structure's bound on half extents, if it has one: valid boxes with
    /// `max - min > 2 * bound` on an axis must be refused with `Error::BoxTooLarge`.
    pub(crate) bound: Option<f64>,
    /// Another way to insert that the structure has (the layered index's `insert_static`):
    /// op 3 calls it instead of `insert`, and it is compared with the oracle like an insert.
    pub(crate) insert_3: Option<Insert<S, I>>,
    /// Another way to run a frame, which op 6 drives instead of `update_all`.
    pub(crate) frame: Option<Frame<S, I>>,
}

impl<S, I> Default for Options<S, I> {
    fn default() -> Self {
        Self {
            bound: None,
            insert_3: None,
            frame: None,
        }
    }
}

impl<S, I> Options<S, I> {
    /// A structure that must refuse boxes whose half extent exceeds `bound`.
    pub(crate) fn bounded(bound: f64) -> Self {
        Self {
            bound: Some(bound),
            ..Self::default()
        }
    }

    /// A structure with another way to insert, driven by op 3.
    pub(crate) fn insert_3(insert: Insert<S, I>) -> Self {
        Self {
            insert_3: Some(insert),
            ..Self::default()
        }
    }

    /// A structure with another way to run a frame, driven by op 6.
    pub(crate) fn frame(frame: Frame<S, I>) -> Self {
        Self {
            frame: Some(frame),
            ..Self::default()
        }
    }
}

/// The structure under test, the oracle, and what the fuzzer knows.
struct Pair<S: Scalar, I> {
    sut: I,
    judge: Judge<S>,
    live: Vec<Live>,
    stale: Vec<Live>,
    next_id: u64,
    options: Options<S, I>,
}

/// Decodes `data` into operations on `sut` and checks each against the oracle.
pub(crate) fn drive<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    sut: I,
    data: &[u8],
    options: Options<S, I>,
) {
    let mut p = Pair {
        sut,
        judge: Judge::new(),
        live: Vec::new(),
        stale: Vec::new(),
        next_id: 0,
        options,
    };
    let mut input = Bytes::new(data);
    let mut step = 0usize;
    while !input.is_empty() {
        let op = input.u8();
        p.apply(op, &mut input, step);
        p.judge.check(&p.sut, &p.live, step, op);
        step += 1;
    }
    p.judge.pairs(&p.sut, step);
}

impl<S: Scalar, I: SpatialIndex<S, u64> + Sync> Pair<S, I> {
    /// Whether a valid box is over the structure's bound.
    fn over_bound(&self, b: &Aabb<S>) -> bool {
        self.options.bound.is_some_and(|h| {
            let fit = S::from_f64(h) + S::from_f64(h);
            b.is_valid() && (b.max.x - b.min.x > fit || b.max.y - b.min.y > fit)
        })
    }

    /// Whether the structure refused a box for being over its bound, as it must exactly for
    /// valid boxes over the bound (then the oracle is left alone).
    fn refused<R: Debug>(
        &self,
        step: usize,
        what: &str,
        b: &Aabb<S>,
        got: &Result<R, Error>,
    ) -> bool {
        let over = self.over_bound(b);
        let refused = matches!(got, Err(Error::BoxTooLarge));
        if over != refused {
            fail(
                step,
                what,
                b,
                got,
                &"Err(BoxTooLarge) exactly for boxes over the bound",
            );
        }
        refused
    }

    fn apply(&mut self, op: u8, input: &mut Bytes<'_>, step: usize) {
        match Op::of(op) {
            Op::Insert | Op::InsertOwn => {
                let b: Aabb<S> = input.aabb();
                let id = self.next_id;
                let got = match self.options.insert_3 {
                    Some(insert) if Op::of(op) == Op::InsertOwn => insert(&mut self.sut, b, id),
                    _ => self.sut.insert(b, id),
                };
                if self.refused(step, "insert", &b, &got) {
                    return;
                }
                let want = self.judge.oracle.insert(b, id);
                match (got, want) {
                    (Ok(sut), Ok(oracle)) => {
                        self.next_id += 1;
                        self.live.push(Live { sut, oracle });
                    }
                    (Err(_), Err(_)) => {}
                    (got, want) => fail(step, "insert", &b, &got, &want),
                }
            }
            Op::Remove => {
                if let Some(i) = input.pick(self.live.len()) {
                    let e = self.live.swap_remove(i);
                    let (got, want) = (self.sut.remove(e.sut), self.judge.oracle.remove(e.oracle));
                    if got != want || got.is_none() {
                        fail(step, "remove", &e.sut, &got, &want);
                    }
                    self.stale.push(e);
                }
            }
            Op::UpdateAll => self.update_all(input, step),
            Op::Update => {
                let b: Aabb<S> = input.aabb();
                if let Some(i) = input.pick(self.live.len()) {
                    let e = self.live[i];
                    let got = self.sut.update(e.sut, b);
                    if self.refused(step, "update", &b, &got) {
                        return;
                    }
                    let want = self.judge.oracle.update(e.oracle, b);
                    if got.is_ok() != want.is_ok() {
                        fail(step, "update", &b, &got, &want);
                    }
                }
            }
            Op::Maintain => {
                self.sut.maintain();
                self.judge.oracle.maintain();
            }
            Op::Clear => {
                if input.u8() < 16 {
                    self.sut.clear();
                    self.judge.oracle.clear();
                    self.stale.append(&mut self.live);
                }
            }
            Op::Stale => self.misuse_stale(input, step),
            Op::Query | Op::Nearest | Op::Within | Op::Ray | Op::Pairs => {
                self.judge.read(&self.sut, op, input, step);
            }
        }
    }

    /// `update_all` (or the target's own frame): elements shift by one decoded vector, or,
    /// one in two by their handle, jump to decoded boxes (possibly invalid or over the bound);
    /// each must be visited once, refusals must leave their element unchanged, and the first
    /// refusal (in the order the structure visited them, or any, for a parallel frame) must
    /// be returned.
    fn update_all(&mut self, input: &mut Bytes<'_>, step: usize) {
        let jumps: Vec<Aabb<S>> = (0..input.u8() % 4).map(|_| input.aabb()).collect();
        let shift: Aabb<S> = input.aabb();
        let d = shift.min;
        let recorded = Mutex::new(Vec::new());
        let moved = |handle: Handle, old: &Aabb<S>| {
            let pick = (handle.to_bits() >> 7 ^ handle.to_bits()) as usize;
            let new = match jumps.len() {
                len if len > 0 && pick % 2 == 1 => jumps[pick / 2 % len],
                _ => Aabb {
                    min: Point::new(old.min.x + d.x, old.min.y + d.y),
                    max: Point::new(old.max.x + d.x, old.max.y + d.y),
                },
            };
            recorded
                .lock()
                .expect("no panic while held")
                .push((handle, new));
            new
        };
        let got = match self.options.frame {
            Some(frame) => frame(&mut self.sut, &moved),
            None => self.sut.update_all(|handle, _, old| moved(handle, old)),
        };
        let calls = recorded.into_inner().expect("no panic while held");
        let oracle_of: HashMap<Handle, Handle> =
            self.live.iter().map(|e| (e.sut, e.oracle)).collect();
        let mut seen = HashSet::new();
        if calls.len() != self.live.len() {
            fail(step, "update_all", &jumps, &calls.len(), &self.live.len());
        }
        let mut want = Ok(());
        let mut refusals = Vec::new();
        for (handle, new) in calls {
            let Some(&oracle) = oracle_of.get(&handle).filter(|_| seen.insert(handle)) else {
                fail(
                    step,
                    "update_all",
                    &handle,
                    &"called f twice or for no live element",
                    &"",
                );
            };
            let expected = if !new.is_valid() {
                Err(Error::InvalidAabb)
            } else if self.over_bound(&new) {
                Err(Error::BoxTooLarge)
            } else {
                self.judge.oracle.update(oracle, new)
            };
            if let Err(e) = &expected {
                refusals.push(e.clone());
            }
            if want.is_ok() {
                want = expected;
            }
        }
        // A parallel frame may return any of its refusals.
        let right = match (&got, self.options.frame) {
            (Err(e), Some(_)) => refusals.contains(e),
            _ => got == want,
        };
        if !right {
            fail(step, "update_all", &jumps, &got, &want);
        }
    }

    /// A stale handle (or, before any removal, a forged one) must change nothing.
    fn misuse_stale(&mut self, input: &mut Bytes<'_>, step: usize) {
        let which = input.u16();
        let b: Aabb<S> = input.aabb();
        let handle = if self.stale.is_empty() {
            Handle::from_bits(u64::from(input.u16()) | u64::from(input.u16()) << 32)
        } else {
            self.stale[usize::from(which) % self.stale.len()].sut
        };
        if self.live.iter().any(|e| e.sut == handle) {
            return;
        }
        if self.sut.get(handle).is_some()
            || self.sut.update(handle, b).is_ok()
            || self.sut.remove(handle).is_some()
        {
            fail(step, "stale handle accepted", &handle, &(), &());
        }
    }
}
