//! A fixed-capacity stack on the caller's stack, for explicit-stack traversals.

/// A fixed-capacity stack that lives on the caller's stack: a fixed buffer instead of the
/// heap, for explicit-stack traversals. Users size `N` from a proven bound on the pending
/// entries (and assert it at compile time), so it never needs the heap.
pub(crate) struct ArrayStack<E, const N: usize> {
    items: [E; N],
    len: usize,
}

impl<E: Copy + Default, const N: usize> ArrayStack<E, N> {
    #[inline]
    pub(crate) fn new() -> Self {
        Self {
            items: [E::default(); N],
            len: 0,
        }
    }

    /// Pushes `e`; the caller's bound guarantees room.
    #[inline]
    pub(crate) fn push(&mut self, e: E) {
        self.items[self.len] = e;
        self.len += 1;
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<E> {
        self.len = self.len.checked_sub(1)?;
        Some(self.items[self.len])
    }
}
