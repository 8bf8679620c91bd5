//! The search machinery the contract's signatures name: k-nearest candidates and queues, rays
//! and their ordered search, and the caller-owned workspace holding the scratch of both.

pub(crate) mod nearest;
pub(crate) mod ray;
pub(crate) mod workspace;
