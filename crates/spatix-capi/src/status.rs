//! Status codes, the per-thread last error message, and `guard`: the one place where an
//! entry point's body runs, so that no panic crosses into C.

use core::cell::RefCell;
use core::ffi::c_char;
use std::ffi::CString;
use std::panic::{self, AssertUnwindSafe};

/// What a call did: `SPATIX_STATUS_OK`, or why it did nothing (or, where a function's
/// documentation says so, what it did only in part). The text of the last failure on the
/// calling thread is `spatix_last_error_message()`.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpatixStatus {
    /// Success.
    Ok = 0,
    /// A required pointer argument was null.
    NullPointer = 1,
    /// An index pointer was not one this library made for this precision (a pointer to
    /// something else, one of the other precision, or one already destroyed, as far as that
    /// can be detected).
    ForeignPointer = 2,
    /// A box, point or ray had a NaN or infinite coordinate, `min > max`, or a zero direction.
    InvalidBox = 3,
    /// A tuning parameter (cell size, band height, ...) was out of range.
    InvalidParameter = 4,
    /// The handle names no live element of this index.
    StaleHandle = 5,
    /// The output buffer was too short: the count written says how many it needed.
    BufferTooSmall = 6,
    /// Memory for the input could not be reserved (allocation failures inside the library
    /// itself abort the process, as Rust's allocation does).
    OutOfMemory = 7,
    /// Bytes given to a load are not an index's byte form (truncated, of another version,
    /// structure or precision, or inconsistent).
    CorruptBytes = 8,
    /// The index already holds the most elements it can address.
    CapacityExceeded = 9,
    /// The structure does not support the operation (inserting into a static structure,
    /// the parallel pair pass of a k-d tree).
    Unsupported = 10,
    /// A bug in spatix: a panic was caught at the boundary, or an invariant check failed.
    Internal = 11,
}

/// A failed call: its status and the text `spatix_last_error_message()` will return.
#[derive(Debug)]
pub(crate) struct Failure {
    status: SpatixStatus,
    message: String,
}

impl Failure {
    /// A failure with `status`, described by `message`.
    pub(crate) fn new(status: SpatixStatus, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    /// A null pointer where `what` was required.
    pub(crate) fn null(what: &str) -> Self {
        Self::new(SpatixStatus::NullPointer, format!("null pointer: {what}"))
    }

    /// The operation is not one `structure` has.
    pub(crate) fn unsupported(what: &str, structure: &str) -> Self {
        Self::new(
            SpatixStatus::Unsupported,
            format!("unsupported: {structure} has no {what}"),
        )
    }

    /// Its status.
    pub(crate) fn status(&self) -> SpatixStatus {
        self.status
    }

    /// Its message.
    pub(crate) fn text(&self) -> &str {
        &self.message
    }

    /// Stores the message as the thread's last error and returns the status.
    fn record(self) -> SpatixStatus {
        // Interior NUL bytes cannot occur in our messages, but never panic here: drop them.
        let text = CString::new(self.message.replace('\0', "")).unwrap_or_default();
        LAST_ERROR.with(|last| *last.borrow_mut() = text);
        self.status
    }
}

impl From<spatix::Error> for Failure {
    fn from(error: spatix::Error) -> Self {
        use spatix::Error as E;
        let status = match &error {
            E::InvalidAabb | E::BoxTooLarge => SpatixStatus::InvalidBox,
            E::StaleHandle => SpatixStatus::StaleHandle,
            E::InvalidParameter(_) => SpatixStatus::InvalidParameter,
            E::CapacityExceeded => SpatixStatus::CapacityExceeded,
            E::Corrupt(_) => SpatixStatus::CorruptBytes,
            _ => SpatixStatus::Internal,
        };
        Self::new(status, error.to_string())
    }
}

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Runs an entry point's body: its `Ok` is `SPATIX_STATUS_OK`; its failure, or a panic
/// caught here, becomes a status and the thread's last error message.
pub(crate) fn guard(body: impl FnOnce() -> Result<(), Failure>) -> SpatixStatus {
    match panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SpatixStatus::Ok,
        Ok(Err(failure)) => failure.record(),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Failure::new(
                SpatixStatus::Internal,
                format!("internal error (panic): {what}"),
            )
            .record()
        }
    }
}

/// The text of the last failed call on the calling thread ("" if none has failed): a
/// NUL-terminated string owned by the library, valid until the next failing call on the
/// same thread. Never null.
///
/// Thread safety: any thread, any time; each thread sees its own last error.
#[unsafe(no_mangle)]
pub extern "C" fn spatix_last_error_message() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}

/// The name of a status code as a static NUL-terminated string (`"SPATIX_STATUS_OK"`, ...;
/// `"SPATIX_STATUS_UNKNOWN"` for a number that is no status).
///
/// Thread safety: any thread, any time.
#[unsafe(no_mangle)]
pub extern "C" fn spatix_status_name(status: i32) -> *const c_char {
    let name: &'static core::ffi::CStr = match status {
        0 => c"SPATIX_STATUS_OK",
        1 => c"SPATIX_STATUS_NULL_POINTER",
        2 => c"SPATIX_STATUS_FOREIGN_POINTER",
        3 => c"SPATIX_STATUS_INVALID_BOX",
        4 => c"SPATIX_STATUS_INVALID_PARAMETER",
        5 => c"SPATIX_STATUS_STALE_HANDLE",
        6 => c"SPATIX_STATUS_BUFFER_TOO_SMALL",
        7 => c"SPATIX_STATUS_OUT_OF_MEMORY",
        8 => c"SPATIX_STATUS_CORRUPT_BYTES",
        9 => c"SPATIX_STATUS_CAPACITY_EXCEEDED",
        10 => c"SPATIX_STATUS_UNSUPPORTED",
        11 => c"SPATIX_STATUS_INTERNAL",
        _ => c"SPATIX_STATUS_UNKNOWN",
    };
    name.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_internal_with_its_message() {
        let status = guard(|| panic!("boom"));
        assert_eq!(status, SpatixStatus::Internal);
        // SAFETY: the library's message pointer is a valid NUL-terminated string.
        let text = unsafe { core::ffi::CStr::from_ptr(spatix_last_error_message()) };
        assert!(text.to_str().unwrap().contains("boom"));
    }

    #[test]
    fn errors_map_to_statuses() {
        let f = Failure::from(spatix::Error::Corrupt("x".into()));
        assert_eq!(f.status, SpatixStatus::CorruptBytes);
        assert_eq!(guard(|| Err(Failure::null("p"))), SpatixStatus::NullPointer);
    }
}
