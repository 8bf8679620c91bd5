//! Timing and heap measurement.

use std::alloc::System;
use std::time::Instant;

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// Counts allocations, for the memory figures: the binary's global allocator.
#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Seconds `f` takes, and its result.
pub(crate) fn time<R>(f: impl FnOnce() -> R) -> (f64, R) {
    let start = Instant::now();
    let result = f();
    (start.elapsed().as_secs_f64(), result)
}

/// Bytes of heap that `f` leaves allocated (what it allocated less what it freed), and its
/// result. The counter is process-wide: nothing else runs meanwhile.
pub(crate) fn heap_growth<R>(f: impl FnOnce() -> R) -> (isize, R) {
    let region = Region::new(GLOBAL);
    let result = f();
    let stats = region.change();
    // stats_alloc counts a reallocation's growth in `bytes_allocated` and its shrinking in
    // `bytes_deallocated` (and again in `bytes_reallocated`, left out here).
    let grown = stats.bytes_allocated as isize - stats.bytes_deallocated as isize;
    (grown, result)
}

/// The median of `values` (the mean of the middle two for an even count); NaN if empty.
pub(crate) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
