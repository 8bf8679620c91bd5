//! The index's byte form (the format of `crate::bytes`): the node size, the generation of
//! the handles, the curve, the boxes in curve order, each position's slot and each slot's
//! position, the level offsets and the node boxes, then the values in curve order. Loading
//! copies the arrays and checks them as the self-check does; it never sorts and never
//! computes a curve key.

use super::build::Curve;
use super::{MAX_LEVELS, PackedConfig, PackedIndex};
use crate::base::slots::StaticSlots;
use crate::bytes::{Layout, Reader, TakeValues, Writer, byte_form, corrupt};
use crate::{Aabb, Error, Scalar};

byte_form!(PackedIndex);

impl<S: Scalar, T> Layout for PackedIndex<S, T> {
    type S = S;
    type T = T;
    const NAME: [u8; 8] = *b"packed\0\0";

    fn size_hint(&self) -> usize {
        let n = self.elements.len();
        80 + n * (size_of::<Aabb<S>>() + 8)
            + self.nodes.len() * size_of::<Aabb<S>>()
            + self.levels.len() * 4
    }

    fn values(&self) -> impl Iterator<Item = &T> {
        self.elements.values.iter()
    }

    fn value_count(&self) -> usize {
        self.elements.len()
    }

    /// The node size, the generation of the index's handles, the curve (origin and scale,
    /// `f64`), the boxes in curve order, the slot (input index) of each position and the
    /// position of each slot, the level offsets, the node boxes, then the values in curve
    /// order.
    fn write_layout(&self, w: &mut Writer, values: &mut dyn FnMut(&mut Writer, &Self)) {
        w.u32(self.config.node_size);
        w.u32(self.elements.generation());
        for v in self.curve.parts() {
            w.scalar(v);
        }
        w.boxes(&self.elements.boxes);
        w.u32s(&self.elements.slots);
        w.u32s(&self.elements.positions);
        w.u32s(&self.levels);
        w.boxes(&self.nodes);
        values(w, self);
    }

    /// The arrays copied, then checked as
    /// [`check_invariants`](crate::SpatialQuery::check_invariants) checks them: the slots a
    /// permutation and the positions its inverse, every box valid, the levels the sizes the
    /// node size makes, every node box exactly the union of its children's. Nothing is sorted
    /// or rebuilt; the curve order, which only speed depends on, is not checked
    /// (docs/ARCHITECTURE.md, "Byte form").
    fn read_layout(r: &mut Reader<'_>, take: &mut TakeValues<'_, T>) -> Result<Self, Error> {
        let config = PackedConfig {
            node_size: r.u32("the node size")?,
        };
        config
            .validate()
            .map_err(|e| corrupt(format!("the configuration: {e}")))?;
        let generation = r.u32("the generation")?;
        let mut parts = [0.0; 4];
        for p in &mut parts {
            *p = r.scalar("the curve")?;
        }
        let curve = Curve::from_parts(parts)
            .ok_or_else(|| corrupt(format!("the curve {parts:?} is not one")))?;
        let boxes = r.boxes::<S>("the boxes")?;
        let slots = r.u32s("the slots")?;
        let positions = r.u32s("the positions")?;
        let levels = r.u32s("the levels")?;
        if levels.len() > MAX_LEVELS + 1 {
            return Err(corrupt(format!(
                "{} level offsets, more than a tree has",
                levels.len()
            )));
        }
        let nodes = r.boxes::<S>("the nodes")?;
        let values = take(r, boxes.len())?;
        let index = Self {
            config,
            elements: StaticSlots::from_parts(boxes, values, slots, positions, generation)?,
            nodes,
            levels,
            curve,
        };
        index.check_tree().map_err(corrupt)?;
        Ok(index)
    }
}
