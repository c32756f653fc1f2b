//! [`SimError`]: the simulation crate's errors (the core's, I/O with the path, and bad
//! snapshot files).

use std::path::PathBuf;

/// A simulation failure.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// An error of the trees, solvers or executors.
    #[error(transparent)]
    Core(#[from] orrery_core::Error),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A file was read but does not hold what it should (truncated, wrong dtype or shape,
    /// missing field, non-finite value, ...).
    #[error("{path}: {reason}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong, in one line.
        reason: String,
    },
    /// An argument is out of range.
    #[error("invalid {what}: {reason}")]
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// Why.
        reason: String,
    },
}

/// The crate's result type.
pub type Result<T, E = SimError> = std::result::Result<T, E>;

impl SimError {
    /// An I/O error of `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// A bad file `path`.
    pub fn bad_file(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Self::BadFile { path: path.into(), reason: reason.into() }
    }
}
