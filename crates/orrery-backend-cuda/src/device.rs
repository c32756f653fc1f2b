//! The device: driver and NVRTC availability, the context shared by an executor and its
//! forks ([`Context`]), and the properties read from it.
//!
//! The per-executor stream, events and host staging live in [`crate::stream`].

use std::sync::{Arc, OnceLock};

use cudarc::driver::result;
use cudarc::driver::safe::CudaContext;
use cudarc::driver::sys::{self, CUdevice_attribute, CUdevice_attribute as A, CUresult};
use orrery_core::{Error, Result};

use crate::error::{BACKEND, DriverResultExt, describe};

/// Whether libcuda can be loaded (checked once per process).
fn driver_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only tries to open the library with libloading; it has
    // no preconditions.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether libnvrtc can be loaded (checked once per process).
fn nvrtc_library_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: as above, a plain attempt to open the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::nvrtc::sys::is_culib_present() })
}

pub(crate) fn unavailable(reason: impl Into<String>) -> Error {
    Error::DeviceUnavailable { backend: BACKEND, reason: reason.into() }
}

/// Checks that the CUDA driver library (libcuda) can be loaded.
///
/// # Errors
/// [`Error::DeviceUnavailable`] when it cannot.
pub fn check_driver() -> Result<()> {
    if driver_library_present() {
        Ok(())
    } else {
        Err(unavailable("the CUDA driver library (libcuda.so.1 / nvcuda.dll) was not found"))
    }
}

/// Checks that NVRTC (libnvrtc) can be loaded, without needing a GPU.
///
/// # Errors
/// [`Error::DeviceUnavailable`] when it cannot.
pub fn check_nvrtc() -> Result<()> {
    if nvrtc_library_present() {
        Ok(())
    } else {
        Err(unavailable(
            "NVRTC (libnvrtc.so.13) was not found; install the CUDA toolkit or the \
             `nvidia-cuda-nvrtc` wheel and put its lib directory on LD_LIBRARY_PATH",
        ))
    }
}

/// Number of CUDA devices, or why there are none usable.
///
/// # Errors
/// [`Error::DeviceUnavailable`] when the driver is missing or fails to initialise.
pub fn device_count() -> Result<usize> {
    check_driver()?;
    result::init().map_err(|e| unavailable(format!("cuInit failed: {}", describe(e))))?;
    let n =
        result::device::get_count().map_err(|e| unavailable(format!("cuDeviceGetCount failed: {}", describe(e))))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Oldest driver API version the executor runs on: 12.4 has `cuFuncGetParamInfo`, which
/// every launch's argument check needs.
const MIN_DRIVER_VERSION: i32 = 12040;

/// One CUDA device as the executor and its forks share it: the primary context and the
/// device's properties.
pub(crate) struct Context {
    ctx: Arc<CudaContext>,
    pub(crate) ordinal: usize,
    pub(crate) name: String,
    pub(crate) compute_capability: (u32, u32),
    pub(crate) sm_count: u32,
    pub(crate) total_mem: usize,
    pub(crate) async_alloc: bool,
    pub(crate) warp_size: u32,
    pub(crate) max_threads_per_block: u32,
    /// Shared memory per block with the opt-in (static and dynamic together).
    pub(crate) max_shared_optin: u32,
    pub(crate) max_grid_x: u32,
    pub(crate) max_grid_y: u32,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("sm_count", &self.sm_count)
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Opens device `ordinal`: retains its primary context and reads its properties.
    pub(crate) fn open(ordinal: usize) -> Result<Arc<Self>> {
        check_nvrtc()?;
        let count = device_count()?;
        if count == 0 {
            return Err(unavailable("the CUDA driver reports no devices"));
        }
        if ordinal >= count {
            return Err(unavailable(format!(
                "device ordinal {ordinal} requested, but only {count} CUDA device(s) exist"
            )));
        }
        let mut version = 0i32;
        // SAFETY: `version` is valid for one write; cuInit ran in device_count.
        unsafe { sys::cuDriverGetVersion(&raw mut version) }.result().during("cuDriverGetVersion")?;
        if version < MIN_DRIVER_VERSION {
            return Err(unavailable(format!(
                "the CUDA driver supports API version {}.{}; orrery needs 12.4 or newer (cuFuncGetParamInfo)",
                version / 1000,
                (version % 1000) / 10
            )));
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| unavailable(format!("cannot open CUDA device {ordinal}: {}", describe(e))))?;
        let attr = |a: CUdevice_attribute| -> Result<u32> {
            ctx.attribute(a).map(|v| u32::try_from(v).unwrap_or(0)).during("cuDeviceGetAttribute")
        };
        let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        if major < 7 {
            return Err(unavailable(format!(
                "CUDA device {ordinal} has compute capability {major}.{minor}; orrery's kernels need 7.0 or newer"
            )));
        }
        let name = ctx.name().during("cuDeviceGetName")?;
        let total_mem = ctx.total_mem().during("cuDeviceTotalMem")?;
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        Ok(Arc::new(Self {
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            async_alloc: attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? > 0,
            warp_size: attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_shared_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            max_grid_x: attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
            max_grid_y: attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
            ctx,
            ordinal,
            name,
            compute_capability: (major, minor),
            total_mem,
        }))
    }

    /// Makes this device's context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")
    }

    /// Checks a launch's return code (errors of asynchronous work surface at the next
    /// synchronisation).
    pub(crate) fn check_launch(what: &str, r: std::result::Result<(), cudarc::driver::DriverError>) -> Result<()> {
        r.map_err(|e| {
            if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: 0 }
            } else {
                crate::error::device_error(format!("launch of {what}"), e)
            }
        })
    }
}
