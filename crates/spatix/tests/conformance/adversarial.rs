//! Adversarial data sets, the worst cases of one structure or another (at a tenth of their full
//! size in the fast tier, see [`Tier`]): 100k coincident points, one box covering the world
//! among 100k tiny ones, boxes exactly on cell and node boundaries,
//! coordinates at the limit of f32's precision (1e7 ± 0.5), extremely thin boxes, and agents
//! that all cross one boundary every frame. On each, everything is compared with `BruteForce`
//! (queries, within, nearest, rays) and with an independent sweep (pairs).

use std::collections::HashMap;

use spatix::{
    Aabb, BruteForce, Error, Handle, Point, Ray, Scalar, SpatialIndex, SpatialQuery, Workspace,
};
use spatix_workload::{Adversary, Rng, Tier};

use crate::bulk::sweep_pairs;
use crate::check::{self, B, P, R};
use crate::harness::too_large;
use crate::suite::Make;

/// Runs every data set; panics naming the set and the first difference. A structure with a
/// declared bound on half extents (see `conformance!`) must refuse the elements over it, and
/// runs each set without them.
pub(crate) fn run<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    make: Make<'_, S, I>,
    bound: Option<f64>,
) {
    for set in Adversary::<S>::sized(Tier::current().pick(10_000, 100_000)) {
        let fitting = refused(&set, make, bound);
        if let Err(e) = fitting.and_then(|set| {
            // A set whose every element is over the bound has nothing more to compare.
            if set.boxes.is_empty() {
                Ok(())
            } else {
                check(&set, make)
            }
        }) {
            panic!("adversarial set '{}': {e}", set.name);
        }
    }
}

/// The set without the elements larger than `bound` (at first or in any frame), after
/// checking that a fresh structure refuses the first of them and changes nothing.
fn refused<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    set: &Adversary<S>,
    make: Make<'_, S, I>,
    bound: Option<f64>,
) -> Result<Adversary<S>, String> {
    let fits = |i: usize| {
        !too_large(&set.boxes[i], bound) && set.frames.iter().all(|f| !too_large(&f[i], bound))
    };
    let keep: Vec<usize> = (0..set.boxes.len()).filter(|&i| fits(i)).collect();
    if let Some(i) = (0..set.boxes.len()).find(|&i| too_large(&set.boxes[i], bound)) {
        let mut sut = make(set.world);
        let got = sut.insert(set.boxes[i], 0);
        if got != Err(Error::BoxTooLarge) || sut.len() != 0 {
            return Err(format!(
                "insert of {:?}, larger than the declared bound, returned {got:?}",
                B(&set.boxes[i])
            ));
        }
    }
    let pick = |boxes: &[Aabb<S>]| keep.iter().map(|&i| boxes[i]).collect::<Vec<_>>();
    Ok(Adversary {
        boxes: pick(&set.boxes),
        frames: set.frames.iter().map(|f| pick(f)).collect(),
        ..set.clone()
    })
}

/// In a quadratic set, the pairs of this many elements are counted (after removing the rest).
const QUADRATIC_PAIRS_OF: usize = 2000;

/// Builds the set into a fresh structure and the oracle, compares, plays its frames comparing
/// after each, then removes everything.
fn check<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    set: &Adversary<S>,
    make: Make<'_, S, I>,
) -> Result<(), String> {
    let mut sut = make(set.world);
    let mut oracle = BruteForce::new();
    let mut handles = Vec::with_capacity(set.boxes.len());
    for (i, b) in set.boxes.iter().enumerate() {
        let h = sut
            .insert(*b, i as u64)
            .map_err(|e| format!("insert {:?}: {e}", B(b)))?;
        handles.push((h, oracle.insert(*b, i as u64).expect("valid")));
    }
    sut.maintain();
    let mut current = set.boxes.clone();
    compare(set, &sut, &oracle, &current, &handles, "after the build")?;
    for (f, frame) in set.frames.iter().enumerate() {
        for (i, b) in frame.iter().enumerate() {
            sut.update(handles[i].0, *b)
                .map_err(|e| format!("frame {f}: update #{i}: {e}"))?;
            oracle.update(handles[i].1, *b).expect("live");
        }
        sut.maintain();
        current.clone_from(frame);
        compare(
            set,
            &sut,
            &oracle,
            &current,
            &handles,
            &format!("frame {f}"),
        )?;
    }
    if set.quadratic {
        let n = QUADRATIC_PAIRS_OF;
        // Newest first: a crowded cell or leaf lists its newest element first, so this is
        // each structure's best removal order; the worst (oldest first) costs O(crowd) per
        // removal, which docs/RELIABILITY.md records rather than this test.
        for &(h, ho) in handles[n..].iter().rev() {
            sut.remove(h)
                .ok_or("remove of a live element returned None")?;
            oracle.remove(ho);
        }
        sut.maintain();
        sut.check_invariants()
            .map_err(|e| format!("after removals: {e}"))?;
        let mut count = 0u64;
        let _ = sut.for_each_pair(|a, b| {
            count += u64::from(a.handle != b.handle);
            core::ops::ControlFlow::Continue(())
        });
        let want = (n * (n - 1) / 2) as u64;
        if count != want {
            return Err(format!(
                "{count} pairs among {n} coincident points, expected {want}"
            ));
        }
    }
    for &(h, _) in &handles {
        sut.remove(h);
    }
    sut.check_invariants()
        .map_err(|e| format!("after removing everything: {e}"))?;
    if sut.len() != 0 || sut.iter().next().is_some() {
        return Err(format!("{} elements left after removing all", sut.len()));
    }
    Ok(())
}

/// Everything against the oracle and the sweep, after the build or a frame.
fn compare<S: Scalar, I: SpatialIndex<S, u64> + Sync>(
    set: &Adversary<S>,
    sut: &I,
    oracle: &BruteForce<S, u64>,
    boxes: &[Aabb<S>],
    handles: &[(Handle, Handle)],
    when: &str,
) -> Result<(), String> {
    let fail = |what: String| format!("{when}: {what}");
    sut.check_invariants().map_err(|e| fail(e.to_string()))?;
    if sut.len() != boxes.len() {
        return Err(fail(format!(
            "len {} for {} elements",
            sut.len(),
            boxes.len()
        )));
    }
    let describe = |id: u64| format!("#{id} {:?}", B(&boxes[id as usize]));
    let by_handle: HashMap<Handle, u64> = handles
        .iter()
        .enumerate()
        .map(|(i, h)| (h.0, i as u64))
        .collect();
    let ids = |seen: Vec<check::Seen<S>>| -> Result<Vec<u64>, String> {
        seen.iter()
            .map(|s| match by_handle.get(&s.handle) {
                Some(&id) if id == s.id && s.aabb == boxes[id as usize] => Ok(id),
                _ => Err(fail(format!("reported a wrong element: {s:?}"))),
            })
            .collect()
    };
    if !set.quadratic {
        let (got, _) = check::pairs_all(sut);
        let got: Vec<(u64, u64)> = got
            .iter()
            .map(|(a, b)| Ok((ids(vec![*a])?[0], ids(vec![*b])?[0])))
            .collect::<Result<_, String>>()?;
        let indexed: Vec<(u64, Aabb<S>)> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| (i as u64, *b))
            .collect();
        check::same_pairs(&got, &sweep_pairs(&indexed), &describe)
            .map_err(|e| fail(format!("for_each_pair: {e}")))?;
    }
    let mut rng = Rng::new(boxes.len() as u64);
    let (lo, hi) = (set.world.min.x.to_f64(), set.world.max.x.to_f64());
    let side = hi - lo;
    let mut coord = || S::from_f64(rng.range(lo - side * 0.05, hi + side * 0.05));
    let (mut ws, mut ws_oracle) = (Workspace::new(), Workspace::new());
    for q in 0..60 {
        let p = if q % 3 == 0 {
            boxes[q * 7919 % boxes.len()].center()
        } else {
            Point::new(coord(), coord())
        };
        let half = S::from_f64(side * [0.0, 0.001, 0.02, 0.3][q % 4]);
        let area = Aabb {
            min: Point::new(p.x - half, p.y - half),
            max: Point::new(p.x + half, p.y + half),
        };
        let got = ids(check::query_all(sut, &area).0)?;
        let want: Vec<u64> = check::query_all(oracle, &area)
            .0
            .iter()
            .map(|s| s.id)
            .collect();
        check::same_ids(&got, &want, &describe)
            .map_err(|e| fail(format!("query {:?}: {e}", B(&area))))?;
        let got = ids(check::within_all(sut, p, half).0)?;
        let want: Vec<u64> = check::within_all(oracle, p, half)
            .0
            .iter()
            .map(|s| s.id)
            .collect();
        check::same_ids(&got, &want, &describe)
            .map_err(|e| fail(format!("within({:?}, {half:?}): {e}", P(p))))?;
        let k = [1, 8, 64][q % 3];
        let got = sut.nearest(p, k, &mut ws).to_vec();
        let want = oracle.nearest(p, k, &mut ws_oracle).to_vec();
        let truth = |h: Handle| by_handle.get(&h).map(|&id| (id, boxes[id as usize]));
        check::check_nearest(&got, &want, p, k, boxes.len(), None, &truth)
            .map_err(|e| fail(format!("nearest({:?}, k = {k}): {e}", P(p))))?;
        let angle = q as f64 * 0.7;
        let direction = [
            Point::new(S::ONE, S::ZERO),
            Point::new(S::ZERO, -S::ONE),
            Point::new(S::from_f64(angle.cos()), S::from_f64(angle.sin())),
        ][q % 3];
        let ray = Ray {
            origin: p,
            direction,
            max_t: S::from_f64(side * 0.1),
        };
        let (got, _) = check::raycast_all(sut, &ray, &mut ws);
        let (want, _) = check::raycast_all(oracle, &ray, &mut ws_oracle);
        if got.windows(2).any(|w| w[1].1 < w[0].1) {
            return Err(fail(format!("raycast {:?}: hits out of order", R(&ray))));
        }
        let mut got_t: Vec<(u64, S)> = got.iter().map(|(s, t)| (s.id, *t)).collect();
        let mut want_t: Vec<(u64, S)> = want.iter().map(|(s, t)| (s.id, *t)).collect();
        got_t.sort_unstable_by_key(|e| e.0);
        want_t.sort_unstable_by_key(|e| e.0);
        if got_t != want_t {
            let got_ids: Vec<u64> = got_t.iter().map(|e| e.0).collect();
            let want_ids: Vec<u64> = want_t.iter().map(|e| e.0).collect();
            check::same_ids(&got_ids, &want_ids, &describe)
                .map_err(|e| fail(format!("raycast {:?}: {e}", R(&ray))))?;
            return Err(fail(format!(
                "raycast {:?}: entry parameters differ",
                R(&ray)
            )));
        }
    }
    Ok(())
}
