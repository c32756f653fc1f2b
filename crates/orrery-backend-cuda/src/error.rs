//! Conversions from driver and NVRTC failures to [`orrery_core::Error`].

use cudarc::driver::DriverError;
use cudarc::driver::sys::CUresult;
use orrery_core::Error;

/// The backend name used in errors.
pub(crate) const BACKEND: &str = "cuda";

/// The driver's name and description of an error code.
pub(crate) fn describe(e: DriverError) -> String {
    let name = e.error_name().map_or_else(|_| format!("{:?}", e.0), |s| s.to_string_lossy().into_owned());
    let text = e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if text.is_empty() { name } else { format!("{name}: {text}") }
}

/// A driver failure during `operation`.
pub(crate) fn device_error(operation: impl Into<String>, e: DriverError) -> Error {
    Error::Device { backend: BACKEND, operation: operation.into(), message: describe(e) }
}

/// A driver failure of an allocation of `bytes` bytes.
pub(crate) fn alloc_error(bytes: usize, e: DriverError) -> Error {
    if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: bytes as u64 }
    } else {
        device_error(format!("allocation of {bytes} bytes"), e)
    }
}

/// Extension to attach an operation name to driver results.
pub(crate) trait DriverResultExt<T> {
    /// Maps a driver error to [`Error::Device`] naming `operation`.
    fn during(self, operation: &str) -> Result<T, Error>;
}

impl<T> DriverResultExt<T> for Result<T, DriverError> {
    fn during(self, operation: &str) -> Result<T, Error> {
        self.map_err(|e| device_error(operation, e))
    }
}
