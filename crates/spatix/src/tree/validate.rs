//! The structural checks every quadtree shares.

use super::{BRANCH, FREE, Frame, Node, TreeBase, check_free_groups};
use crate::base::handle::NIL;
use crate::base::pool::{Link, ListPool};
use crate::{Error, Scalar};

/// An invariant violation, described.
pub(crate) fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

/// The checks every quadtree over 8-byte [`Node`]s shares. Walks the nodes from the root: each
/// is reached once and no deeper than `max_depth`, a branch points
/// at a whole child group, no free node is reachable, a leaf lists exactly as many elements
/// as it counts and does not overflow while it could split and `separates` says a split would
/// separate its list. Calls `node` with each node's
/// frame and, for a leaf, its list (node index and contents, front to back; empty for a
/// branch). Then checks the free groups and that the pool holds exactly the listed nodes and
/// its free list. Returns which nodes were reached.
pub(crate) fn check_tree<S: Scalar, D: Copy + Default>(
    base: &TreeBase<S, Node>,
    links: &ListPool<D>,
    separates: impl Fn(&Frame<S>, &[(u32, Link<D>)]) -> bool,
    mut node: impl FnMut(&Frame<S>, &[(u32, Link<D>)]) -> Result<(), Error>,
) -> Result<Vec<bool>, Error> {
    let TreeBase {
        world,
        config,
        ref nodes,
        free_group,
    } = *base;
    let (max_elements, max_depth) = (config.max_elements, config.max_depth);
    let n_nodes = nodes.len();
    if n_nodes == 0 || (n_nodes - 1) % 4 != 0 {
        return fail(format!("{n_nodes} nodes is not a root plus groups of four"));
    }
    let mut reached = vec![false; n_nodes];
    let mut listed = 0usize;
    let mut entries = Vec::new();
    let mut stack = vec![Frame::root(world)];
    while let Some(f) = stack.pop() {
        let at = f.node as usize;
        if std::mem::replace(&mut reached[at], true) {
            return fail(format!("node {at} is reachable twice"));
        }
        if u32::from(f.depth) > max_depth {
            return fail(format!("node {at} is deeper than max_depth"));
        }
        let n = nodes[at];
        entries.clear();
        if n.count == BRANCH {
            let g = n.first_child as usize;
            if g == 0 || (g - 1) % 4 != 0 || g + 4 > n_nodes {
                return fail(format!("branch {at} points at bad child group {g}"));
            }
            node(&f, &entries)?;
            stack.extend(f.children(n.first_child));
            continue;
        }
        if n.count == FREE {
            return fail(format!("free node {at} is reachable"));
        }
        let mut next = n.first_child;
        while next != NIL && entries.len() <= links.allocated() {
            let link = links.link(next);
            entries.push((next, link));
            next = link.next;
        }
        if entries.len() != n.count as usize {
            return fail(format!(
                "leaf {at} counts {} but lists {}",
                n.count,
                entries.len()
            ));
        }
        if n.count > max_elements && f.can_split(max_depth) && separates(&f, &entries) {
            return fail(format!("leaf {at} overflows, yet could split"));
        }
        node(&f, &entries)?;
        listed += entries.len();
    }
    check_free_groups(
        &reached,
        free_group,
        |g| nodes[g].first_child,
        |i| nodes[i].count == FREE,
    )?;
    if links.in_use() != listed {
        return fail(format!(
            "{} element nodes in use, {listed} listed",
            links.in_use()
        ));
    }
    if links.free_len()? + links.in_use() != links.allocated() {
        return fail("element nodes leaked from the pool".into());
    }
    Ok(reached)
}
