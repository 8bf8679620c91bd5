//! The elements `spatix view FILE` shows: read from a CSV file of boxes or points (checked
//! line by line as the batch commands check them) or from an index `spatix build` saved
//! (with the structure it names, which the viewer then shows).

use std::path::Path;

use spatix::{Aabb, Point, Scalar};

use crate::failure::Failure;
use crate::index_kind::{BatchIndex, Structure};
use crate::input::{self, Shape, holds_boxes, survey};
use crate::saved::{Saved, UseLoaded};

/// Elements as `(id, box)`.
type Elements = Vec<(u64, Aabb<f64>)>;

/// What a file holds: its name, its elements, and the structure of a saved index (`None`
/// for a CSV file).
pub(crate) struct Read {
    pub(crate) file: String,
    pub(crate) elements: Elements,
    pub(crate) structure: Option<BatchIndex>,
}

/// The file's name, its elements and, for a saved index, its structure.
pub(crate) fn read(path: &Path) -> Result<Read, Failure> {
    let file = path.display().to_string();
    if let Some(saved) = Saved::read(path)? {
        let structure = saved.structure();
        return Ok(Read {
            file,
            elements: saved.load(Collect)?,
            structure,
        });
    }
    let shape = if holds_boxes(path) {
        Shape::Boxes
    } else {
        Shape::Points
    };
    // The first pass reports bad lines and repeated ids before anything is shown.
    let count = survey(path, shape)?.count;
    let mut elements = input::Elements::open(path, shape)?;
    let mut out = Vec::with_capacity(count);
    while let Some((_, id, aabb)) = elements.next_element()? {
        out.push((id, aabb));
    }
    Ok(Read {
        file,
        elements: out,
        structure: None,
    })
}

/// Takes every element out of a loaded index.
struct Collect;

impl UseLoaded for Collect {
    type Output = Elements;

    fn run<S: Scalar, I: Structure<S, u64>>(self, index: I, _: f64) -> Self::Output {
        let f = |p: Point<S>| Point::new(p.x.to_f64(), p.y.to_f64());
        index
            .iter()
            .map(|item| {
                (
                    *item.value,
                    Aabb {
                        min: f(item.aabb.min),
                        max: f(item.aabb.max),
                    },
                )
            })
            .collect()
    }
}
