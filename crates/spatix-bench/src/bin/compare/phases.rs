//! The agents frame phase by phase, and what more threads gain on it: the speed-up over one
//! thread and Amdahl's serial fraction, per phase and in total.

use crate::measure::median;

/// One agents frame's seconds, phase by phase. The frame's time is their sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Phases {
    /// Stepping the agents and following the moves: `update` of every element,
    /// `update_all`, or the rebuild of a structure that rebuilds.
    pub(crate) step: f64,
    /// The structure's tidying after the moves (`maintain`); `None` where it has none.
    pub(crate) maintain: Option<f64>,
    /// The pair pass.
    pub(crate) pairs: f64,
}

impl Phases {
    /// The whole frame.
    pub(crate) fn total(&self) -> f64 {
        self.step + self.maintain.unwrap_or(0.0) + self.pairs
    }
}

/// A structure's agents frames at one N: the measured runs, phase by phase, on the run's
/// threads and (with `--serial-fraction`) on one thread.
#[derive(Clone, Debug)]
pub(crate) struct FrameRuns {
    pub(crate) phases: Vec<Phases>,
    pub(crate) one_thread: Option<Vec<Phases>>,
}

/// The names of the phases and the total, in report order (also the JSON keys).
pub(crate) const NAMES: [&str; 4] = ["step_update", "maintain", "pairs", "total"];

/// Each phase's median over `runs` and the median of their totals, in the order of
/// [`NAMES`]; `None` for a phase the structure does not have.
pub(crate) fn medians(runs: &[Phases]) -> [Option<f64>; 4] {
    let of = |phase: fn(&Phases) -> Option<f64>| {
        runs.iter()
            .map(phase)
            .collect::<Option<Vec<f64>>>()
            .map(|values| median(&values))
    };
    [
        of(|p| Some(p.step)),
        of(|p| p.maintain),
        of(|p| Some(p.pairs)),
        of(|p| Some(p.total())),
    ]
}

/// How `threads` threads did against one on the same work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scaling {
    /// One thread's time over `threads` threads' time.
    pub(crate) speedup: f64,
    /// Amdahl's serial fraction: see [`serial_fraction`].
    pub(crate) serial_fraction: f64,
}

impl Scaling {
    /// From the one-thread and the many-thread seconds of the same work.
    pub(crate) fn new(threads: usize, one: f64, many: f64) -> Self {
        let speedup = one / many;
        Self {
            speedup,
            serial_fraction: serial_fraction(threads, speedup),
        }
    }
}

/// The serial fraction `s` that Amdahl's law `S = N / (1 + s (N − 1))` gives for a speed-up
/// `S` on `N` threads: `s = (N/S − 1) / (N − 1)`. 0 for a perfect speed-up, 1 for none, above
/// 1 where more threads are slower; NaN for one thread.
pub(crate) fn serial_fraction(threads: usize, speedup: f64) -> f64 {
    let n = threads as f64;
    (n / speedup - 1.0) / (n - 1.0)
}

/// Per phase and in total (in the order of [`NAMES`]), `threads` threads against one, from
/// the two sets of runs; `None` for a phase the structure does not have.
pub(crate) fn scaling(threads: usize, runs: &FrameRuns) -> Option<[Option<Scaling>; 4]> {
    let one = medians(runs.one_thread.as_ref()?);
    let many = medians(&runs.phases);
    Some(std::array::from_fn(|i| {
        Some(Scaling::new(threads, one[i]?, many[i]?))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn serial_fraction_follows_amdahl() {
        assert!(close(serial_fraction(4, 4.0), 0.0));
        assert!(close(serial_fraction(4, 1.0), 1.0));
        assert!(close(serial_fraction(4, 2.0), 1.0 / 3.0));
        assert!(close(serial_fraction(2, 1.6), 0.25));
        assert!(serial_fraction(2, 0.5) > 1.0);
        assert!(serial_fraction(1, 1.0).is_nan());
        // Amdahl's law gives back the speed-up from the fraction.
        let (n, s) = (8.0, serial_fraction(8, 5.0));
        assert!(close(n / (1.0 + s * (n - 1.0)), 5.0));
    }

    #[test]
    fn medians_per_phase_and_total() {
        let run = |step, maintain, pairs| Phases {
            step,
            maintain,
            pairs,
        };
        let runs = [
            run(1.0, Some(0.5), 4.0),
            run(3.0, Some(0.25), 2.0),
            run(2.0, Some(0.125), 3.0),
        ];
        assert_eq!(
            medians(&runs),
            [Some(2.0), Some(0.25), Some(3.0), Some(5.25)]
        );
        let rebuilt = [run(1.0, None, 1.0), run(2.0, None, 2.0)];
        assert_eq!(medians(&rebuilt), [Some(1.5), None, Some(1.5), Some(3.0)]);
    }

    #[test]
    fn scaling_per_phase_needs_the_one_thread_runs() {
        let run = |step, pairs| Phases {
            step,
            maintain: None,
            pairs,
        };
        let mut runs = FrameRuns {
            phases: vec![run(1.0, 1.0)],
            one_thread: None,
        };
        assert!(scaling(2, &runs).is_none());
        runs.one_thread = Some(vec![run(1.0, 2.0)]);
        let [step, maintain, pairs, total] = scaling(2, &runs).unwrap();
        assert_eq!(step.unwrap().speedup, 1.0);
        assert!(close(step.unwrap().serial_fraction, 1.0));
        assert!(maintain.is_none());
        assert!(close(pairs.unwrap().serial_fraction, 0.0));
        assert!(close(total.unwrap().speedup, 1.5));
        assert!(close(total.unwrap().serial_fraction, 1.0 / 3.0));
    }
}
