//! Coverage-guided differential fuzzing of every spatix structure against `BruteForce`: the
//! input's first byte picks the structure, the rest is a sequence of operations
//! (see `spatix_fuzz::run`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| spatix_fuzz::run(data));
