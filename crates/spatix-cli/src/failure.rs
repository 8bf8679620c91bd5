//! Why a command failed, and the exit code that says so.

use std::fmt;
use std::io;
use std::process::ExitCode;

/// A failed command.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Bad input, at a line of a file (`None`: the file as a whole). Exit code 2.
    Input {
        file: String,
        line: Option<u64>,
        reason: String,
    },
    /// Reading or writing failed for a reason other than the input's content. Exit code 1.
    Io { what: String, error: io::Error },
    /// The index refused an operation the command relies on (a defect). Exit code 1.
    Index(spatix::Error),
}

impl Failure {
    /// Bad input at `line` of `file`.
    pub(crate) fn input(file: &str, line: u64, reason: impl Into<String>) -> Self {
        Self::Input {
            file: file.to_owned(),
            line: Some(line),
            reason: reason.into(),
        }
    }

    /// Bad input not tied to a line of `file` (it cannot be opened or read, or it is the
    /// output too).
    pub(crate) fn file(file: &str, reason: impl Into<String>) -> Self {
        Self::Input {
            file: file.to_owned(),
            line: None,
            reason: reason.into(),
        }
    }

    /// An I/O error while doing `what` (e.g. "writing out.csv").
    pub(crate) fn io(what: impl Into<String>, error: io::Error) -> Self {
        Self::Io {
            what: what.into(),
            error,
        }
    }

    /// Whether this is the reader of our standard output going away (`spatix ... | head`):
    /// then there is nobody left to tell, and the command ends quietly.
    pub(crate) fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Io { error, .. } if error.kind() == io::ErrorKind::BrokenPipe)
    }

    /// The process exit code: 2 for bad input (as for a usage error), 1 otherwise.
    pub(crate) fn exit_code(&self) -> ExitCode {
        match self {
            Self::Input { .. } => ExitCode::from(2),
            Self::Io { .. } | Self::Index(_) => ExitCode::from(1),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Input {
                file,
                line: Some(line),
                reason,
            } => write!(f, "{file}:{line}: {reason}"),
            Self::Input {
                file,
                line: None,
                reason,
            } => write!(f, "{file}: {reason}"),
            Self::Io { what, error } => write!(f, "spatix: {what}: {error}"),
            Self::Index(error) => write!(f, "spatix: the index failed: {error}"),
        }
    }
}
