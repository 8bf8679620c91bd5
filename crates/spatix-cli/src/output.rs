//! Where results go: standard output, or a file that appears only once complete (or, for a
//! FIFO, a device or a symbolic link, is written in place).

use std::fs::{self, File};
use std::io::{self, BufWriter, StdoutLock, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::failure::Failure;

/// Temporary files in progress, removed by the Ctrl-C handler ([`remove_temporaries`]).
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes every temporary file still in progress: what Ctrl-C does before the process ends
/// (`main` installs it as the handler), so that an interrupted command leaves nothing behind.
pub(crate) fn remove_temporaries() {
    let temps = TEMPORARIES.lock().unwrap_or_else(PoisonError::into_inner);
    for temp in temps.iter() {
        let _ = fs::remove_file(temp);
    }
}

/// Registers (`true`) or forgets a temporary file for [`remove_temporaries`].
fn track(temp: &Path, live: bool) {
    let mut temps = TEMPORARIES.lock().unwrap_or_else(PoisonError::into_inner);
    if live {
        temps.push(temp.to_owned());
    } else {
        temps.retain(|t| t != temp);
    }
}

/// A file the user named, opened for writing.
///
/// A regular file (or a path where nothing is yet) is written under a temporary name in its
/// directory and renamed into place by [`commit`](Self::commit): readers never see a partial
/// file, and if the command fails (the value is dropped without committing) or is interrupted
/// the temporary file is removed and whatever was at the destination is left untouched.
/// Anything else — a FIFO, a device such as `/dev/null`, a symbolic link (its target) — is
/// opened and written directly, since renaming over it would replace it with a regular file.
/// Errors name the user's path, never the temporary one.
#[derive(Debug)]
pub(crate) struct AtomicFile {
    target: PathBuf,
    /// The temporary file, for a regular destination; `None` when written directly.
    temp: Option<PathBuf>,
    /// `None` once closed (by `commit`).
    file: Option<BufWriter<File>>,
    /// Whether the file was completed (renamed into place, or flushed when direct).
    committed: bool,
}

impl AtomicFile {
    /// Starts writing `target`.
    pub(crate) fn create(target: &Path) -> Result<Self, Failure> {
        let what = || format!("writing {}", target.display());
        let direct = match fs::symlink_metadata(target) {
            Ok(meta) => meta.file_type().is_symlink() || !meta.is_file(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(Failure::io(what(), e)),
        };
        let (file, temp) = if direct {
            let file = File::options()
                .write(true)
                .create(true)
                .truncate(true)
                .open(target)
                .map_err(|e| Failure::io(what(), e))?;
            (file, None)
        } else {
            let name = target
                .file_name()
                .ok_or_else(|| {
                    Failure::io(
                        what(),
                        io::Error::new(io::ErrorKind::InvalidInput, "not a file name"),
                    )
                })?
                .to_string_lossy();
            let temp = target.with_file_name(format!(".{name}.spatix-{}.tmp", std::process::id()));
            track(&temp, true);
            match File::create(&temp) {
                Ok(file) => (file, Some(temp)),
                Err(e) => {
                    track(&temp, false);
                    return Err(Failure::io(what(), e));
                }
            }
        };
        Ok(Self {
            target: target.to_owned(),
            temp,
            file: Some(BufWriter::with_capacity(1 << 16, file)),
            committed: false,
        })
    }

    /// Flushes the file and, for a regular file, syncs it to disk and renames it into place.
    pub(crate) fn commit(mut self) -> Result<(), Failure> {
        let what = || format!("writing {}", self.target.display());
        if let Some(buffered) = self.file.take() {
            let file = buffered
                .into_inner()
                .map_err(|e| Failure::io(what(), e.into_error()))?;
            if self.temp.is_some() {
                file.sync_all().map_err(|e| Failure::io(what(), e))?;
            }
        }
        if let Some(temp) = &self.temp {
            fs::rename(temp, &self.target).map_err(|e| Failure::io(what(), e))?;
            track(temp, false);
        }
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
        if let (Some(temp), false) = (&self.temp, self.committed) {
            // The command failed. Nothing else to do if removal fails too.
            let _ = fs::remove_file(temp);
            track(temp, false);
        }
    }
}

/// Refuses (bad usage: exit code 2, before any work) an output path that names one of the
/// input files, directly, through a link or by another name, so that a command never
/// overwrites its own input.
pub(crate) fn refuse_input_as_output(out: Option<&Path>, inputs: &[&Path]) -> Result<(), Failure> {
    let Some(out) = out.filter(|o| *o != Path::new(STDOUT)) else {
        return Ok(());
    };
    let Ok(out_meta) = fs::metadata(out) else {
        return Ok(());
    };
    for input in inputs {
        if fs::metadata(input).is_ok_and(|m| same_file(&m, &out_meta)) {
            return Err(Failure::file(
                &out.display().to_string(),
                format!(
                    "--out names the input file {}: refusing to overwrite an input",
                    input.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Whether two files' metadata are of the same file (device and inode).
#[cfg(unix)]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Whether two files' metadata are of the same file: without inode numbers, the same size,
/// type and modification time (a conservative guess that may refuse a distinct copy).
#[cfg(not(unix))]
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.len() == b.len() && a.file_type() == b.file_type() && a.modified().ok() == b.modified().ok()
}

/// The `--out` value that means standard output.
pub(crate) const STDOUT: &str = "-";

/// The output of a batch command: buffered standard output, or an [`AtomicFile`].
#[derive(Debug)]
pub(crate) enum Sink {
    Stdout(BufWriter<StdoutLock<'static>>),
    File(AtomicFile),
}

impl Sink {
    /// `path`, or standard output when `None` or `-`. Opens the file right away (so an
    /// unwritable destination fails before any work).
    pub(crate) fn open(path: Option<&Path>) -> Result<Self, Failure> {
        Ok(match path.filter(|p| *p != Path::new(STDOUT)) {
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
