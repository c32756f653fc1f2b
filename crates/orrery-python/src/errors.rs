//! orrery's typed errors as Python exceptions.
//!
//! Bad input — shapes, dtypes, offsets, non-finite coordinates, levels, arguments — is a
//! `ValueError` (as `balltree-erwin` raises for bad shapes and offsets); what the machine
//! cannot do — no CUDA, no adapter, an operation an executor does not support, a device
//! failure — is a `RuntimeError`. The message is orrery's own, which names the argument.

use orrery_core::Error;
use pyo3::PyErr;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};

/// The Python exception for an orrery error.
pub fn to_py(e: &Error) -> PyErr {
    let message = e.to_string();
    match e {
        Error::DeviceUnavailable { .. }
        | Error::Unsupported { .. }
        | Error::KernelCompile { .. }
        | Error::KernelSignature { .. }
        | Error::Recording { .. }
        | Error::Device { .. } => PyRuntimeError::new_err(message),
        Error::OutOfDeviceMemory { .. } | Error::BufferTooLarge { .. } => PyMemoryError::new_err(message),
        _ => PyValueError::new_err(message),
    }
}

/// `Result<T, orrery_core::Error>` to `PyResult<T>`.
pub trait IntoPy<T> {
    /// Maps the error with [`to_py`].
    ///
    /// # Errors
    /// The mapped error.
    fn py_err(self) -> pyo3::PyResult<T>;
}

impl<T> IntoPy<T> for orrery_core::Result<T> {
    fn py_err(self) -> pyo3::PyResult<T> {
        self.map_err(|e| to_py(&e))
    }
}

/// A `ValueError` naming the argument.
pub fn value_error(what: &str, reason: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what}: {reason}"))
}
