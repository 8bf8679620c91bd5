//! Software prefetch: asks the cache to start loading memory a search will probably read soon,
//! without waiting for it. The one place in the library with `unsafe` code.

/// Bytes per cache line on the targets this is tuned for.
const LINE: usize = 64;

/// Starts loading every cache line of `items` into the cache, and returns at once. A hint
/// only: it changes no value and never faults, and on targets without a prefetch
/// instruction (anything but x86-64 here) it does nothing.
#[inline]
pub(crate) fn prefetch<T>(items: &[T]) {
    let bytes = size_of_val(items);
    let first = items.as_ptr().cast::<i8>();
    for offset in (0..bytes).step_by(LINE) {
        line(first.wrapping_add(offset));
    }
}

/// Prefetches the cache line holding `at`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[allow(unsafe_code)]
fn line(at: *const i8) {
    use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: `prefetch` is a hint that reads nothing architecturally and cannot fault, even
    // on an invalid address; the address is inside a live slice anyway. SSE, which the
    // intrinsic requires, is part of every x86-64 target.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(at) }
}

/// No prefetch instruction is used on other targets.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn line(_at: *const i8) {}

#[cfg(test)]
mod tests {
    use super::prefetch;

    #[test]
    fn prefetch_changes_nothing_on_any_slice() {
        let data: Vec<u64> = (0..1000).collect();
        // Empty, one element, unaligned starts, a slice ending at the allocation's end,
        // and the whole: every line of each is prefetched, and no value changes.
        for range in [0..0, 5..6, 3..77, 999..1000, 1..1000, 0..1000] {
            prefetch(&data[range]);
        }
        prefetch::<()>(&[(); 10]);
        assert!(data.iter().enumerate().all(|(i, &v)| v == i as u64));
    }
}
