//! Per-frame measurements and the process's memory, for the simulation's closing table.

use std::time::Duration;

/// One value per frame, summarised as median, 95th percentile and maximum.
#[derive(Clone, Debug, Default)]
pub(crate) struct Series(Vec<f64>);

/// Median, 95th percentile and maximum of a [`Series`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Summary {
    pub(crate) median: f64,
    pub(crate) p95: f64,
    pub(crate) max: f64,
}

impl Series {
    /// Room for `n` frames, written once so that it is resident from the start: filling it
    /// frame by frame would otherwise grow the process's resident memory with the run, and
    /// hide whether the index's does.
    pub(crate) fn with_capacity(n: usize) -> Self {
        // Not `vec![0.0; n]`: zeroed allocations are mapped lazily, untouched.
        let mut values = Vec::with_capacity(n);
        values.resize(n, 0.0);
        values.clear();
        Self(values)
    }

    /// Adds a frame's value.
    pub(crate) fn push(&mut self, value: f64) {
        self.0.push(value);
    }

    /// Adds a frame's duration, in milliseconds.
    pub(crate) fn push_ms(&mut self, d: Duration) {
        self.push(d.as_secs_f64() * 1e3);
    }

    /// The values so far (nearest-rank percentiles); zeros when empty.
    pub(crate) fn summary(&self) -> Summary {
        let mut sorted = self.0.clone();
        sorted.sort_by(f64::total_cmp);
        let at = |q: f64| {
            sorted
                .get(((sorted.len().max(1) - 1) as f64 * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        Summary {
            median: at(0.5),
            p95: at(0.95),
            max: at(1.0),
        }
    }
}

/// The process's resident memory, from `/proc/self/status` (Linux); `None` elsewhere.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Resident {
    /// Resident set size now (VmRSS), bytes.
    pub(crate) now: u64,
    /// Peak resident set size so far (VmHWM), bytes.
    pub(crate) peak: u64,
}

impl Resident {
    /// Reads the current figures, if the system provides them.
    pub(crate) fn read() -> Option<Self> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let field = |name: &str| -> Option<u64> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            let kib: u64 = line[name.len()..]
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()?;
            Some(kib * 1024)
        };
        Some(Self {
            now: field("VmRSS:")?,
            peak: field("VmHWM:")?,
        })
    }
}

/// Tracks a quantity frame by frame and remembers the last frame at which it changed.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LastChange {
    value: Option<u64>,
    /// The last frame (1-based) whose value differed from the previous frame's; 0 if none.
    pub(crate) frame: usize,
}

impl LastChange {
    /// Records frame `frame`'s value.
    pub(crate) fn record(&mut self, frame: usize, value: u64) {
        if self.value.is_some_and(|v| v != value) {
            self.frame = frame;
        }
        self.value = Some(value);
    }
}

/// Tracks a quantity over a run split in two halves at frame `warm`: its peak over the
/// first half (warm-up) and its range over the second, to tell growth from fluctuation (the
/// kernel may reclaim and refault a process's cold pages at any time, so resident memory
/// moves by a few pages even when nothing grows).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Halves {
    warm: usize,
    /// The largest value over frames `1..=warm`.
    pub(crate) first_peak: u64,
    /// The smallest and largest values over frames `warm + 1..`; `None` before that.
    pub(crate) second: Option<(u64, u64)>,
}

impl Halves {
    /// A tracker whose second half starts after frame `warm`.
    pub(crate) fn new(warm: usize) -> Self {
        Self {
            warm,
            first_peak: 0,
            second: None,
        }
    }

    /// Records frame `frame`'s value.
    pub(crate) fn record(&mut self, frame: usize, value: u64) {
        if frame <= self.warm {
            self.first_peak = self.first_peak.max(value);
        } else {
            let (lo, hi) = self.second.unwrap_or((value, value));
            self.second = Some((lo.min(value), hi.max(value)));
        }
    }

    /// Whether the second half never went above the first half's peak.
    pub(crate) fn flat(&self) -> bool {
        self.second.is_none_or(|(_, hi)| hi <= self.first_peak)
    }
}

/// Bytes in mebibytes, for display.
pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// Whether `v` is zero or its magnitude at least `smallest` and below 1e16: a number printed
/// without an exponent.
fn plain(v: f64, smallest: f64) -> bool {
    v == 0.0 || (smallest..1e16).contains(&v.abs())
}

/// A number exactly: the shortest text that reads back as the same `f64`, with an exponent
/// for large and small magnitudes (1, 0.5, 1.4142135623730951, 1e300, 2.5e-7, inf).
pub(crate) fn number(v: f64) -> String {
    if plain(v, 1e-4) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// A number for display: at most three decimals, without trailing zeros (47.66, 1000, 0.125);
/// four significant digits with an exponent for large and small magnitudes (1.5e300,
/// 2.5e-7).
pub(crate) fn decimal(v: f64) -> String {
    if !plain(v, 1e-3) {
        let text = format!("{v:.3e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) => {
                let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
                format!("{mantissa}e{exponent}")
            }
            None => text,
        };
    }
    let text = format!("{v:.3}");
    match text.trim_end_matches('0').trim_end_matches('.') {
        "-0" => "0".to_owned(),
        short => short.to_owned(),
    }
}

/// `n` and its noun: `one` for 1, `many` otherwise ("1 pair", "2 pairs", "0 queries").
pub(crate) fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
