//! Hand-written sequences for the edge cases that must never be left to chance: every kind of
//! stale handle and invalid box, touching edges and corners, the world's edges and split lines,
//! many coincident elements, the empty structure, and a population that grows and shrinks
//! through several hundred elements. They run through the same driver and checks as the random
//! sequences.

use spatix_workload::Rng;

use crate::data::{Bx, Pt, World};
use crate::ops::{Case, K, Move, Op, Pick, StaleOp, StaleSrc, Stop};

fn b(x0: f64, y0: f64, x1: f64, y1: f64) -> Bx {
    Bx::new(x0, y0, x1, y1)
}

/// Every kind of stale handle with every operation that takes one.
fn stale_probes(src: StaleSrc) -> [Op; 3] {
    [
        Op::Stale(src, StaleOp::Get),
        Op::Stale(src, StaleOp::Remove),
        Op::Stale(src, StaleOp::Update(b(1.0, 1.0, 2.0, 2.0))),
    ]
}

fn stale_handles() -> Vec<Op> {
    let mut ops = vec![
        Op::Insert(b(10.0, 10.0, 12.0, 12.0)),
        Op::Insert(b(20.0, 20.0, 22.0, 22.0)),
        Op::Insert(b(30.0, 30.0, 31.0, 31.0)),
        Op::Remove(Pick(0)),
        // reuses the removed element's slot: the old handle must stay stale
        Op::Insert(b(40.0, 40.0, 41.0, 41.0)),
    ];
    let mut sources = vec![StaleSrc::Removed(Pick(0))];
    for i in 0..4 {
        sources.extend([
            StaleSrc::Foreign(Pick(i)),
            StaleSrc::NextGeneration(Pick(i)),
            StaleSrc::Swapped(Pick(i)),
        ]);
    }
    sources.extend([0, 1 << 32, u64::MAX, 7].map(StaleSrc::Forged));
    for src in sources {
        ops.extend(stale_probes(src));
    }
    ops.extend([Op::Iter, Op::Clear, Op::Maintain]);
    for i in 0..4 {
        ops.extend(stale_probes(StaleSrc::Removed(Pick(i))));
    }
    // slots are reused after the clear; every old handle stays stale
    ops.extend([
        Op::Insert(b(10.0, 10.0, 12.0, 12.0)),
        Op::Insert(b(11.0, 11.0, 13.0, 13.0)),
        Op::Insert(b(50.0, 50.0, 50.0, 50.0)),
    ]);
    for i in 0..4 {
        ops.extend(stale_probes(StaleSrc::Removed(Pick(i))));
    }
    ops.extend([Op::Pairs, Op::Iter]);
    ops
}

fn invalid_input() -> Vec<Op> {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let bad = [
        b(nan, 0.0, 1.0, 1.0),
        b(0.0, 0.0, 1.0, nan),
        b(0.0, 0.0, inf, 1.0),
        b(0.0, -inf, 1.0, 1.0),
        b(inf, 0.0, inf, 1.0),
        b(-inf, -inf, inf, inf),
        b(2.0, 0.0, 1.0, 1.0),
        b(0.0, 2.0, 1.0, 1.0),
        b(nan, nan, nan, nan),
    ];
    let mut ops = vec![
        Op::Insert(b(0.0, 0.0, 10.0, 10.0)),
        Op::Insert(b(5.0, 5.0, 15.0, 15.0)),
        Op::Insert(b(50.0, 50.0, 50.0, 50.0)),
    ];
    for (i, &x) in bad.iter().enumerate() {
        ops.push(Op::Insert(x));
        ops.push(Op::Update(Pick(i as u16), Move::To(x)));
        ops.push(Op::Query(x));
        ops.push(Op::Stop(Stop::Query(x)));
    }
    ops.extend([
        Op::Update(Pick(0), Move::Grow(-1000.0)),
        Op::Update(Pick(2), Move::Grow(-0.5)),
        Op::Pairs,
    ]);
    for p in [Pt(nan, 1.0), Pt(1.0, nan), Pt(inf, 1.0), Pt(1.0, -inf)] {
        ops.extend([
            Op::Nearest(p, K::Fixed(8)),
            Op::Nearest(p, K::Max),
            Op::Within(p, 5.0),
            Op::Stop(Stop::Within(p, 5.0)),
        ]);
    }
    for r in [-1.0, -0.0, nan] {
        ops.extend([
            Op::Within(Pt(5.0, 5.0), r),
            Op::Stop(Stop::Within(Pt(5.0, 5.0), r)),
        ]);
    }
    ops.push(Op::Iter);
    ops
}

fn touching() -> Vec<Op> {
    let shapes = [
        b(0.0, 0.0, 10.0, 10.0),
        b(10.0, 0.0, 20.0, 10.0),  // shares the edge x = 10
        b(20.0, 10.0, 30.0, 20.0), // touches the one before at the corner (20, 10)
        b(10.0, 10.0, 10.0, 10.0), // a point on two corners
        b(0.0, 10.0, 30.0, 10.0),  // a zero-height line along y = 10
        b(50.0, 50.0, 50.0, 50.0),
        b(50.0, 50.0, 60.0, 60.0), // the point above is its corner
        b(50.0, 50.0, 50.0, 50.0), // the same point again
        b(60.0, 40.0, 60.0, 70.0), // a vertical line on the right edge of the box above
    ];
    let mut ops: Vec<Op> = shapes.iter().map(|&s| Op::Insert(s)).collect();
    ops.push(Op::Pairs);
    ops.extend(shapes.iter().map(|&s| Op::Query(s)));
    ops.extend([
        Op::Query(b(10.0, 10.0, 10.0, 10.0)),
        Op::Query(b(20.0, 20.0, 20.0, 20.0)),
        Op::Query(b(10.0, -5.0, 10.0, 50.0)),
        Op::Query(b(30.0, 0.0, 40.0, 5.0)),
        Op::Query(b(60.0, 60.0, 70.0, 70.0)),
        // exactly at the radius: (15, 15) is 5 from the second box, (63, 64) is 5 from (60, 60)
        Op::Within(Pt(15.0, 15.0), 5.0),
        Op::Within(Pt(63.0, 64.0), 5.0),
        Op::Within(Pt(10.0, 10.0), 0.0),
        Op::Nearest(Pt(10.0, 10.0), K::Fixed(1)),
        Op::Nearest(Pt(10.0, 10.0), K::Fixed(2)),
        Op::Nearest(Pt(10.0, 10.0), K::Fixed(3)),
        Op::Nearest(Pt(50.0, 50.0), K::Fixed(2)),
        Op::Nearest(Pt(55.0, 30.0), K::Fixed(8)),
        Op::Stop(Stop::Query(b(10.0, 10.0, 10.0, 10.0))),
        Op::Stop(Stop::Pairs),
        Op::Stop(Stop::Within(Pt(63.0, 64.0), 5.0)),
        Op::Remove(Pick(3)),
        Op::Pairs,
        Op::Update(Pick(0), Move::Shift(10.0, 0.0)),
        Op::Pairs,
        Op::Update(Pick(0), Move::Shift(0.0, 10.0)),
        Op::Maintain,
        Op::Pairs,
    ]);
    ops
}

/// Points and boxes on the world's corners, edges and dyadic split lines, just outside it, and
/// far away; moves across split lines.
fn world_edges(w: World) -> Vec<Op> {
    let at = |f: f64| w.at(f);
    let p = |fx: f64, fy: f64| Bx::point(at(fx), at(fy));
    let r = |fx0: f64, fy0: f64, fx1: f64, fy1: f64| b(at(fx0), at(fy0), at(fx1), at(fy1));
    let mut shapes = vec![
        p(0.0, 0.0),
        p(1.0, 0.0),
        p(0.0, 1.0),
        p(1.0, 1.0),
        p(0.5, 0.5),
        p(0.25, 0.5),
        p(0.5, 0.25),
        p(0.75, 0.75),
        p(0.125, 0.875),
        p(1.0 / 32.0, 1.0 / 32.0),
        p(1.0 / 128.0, 127.0 / 128.0),
        r(0.0, 0.0, 0.5, 0.5),
        r(0.5, 0.5, 1.0, 1.0),
        r(0.0, 0.5, 0.5, 1.0),
        r(0.25, 0.25, 0.75, 0.75),
        r(0.0, 0.0, 1.0, 1.0),
        r(0.5, 0.0, 0.5, 1.0),
        r(1.0, 1.0, 1.01, 1.01),
        r(-0.01, -0.01, 0.0, 0.0),
        r(-2.0, 0.5, -1.0, 0.5),
        b(-1e6, -1e6, -1e6 + 1.0, -1e6 + 1.0),
        b(1e15, at(0.5), 1e15, at(0.5)),
        b(-1e15, -1e15, 1e15, 1e15),
    ];
    let mut ops: Vec<Op> = shapes.iter().map(|&s| Op::Insert(s)).collect();
    ops.push(Op::Pairs);
    shapes.extend([
        r(0.5, 0.0, 0.5, 1.0),
        r(0.0, 0.5, 1.0, 0.5),
        r(0.5, 0.5, 0.5, 0.5),
        r(1.0, 0.0, 2.0, 1.0),
        r(1.0 + 1.0 / 128.0, 0.0, 2.0, 1.0),
    ]);
    ops.extend(shapes.iter().map(|&s| Op::Query(s)));
    for (fx, fy) in [(0.0, 0.0), (1.0, 1.0), (0.5, 0.5), (1.5, -0.5)] {
        let pt = Pt(at(fx), at(fy));
        ops.extend([
            Op::Nearest(pt, K::Fixed(3)),
            Op::Nearest(pt, K::AboveLen(1)),
            Op::Within(pt, w.side / 4.0),
        ]);
    }
    for i in 0..12 {
        ops.push(Op::Update(Pick(i), Move::Shift(0.125, -0.125)));
        ops.push(Op::Update(Pick(i + 3), Move::Shift(-8.0, 8.0)));
        if i % 4 == 0 {
            ops.extend([Op::Maintain, Op::Pairs]);
        }
    }
    ops.extend([Op::Query(r(0.0, 0.0, 1.0, 1.0)), Op::Pairs]);
    ops
}

fn coincident() -> Vec<Op> {
    let c = World::W100.at(0.5);
    let mut ops = vec![Op::InsertMany(vec![Bx::point(c, c); 100])];
    ops.push(Op::InsertMany(vec![
        b(c - 5.0, c - 5.0, c + 5.0, c + 5.0);
        50
    ]));
    ops.extend([
        Op::Pairs,
        Op::Query(Bx::point(c, c)),
        Op::Nearest(Pt(c, c), K::Fixed(1)),
        Op::Nearest(Pt(c, c), K::Fixed(64)),
        Op::Nearest(Pt(c + 7.0, c), K::Fixed(8)),
        Op::Nearest(Pt(c + 7.0, c), K::AboveLen(1)),
        Op::Within(Pt(c, c), 0.0),
        Op::Stop(Stop::Pairs),
    ]);
    ops.extend((0..75).map(|i| Op::Remove(Pick(i * 7))));
    ops.extend([Op::Maintain, Op::Pairs]);
    ops.extend((0..40).map(|i| Op::Update(Pick(i), Move::Shift(0.125, 0.0))));
    ops.extend([Op::Pairs, Op::Clear, Op::Maintain, Op::Pairs, Op::Iter]);
    ops
}

fn empty_and_one() -> Vec<Op> {
    let probes = |ops: &mut Vec<Op>| {
        ops.extend([
            Op::Query(b(0.0, 0.0, 100.0, 100.0)),
            Op::Pairs,
            Op::Nearest(Pt(1.0, 1.0), K::Fixed(0)),
            Op::Nearest(Pt(1.0, 1.0), K::Fixed(1)),
            Op::Nearest(Pt(1.0, 1.0), K::Max),
            Op::Within(Pt(1.0, 1.0), 1e6),
            Op::Stop(Stop::Query(b(0.0, 0.0, 100.0, 100.0))),
            Op::Stop(Stop::Pairs),
            Op::Stop(Stop::Within(Pt(1.0, 1.0), 1e6)),
            Op::Iter,
        ]);
    };
    let mut ops = Vec::new();
    probes(&mut ops);
    ops.extend([Op::Maintain, Op::Clear, Op::Insert(b(3.0, 4.0, 5.0, 6.0))]);
    probes(&mut ops);
    ops.extend([Op::Remove(Pick(0)), Op::Remove(Pick(0)), Op::Maintain]);
    probes(&mut ops);
    ops.extend([Op::Clear, Op::Clear]);
    ops
}

/// Up to several hundred elements on a lattice, removed in waves with `maintain` in between
/// (branches split and collapse, cells fill and empty), then moved.
fn grow_and_shrink() -> Vec<Op> {
    let mut rng = Rng::new(0x06A0_5A1E);
    let lattice_box = |rng: &mut Rng| {
        let x = rng.below(100) as f64;
        let y = rng.below(100) as f64;
        b(x, y, x + rng.below(4) as f64, y + rng.below(4) as f64)
    };
    let mut ops = Vec::new();
    for round in 0..3 {
        ops.push(Op::InsertMany(
            (0..200).map(|_| lattice_box(&mut rng)).collect(),
        ));
        ops.extend([Op::Pairs, Op::Maintain]);
        for i in 0..150 {
            ops.push(Op::Remove(Pick(rng.below(1000) as u16)));
            if i % 50 == 0 {
                ops.extend([Op::Maintain, Op::Query(b(0.0, 0.0, 50.0, 50.0))]);
            }
        }
        for _ in 0..60 {
            let to = lattice_box(&mut rng);
            ops.push(Op::Update(Pick(rng.below(1000) as u16), Move::To(to)));
        }
        ops.extend([
            Op::Maintain,
            Op::Pairs,
            Op::Nearest(Pt(50.0, 50.0), K::Fixed(64)),
        ]);
        if round == 1 {
            ops.push(Op::Clear);
        }
    }
    ops
}

/// Every scenario, named.
pub(crate) fn all() -> Vec<(&'static str, Case)> {
    let case = |world, ops| Case { world, ops };
    vec![
        ("stale handles", case(World::W100, stale_handles())),
        ("invalid input", case(World::W100, invalid_input())),
        ("touching edges and corners", case(World::W100, touching())),
        (
            "world edges, [0, 100]²",
            case(World::W100, world_edges(World::W100)),
        ),
        (
            "world edges, [-64, 64]²",
            case(World::W128, world_edges(World::W128)),
        ),
        ("coincident", case(World::W100, coincident())),
        ("empty and one", case(World::W100, empty_and_one())),
        ("grow and shrink", case(World::W100, grow_and_shrink())),
    ]
}
