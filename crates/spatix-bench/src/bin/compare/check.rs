//! What each run answers, in a form every structure can be compared on, and the comparison:
//! a mismatch with the reference (the first structure measured) is a [`Mismatch`], which
//! fails the whole run.

use core::fmt;

/// Pair or hit counts with an order-independent checksum of what was found, so that a
/// structure with the right count but the wrong elements is caught too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub(crate) count: u64,
    pub(crate) hash: u64,
}

/// SplitMix64's finalizer: spreads the bits of a value over the whole word.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Tally {
    /// One element found (by its value).
    #[inline]
    pub(crate) fn hit(&mut self, value: u32) {
        self.count += 1;
        self.hash = self.hash.wrapping_add(mix(u64::from(value)));
    }

    /// One unordered pair found (by its values, in either order).
    #[inline]
    pub(crate) fn pair(&mut self, a: u32, b: u32) {
        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
        self.count += 1;
        self.hash = self
            .hash
            .wrapping_add(mix((u64::from(lo) << 32) | u64::from(hi)));
    }

    /// Adds another tally's findings.
    pub(crate) fn merge(&mut self, other: Tally) {
        self.count += other.count;
        self.hash = self.hash.wrapping_add(other.hash);
    }
}

/// Relative tolerance on each query's sum of squared k-nearest distances: the harness sums
/// exact f64 distances of the returned points, so equal answers agree to rounding of the sum;
/// a crate whose f32 distances tie two points that differ in the last bit may return either.
pub(crate) const DISTANCE_TOLERANCE: f64 = 1e-6;

/// The answer of one run of a workload.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    /// Pairs or hits found.
    Found(Tally),
    /// One tally per frame (the agents move between frames).
    Frames(Vec<Tally>),
    /// For each query, the number of neighbours returned and the sum of their squared
    /// distances (computed by the harness, in f64, from the points' f32 coordinates).
    Nearest(Vec<(u32, f64)>),
}

impl Answer {
    /// A short summary for the tables and the JSON: the total count (and distance sum).
    pub(crate) fn summary(&self) -> String {
        match self {
            Answer::Found(t) => format!("{} found", t.count),
            Answer::Frames(frames) => {
                let counts: Vec<String> = frames.iter().map(|t| t.count.to_string()).collect();
                format!("pairs per frame {}", counts.join(", "))
            }
            Answer::Nearest(per_query) => {
                let count: u64 = per_query.iter().map(|&(c, _)| u64::from(c)).sum();
                let sum: f64 = per_query.iter().map(|&(_, d)| d).sum();
                format!("{count} neighbours, sum of squared distances {sum:.6e}")
            }
        }
    }

    /// `Ok` if `self` agrees with `reference`, else what differs.
    pub(crate) fn compare(&self, reference: &Answer) -> Result<(), String> {
        match (self, reference) {
            (Answer::Found(a), Answer::Found(b)) if a == b => Ok(()),
            (Answer::Frames(a), Answer::Frames(b)) if a == b => Ok(()),
            (Answer::Nearest(a), Answer::Nearest(b)) if a.len() == b.len() => {
                for (q, (&(ca, da), &(cb, db))) in a.iter().zip(b).enumerate() {
                    if ca != cb {
                        return Err(format!("query {q}: {ca} neighbours, reference {cb}"));
                    }
                    if (da - db).abs() > DISTANCE_TOLERANCE * db.abs().max(f64::MIN_POSITIVE) {
                        return Err(format!(
                            "query {q}: squared distances sum to {da}, reference {db}"
                        ));
                    }
                }
                Ok(())
            }
            _ => Err(format!(
                "answer {} (checksums {}), reference {} (checksums {})",
                self.summary(),
                self.checksums(),
                reference.summary(),
                reference.checksums()
            )),
        }
    }

    fn checksums(&self) -> String {
        match self {
            Answer::Found(t) => format!("{:016x}", t.hash),
            Answer::Frames(frames) => frames
                .iter()
                .map(|t| format!("{:016x}", t.hash))
                .collect::<Vec<_>>()
                .join(", "),
            Answer::Nearest(_) => "-".into(),
        }
    }
}

/// A structure whose answer differs from the reference's.
#[derive(Debug)]
pub(crate) struct Mismatch {
    pub(crate) workload: String,
    pub(crate) n: usize,
    pub(crate) structure: String,
    pub(crate) reference: String,
    pub(crate) detail: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "MISMATCH in {} at N={}: {} disagrees with {}: {}",
            self.workload, self.n, self.structure, self.reference, self.detail
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_order_does_not_matter_but_the_pair_does() {
        let (mut a, mut b, mut c) = (Tally::default(), Tally::default(), Tally::default());
        a.pair(1, 2);
        a.pair(5, 3);
        b.pair(3, 5);
        b.pair(2, 1);
        c.pair(1, 3);
        c.pair(2, 5);
        assert_eq!(a, b);
        assert_eq!(a.count, c.count);
        assert_ne!(a, c);
    }

    #[test]
    fn merge_equals_one_tally_of_everything() {
        let (mut all, mut left, mut right) = (Tally::default(), Tally::default(), Tally::default());
        for v in 0..10 {
            all.hit(v);
            if v % 2 == 0 {
                left.hit(v)
            } else {
                right.hit(v)
            }
        }
        left.merge(right);
        assert_eq!(left, all);
    }

    #[test]
    fn nearest_answers_agree_within_the_tolerance_only() {
        let reference = Answer::Nearest(vec![(8, 100.0), (8, 50.0)]);
        assert!(
            Answer::Nearest(vec![(8, 100.0 + 1e-5), (8, 50.0)])
                .compare(&reference)
                .is_ok()
        );
        assert!(
            Answer::Nearest(vec![(8, 100.01), (8, 50.0)])
                .compare(&reference)
                .is_err()
        );
        assert!(
            Answer::Nearest(vec![(7, 100.0), (8, 50.0)])
                .compare(&reference)
                .is_err()
        );
        assert!(
            Answer::Nearest(vec![(8, 100.0)])
                .compare(&reference)
                .is_err()
        );
    }

    #[test]
    fn a_different_frame_or_count_is_a_mismatch() {
        let mut t = Tally::default();
        t.hit(1);
        let reference = Answer::Frames(vec![t, t]);
        assert!(Answer::Frames(vec![t, t]).compare(&reference).is_ok());
        assert!(
            Answer::Frames(vec![t, Tally::default()])
                .compare(&reference)
                .is_err()
        );
        assert!(Answer::Found(t).compare(&reference).is_err());
    }
}
