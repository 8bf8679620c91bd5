//! # spatix-capi
//!
//! The C ABI of spatix: every listed structure (`SpatixKind`, generated from
//! `spatix::for_each_structure!`), in f32 and f64, and the packed index and kd-tree read in
//! place from the caller's bytes, behind opaque pointers (`SpatixIndexF32`,
//! `SpatixIndexF64`), with handles and values as `uint64_t`. Every function returns a [`SpatixStatus`]; the text of the last
//! failure on a thread is `spatix_last_error_message()`; no panic crosses the boundary.
//!
//! The header, `include/spatix.h`, is generated from this crate by cbindgen
//! (`SPATIX_BLESS=1 cargo test -p spatix-capi --test header` rewrites it; the same test
//! fails when it drifts). The C tests in `tests/c/` are compiled with gcc and run under
//! AddressSanitizer by `cargo test -p spatix-capi --test c`.
//!
//! Layout: [`status`] (codes, last error, the panic guard), [`types`] (the C structs and
//! callbacks), `index` (one object-safe face over the wrapped structures), `ops` (the
//! entry points' bodies, generic over the precision), [`mod@f32`] and [`mod@f64`] (the `extern "C"`
//! symbols, one-line forwards).
// A C ABI is raw pointers throughout: this crate does not take the workspace's
// `unsafe_code = "deny"` (see Cargo.toml). Every `unsafe` block says why it is sound.
#![allow(unsafe_code)]

mod index;
mod kinds;
mod ops;
pub mod status;
pub mod types;

pub mod f32;
pub mod f64;

pub use kinds::SPATIX_KIND_COUNT;
pub use status::SpatixStatus;

/// The ABI version of this build: `major * 10000 + minor * 100 + patch` of the C interface
/// (not of the crate). A program built against `SPATIX_ABI_VERSION` should refuse a library
/// whose major version differs.
pub const SPATIX_ABI_VERSION: u32 = 10_100;

/// The ABI version the library was built with ([`SPATIX_ABI_VERSION`]).
///
/// Thread safety: any thread, any time.
#[unsafe(no_mangle)]
pub extern "C" fn spatix_abi_version() -> u32 {
    SPATIX_ABI_VERSION
}
