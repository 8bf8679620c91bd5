//! The full structural self-check.

use super::PackedIndex;
use crate::{Error, Scalar};

fn fail<R>(why: String) -> Result<R, Error> {
    Err(Error::InvariantViolated(why))
}

impl<S: Scalar, T> PackedIndex<S, T> {
    /// Checks the element store, the curve order, the level sizes and that every node's box
    /// is exactly the union of its children's.
    pub(super) fn validate(&self) -> Result<(), Error> {
        self.config.validate()?;
        self.elements.check()?;
        let boxes = &self.elements.boxes;
        if let Some(p) =
            (1..boxes.len()).find(|&p| self.curve.key(&boxes[p - 1]) > self.curve.key(&boxes[p]))
        {
            return fail(format!(
                "positions {} and {p} are out of curve order",
                p - 1
            ));
        }
        if self.levels.first() != Some(&0) {
            return fail("the node levels do not start at 0".into());
        }
        let b = self.config.node_size as usize;
        let mut below = boxes.len();
        for level in 1..self.levels.len() {
            let (start, end) = (self.levels[level - 1], self.levels[level]);
            if end < start || end as usize > self.nodes.len() {
                return fail(format!("level {level} spans {start}..{end}"));
            }
            let len = (end - start) as usize;
            if len != below.div_ceil(b) || len == 0 {
                return fail(format!(
                    "level {level} has {len} nodes for {below} children of {b}"
                ));
            }
            for node in 0..len as u32 {
                let (first, last) = self.children(level as u32, node);
                let kids = &self.level(level - 1)[first as usize..last as usize];
                let union = kids.iter().skip(1).fold(kids[0], |u, k| u.union(k));
                if self.level(level)[node as usize] != union {
                    return fail(format!(
                        "node {node} of level {level} is not the union of its children"
                    ));
                }
            }
            below = len;
        }
        let nodes_end = self.levels.last().map_or(0, |&e| e as usize);
        if below > 1 || nodes_end != self.nodes.len() || (boxes.is_empty() != self.nodes.is_empty())
        {
            return fail(format!(
                "the levels end with {below} nodes at {nodes_end} of {} (for {} elements)",
                self.nodes.len(),
                boxes.len()
            ));
        }
        Ok(())
    }
}
