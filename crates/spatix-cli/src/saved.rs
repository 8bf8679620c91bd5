//! An index saved by `spatix build`: the library's byte form of the structure, its values the
//! elements' ids. The batch commands take one in place of a data file: they recognise it by
//! its header, check that they can use it, and load it (of the structure and precision the
//! header names) instead of building an index. The file is memory-mapped; a packed index or a
//! kd-tree is then queried in place (`PackedView`, `KdTreeView`: opening it checks the bytes
//! in one pass and copies nothing, and the pages the queries touch are read from the file),
//! the other structures are loaded from the mapped bytes.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;
use std::time::Instant;

use clap::ValueEnum;
use spatix::{ByteForm, ByteHeader, KdTreeView, PackedView, Scalar, ViewValue};

use crate::failure::Failure;
use crate::index_kind::{BatchIndex, StaticKind, Structure, UseType};
use crate::input::Shape;

/// The first bytes of every byte form ([`ByteHeader::peek`] checks them).
const MAGIC: &[u8] = b"SPATIX";

/// A saved index, read but not yet loaded.
#[derive(Debug)]
pub(crate) struct Saved {
    /// The file's name as given, for messages.
    file: String,
    bytes: Bytes,
    header: ByteHeader,
    /// The structure the header names, `None` for one spatix cannot load.
    kind: Option<BatchIndex>,
}

/// A command that runs on whichever structure a saved index holds.
pub(crate) trait UseLoaded {
    /// What the command returns.
    type Output;

    /// Runs the command on `index`, loaded in `load_s` seconds.
    fn run<S: Scalar, I: Structure<S, u64>>(self, index: I, load_s: f64) -> Self::Output;
}

impl Saved {
    /// The saved index at `path`, or `None` when the file does not start as one (then it is
    /// read as CSV, whose reader also reports a file that cannot be opened). A file that
    /// starts as one but whose header is cut short or of another format version is refused.
    pub(crate) fn read(path: &Path) -> Result<Option<Self>, Failure> {
        let file = path.display().to_string();
        let Ok(mut handle) = File::open(path) else {
            return Ok(None);
        };
        let failed = |e: std::io::Error| Failure::file(&file, e.to_string());
        let mut bytes = Vec::new();
        (&mut handle)
            .take(MAGIC.len() as u64)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        if bytes != MAGIC {
            return Ok(None);
        }
        let bytes = Bytes::of(handle, bytes).map_err(failed)?;
        // The header only: the load or view checks the checksum, in the one pass over the
        // bytes the command makes before its work.
        let header = ByteHeader::peek(&bytes).map_err(|e| Failure::file(&file, e.to_string()))?;
        let kind = BatchIndex::value_variants()
            .iter()
            .copied()
            .find(|kind| kind.with_type::<f64, _>(Name) == header.structure.as_str());
        Ok(Some(Self {
            file,
            bytes,
            header,
            kind,
        }))
    }

    /// Refuses the index where `command` (on elements of `shape`) cannot use it: a saved
    /// index given to `build`, a structure spatix cannot load, a kd-tree for boxes, another
    /// structure than `--index` names, or f64 coordinates when `--f32` asks for f32.
    pub(crate) fn fits(
        &self,
        command: &str,
        shape: Shape,
        index: Option<BatchIndex>,
        f32: bool,
    ) -> Result<(), Failure> {
        let refuse = |reason: String| Err(self.refusal(reason));
        if command == "build" {
            return refuse("a saved index already: build reads a CSV file".to_owned());
        }
        let kind = self.kind()?;
        if shape == Shape::Boxes && kind == BatchIndex::Static(StaticKind::KdTree) {
            return refuse(format!(
                "holds a kd-tree (points only): {command} takes boxes (build the index with \
                 another --index)"
            ));
        }
        if let Some(asked) = index.filter(|&asked| asked != kind) {
            return refuse(format!(
                "holds a {} index, not the --index {} asked for",
                kind.name(),
                asked.name()
            ));
        }
        if f32 && self.header.scalar_bytes != 4 {
            return refuse(format!(
                "holds coordinates of {} bytes, not the f32 that --f32 asks for",
                self.header.scalar_bytes
            ));
        }
        Ok(())
    }

    /// What the index holds, for the summary: points in a kd-tree, boxes in any other
    /// structure (points among them, as boxes of no size).
    pub(crate) fn holds(&self) -> Shape {
        if self.kind == Some(BatchIndex::Static(StaticKind::KdTree)) {
            Shape::Points
        } else {
            Shape::Boxes
        }
    }

    /// The structure the header names, `None` for one spatix cannot load.
    pub(crate) fn structure(&self) -> Option<BatchIndex> {
        self.kind
    }

    /// The structure the header names, or why spatix cannot load it.
    fn kind(&self) -> Result<BatchIndex, Failure> {
        self.kind.ok_or_else(|| {
            self.refusal(format!(
                "holds a {} index, which spatix cannot load (it loads {})",
                self.header.structure,
                saveable().join(", ")
            ))
        })
    }

    /// The failure of refusing the index for what its header says, or, when the bytes are
    /// damaged (the header was only peeked at), of refusing them as damaged.
    fn refusal(&self, reason: String) -> Failure {
        let reason = ByteHeader::read(&self.bytes).map_or_else(|e| e.to_string(), |_| reason);
        Failure::file(&self.file, reason)
    }

    /// Loads the index, of the structure and precision its header names (4-byte coordinates
    /// as f32, others as f64, which refuses them), and runs `user` on it. Bytes that are not
    /// such an index are refused with the library's reason.
    pub(crate) fn load<U: UseLoaded>(self, user: U) -> Result<U::Output, Failure> {
        let kind = self.kind()?;
        let f32 = self.header.scalar_bytes == 4;
        match kind {
            BatchIndex::Static(StaticKind::PackedIndex) if f32 => {
                return self.view::<f32, PackedView<'_, f32, u64>, _>(user, PackedView::open);
            }
            BatchIndex::Static(StaticKind::PackedIndex) => {
                return self.view::<f64, PackedView<'_, f64, u64>, _>(user, PackedView::open);
            }
            BatchIndex::Static(StaticKind::KdTree) if f32 => {
                return self.view::<f32, KdTreeView<'_, f32, u64>, _>(user, KdTreeView::open);
            }
            BatchIndex::Static(StaticKind::KdTree) => {
                return self.view::<f64, KdTreeView<'_, f64, u64>, _>(user, KdTreeView::open);
            }
            BatchIndex::Dynamic(_) => {}
        }
        let load = Load {
            file: self.file,
            bytes: self.bytes,
            user,
        };
        if self.header.scalar_bytes == 4 {
            kind.with_type::<f32, _>(load)
        } else {
            kind.with_type::<f64, _>(load)
        }
    }
}

impl Saved {
    /// Opens the index in place with `open` (a view of the mapped bytes) and runs `user` on
    /// it; the time given as the load's is the opening's.
    fn view<'a, S, V, U>(
        &'a self,
        user: U,
        open: impl FnOnce(&'a [u8]) -> Result<V, spatix::Error>,
    ) -> Result<U::Output, Failure>
    where
        S: Scalar + ViewValue,
        V: Structure<S, u64>,
        U: UseLoaded,
    {
        let start = Instant::now();
        let view = open(&self.bytes).map_err(|e| Failure::file(&self.file, e.to_string()))?;
        Ok(user.run(view, start.elapsed().as_secs_f64()))
    }
}

/// A saved index's bytes: the file memory-mapped, or read into memory where it cannot be
/// mapped (an empty file, a pipe).
#[derive(Debug)]
enum Bytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl Bytes {
    /// The bytes of the file `handle`, whose first bytes `start` have been read already.
    fn of(mut handle: File, mut start: Vec<u8>) -> std::io::Result<Self> {
        // SAFETY: the map is read-only and private to this process, which never writes the
        // file. Its contents are what every `&[u8]` taken from it relies on not changing; a
        // saved index is a file the user gave to read, and another process truncating or
        // rewriting it while a command runs is outside what spatix can prevent (as for any
        // program that maps its input). The views opened over the map check every byte they
        // rely on when they open; the map outlives every view (both are owned by `Saved`).
        #[allow(unsafe_code)]
        let mapped = unsafe { memmap2::Mmap::map(&handle) };
        match mapped {
            Ok(map) if map.len() >= start.len() => Ok(Self::Mapped(map)),
            _ => {
                handle.read_to_end(&mut start)?;
                Ok(Self::Read(start))
            }
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Self::Mapped(map) => map,
            Self::Read(bytes) => bytes,
        }
    }
}

/// Loads a saved index as the structure [`BatchIndex::with_type`] gives, then runs its user.
struct Load<U> {
    file: String,
    bytes: Bytes,
    user: U,
}

impl<S: Scalar, U: UseLoaded> UseType<S> for Load<U> {
    type Output = Result<U::Output, Failure>;

    fn run<X: ByteForm + Structure<S, u64>>(self) -> Self::Output {
        let start = Instant::now();
        let index =
            X::from_bytes(&self.bytes).map_err(|e| Failure::file(&self.file, e.to_string()))?;
        drop(self.bytes);
        Ok(self.user.run(index, start.elapsed().as_secs_f64()))
    }
}

/// The name a structure's byte form gives it ([`ByteForm::NAME`]).
pub(crate) struct Name;

impl<S: Scalar> UseType<S> for Name {
    type Output = &'static str;

    fn run<X: ByteForm + Structure<S, u64>>(self) -> &'static str {
        X::NAME
    }
}

/// The `--index` names of the structures `build` saves and the batch commands load.
pub(crate) fn saveable() -> Vec<String> {
    BatchIndex::value_variants()
        .iter()
        .map(|kind| kind.name())
        .collect()
}
