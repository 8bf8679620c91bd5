//! The batch commands' input files: boxes or points with ids, read twice. The first pass
//! ([`survey`]) checks every line (so that bad input is reported before any output is written)
//! and measures what the index needs to know; the second ([`Elements`]) streams the elements
//! into the index. Neither keeps the elements in memory.

use std::path::Path;

use spatix::{Aabb, Point};
use spatix_workload::Rng;

use crate::csv::{CsvReader, Record};
use crate::failure::Failure;
use crate::stats::number;

/// Size of the random sample of boxes kept for sizing the index.
const SAMPLE: usize = 4096;

/// What each line of a file describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// `id,min_x,min_y,max_x,max_y`
    Boxes,
    /// `id,x,y`
    Points,
}

impl Shape {
    fn columns(self) -> &'static [&'static str] {
        match self {
            Self::Boxes => &["min_x", "min_y", "max_x", "max_y"],
            Self::Points => &["x", "y"],
        }
    }

    /// The record's box, or why it is not one.
    fn aabb(self, r: &Record) -> Result<Aabb<f64>, String> {
        let c = r.coords;
        match self {
            Self::Points => Ok(Aabb::point(Point::new(c[0], c[1])).map_err(|e| e.to_string())?),
            Self::Boxes => {
                for (axis, lo, hi) in [("x", c[0], c[2]), ("y", c[1], c[3])] {
                    if lo > hi {
                        return Err(format!(
                            "inverted box: min_{axis} {} is greater than max_{axis} {}",
                            number(lo),
                            number(hi)
                        ));
                    }
                }
                Aabb::new(Point::new(c[0], c[1]), Point::new(c[2], c[3])).map_err(|e| e.to_string())
            }
        }
    }
}

/// Whether `path` is a CSV file of boxes: its header names the columns of boxes (a file of
/// points, one that cannot be read, or a saved index is not).
pub(crate) fn holds_boxes(path: &Path) -> bool {
    CsvReader::open(path, Shape::Boxes.columns()).is_ok()
}

/// Streams the elements of a file: `(line, id, box)`.
#[derive(Debug)]
pub(crate) struct Elements {
    reader: CsvReader,
    shape: Shape,
}

impl Elements {
    /// Opens `path` (and checks its header).
    pub(crate) fn open(path: &Path, shape: Shape) -> Result<Self, Failure> {
        Ok(Self {
            reader: CsvReader::open(path, shape.columns())?,
            shape,
        })
    }

    /// The file's name as given, for messages.
    pub(crate) fn file(&self) -> &str {
        self.reader.file()
    }

    /// The next element, or `None` at the end of the file.
    pub(crate) fn next_element(&mut self) -> Result<Option<(u64, u64, Aabb<f64>)>, Failure> {
        let Some(record) = self.reader.next_record()? else {
            return Ok(None);
        };
        let aabb = self
            .shape
            .aabb(&record)
            .map_err(|reason| self.reader.error(record.line, reason))?;
        Ok(Some((record.line, record.id, aabb)))
    }
}

/// What the first pass over a file learned.
#[derive(Clone, Debug)]
pub(crate) struct Survey {
    /// Number of elements.
    pub(crate) count: usize,
    /// The box around all elements; `None` for a file without elements.
    pub(crate) bounds: Option<Aabb<f64>>,
    /// A uniform random sample of at most 4096 elements (reservoir sampling, fixed seed).
    pub(crate) sample: Vec<Aabb<f64>>,
}

/// Reads the whole file once: checks every line and that ids are unique, and measures the
/// elements. Memory: 8 bytes per element for the ids, freed before returning.
pub(crate) fn survey(path: &Path, shape: Shape) -> Result<Survey, Failure> {
    let mut elements = Elements::open(path, shape)?;
    let mut survey = Survey {
        count: 0,
        bounds: None,
        sample: Vec::new(),
    };
    let mut ids = Vec::new();
    let mut rng = Rng::new(0x5EED);
    while let Some((_, id, aabb)) = elements.next_element()? {
        ids.push(id);
        survey.count += 1;
        survey.bounds = Some(survey.bounds.map_or(aabb, |b| b.union(&aabb)));
        if survey.sample.len() < SAMPLE {
            survey.sample.push(aabb);
        } else {
            let j = rng.below(survey.count);
            if j < SAMPLE {
                survey.sample[j] = aabb;
            }
        }
    }
    ids.sort_unstable();
    let mut repeated: Vec<u64> = ids
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    drop(ids);
    if repeated.is_empty() {
        return Ok(survey);
    }
    repeated.dedup();
    Err(first_duplicate(path, shape, &repeated)?)
}

/// Reads the file again to name the first line whose id was already used, and where.
fn first_duplicate(path: &Path, shape: Shape, repeated: &[u64]) -> Result<Failure, Failure> {
    let mut elements = Elements::open(path, shape)?;
    let mut first_seen = std::collections::HashMap::new();
    while let Some((line, id, _)) = elements.next_element()? {
        if repeated.binary_search(&id).is_ok() {
            if let Some(first) = first_seen.insert(id, line) {
                return Ok(Failure::input(
                    elements.file(),
                    line,
                    format!("duplicate id {id} (first on line {first})"),
                ));
            }
        }
    }
    Err(Failure::file(
        elements.file(),
        "the file changed while it was being read",
    ))
}
