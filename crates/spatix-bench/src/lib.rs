//! Benchmark support for spatix.
