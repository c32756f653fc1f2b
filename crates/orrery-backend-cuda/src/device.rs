//! The device: driver and NVRTC availability, the context, the executor's stream,
//! stream-ordered allocation, and events.
//!
//! Every executor owns one non-blocking stream; everything it does is enqueued there in
//! order. Memory is allocated and freed in stream order (`cuMemAllocAsync` /
//! `cuMemFreeAsync` from the device's default pool) when the device supports memory
//! pools, so dropping a buffer never waits for the device and never frees memory that
//! earlier work on the stream still reads.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use cudarc::driver::result;
use cudarc::driver::safe::CudaContext;
use cudarc::driver::sys::{self, CUdevice_attribute, CUresult};
use orrery_core::{Error, Result};

use crate::error::{BACKEND, DriverResultExt, alloc_error, describe};

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

fn unavailable(reason: impl Into<String>) -> Error {
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

/// One CUDA device as an executor sees it: context, stream and properties.
pub(crate) struct Device {
    ctx: Arc<CudaContext>,
    stream: sys::CUstream,
    pub(crate) ordinal: usize,
    pub(crate) name: String,
    pub(crate) compute_capability: (u32, u32),
    pub(crate) sm_count: u32,
    pub(crate) total_mem: usize,
    async_alloc: bool,
}

// SAFETY: a CUstream handle may be used from any thread once its context is current,
// which `bind` ensures before every driver call; the context is Send + Sync itself.
unsafe impl Send for Device {}
// SAFETY: see above; the driver serialises concurrent calls on one stream.
unsafe impl Sync for Device {}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .field("sm_count", &self.sm_count)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// Opens device `ordinal`: retains its primary context and creates a stream.
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
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| unavailable(format!("cannot open CUDA device {ordinal}: {}", describe(e))))?;
        let attr = |a: CUdevice_attribute| -> Result<u32> {
            ctx.attribute(a).map(|v| u32::try_from(v).unwrap_or(0)).during("cuDeviceGetAttribute")
        };
        let major = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        let sm_count = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let async_alloc = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED)? > 0;
        if major < 7 {
            return Err(unavailable(format!(
                "CUDA device {ordinal} has compute capability {major}.{minor}; orrery's kernels need 7.0 or newer"
            )));
        }
        let name = ctx.name().during("cuDeviceGetName")?;
        let total_mem = ctx.total_mem().during("cuDeviceTotalMem")?;
        ctx.bind_to_thread().during("cuCtxSetCurrent")?;
        let stream = result::stream::create(result::stream::StreamKind::NonBlocking).during("cuStreamCreate")?;
        Ok(Arc::new(Self {
            ctx,
            stream,
            ordinal,
            name,
            compute_capability: (major, minor),
            sm_count,
            total_mem,
            async_alloc,
        }))
    }

    /// Makes this device's context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().during("cuCtxSetCurrent")
    }

    /// The executor's stream.
    pub(crate) fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Waits for all work on the stream.
    pub(crate) fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the stream is alive (owned by self) and the context is current.
        unsafe { result::stream::synchronize(self.stream) }.during("cuStreamSynchronize")
    }

    /// Allocates `bytes` bytes in stream order (0 bytes gives the null pointer).
    pub(crate) fn alloc(&self, bytes: usize) -> Result<sys::CUdeviceptr> {
        if bytes == 0 {
            return Ok(0);
        }
        self.bind()?;
        let r = if self.async_alloc {
            // SAFETY: the stream is alive and the context current; the memory is used only
            // by work enqueued on this same stream (or after synchronising it).
            unsafe { result::malloc_async(self.stream, bytes) }
        } else {
            // SAFETY: plain allocation with the context current.
            unsafe { result::malloc_sync(bytes) }
        };
        r.map_err(|e| alloc_error(bytes, e))
    }

    /// Frees memory from [`Device::alloc`] in stream order. Errors are ignored (this runs
    /// in destructors; a failing free means the context is already lost).
    pub(crate) fn free(&self, ptr: sys::CUdeviceptr) {
        if ptr == 0 || self.bind().is_err() {
            return;
        }
        if self.async_alloc {
            // SAFETY: `ptr` came from `malloc_async` on this stream and is freed once; work
            // enqueued before still sees the memory (stream-ordered free).
            let _ = unsafe { result::free_async(ptr, self.stream) };
        } else {
            // SAFETY: wait for the stream first so no enqueued work still uses `ptr`.
            let _ = unsafe { result::stream::synchronize(self.stream) };
            // SAFETY: `ptr` came from `malloc_sync` and is freed once.
            let _ = unsafe { result::free_sync(ptr) };
        }
    }

    /// Checks the last launch without waiting (errors of asynchronous work surface at the
    /// next synchronisation).
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

impl Drop for Device {
    fn drop(&mut self) {
        if self.bind().is_ok() {
            // SAFETY: the stream is owned by self and destroyed exactly once, after its
            // work has finished.
            unsafe {
                let _ = result::stream::synchronize(self.stream);
                let _ = result::stream::destroy(self.stream);
            }
        }
    }
}

/// A point in an executor's timeline: a CUDA event recorded on its stream.
pub struct CudaMarker {
    event: sys::CUevent,
    device: Arc<Device>,
}

// SAFETY: CUevent handles are usable from any thread with the context current (ensured
// by `bind` before each use).
unsafe impl Send for CudaMarker {}
// SAFETY: as above; recording and querying events are thread-safe driver calls.
unsafe impl Sync for CudaMarker {}

impl std::fmt::Debug for CudaMarker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaMarker").field("device", &self.device.ordinal).finish_non_exhaustive()
    }
}

impl CudaMarker {
    /// Records a new event after all work enqueued so far.
    pub(crate) fn record(device: &Arc<Device>) -> Result<Self> {
        device.bind()?;
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).during("cuEventCreate")?;
        let marker = Self { event, device: Arc::clone(device) };
        // SAFETY: the event and the stream are alive and belong to the current context.
        unsafe { result::event::record(marker.event, device.stream()) }.during("cuEventRecord")?;
        Ok(marker)
    }

    /// Device time from `self` to `end`, waiting for `end` to complete.
    pub(crate) fn elapsed_until(&self, end: &Self) -> Result<Duration> {
        self.device.bind()?;
        // SAFETY: both events are alive and recorded.
        let ms = unsafe {
            result::event::synchronize(end.event).during("cuEventSynchronize")?;
            result::event::elapsed(self.event, end.event).during("cuEventElapsedTime")?
        };
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) * 1e-3))
    }
}

impl Drop for CudaMarker {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: the event is owned by self and destroyed exactly once.
            let _ = unsafe { result::event::destroy(self.event) };
        }
    }
}
