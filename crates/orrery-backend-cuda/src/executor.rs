//! [`CudaExecutor`]: construction, memory, timing, and the [`Executor`] implementation
//! (the primitives themselves live in [`crate::primitives`]).

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cudarc::driver::result;
use orrery_core::executor::{check_len, check_range, grown_capacity};
use orrery_core::sfc::KeyMapper;
use orrery_core::{Element, Error, Executor, ExecutorKind, Real, ReduceOp, Result};

use crate::buffer::{CudaBuffer, RawBuffer};
use crate::device::{CudaMarker, Device};
use crate::error::{BACKEND, DriverResultExt};
use crate::module_cache::ModuleCache;
use crate::policy::Policy;
use crate::scratch::Scratch;

/// The environment variable that selects the device of [`CudaExecutor::from_env`].
pub const DEVICE_ENV: &str = "ORRERY_CUDA_DEVICE";

/// The CUDA executor: one device, one stream, its compiled kernels and scratch memory.
///
/// Every operation is enqueued on the executor's stream in call order; only
/// [`Executor::read`], [`Executor::download`], [`Executor::synchronize`] and
/// [`Executor::elapsed`] wait for the device. The executor is `Send + Sync`; operations
/// from several threads are serialised on the one stream. Buffers belong to the executor
/// that made them (passing them to another executor is unsupported).
///
/// ```no_run
/// use orrery_core::{Executor, ReduceOp};
/// use orrery_backend_cuda::CudaExecutor;
///
/// let exec = CudaExecutor::from_env()?; // device 0 unless ORRERY_CUDA_DEVICE says otherwise
/// let data = exec.upload(&[3u32, 1, 2])?;
/// let mut sum = exec.alloc::<u32>(1)?;
/// exec.reduce(&data, ReduceOp::Sum, &mut sum)?;
/// assert_eq!(exec.download(&sum)?, vec![6]);
/// # Ok::<(), orrery_core::Error>(())
/// ```
pub struct CudaExecutor {
    // Field order is drop order: scratch and modules go before the device handle.
    pub(crate) scratch: Mutex<Scratch>,
    pub(crate) modules: ModuleCache,
    pub(crate) policy: Policy,
    pub(crate) device: Arc<Device>,
}

impl std::fmt::Debug for CudaExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaExecutor")
            .field("device", &self.device)
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl CudaExecutor {
    /// An executor on device `ordinal` with the policy for its architecture.
    ///
    /// # Errors
    /// [`Error::DeviceUnavailable`] when libcuda or libnvrtc is missing, the driver fails
    /// to initialise, or there is no device `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self> {
        let device = Device::open(ordinal)?;
        let (major, minor) = device.compute_capability;
        Self::with_device(device, Policy::for_compute_capability(major, minor))
    }

    /// An executor on device `ordinal` with explicit launch shapes (for tuning; the
    /// reduction tile fixes the floating-point summation order, so results of float sums
    /// change with `reduce_threads` and `reduce_vecs`).
    ///
    /// # Errors
    /// As [`CudaExecutor::new`]; [`Error::InvalidArgument`] for a policy the kernels
    /// cannot run (e.g. `sort_threads != 256`).
    pub fn with_policy(ordinal: usize, policy: Policy) -> Result<Self> {
        let device = Device::open(ordinal)?;
        Self::with_device(device, policy)
    }

    /// An executor on the device named by `ORRERY_CUDA_DEVICE` (an ordinal; 0 when unset),
    /// with the tuning overrides of `ORRERY_CUDA_POLICY` ([`crate::policy::POLICY_ENV`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the variable is not a number; otherwise as
    /// [`CudaExecutor::new`].
    pub fn from_env() -> Result<Self> {
        let ordinal = match std::env::var(DEVICE_ENV) {
            Ok(v) if !v.trim().is_empty() => v.trim().parse::<usize>().map_err(|_| Error::InvalidArgument {
                what: DEVICE_ENV,
                reason: format!("{v:?} is not a device ordinal"),
            })?,
            _ => 0,
        };
        let device = Device::open(ordinal)?;
        let (major, minor) = device.compute_capability;
        Self::with_device(device, Policy::for_compute_capability(major, minor).with_env_overrides()?)
    }

    fn with_device(device: Arc<Device>, policy: Policy) -> Result<Self> {
        validate_policy(&policy)?;
        let modules = ModuleCache::new(Arc::clone(&device), &policy)?;
        Ok(Self { scratch: Mutex::new(Scratch::new(Arc::clone(&device))), modules, policy, device })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.device.ordinal
    }

    /// The device's name (e.g. "NVIDIA H200").
    pub fn device_name(&self) -> &str {
        &self.device.name
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.device.compute_capability
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.device.sm_count
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.device.total_mem
    }

    /// The architecture kernels are compiled for (e.g. "sm_90").
    pub fn arch(&self) -> &str {
        self.modules.arch()
    }

    /// The launch shapes in use.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Compiles (or loads from the caches) every built-in module, so that the first call
    /// of each primitive does not pay for NVRTC.
    ///
    /// # Errors
    /// [`Error::KernelCompile`] with NVRTC's log.
    pub fn prepare_all(&self) -> Result<()> {
        for m in &crate::kernels::CORE_MODULES {
            self.modules.prepare(m)?;
        }
        Ok(())
    }

    pub(crate) fn scratch(&self) -> MutexGuard<'_, Scratch> {
        self.scratch.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A new allocation for `len` elements of `T` with room for `capacity`.
    fn alloc_raw<T: Element>(&self, len: usize, capacity: usize) -> Result<CudaBuffer<T>> {
        let too_large = || Error::BufferTooLarge {
            backend: BACKEND,
            requested_bytes: u64::MAX,
            max_bytes: self.device.total_mem as u64,
        };
        let bytes = capacity.checked_mul(size_of::<T>()).ok_or_else(too_large)?;
        if bytes > self.device.total_mem {
            return Err(Error::BufferTooLarge {
                backend: BACKEND,
                requested_bytes: bytes as u64,
                max_bytes: self.device.total_mem as u64,
            });
        }
        let ptr = self.device.alloc(bytes)?;
        let raw = RawBuffer::new(Arc::clone(&self.device), ptr, len * size_of::<T>(), bytes);
        Ok(CudaBuffer::from_raw(raw, len, capacity))
    }

    /// Copies `bytes` bytes between device addresses on the stream.
    pub(crate) fn copy_device(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: both ranges lie in live allocations of this executor (checked by the
        // callers against buffer lengths); the copy is ordered on the stream.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.device.stream()) }.during("cuMemcpyDtoDAsync")
    }

    /// Sets `words` u32 words at `dst` to `value` on the stream.
    pub(crate) fn memset_u32(&self, dst: u64, value: u32, words: usize) -> Result<()> {
        if words == 0 {
            return Ok(());
        }
        self.device.bind()?;
        // SAFETY: `dst .. dst + 4 * words` lies in a live allocation of this executor.
        unsafe { cudarc::driver::sys::cuMemsetD32Async(dst, value, words, self.device.stream()) }
            .result()
            .during("cuMemsetD32Async")
    }
}

fn validate_policy(p: &Policy) -> Result<()> {
    let bad = |reason: &str| Err(Error::InvalidArgument { what: "policy", reason: reason.to_owned() });
    if p.sort_threads != 256 {
        return bad("sort_threads must be 256 (one thread per digit)");
    }
    let warps = |t: u32| (32..=1024).contains(&t) && t.is_multiple_of(32);
    if !(warps(p.scan_threads) && warps(p.reduce_threads) && warps(p.move_threads) && warps(p.sfc_threads)) {
        return bad("thread counts must be multiples of 32 in 32..=1024");
    }
    if p.sort_items == 0 || p.sort_tile() * 8 + 8 * 256 * 4 + 2 * 256 * 4 > 48 * 1024 {
        return bad("sort_items must be at least 1 and the sort tile must fit 48 KB of shared memory");
    }
    if [
        p.scan_vecs,
        p.scan_lookback_words,
        p.reduce_vecs,
        p.move_items,
        p.sfc_items,
        p.sort_hist_items,
        p.sort_min_blocks,
    ]
    .contains(&0)
        || p.sort_hist_blocks_per_sm == 0
        || p.sfc_blocks_per_sm == 0
        || !matches!(p.hilbert_levels, 1 | 3)
    {
        return bad("item counts and blocks per SM must be at least 1, hilbert_levels 1 or 3");
    }
    Ok(())
}

impl Drop for CudaExecutor {
    fn drop(&mut self) {
        // Modules are unloaded after this; no kernel of theirs may still be queued.
        let _ = self.device.synchronize();
    }
}

impl Executor for CudaExecutor {
    type Buffer<T: Element> = CudaBuffer<T>;
    type Marker = CudaMarker;

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Cuda
    }

    fn name(&self) -> String {
        format!("cuda:{} {}", self.device.ordinal, self.device.name)
    }

    fn alloc<T: Element>(&self, len: usize) -> Result<CudaBuffer<T>> {
        self.alloc_raw(len, len)
    }

    fn upload<T: Element>(&self, data: &[T]) -> Result<CudaBuffer<T>> {
        let mut buf = self.alloc_raw(data.len(), data.len())?;
        self.write(&mut buf, 0, data)?;
        Ok(buf)
    }

    fn write<T: Element>(&self, dst: &mut CudaBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        check_range("write destination", dst.len, offset, data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        self.device.bind()?;
        let at = dst.device_ptr() + (offset * size_of::<T>()) as u64;
        // SAFETY: the destination range was checked against the buffer; from pageable host
        // memory the driver stages `data` before returning, so it may be dropped after.
        unsafe { result::memcpy_htod_async(at, data, self.device.stream()) }.during("cuMemcpyHtoDAsync")
    }

    fn read<T: Element>(&self, src: &CudaBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        check_range("read source", src.len, offset, out.len())?;
        if out.is_empty() {
            return self.synchronize();
        }
        self.device.bind()?;
        let at = src.device_ptr() + (offset * size_of::<T>()) as u64;
        // SAFETY: the source range was checked; `out` stays borrowed until the stream is
        // synchronised below, so the copy completes into live memory.
        unsafe { result::memcpy_dtoh_async(out, at, self.device.stream()) }.during("cuMemcpyDtoHAsync")?;
        self.synchronize()
    }

    fn resize<T: Element>(&self, buf: &mut CudaBuffer<T>, len: usize) -> Result<()> {
        if len <= buf.capacity {
            buf.set_len(len);
            return Ok(());
        }
        let capacity = grown_capacity(len).max(len);
        let fresh = self.alloc_raw::<T>(len, capacity)?;
        self.copy_device(fresh.device_ptr(), buf.device_ptr(), buf.len * size_of::<T>())?;
        let CudaBuffer { raw, .. } = fresh;
        buf.replace_raw(raw, len, capacity);
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.device.synchronize()
    }

    fn mark(&self) -> Result<CudaMarker> {
        CudaMarker::record(&self.device)
    }

    fn elapsed(&self, start: &CudaMarker, end: &CudaMarker) -> Result<Duration> {
        start.elapsed_until(end)
    }

    fn copy<T: Element>(&self, src: &CudaBuffer<T>, dst: &mut CudaBuffer<T>) -> Result<()> {
        check_len("copy destination", src.len, dst.len)?;
        self.copy_device(dst.device_ptr(), src.device_ptr(), src.len * size_of::<T>())
    }

    fn fill<T: Element>(&self, buf: &mut CudaBuffer<T>, value: T) -> Result<()> {
        self.fill_impl(buf, value)
    }

    fn iota(&self, buf: &mut CudaBuffer<u32>, start: u32) -> Result<()> {
        self.iota_impl(buf, start)
    }

    fn sort_pairs(&self, keys: &mut CudaBuffer<u64>, values: &mut CudaBuffer<u32>, bits: Range<u32>) -> Result<()> {
        self.sort_pairs_impl(keys, values, bits)
    }

    fn exclusive_scan(&self, input: &CudaBuffer<u32>, output: &mut CudaBuffer<u32>) -> Result<()> {
        self.exclusive_scan_impl(input, output)
    }

    fn reduce<T: Element>(&self, input: &CudaBuffer<T>, op: ReduceOp, output: &mut CudaBuffer<T>) -> Result<()> {
        self.reduce_impl(input, op, output)
    }

    fn compact<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        flags: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
        count: &mut CudaBuffer<u32>,
    ) -> Result<()> {
        self.compact_impl(input, flags, output, count)
    }

    fn gather<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        indices: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
    ) -> Result<()> {
        self.gather_impl(input, indices, output)
    }

    fn scatter<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        indices: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
    ) -> Result<()> {
        self.scatter_impl(input, indices, output)
    }

    fn sfc_keys<T: Real>(
        &self,
        x: &CudaBuffer<T>,
        y: &CudaBuffer<T>,
        z: &CudaBuffer<T>,
        mapper: &KeyMapper<T, u64>,
        keys: &mut CudaBuffer<u64>,
    ) -> Result<()> {
        self.sfc_keys_impl(x, y, z, mapper, keys)
    }
}
