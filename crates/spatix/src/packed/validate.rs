//! The full structural self-check, and the check of the build's curve order.
//!
//! The self-check covers what every answer relies on: the element store (arrays of one
//! length, slots a permutation, valid boxes), the level sizes, and every node's box being
//! exactly the union of its children's. The curve order is the build's, checked by the
//! build itself in debug builds ([`PackedIndex::check_curve_order`]) and not by the
//! self-check: it decides which boxes share a node, so how fast queries are, never what
//! they answer, and checking it costs a Hilbert key per element, about as much as the build
//! (docs/ARCHITECTURE.md, "Byte form": loading checks what the self-check checks).

use super::build::{Curve, union};
use super::{PackedConfig, PackedIndex, Tree};
use crate::contract::Validates;
use crate::{Error, Scalar};

fn fail<R>(why: String) -> Result<R, String> {
    Err(why)
}

/// The curve's origin finite and its scales not negative.
pub(super) fn check_curve(curve: &Curve) -> Result<(), String> {
    if !curve.is_valid() {
        return fail(format!("the curve {:?} is not one", curve.parts()));
    }
    Ok(())
}

/// The self-check of an index or a view: the configuration, the curve, the element store
/// and the tree above it.
impl<S: Scalar, T> Validates for Tree<'_, S, T> {
    fn do_check_invariants(&self) -> Result<(), Error> {
        PackedConfig {
            node_size: self.node_size,
        }
        .validate()?;
        check_curve(&self.curve).map_err(Error::InvariantViolated)?;
        self.elements.check()?;
        self.check_tree(true).map_err(Error::InvariantViolated)
    }
}

impl<S: Scalar, T> PackedIndex<S, T> {
    /// Checks the curve's parameters, the level sizes and that every node's box is exactly
    /// the union of its children's: the self-check but for the element store's own (which
    /// [`StaticSlots::from_parts`](crate::base::slots::StaticSlots::from_parts) makes when loading).
    /// What is wrong, if something is.
    pub(super) fn check_tree(&self) -> Result<(), String> {
        check_curve(&self.curve)?;
        self.tree().check_tree(true)
    }

    /// Checks that the elements lie in the order of their boxes' keys along the curve, as
    /// the build sorts them (ties, in input order, are not checked).
    pub(super) fn check_curve_order(&self) -> Result<(), String> {
        let keys = self.elements.boxes.iter().map(|b| self.curve.key(b));
        let mut previous = 0;
        for (p, key) in keys.enumerate() {
            if key < previous {
                return fail(format!(
                    "positions {} and {p} are out of curve order",
                    p - 1
                ));
            }
            previous = key;
        }
        Ok(())
    }
}

impl<S: Scalar, T> Tree<'_, S, T> {
    /// The levels of the sizes the node size makes, from 0 to the end of the nodes, and (if
    /// `unions`) every node's box exactly the union of its children's. Without the unions:
    /// what a traversal needs never to index past an array, which opening a view checks.
    pub(super) fn check_tree(&self, unions: bool) -> Result<(), String> {
        if self.levels.first() != Some(&0) {
            return fail("the node levels do not start at 0".into());
        }
        let b = self.node_size as usize;
        let mut below = self.elements.len();
        for level in 1..self.levels.len() {
            let (start, end) = (self.levels[level - 1], self.levels[level]);
            if end < start || end as usize > self.nodes.len() {
                return fail(format!("level {level} spans {start}..{end}"));
            }
            let len = (end - start) as usize;
            if level > 1 && below == 1 {
                return fail(format!("level {level} is above the root"));
            }
            if len != below.div_ceil(b) || len == 0 {
                return fail(format!(
                    "level {level} has {len} nodes for {below} children of {b}"
                ));
            }
            let children = self.level(level - 1).chunks(b);
            let nodes = self.level(level).iter().zip(children);
            if let Some(node) = nodes
                .take(if unions { usize::MAX } else { 0 })
                .position(|(node, kids)| *node != union(kids))
            {
                return fail(format!(
                    "node {node} of level {level} is not the union of its children"
                ));
            }
            below = len;
        }
        let nodes_end = self.levels.last().map_or(0, |&e| e as usize);
        let n = self.elements.len();
        if below > 1 || nodes_end != self.nodes.len() || (n == 0) != self.nodes.is_empty() {
            return fail(format!(
                "the levels end with {below} nodes at {nodes_end} of {} (for {n} elements)",
                self.nodes.len(),
            ));
        }
        Ok(())
    }
}
