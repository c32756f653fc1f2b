//! [`CudaExecutor`]: construction, memory, timing, and the [`Executor`] implementation
//! (the primitives themselves live in [`crate::primitives`]).

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cudarc::driver::result;
use orrery_core::element::check_gpu_storage;
use orrery_core::executor::{check_len, check_range, grown_capacity};
use orrery_core::sfc::KeyMapper;
use orrery_core::{
    DeviceCount, DeviceLimits, Element, Error, Executor, ExecutorKind, Order, Real, ReduceOp, Reserve, Result,
    ScanKind, Storage, ViewMutOf, ViewOf,
};

use crate::buffer::{Allocation, CudaBuffer, RawBuffer};
use crate::device::Context;
use crate::error::{BACKEND, DriverResultExt};
use crate::module_cache::ModuleCache;
use crate::policy::Policy;
use crate::record::CudaRecording;
use crate::scratch::Scratch;
use crate::stream::{CudaEvent, CudaMarker, CudaPending, RawEvent, Stream};

/// The environment variable that selects the device of [`CudaExecutor::from_env`].
pub const DEVICE_ENV: &str = "ORRERY_CUDA_DEVICE";

/// The CUDA executor: one device, one stream, its compiled kernels and scratch memory.
///
/// Every operation is enqueued on the executor's stream in call order; only
/// [`Executor::read`], [`Executor::download`], [`Executor::wait`],
/// [`Executor::synchronize`] and [`Executor::elapsed`] wait for the device. The executor
/// is `Send + Sync`; operations from several threads are serialised on the one stream.
/// [`Executor::fork`] gives an executor on the same context with its own stream and
/// scratch and the same compiled modules; buffers of one may be used by the other,
/// ordered by [`Executor::signal`] / [`Executor::wait_for`].
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
    // Field order is drop order: scratch and modules go before the stream and context.
    pub(crate) scratch: Mutex<Scratch>,
    /// Allocations touched by the recording in progress (`None` when not recording).
    pub(crate) recording: Mutex<Option<Vec<Arc<Allocation>>>>,
    pub(crate) modules: Arc<ModuleCache>,
    pub(crate) policy: Policy,
    pub(crate) stream: Arc<Stream>,
    pub(crate) ctx: Arc<Context>,
}

impl std::fmt::Debug for CudaExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaExecutor").field("device", &self.ctx).field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl CudaExecutor {
    /// An executor on device `ordinal` with the policy for its architecture.
    ///
    /// # Errors
    /// [`Error::DeviceUnavailable`] when libcuda or libnvrtc is missing, the driver fails
    /// to initialise, or there is no device `ordinal`.
    pub fn new(ordinal: usize) -> Result<Self> {
        let ctx = Context::open(ordinal)?;
        let (major, minor) = ctx.compute_capability;
        Self::with_context(ctx, Policy::for_compute_capability(major, minor))
    }

    /// An executor on device `ordinal` with explicit launch shapes (for tuning; the
    /// reduction tile fixes the floating-point summation order, so results of float sums
    /// change with `reduce_threads` and `reduce_vecs`).
    ///
    /// # Errors
    /// As [`CudaExecutor::new`]; [`Error::InvalidArgument`] for a policy the kernels
    /// cannot run (e.g. `sort_threads != 256`).
    pub fn with_policy(ordinal: usize, policy: Policy) -> Result<Self> {
        let ctx = Context::open(ordinal)?;
        Self::with_context(ctx, policy)
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
        let ctx = Context::open(ordinal)?;
        let (major, minor) = ctx.compute_capability;
        Self::with_context(ctx, Policy::for_compute_capability(major, minor).with_env_overrides()?)
    }

    fn with_context(ctx: Arc<Context>, policy: Policy) -> Result<Self> {
        validate_policy(&policy)?;
        let modules = Arc::new(ModuleCache::new(Arc::clone(&ctx), &policy)?);
        Self::on_new_stream(ctx, modules, policy)
    }

    fn on_new_stream(ctx: Arc<Context>, modules: Arc<ModuleCache>, policy: Policy) -> Result<Self> {
        let stream = Stream::new(Arc::clone(&ctx))?;
        Ok(Self {
            scratch: Mutex::new(Scratch::new(Arc::clone(&stream))),
            recording: Mutex::new(None),
            modules,
            policy,
            stream,
            ctx,
        })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal
    }

    /// The device's name (e.g. "NVIDIA H200").
    pub fn device_name(&self) -> &str {
        &self.ctx.name
    }

    /// The device's compute capability `(major, minor)`.
    pub fn compute_capability(&self) -> (u32, u32) {
        self.ctx.compute_capability
    }

    /// Number of streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.ctx.sm_count
    }

    /// Total device memory in bytes.
    pub fn total_memory(&self) -> usize {
        self.ctx.total_mem
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
        // (the module cache is shared with forks; one preparation serves them all)
        for m in &crate::kernels::CORE_MODULES {
            self.modules.prepare(m)?;
        }
        Ok(())
    }

    /// Moves this executor's look-back epoch to `epoch` (1 ..= 2^30 - 1), only forward,
    /// so tests can cross the epoch wrap without 2^30 launches.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] outside that range; device failures.
    #[doc(hidden)]
    pub fn jump_lookback_epoch_for_tests(&self, epoch: u32) -> Result<()> {
        if !(1..(1 << 30)).contains(&epoch) {
            return Err(Error::InvalidArgument { what: "epoch", reason: format!("{epoch} is not in 1..2^30") });
        }
        self.scratch().set_epoch(epoch)
    }

    /// A new allocation for `len` elements of `T` with room for `capacity`.
    fn alloc_raw<T: Storage>(&self, len: usize, capacity: usize) -> Result<CudaBuffer<T>> {
        check_gpu_storage::<T>(&self.name())?;
        let too_large = || Error::BufferTooLarge {
            backend: BACKEND,
            requested_bytes: u64::MAX,
            max_bytes: self.ctx.total_mem as u64,
        };
        let bytes = capacity.checked_mul(size_of::<T>()).ok_or_else(too_large)?;
        if bytes > self.ctx.total_mem {
            return Err(Error::BufferTooLarge {
                backend: BACKEND,
                requested_bytes: bytes as u64,
                max_bytes: self.ctx.total_mem as u64,
            });
        }
        let ptr = self.stream.alloc(bytes)?;
        let raw =
            RawBuffer { alloc: Allocation::new(Arc::clone(&self.stream), ptr, bytes), len_bytes: len * size_of::<T>() };
        Ok(CudaBuffer::from_raw(raw, len, capacity))
    }

    /// Copies `bytes` bytes between device buffers at byte offsets, on the stream.
    pub(crate) fn copy_device(&self, dst: (&RawBuffer, u64), src: (&RawBuffer, u64), bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.touch(dst.0);
        self.touch(src.0);
        self.copy_device_ptr(dst.0.device_ptr() + dst.1, src.0.device_ptr() + src.1, bytes)
    }

    /// Copies `bytes` bytes between device addresses (buffers or scratch) on the stream.
    pub(crate) fn copy_device_ptr(&self, dst: u64, src: u64, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.stream.bind()?;
        // SAFETY: both ranges lie in live allocations of this executor (checked by the
        // callers against buffer lengths); the copy is ordered on the stream.
        unsafe { result::memcpy_dtod_async(dst, src, bytes, self.stream.raw()) }.during("cuMemcpyDtoDAsync")
    }

    /// Sets `words` u32 words of `dst` from byte offset `offset` to `value` on the stream.
    pub(crate) fn memset_u32(&self, dst: &RawBuffer, offset: u64, value: u32, words: usize) -> Result<()> {
        if words == 0 {
            return Ok(());
        }
        self.touch(dst);
        self.stream.bind()?;
        // SAFETY: `dst + offset .. + 4 * words` lies in a live allocation of this executor
        // (callers pass views of it).
        unsafe { cudarc::driver::sys::cuMemsetD32Async(dst.device_ptr() + offset, value, words, self.stream.raw()) }
            .result()
            .during("cuMemsetD32Async")
    }

    /// The scratch regions, locked.
    pub(crate) fn scratch(&self) -> MutexGuard<'_, Scratch> {
        self.scratch.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
        // Modules may be unloaded after this (when no fork shares them); no kernel of this
        // stream may still be queued.
        self.stream.set_capturing(false);
        let _ = self.stream.synchronize();
    }
}

/// The byte offset of a view's first element.
fn byte_offset<T>(offset: usize) -> u64 {
    (offset * size_of::<T>()) as u64
}

impl Executor for CudaExecutor {
    type Buffer<T: Storage> = CudaBuffer<T>;
    type Marker = CudaMarker;
    type Pending<T: Storage> = CudaPending<T>;
    type Event = CudaEvent;
    type Recording = CudaRecording;

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Cuda
    }

    fn name(&self) -> String {
        format!("cuda:{} {}", self.ctx.ordinal, self.ctx.name)
    }

    fn limits(&self) -> DeviceLimits {
        let mut l = DeviceLimits::default();
        l.subgroup_size = Some(self.ctx.warp_size);
        l.max_threads_per_block = self.ctx.max_threads_per_block;
        l.max_shared_bytes_per_block = self.ctx.max_shared_optin;
        l.compute_units = self.ctx.sm_count;
        l.f64 = true;
        l.max_buffer_bytes = self.ctx.total_mem as u64;
        l.view_alignment = 1;
        l.max_blocks = u64::from(self.ctx.max_grid_x);
        l.replay = true;
        l
    }

    fn alloc<T: Storage>(&self, len: usize) -> Result<CudaBuffer<T>> {
        self.alloc_raw(len, len)
    }

    fn upload<T: Storage>(&self, data: &[T]) -> Result<CudaBuffer<T>> {
        let mut buf = self.alloc_raw(data.len(), data.len())?;
        self.write(&mut buf, 0, data)?;
        Ok(buf)
    }

    fn write<T: Storage>(&self, dst: &mut CudaBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        self.stream.forbid_while_recording("write (a host upload)")?;
        check_range("write destination", dst.len, offset, data.len())?;
        if data.is_empty() {
            return Ok(());
        }
        self.stream.bind()?;
        let at = dst.device_ptr() + byte_offset::<T>(offset);
        // SAFETY: the destination range was checked against the buffer; from pageable host
        // memory the driver stages `data` before returning, so it may be dropped after.
        unsafe { result::memcpy_htod_async(at, data, self.stream.raw()) }.during("cuMemcpyHtoDAsync")
    }

    fn read<T: Storage>(&self, src: &CudaBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        self.stream.forbid_while_recording("read (a host read)")?;
        check_range("read source", src.len, offset, out.len())?;
        if out.is_empty() {
            return self.synchronize();
        }
        self.stream.bind()?;
        let at = src.device_ptr() + byte_offset::<T>(offset);
        // SAFETY: the source range was checked; `out` stays borrowed until the stream is
        // synchronised below, so the copy completes into live memory.
        unsafe { result::memcpy_dtoh_async(out, at, self.stream.raw()) }.during("cuMemcpyDtoHAsync")?;
        self.synchronize()
    }

    fn download<T: Storage>(&self, src: &CudaBuffer<T>) -> Result<Vec<T>> {
        self.stream.forbid_while_recording("download (a host read)")?;
        let mut out = bytemuck::zeroed_vec(src.len);
        self.read(src, 0, &mut out)?;
        Ok(out)
    }

    fn read_async<'a, T: Storage>(&self, src: impl Into<ViewOf<'a, Self, T>>) -> Result<CudaPending<T>> {
        self.stream.forbid_while_recording("read_async (a host read)")?;
        let src = src.into();
        let bytes = src.len() * size_of::<T>();
        let mut pending = CudaPending {
            staging: None,
            event: None,
            len: src.len(),
            stream: Arc::clone(&self.stream),
            _element: std::marker::PhantomData,
        };
        if bytes == 0 {
            return Ok(pending);
        }
        let staging = self.stream.take_pinned(bytes)?;
        self.stream.bind()?;
        let at = src.buffer().device_ptr() + byte_offset::<T>(src.offset());
        // SAFETY: the view lies in a live allocation; the pinned staging holds at least
        // `bytes` bytes and is owned by `pending`, which waits for the copy's event before
        // the staging is read, reused or freed (also when dropped unwaited).
        let r =
            unsafe { cudarc::driver::sys::cuMemcpyDtoHAsync_v2(staging.ptr(), at, bytes, self.stream.raw()).result() };
        pending.staging = Some(staging);
        r.during("cuMemcpyDtoHAsync")?;
        pending.event = Some(RawEvent::record(&self.stream, false)?);
        Ok(pending)
    }

    fn wait<T: Storage>(&self, mut pending: CudaPending<T>) -> Result<Vec<T>> {
        let mut out: Vec<T> = bytemuck::zeroed_vec(pending.len);
        if let Some(event) = pending.event.take() {
            event.synchronize()?;
        }
        if let Some(staging) = pending.staging.as_ref() {
            let bytes = pending.len * size_of::<T>();
            // SAFETY: the copy into the staging has completed (its event was waited for).
            let src = unsafe { staging.bytes(bytes) };
            bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(src);
        }
        Ok(out)
    }

    fn resize<T: Storage>(&self, buf: &mut CudaBuffer<T>, len: usize) -> Result<()> {
        if len <= buf.capacity {
            buf.set_len(len);
            return Ok(());
        }
        if self.stream.capturing() {
            return Err(crate::stream::recording_error(
                "resize beyond the capacity (an allocation) cannot be part of a recording",
            ));
        }
        let capacity = grown_capacity(len).max(len);
        let fresh = self.alloc_raw::<T>(len, capacity)?;
        self.copy_device((&fresh.raw, 0), (&buf.raw, 0), buf.len * size_of::<T>())?;
        let CudaBuffer { raw, .. } = fresh;
        buf.replace_raw(raw, len, capacity);
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.stream.synchronize()
    }

    fn mark(&self) -> Result<CudaMarker> {
        Ok(CudaMarker { event: RawEvent::record(&self.stream, true)? })
    }

    fn elapsed(&self, start: &CudaMarker, end: &CudaMarker) -> Result<Duration> {
        self.stream.forbid_while_recording("elapsed (a host wait)")?;
        start.elapsed_until(end)
    }

    fn fork(&self) -> Result<Self> {
        Self::on_new_stream(Arc::clone(&self.ctx), Arc::clone(&self.modules), self.policy)
    }

    fn signal(&self) -> Result<CudaEvent> {
        Ok(CudaEvent { event: RawEvent::record(&self.stream, false)? })
    }

    fn wait_for(&self, event: &CudaEvent) -> Result<()> {
        self.stream.bind()?;
        // SAFETY: the event and the stream are alive and belong to the current context.
        unsafe { cudarc::driver::sys::cuStreamWaitEvent(self.stream.raw(), event.event.event, 0) }
            .result()
            .during("cuStreamWaitEvent")
    }

    fn reserve(&self, reserve: &Reserve) -> Result<()> {
        self.reserve_impl(reserve)
    }

    fn record(&self, body: &mut dyn FnMut() -> Result<()>) -> Result<CudaRecording> {
        self.record_impl(body)
    }

    fn replay(&self, recording: &CudaRecording) -> Result<()> {
        self.replay_impl(recording)
    }

    fn copy<'a, T: Storage>(
        &self,
        src: impl Into<ViewOf<'a, Self, T>>,
        dst: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        check_len("copy destination", src.len(), dst.len())?;
        self.copy_device(
            (&dst.buffer().raw, byte_offset::<T>(dst.offset())),
            (&src.buffer().raw, byte_offset::<T>(src.offset())),
            src.len() * size_of::<T>(),
        )
    }

    fn fill<'a, T: Storage>(&self, dst: impl Into<ViewMutOf<'a, Self, T>>, value: T) -> Result<()> {
        self.fill_impl(dst.into(), value)
    }

    fn iota<'a>(&self, dst: impl Into<ViewMutOf<'a, Self, u32>>, start: u32) -> Result<()> {
        self.iota_impl(dst.into(), start)
    }

    fn gather<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        self.gather_impl(input.into(), indices.into(), output.into())
    }

    fn scatter<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        self.scatter_impl(input.into(), indices.into(), output.into())
    }

    fn sort_pairs<'a>(
        &self,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
        values: impl Into<ViewMutOf<'a, Self, u32>>,
        bits: Range<u32>,
    ) -> Result<()> {
        self.sort_pairs_impl(keys.into(), values.into(), bits)
    }

    fn lower_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.bound_impl(sorted.into(), queries.into(), output.into(), false)
    }

    fn upper_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.bound_impl(sorted.into(), queries.into(), output.into(), true)
    }

    fn segmented_top_k<'a, T: Element>(
        &self,
        keys: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        k: u32,
        order: Order,
        indices: impl Into<ViewMutOf<'a, Self, u32>>,
        top_keys: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        self.segmented_top_k_impl(keys.into(), offsets.into(), k, order, indices.into(), top_keys.into())
    }

    fn histogram<'a>(
        &self,
        values: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.histogram_impl(values.into(), output.into())
    }

    fn exclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.exclusive_scan_impl(input.into(), output.into())
    }

    fn exclusive_scan_counted<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.exclusive_scan_counted_impl(input.into(), count, output.into())
    }

    fn inclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.inclusive_scan_impl(input.into(), output.into())
    }

    fn segmented_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        kind: ScanKind,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.segmented_scan_impl(input.into(), offsets.into(), kind, output.into())
    }

    fn reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        self.reduce_impl(input.into(), op, output.into())
    }

    fn segmented_reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        self.segmented_reduce_impl(input.into(), offsets.into(), op, output.into())
    }

    fn compact<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.compact_impl(input.into(), flags.into(), None, output.into(), count.into())
    }

    fn compact_counted<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        live: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.compact_impl(input.into(), flags.into(), Some(live), output.into(), count.into())
    }

    fn sfc_keys<'a, T: Real>(
        &self,
        x: impl Into<ViewOf<'a, Self, T>>,
        y: impl Into<ViewOf<'a, Self, T>>,
        z: impl Into<ViewOf<'a, Self, T>>,
        mapper: &KeyMapper<T, u64>,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
    ) -> Result<()> {
        self.sfc_keys_impl(x.into(), y.into(), z.into(), mapper, keys.into())
    }
}
