//! The operation model: what a random sequence is made of, and the proptest strategies that
//! generate (and shrink) sequences of operations.
//!
//! Operations name elements by [`Pick`] (an index into the live elements at the time the
//! operation runs), so every subsequence of a sequence is itself a valid sequence: proptest can
//! shrink a failure by deleting operations.

use std::fmt;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use crate::data::{self, Bx, Pt, Ry, Variant, World};

/// Longest generated sequence.
const MAX_OPS: usize = 200;

/// Chooses one of the live (or stale) elements when the operation runs: `index % len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pick(pub(crate) u16);

impl Pick {
    /// The position this pick names among `len` candidates, if there are any.
    pub(crate) fn of(self, len: usize) -> Option<usize> {
        (len > 0).then(|| usize::from(self.0) % len)
    }
}

/// One step of a sequence.
#[derive(Clone, Debug)]
pub(crate) enum Op {
    /// Insert a box; an invalid one must be rejected with `InvalidAabb` and change nothing.
    Insert(Bx),
    /// Insert several boxes in a row (grows the population quickly).
    InsertMany(Vec<Bx>),
    /// Remove a live element.
    Remove(Pick),
    /// Move a live element.
    Update(Pick, Move),
    /// `update_all`: the n-th element the structure visits moves by `moves[n % len]` (stays
    /// put when there are none); its value is changed and changed back by a second pass.
    UpdateAll(Vec<Move>),
    /// Use a handle that names no live element.
    Stale(StaleSrc, StaleOp),
    Maintain,
    /// Remove everything: every handle becomes stale.
    Clear,
    Query(Bx),
    Pairs,
    Nearest(Pt, K),
    Within(Pt, f64),
    /// `raycast_all` and `raycast`.
    Raycast(Ry),
    /// `get` a live element.
    Get(Pick),
    /// `iter`, `len` and `memory_bytes`.
    Iter,
    /// A visitor that breaks on its first call.
    Stop(Stop),
}

/// Where an updated element goes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Move {
    /// Anywhere (possibly an invalid box).
    To(Bx),
    /// A small shift (mostly stays in its cell or leaf: the fast path).
    Shift(f64, f64),
    /// Grow (or shrink, possibly past zero: an inverted, invalid box) on every side.
    Grow(f64),
}

/// Where a stale handle comes from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StaleSrc {
    /// Removed, or live before a `Clear` (falls back to `Foreign` while there is none).
    Removed(Pick),
    /// Live or removed in another instance of the same structure.
    Foreign(Pick),
    /// A live element's handle with its generation advanced: same slot, wrong generation.
    NextGeneration(Pick),
    /// The oracle's handle of a live element used on the structure under test, and vice versa.
    Swapped(Pick),
    /// `Handle::from_bits`.
    Forged(u64),
}

/// What is done with a stale handle.
#[derive(Clone, Copy, Debug)]
pub(crate) enum StaleOp {
    Get,
    Remove,
    Update(Bx),
}

/// The `k` of a nearest query.
#[derive(Clone, Copy, Debug)]
pub(crate) enum K {
    Fixed(usize),
    /// `len + n`: all there are (`n = 0`) or more.
    AboveLen(usize),
    /// `usize::MAX`.
    Max,
}

impl K {
    pub(crate) fn resolve(self, len: usize) -> usize {
        match self {
            Self::Fixed(k) => k,
            Self::AboveLen(n) => len + n,
            Self::Max => usize::MAX,
        }
    }
}

/// An early-stop probe.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stop {
    Query(Bx),
    Pairs,
    Within(Pt, f64),
    Raycast(Ry),
}

/// One generated test case: a world and a sequence of operations.
#[derive(Clone)]
pub(crate) struct Case {
    pub(crate) world: World,
    pub(crate) ops: Vec<Op>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "world {:?}, {} steps:", self.world, self.ops.len())?;
        for (i, op) in self.ops.iter().enumerate() {
            writeln!(f, "  step {i:3}: {op:?}")?;
        }
        Ok(())
    }
}

fn pick() -> impl Strategy<Value = Pick> {
    any::<u16>().prop_map(Pick)
}

fn moves(variant: Variant, world: World) -> BoxedStrategy<Move> {
    let shift = select(vec![-8.0, -1.0, -0.5, -0.125, 0.0, 0.125, 0.5, 1.0, 8.0]);
    prop_oneof![
        5 => data::boxes(variant, world).prop_map(Move::To),
        5 => (shift.clone(), shift).prop_map(|(dx, dy)| Move::Shift(dx, dy)),
        1 => select(vec![-1000.0, -1.0, 0.5, 2.0]).prop_map(Move::Grow),
        1 => data::invalid_boxes(variant, world).prop_map(Move::To),
    ]
    .boxed()
}

fn stale_sources() -> BoxedStrategy<StaleSrc> {
    prop_oneof![
        4 => pick().prop_map(StaleSrc::Removed),
        2 => pick().prop_map(StaleSrc::Foreign),
        2 => pick().prop_map(StaleSrc::NextGeneration),
        2 => pick().prop_map(StaleSrc::Swapped),
        1 => prop_oneof![select(vec![0, 1 << 32, u64::MAX]), any::<u64>()].prop_map(StaleSrc::Forged),
    ]
    .boxed()
}

fn ks() -> BoxedStrategy<K> {
    prop_oneof![
        6 => select(vec![0, 1, 2, 8, 64]).prop_map(K::Fixed),
        2 => select(vec![0, 1, 7]).prop_map(K::AboveLen),
        1 => Just(K::Max),
    ]
    .boxed()
}

/// One operation on boxes of `variant` in `world`: a change or a read.
pub(crate) fn op(variant: Variant, world: World) -> BoxedStrategy<Op> {
    let boxes = data::boxes(variant, world);
    let stale_op = prop_oneof![
        Just(StaleOp::Get),
        Just(StaleOp::Remove),
        boxes.clone().prop_map(StaleOp::Update),
    ];
    let writes = prop_oneof![
        6 => Just(Op::Maintain),
        48 => boxes.clone().prop_map(Op::Insert),
        4 => data::invalid_boxes(variant, world).prop_map(Op::Insert),
        3 => vec(boxes, 1..=24).prop_map(Op::InsertMany),
        12 => pick().prop_map(Op::Remove),
        24 => (pick(), moves(variant, world)).prop_map(|(p, m)| Op::Update(p, m)),
        4 => vec(moves(variant, world), 0..=8).prop_map(Op::UpdateAll),
        10 => (stale_sources(), stale_op).prop_map(|(s, o)| Op::Stale(s, o)),
        1 => Just(Op::Clear),
    ];
    // The weights are the sums of the inner ones: each kind of operation is as likely as if
    // all were listed in one `prop_oneof!`.
    prop_oneof![112 => writes, 63 => reads(variant, world)].boxed()
}

/// One read-only operation (a query of every kind, `get`, `iter`, an early-stop probe).
fn reads(variant: Variant, world: World) -> BoxedStrategy<Op> {
    let points = data::points(variant, world);
    let radii = data::radii(world);
    let stop = prop_oneof![
        data::areas(variant, world).prop_map(Stop::Query),
        Just(Stop::Pairs),
        (points.clone(), radii.clone()).prop_map(|(p, r)| Stop::Within(p, r)),
        data::rays(variant, world).prop_map(Stop::Raycast),
    ];
    prop_oneof![
        16 => data::areas(variant, world).prop_map(Op::Query),
        6 => Just(Op::Pairs),
        10 => (points.clone(), ks()).prop_map(|(p, k)| Op::Nearest(p, k)),
        8 => (points, radii).prop_map(|(p, r)| Op::Within(p, r)),
        8 => data::rays(variant, world).prop_map(Op::Raycast),
        6 => pick().prop_map(Op::Get),
        3 => Just(Op::Iter),
        6 => stop.prop_map(Op::Stop),
    ]
    .boxed()
}

/// One operation a static structure supports: a read, or `get` with a stale handle.
pub(crate) fn probe(variant: Variant, world: World) -> BoxedStrategy<Op> {
    let stale_get = stale_sources().prop_map(|s| Op::Stale(s, StaleOp::Get));
    prop_oneof![63 => reads(variant, world), 6 => stale_get].boxed()
}

/// Whole test cases of `variant`: one of the two worlds, then up to [`MAX_OPS`] operations.
pub(crate) fn cases(variant: Variant) -> impl Strategy<Value = Case> {
    select(vec![World::W100, World::W128]).prop_flat_map(move |world| {
        vec(op(variant, world), 0..=MAX_OPS).prop_map(move |ops| Case { world, ops })
    })
}
