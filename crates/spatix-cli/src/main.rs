//! The `spatix` command (placeholder until the helper writes it).
fn main() {}
