//! The comparison rules: query and within results as multisets of ids (each exactly once),
//! pairs as sets of unordered pairs (no duplicates, no self-pairs), nearest by length, order,
//! true distances and the oracle's distances, early stops by call count and return value.
//!
//! Every check returns `Result<(), String>` with a message that says what differed; the drivers
//! in `suite.rs` turn an `Err` into a proptest failure or a panic, and `broken.rs` asserts that
//! deliberately broken structures do produce an `Err`.

use core::ops::ControlFlow;
use std::collections::HashSet;
use std::fmt::{self, Debug};

use spatix::{Aabb, Handle, Item, Neighbor, Point, Ray, Scalar, SpatialQuery, Workspace};

use crate::exact;

/// How many ids a mismatch message lists.
const SHOWN: usize = 8;

/// Whether a box is valid (all coordinates finite, `min <= max`), written independently of the
/// library.
pub(crate) fn valid<S: Scalar>(b: &Aabb<S>) -> bool {
    [b.min.x, b.min.y, b.max.x, b.max.y]
        .into_iter()
        .all(Scalar::is_finite)
        && b.min.x <= b.max.x
        && b.min.y <= b.max.y
}

/// Closed intersection: touching boxes intersect. Compared exactly from the coordinates' bits
/// ([`exact::order`]), not with the library's float comparisons.
pub(crate) fn overlap<S: Scalar>(a: &Aabb<S>, b: &Aabb<S>) -> bool {
    let le = |u: S, v: S| exact::order(u.to_f64(), v.to_f64()).is_le();
    le(a.min.x, b.max.x) && le(b.min.x, a.max.x) && le(a.min.y, b.max.y) && le(b.min.y, a.max.y)
}

/// Whether `b` is within `radius` of `p`, decided exactly up to a few ulps
/// ([`exact::within`]): `loose` admits distances up to the tolerance beyond the radius (what a
/// reported element must satisfy), otherwise only those the tolerance inside it (what an
/// element must satisfy to be certainly reported).
pub(crate) fn within_exact<S: Scalar>(b: &Aabb<S>, p: Point<S>, radius: S, loose: bool) -> bool {
    if radius == S::INFINITY {
        return true;
    }
    let (may, must) = exact::within(b, p, radius);
    if loose { may } else { must }
}

/// A box, compactly: `[x0, y0 .. x1, y1]`.
pub(crate) struct B<'a, S>(pub(crate) &'a Aabb<S>);

impl<S: Debug> Debug for B<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "[{:?}, {:?} .. {:?}, {:?}]",
            b.min.x, b.min.y, b.max.x, b.max.y
        )
    }
}

/// A point, compactly: `(x, y)`.
pub(crate) struct P<S>(pub(crate) Point<S>);

impl<S: Debug> Debug for P<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({:?}, {:?})", self.0.x, self.0.y)
    }
}

/// What a visitor saw, copied out of an [`Item`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen<S> {
    pub(crate) handle: Handle,
    pub(crate) aabb: Aabb<S>,
    pub(crate) id: u64,
}

impl<S: Scalar> Seen<S> {
    pub(crate) fn of(item: Item<'_, S, u64>) -> Self {
        Self {
            handle: item.handle,
            aabb: item.aabb,
            id: *item.value,
        }
    }
}

/// Two elements `for_each_pair` reported together.
pub(crate) type Pair<S> = (Seen<S>, Seen<S>);

/// Every element `query` reports, and what it returned.
pub(crate) fn query_all<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    area: &Aabb<S>,
) -> (Vec<Seen<S>>, ControlFlow<()>) {
    let mut out = Vec::new();
    let flow = index.query(area, |item| {
        out.push(Seen::of(item));
        ControlFlow::Continue(())
    });
    (out, flow)
}

/// Every element `within` reports, and what it returned.
pub(crate) fn within_all<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    point: Point<S>,
    radius: S,
) -> (Vec<Seen<S>>, ControlFlow<()>) {
    let mut out = Vec::new();
    let flow = index.within(point, radius, |item| {
        out.push(Seen::of(item));
        ControlFlow::Continue(())
    });
    (out, flow)
}

/// Every element `raycast_all` reports with its entry parameter, and what it returned.
pub(crate) fn raycast_all<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
    ray: &Ray<S>,
    workspace: &mut Workspace<S>,
) -> (Vec<(Seen<S>, S)>, ControlFlow<()>) {
    let mut out = Vec::new();
    let flow = index.raycast_all(ray, workspace, |item, t| {
        out.push((Seen::of(item), t));
        ControlFlow::Continue(())
    });
    (out, flow)
}

/// A ray, compactly: `origin -> direction up to max_t`.
pub(crate) struct R<'a, S>(pub(crate) &'a Ray<S>);

impl<S: Debug> Debug for R<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        write!(
            f,
            "({:?}, {:?}) -> ({:?}, {:?}) up to {:?}",
            r.origin.x, r.origin.y, r.direction.x, r.direction.y, r.max_t
        )
    }
}

/// Every pair `for_each_pair` reports, and what it returned.
pub(crate) fn pairs_all<S: Scalar, I: SpatialQuery<S, u64>>(
    index: &I,
) -> (Vec<Pair<S>>, ControlFlow<()>) {
    let mut out = Vec::new();
    let flow = index.for_each_pair(|a, b| {
        out.push((Seen::of(a), Seen::of(b)));
        ControlFlow::Continue(())
    });
    (out, flow)
}

fn sorted_difference(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() {
        if j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && b[j] < a[i] {
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out
}

fn shown(ids: &[u64], describe: &dyn Fn(u64) -> String) -> String {
    let mut s: Vec<String> = ids.iter().take(SHOWN).map(|&id| describe(id)).collect();
    if ids.len() > SHOWN {
        s.push(format!("… {} more", ids.len() - SHOWN));
    }
    format!("[{}]", s.join(", "))
}

/// Compares reported element ids with the expected ones as multisets: every expected element
/// exactly once, nothing else, no duplicates.
pub(crate) fn same_ids(
    got: &[u64],
    expected: &[u64],
    describe: &dyn Fn(u64) -> String,
) -> Result<(), String> {
    let mut got = got.to_vec();
    got.sort_unstable();
    if let Some(w) = got.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "element {} reported more than once",
            describe(w[0])
        ));
    }
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    if got == expected {
        return Ok(());
    }
    let missing = sorted_difference(&expected, &got);
    let extra = sorted_difference(&got, &expected);
    Err(format!(
        "{} reported, {} expected; missing {}, unexpected {}",
        got.len(),
        expected.len(),
        shown(&missing, describe),
        shown(&extra, describe)
    ))
}

/// Pairs, compactly, at most [`SHOWN`] of them.
pub(crate) fn shown_pairs(pairs: &[(u64, u64)], describe: &dyn Fn(u64) -> String) -> String {
    let mut s: Vec<String> = pairs
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| format!("({}, {})", describe(a), describe(b)))
        .collect();
    if pairs.len() > SHOWN {
        s.push(format!("… {} more", pairs.len() - SHOWN));
    }
    format!("[{}]", s.join(", "))
}

/// A set of unordered pairs of distinct positions `0..n`: one bit per possible pair.
pub(crate) struct PairSet {
    bits: Vec<u64>,
    len: usize,
}

impl PairSet {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            bits: vec![0; (n * n.saturating_sub(1) / 2).div_ceil(64)],
            len: 0,
        }
    }

    fn bit(i: usize, j: usize) -> usize {
        let (lo, hi) = (i.min(j), i.max(j));
        hi * (hi - 1) / 2 + lo
    }

    /// Adds the pair `{i, j}` (`i != j`); false if it was already there.
    pub(crate) fn insert(&mut self, i: usize, j: usize) -> bool {
        let b = Self::bit(i, j);
        let (word, mask) = (b / 64, 1u64 << (b % 64));
        let new = self.bits[word] & mask == 0;
        self.bits[word] |= mask;
        self.len += usize::from(new);
        new
    }

    pub(crate) fn contains(&self, i: usize, j: usize) -> bool {
        let b = Self::bit(i, j);
        self.bits[b / 64] & (1 << (b % 64)) != 0
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

/// Compares reported pairs with the expected ones as sets of unordered pairs: no self-pairs, no
/// pair twice (in either order), nothing missing, nothing extra.
pub(crate) fn same_pairs(
    got: &[(u64, u64)],
    expected: &[(u64, u64)],
    describe: &dyn Fn(u64) -> String,
) -> Result<(), String> {
    if let Some(&(a, _)) = got.iter().find(|(a, b)| a == b) {
        return Err(format!("element {} paired with itself", describe(a)));
    }
    let norm = |v: &[(u64, u64)]| {
        let mut v: Vec<(u64, u64)> = v.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        v.sort_unstable();
        v
    };
    let got = norm(got);
    if let Some(w) = got.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!(
            "pair ({}, {}) reported more than once",
            describe(w[0].0),
            describe(w[0].1)
        ));
    }
    let expected = norm(expected);
    if got == expected {
        return Ok(());
    }
    let (got_set, want_set): (HashSet<_>, HashSet<_>) =
        (got.iter().collect(), expected.iter().collect());
    let show = |v: &[(u64, u64)], other: &HashSet<&(u64, u64)>| {
        let diff: Vec<String> = v
            .iter()
            .filter(|p| !other.contains(p))
            .take(SHOWN)
            .map(|&(a, b)| format!("({}, {})", describe(a), describe(b)))
            .collect();
        format!("[{}]", diff.join(", "))
    };
    Err(format!(
        "{} pairs reported, {} expected; missing {}, unexpected {}",
        got.len(),
        expected.len(),
        show(&expected, &got_set),
        show(&got, &want_set)
    ))
}

/// Checks a nearest result against the oracle's and against exact arithmetic: `min(k, len)`
/// neighbours (none for a non-finite point), ascending, no element twice, each reported
/// distance the exact distance of the element named (to a few ulps: [`exact::tolerance`]), the same
/// distances as the oracle (ties at the k-th distance may pick different elements), and, given
/// `all` the live elements, none left out that is nearer than one reported (beyond the
/// tolerance). `truth` maps a handle to its live element's id and box.
pub(crate) fn check_nearest<S: Scalar>(
    got: &[Neighbor<S>],
    oracle: &[Neighbor<S>],
    point: Point<S>,
    k: usize,
    len: usize,
    all: Option<&[(u64, Aabb<S>)]>,
    truth: &dyn Fn(Handle) -> Option<(u64, Aabb<S>)>,
) -> Result<(), String> {
    let finite = point.x.is_finite() && point.y.is_finite();
    let want_len = if finite { k.min(len) } else { 0 };
    if oracle.len() != want_len {
        return Err(format!(
            "ORACLE returned {} neighbours, expected {want_len}",
            oracle.len()
        ));
    }
    if got.len() != want_len {
        return Err(format!(
            "returned {} neighbours, expected {want_len} (k = {k}, len = {len}, finite point: {finite})",
            got.len()
        ));
    }
    let (bits, ulp) = exact::tolerance::<S>();
    let mut seen = HashSet::new();
    let mut farthest: Option<exact::Big> = None;
    for (i, n) in got.iter().enumerate() {
        let (id, aabb) = truth(n.handle).ok_or_else(|| {
            format!(
                "neighbour {i} has handle {:?}, which names no live element",
                n.handle
            )
        })?;
        if !seen.insert(id) {
            return Err(format!("neighbour {i}: #{id} reported more than once"));
        }
        let d = exact::box_distance_2(&aabb, point);
        if !exact::distance_matches(n.distance.to_f64(), &d, S::MAX.to_f64(), ulp, bits) {
            return Err(format!(
                "neighbour {i} (#{id}, box {:?}) reports distance {:?}, which is not its exact distance",
                B(&aabb),
                n.distance
            ));
        }
        if i > 0 && got[i - 1].distance > n.distance {
            return Err(format!(
                "neighbours not ascending: {:?} then {:?} at {i}",
                got[i - 1].distance,
                n.distance
            ));
        }
        if farthest.as_ref().is_none_or(|f| *f < d) {
            farthest = Some(d);
        }
    }
    if let (Some(farthest), Some(all)) = (farthest, all) {
        for (id, aabb) in all.iter().filter(|(id, _)| !seen.contains(id)) {
            if !exact::at_most(&farthest, &exact::box_distance_2(aabb, point), bits) {
                return Err(format!(
                    "#{id} (box {:?}) is nearer than a reported neighbour, but left out",
                    B(aabb)
                ));
            }
        }
    }
    if let Some(i) = (0..got.len()).find(|&i| got[i].distance != oracle[i].distance) {
        let window = |v: &[Neighbor<S>]| {
            v[i.saturating_sub(2)..(i + 3).min(v.len())]
                .iter()
                .map(|n| n.distance)
                .collect::<Vec<_>>()
        };
        return Err(format!(
            "neighbour {i} is at distance {:?}, but the oracle's is {:?} (around it: {:?} vs the oracle's {:?})",
            got[i].distance,
            oracle[i].distance,
            window(got),
            window(oracle)
        ));
    }
    Ok(())
}

/// Checks an early-stop probe: a visitor that breaks on its first call must be called exactly
/// once and the method must return `Break`, or, when nothing matches, never be called and the
/// method return `Continue`.
pub(crate) fn check_stop(
    calls: usize,
    flow: ControlFlow<()>,
    matches: usize,
) -> Result<(), String> {
    let (want_calls, want_flow) = if matches == 0 {
        (0, ControlFlow::Continue(()))
    } else {
        (1, ControlFlow::Break(()))
    };
    if calls != want_calls || flow != want_flow {
        return Err(format!(
            "the visitor breaks on its first call and {matches} elements match: it was called \
             {calls} times and the method returned {flow:?}; expected {want_calls} call(s) and {want_flow:?}"
        ));
    }
    Ok(())
}
