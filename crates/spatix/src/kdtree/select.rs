//! Median selection for the build: large nodes are partitioned around pivots sampled close
//! to the target position (Floyd and Rivest's idea), so that about 1.5 passes over a node
//! put its median in place where `select_nth_unstable_by` takes about two.

use core::cmp::Ordering;

use crate::Scalar;

/// Nodes of more than this many records are partitioned around sampled pivots; smaller
/// ones go straight to `select_nth_unstable_by`, which is faster on data in the first
/// cache levels (4096 records, 64 or 96 KiB: 1M points built about 4% faster than with
/// 32,768).
const SAMPLED_ABOVE: usize = 1 << 12;

/// Most keys a pivot sample takes.
const PIVOT_SAMPLE: usize = 1024;

/// Reorders `v` so that `v[k]` is the record that would be there if `v` were sorted by
/// `key`, every record before it has a key `<=` its key and every record after it `>=`.
///
/// While the slice holding `k` is large, a pivot sampled just past `k`'s quantile (towards
/// the slice's middle) splits it in one branch-free pass, and the search continues in the
/// side holding `k`: a first split lands a few percent from `k`, the second cuts that side
/// down to a few percent, and the rest goes to `select_nth_unstable_by`. Keys equal to a
/// pivot cannot stall it: a pivot equal to the lower bound of its slice (an earlier pivot)
/// is the slice's minimum, and one pass then sets all the keys equal to it aside, ending the
/// search if `k` is among them. A search that takes more steps than a run of good splits
/// would hands its slice to `select_nth_unstable_by`, whose worst case is linear.
pub(super) fn select<R: Copy, S: Scalar>(v: &mut [R], k: usize, key: impl Fn(&R) -> S + Copy) {
    let (mut v, mut k) = (v, k);
    // The smallest key of the slice, when a pivot has bounded it from below.
    let mut floor: Option<S> = None;
    let mut steps = 8;
    while v.len() > SAMPLED_ABOVE && steps > 0 {
        steps -= 1;
        let pivot = pivot(v, k, key);
        if floor == Some(pivot) {
            let equal = partition(v, |r| key(r) <= pivot);
            if k < equal {
                return;
            }
            (v, k) = (&mut v[equal..], k - equal);
            continue;
        }
        let below = partition(v, |r| key(r) < pivot);
        if k < below {
            v = &mut v[..below];
        } else {
            (v, k) = (&mut v[below..], k - below);
            floor = Some(pivot);
        }
    }
    v.select_nth_unstable_by(k, |a, b| compare(key(a), key(b)));
}

/// A key of `v` close to the one at sorted position `k`, most likely on the side of it
/// towards the middle of `v`: a quantile of an evenly spaced sample, shifted by about two
/// standard deviations of the sample's quantile.
fn pivot<R, S: Scalar>(v: &[R], k: usize, key: impl Fn(&R) -> S) -> S {
    let len = v.len();
    let count = (len / 16).min(PIVOT_SAMPLE);
    let step = len / count;
    let mut keys = [S::ZERO; PIVOT_SAMPLE];
    let keys = &mut keys[..count];
    for (i, slot) in keys.iter_mut().enumerate() {
        *slot = key(&v[i * step + step / 2]);
    }
    let rank = k * count / len;
    let shift = 2 * (rank * (count - rank) / count).isqrt() + 1;
    let rank = if 2 * k < len {
        (rank + shift).min(count - 1)
    } else {
        rank.saturating_sub(shift)
    };
    *keys.select_nth_unstable_by(rank, |a, b| compare(*a, *b)).1
}

/// Moves the records for which `left` holds before the others and returns how many there
/// are, in one branch-free pass: a Lomuto partition that carries a gap along instead of
/// swapping (Bergdoll's cyclic variant), so that every record moves from memory to memory
/// in one piece.
fn partition<R: Copy>(v: &mut [R], left: impl Fn(&R) -> bool) -> usize {
    let Some(&held) = v.first() else {
        return 0;
    };
    // v[..end] passes, v[end..gap] fails, v[gap] is free (its record is held or moved).
    let (mut gap, mut end) = (0, 0);
    for next in 1..v.len() {
        let passes = left(&v[next]);
        v[gap] = v[end];
        v[end] = v[next];
        gap = next;
        end += usize::from(passes);
    }
    v[gap] = v[end];
    v[end] = held;
    end + usize::from(left(&held))
}

/// Orders finite coordinates.
#[inline]
fn compare<S: Scalar>(a: S, b: S) -> Ordering {
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}
