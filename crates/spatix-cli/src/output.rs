//! Where results go: standard output, or a file that appears only once complete.

use std::fs::{self, File};
use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};

use crate::failure::Failure;

/// A file written under a temporary name in the destination's directory and renamed into place
/// by [`commit`](Self::commit): readers never see a partial file, and if the command fails
/// (or the value is dropped without committing) the temporary file is removed and whatever was
/// at the destination before is left untouched.
#[derive(Debug)]
pub(crate) struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    /// `None` once closed (by `commit`).
    file: Option<BufWriter<File>>,
    /// Whether the file was renamed into place.
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `target`.
    pub(crate) fn create(target: &Path) -> Result<Self, Failure> {
        let name = target
            .file_name()
            .ok_or_else(|| {
                Failure::io(
                    format!("writing {}", target.display()),
                    io::Error::new(io::ErrorKind::InvalidInput, "not a file name"),
                )
            })?
            .to_string_lossy();
        let temp = target.with_file_name(format!(".{name}.spatix-{}.tmp", std::process::id()));
        let file = File::create(&temp)
            .map_err(|e| Failure::io(format!("creating {}", temp.display()), e))?;
        Ok(Self {
            target: target.to_owned(),
            temp,
            file: Some(BufWriter::with_capacity(1 << 16, file)),
            committed: false,
        })
    }

    /// Flushes the file to disk and renames it into place.
    pub(crate) fn commit(mut self) -> Result<(), Failure> {
        let what = || format!("writing {}", self.target.display());
        if let Some(buffered) = self.file.take() {
            let file = buffered
                .into_inner()
                .map_err(|e| Failure::io(what(), e.into_error()))?;
            file.sync_all().map_err(|e| Failure::io(what(), e))?;
        }
        fs::rename(&self.temp, &self.target).map_err(|e| Failure::io(what(), e))?;
        self.committed = true;
        Ok(())
    }

    /// The file this will become.
    pub(crate) fn target(&self) -> &Path {
        &self.target
    }

    fn writer(&mut self) -> io::Result<&mut BufWriter<File>> {
        self.file
            .as_mut()
            .ok_or_else(|| io::Error::other("the file was already committed"))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer()?.flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Close the file first (some systems cannot remove an open file).
        drop(self.file.take());
        if !self.committed {
            // The command failed. Nothing else to do if removal fails too.
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// The output of a batch command: buffered standard output, or an [`AtomicFile`].
#[derive(Debug)]
pub(crate) enum Sink {
    Stdout(BufWriter<StdoutLock<'static>>),
    File(AtomicFile),
}

impl Sink {
    /// `path`, or standard output when `None`. Opens the file right away (so an unwritable
    /// destination fails before any work), under its temporary name.
    pub(crate) fn open(path: Option<&Path>) -> Result<Self, Failure> {
        Ok(match path {
            Some(path) => Self::File(AtomicFile::create(path)?),
            None => Self::Stdout(BufWriter::with_capacity(1 << 16, io::stdout().lock())),
        })
    }

    /// Where the output goes, for messages.
    pub(crate) fn name(&self) -> String {
        match self {
            Self::Stdout(_) => "standard output".to_owned(),
            Self::File(file) => file.target().display().to_string(),
        }
    }

    /// Flushes, and for a file renames it into place.
    pub(crate) fn finish(self) -> Result<(), Failure> {
        let name = self.name();
        match self {
            Self::Stdout(mut out) => out
                .flush()
                .map_err(|e| Failure::io(format!("writing {name}"), e)),
            Self::File(file) => file.commit(),
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Stdout(out) => out.write(buf),
            Self::File(file) => file.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Self::Stdout(out) => out.write_all(buf),
            Self::File(file) => file.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stdout(out) => out.flush(),
            Self::File(file) => file.flush(),
        }
    }
}
