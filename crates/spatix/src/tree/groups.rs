//! Child groups: four contiguous nodes, taken from and released to a free list.

use super::{BRANCH, EMPTY_LEAF, Node, NodeStack};
use crate::Error;
use crate::base::handle::NIL;
use crate::base::pool::ListPool;

/// Marks the nodes of a freed child group (its first node links to the next free group).
pub(crate) const FREE: u32 = u32::MAX - 1;

/// Four contiguous nodes for a new group of children, set to `empty`: the first group of the
/// free list headed by `free` (linked through each free group's first node, read by
/// `next_free`) if any, else four new nodes at the end. Returns the group's first node.
pub(crate) fn take_group<N: Copy>(
    nodes: &mut Vec<N>,
    free: &mut u32,
    empty: N,
    next_free: impl Fn(&N) -> u32,
) -> u32 {
    if *free != crate::base::handle::NIL {
        let group = *free;
        let g = group as usize;
        *free = next_free(&nodes[g]);
        nodes[g..g + 4].fill(empty);
        group
    } else {
        let group = nodes.len() as u32;
        nodes.extend_from_slice(&[empty; 4]);
        group
    }
}

/// Checks a tree's child groups (the nodes after the root, four by four): each is either
/// reachable (`reached` by node) or on the free list starting at `head`, never both.
/// `next_free(i)` is the group linked from free group `i`'s first node; `is_free(i)` whether
/// node `i` is marked free.
pub(crate) fn check_free_groups(
    reached: &[bool],
    head: u32,
    next_free: impl Fn(usize) -> u32,
    is_free: impl Fn(usize) -> bool,
) -> Result<(), Error> {
    let fail = |why: String| Err(Error::InvariantViolated(why));
    let n_nodes = reached.len();
    let groups = (n_nodes - 1) / 4;
    let mut free = 0;
    let mut g = head;
    while g != crate::base::handle::NIL {
        let at = g as usize;
        free += 1;
        if free > groups || at == 0 || (at - 1) % 4 != 0 || at + 4 > n_nodes {
            return fail(format!("bad or cyclic free group {g}"));
        }
        if (at..at + 4).any(|i| reached[i] || !is_free(i)) {
            return fail(format!("free group {g} is in use"));
        }
        g = next_free(at);
    }
    let used = reached.iter().skip(1).filter(|&&r| r).count();
    if used % 4 != 0 || used / 4 + free != groups {
        return fail(format!("{groups} groups: {} used, {free} free", used / 4));
    }
    Ok(())
}

/// Turns branch `n` into an empty leaf and puts its child group on the free list (linked
/// through the group's first node, its nodes marked [`FREE`]).
pub(crate) fn release_group(nodes: &mut [Node], free_group: &mut u32, n: u32) {
    let group = nodes[n as usize].first_child;
    let g = group as usize;
    nodes[n as usize] = EMPTY_LEAF;
    nodes[g..g + 4].fill(Node {
        first_child: NIL,
        count: FREE,
    });
    nodes[g].first_child = *free_group;
    *free_group = group;
}

/// Lays every leaf's element list out contiguously in `links`, leaves in depth-first order
/// (children in order), the order of the pair passes.
pub(crate) fn compact_leaf_lists<D: Copy + Default>(nodes: &mut [Node], links: &mut ListPool<D>) {
    links.compact(|visit| {
        let mut stack = NodeStack::new();
        stack.push(0);
        while let Some(n) = stack.pop() {
            let node = &mut nodes[n as usize];
            if node.count == BRANCH {
                for i in (0..4).rev() {
                    stack.push(node.first_child + i);
                }
            } else {
                visit(&mut node.first_child);
            }
        }
    });
}
