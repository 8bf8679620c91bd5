//! The base layer under every structure: generational handles, the element tables, the
//! index-linked list pool, the fixed-capacity traversal stack and the cache prefetch.

pub(crate) mod handle;
pub(crate) mod per_slot;
pub(crate) mod pool;
pub(crate) mod prefetch;
pub(crate) mod slots;
pub(crate) mod stack;
