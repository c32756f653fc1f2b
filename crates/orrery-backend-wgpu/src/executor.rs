//! [`WgpuExecutor`]: the [`Executor`] implementation.

use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orrery_core::executor::{check_compact, check_len, check_range, check_sfc_keys, check_sort_pairs, grown_capacity};
use orrery_core::sfc::KeyMapper;
use orrery_core::{
    DeviceCount, DeviceLimits, Element, Error, Executor, ExecutorKind, Order, Real, ReduceOp, Reserve, Result,
    ScanKind, Storage, ViewMutOf, ViewOf,
};

use orrery_core::element::check_gpu_storage;

use crate::adapter::{self, BACKEND, Capabilities, WgpuOptions};
use crate::buffer::WgpuBuffer;
use crate::context::{Arg, Context, PendingRead, STORAGE_USAGE, Scratch, map_read};
use crate::primitives::{self, arg, arg_mut};
use crate::record::{Capture, WgpuRecording};
use crate::shaders::{REDUCE_TILE, SCAN_TILE};
use crate::timing::{MarkerKind, WgpuMarker, ticks_to_duration};

/// A copy to the host in flight ([`Executor::Pending`] of [`WgpuExecutor`]): the copy
/// into a staging buffer of its own was submitted and its mapping requested;
/// [`Executor::wait`] polls the device until that mapping is done.
pub struct WgpuPending<T: Storage> {
    read: PendingRead,
    len: usize,
    _element: PhantomData<fn() -> T>,
}

impl<T: Storage> std::fmt::Debug for WgpuPending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuPending").field("len", &self.len).finish_non_exhaustive()
    }
}

/// The wgpu executor: one device and queue, a pipeline cache, and the core primitives
/// in WGSL. Cheap to clone (clones share the device and its stream; so does
/// [`Executor::fork`], since a wgpu device has one queue).
///
/// ```no_run
/// use orrery_core::{Executor, ReduceOp};
/// use orrery_backend_wgpu::WgpuExecutor;
///
/// let exec = WgpuExecutor::new()?; // honours ORRERY_WGPU_ADAPTER / ORRERY_WGPU_BACKEND
/// let input = exec.upload(&[3u32, 1, 4, 1, 5])?;
/// let mut offsets = exec.alloc::<u32>(6)?;
/// exec.exclusive_scan(&input, &mut offsets)?;
/// assert_eq!(exec.download(&offsets)?, [0, 3, 4, 8, 9, 14]);
/// let mut max = exec.alloc::<u32>(1)?;
/// exec.reduce(&input, ReduceOp::Max, &mut max)?;
/// assert_eq!(exec.download(&max)?, [5]);
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Clone)]
pub struct WgpuExecutor {
    pub(crate) ctx: Arc<Context>,
}

impl std::fmt::Debug for WgpuExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuExecutor").field("capabilities", &self.ctx.caps).finish_non_exhaustive()
    }
}

impl WgpuExecutor {
    /// An executor on the adapter chosen by [`WgpuOptions::from_env`].
    ///
    /// # Errors
    /// [`orrery_core::Error::DeviceUnavailable`] when no adapter is found or it refuses a
    /// device; [`orrery_core::Error::InvalidArgument`] for a malformed environment variable.
    pub fn new() -> Result<Self> {
        Self::with_options(&WgpuOptions::from_env()?)
    }

    /// An executor with explicit options (the environment is not consulted).
    ///
    /// # Errors
    /// As [`WgpuExecutor::new`]; kernel compilation errors of the subgroup probe.
    pub fn with_options(options: &WgpuOptions) -> Result<Self> {
        let opened = adapter::open(options)?;
        let mut ctx = Context::new(opened, options)?;
        if options.subgroups {
            ctx.probe_subgroups()?;
        }
        Ok(Self { ctx: Arc::new(ctx) })
    }

    /// What the device can do and which paths the primitives take.
    pub fn capabilities(&self) -> &Capabilities {
        &self.ctx.caps
    }

    /// The wgpu device, for interoperation.
    pub fn device(&self) -> &wgpu::Device {
        &self.ctx.device
    }

    /// The wgpu queue, for interoperation. Submit only after [`Executor::synchronize`]
    /// if your work must be ordered after the executor's.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.ctx.queue
    }
}

/// Ends a capture when dropped (also when the recorded body panics).
struct CaptureGuard<'a>(&'a Context);

impl Drop for CaptureGuard<'_> {
    fn drop(&mut self) {
        self.0.recorder().stream.capture = None;
    }
}

impl Executor for WgpuExecutor {
    type Buffer<T: Storage> = WgpuBuffer<T>;
    type Marker = WgpuMarker;
    type Pending<T: Storage> = WgpuPending<T>;
    /// wgpu has one queue per device and every fork shares it, so work is ordered
    /// without events: [`Executor::signal`] and [`Executor::wait_for`] are no-ops.
    type Event = ();
    type Recording = WgpuRecording;

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Wgpu
    }

    fn name(&self) -> String {
        format!("wgpu:{}", self.ctx.caps)
    }

    /// From the device's limits; `compute_units` is 1 (wgpu reports none), the subgroup
    /// size is the probed one (`None` on the shared-memory paths).
    fn limits(&self) -> DeviceLimits {
        let l = &self.ctx.limits;
        let mut out = DeviceLimits::default();
        out.subgroup_size = self.ctx.caps.subgroup_size;
        out.max_threads_per_block = l.max_compute_invocations_per_workgroup;
        out.max_shared_bytes_per_block = l.max_compute_workgroup_storage_size;
        out.compute_units = 1;
        out.f64 = self.ctx.caps.f64;
        out.max_buffer_bytes = l.max_buffer_size.min(l.max_storage_buffer_binding_size);
        out.view_alignment = self.ctx.view_alignment;
        out.max_blocks = u64::from(l.max_compute_workgroups_per_dimension).pow(2);
        out.replay = true;
        out
    }

    fn alloc<T: Storage>(&self, len: usize) -> Result<WgpuBuffer<T>> {
        check_gpu_storage::<T>(&self.name())?;
        self.ctx.forbid_in_capture("alloc")?;
        let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
        let buffer = self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer")?;
        Ok(WgpuBuffer::new(buffer, len, len))
    }

    fn upload<T: Storage>(&self, data: &[T]) -> Result<WgpuBuffer<T>> {
        check_gpu_storage::<T>(&self.name())?;
        self.ctx.forbid_in_capture("upload (an allocation)")?;
        let buffer = self.ctx.create_buffer_init(bytemuck::cast_slice(data), STORAGE_USAGE, "orrery buffer")?;
        Ok(WgpuBuffer::new(buffer, data.len(), data.len()))
    }

    fn write<T: Storage>(&self, dst: &mut WgpuBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        check_range("write destination", dst.len, offset, data.len())?;
        let mut rec = self.ctx.recorder();
        rec.forbid("write")?;
        rec.write(dst.wgpu_buffer(), (offset * size_of::<T>()) as u64, bytemuck::cast_slice(data));
        Ok(())
    }

    fn read<T: Storage>(&self, src: &WgpuBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        check_range("read source", src.len, offset, out.len())?;
        let size = size_of::<T>() as u64;
        let at = Arg { buf: src.arc(), offset: offset as u64 * size, len: out.len() as u64 * size, writable: false };
        self.ctx.recorder().read_bytes(at, bytemuck::cast_slice_mut(out))
    }

    fn read_async<'a, T: Storage>(&self, src: impl Into<ViewOf<'a, Self, T>>) -> Result<WgpuPending<T>> {
        let src = src.into();
        let read = self.ctx.recorder().read_async(arg(&src))?;
        Ok(WgpuPending { read, len: src.len(), _element: PhantomData })
    }

    fn wait<T: Storage>(&self, pending: WgpuPending<T>) -> Result<Vec<T>> {
        let mut out: Vec<T> = bytemuck::zeroed_vec(pending.len);
        pending.read.wait(&self.ctx, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    fn resize<T: Storage>(&self, buf: &mut WgpuBuffer<T>, len: usize) -> Result<()> {
        if len > buf.capacity {
            self.ctx.forbid_in_capture("resize beyond the capacity (a reallocation)")?;
            let capacity = grown_capacity(len).max(len);
            let bytes = (capacity as u64).saturating_mul(size_of::<T>() as u64);
            // Headroom never pushes a size that fits over the device limit.
            let buffer = match self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer") {
                Err(Error::BufferTooLarge { .. }) if capacity > len => {
                    return self.resize_exact(buf, len);
                }
                other => other?,
            };
            let new = WgpuBuffer::new(buffer, len, capacity);
            primitives::data::copy(
                &mut self.ctx.recorder(),
                Arg::whole(buf.arc()).read_only().with_len(buf.bytes()),
                Arg::whole(new.arc()),
            )?;
            *buf = new;
        } else {
            buf.len = len;
        }
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.recorder().wait("synchronize")
    }

    fn mark(&self) -> Result<WgpuMarker> {
        self.ctx.forbid_in_capture("mark")?;
        if !self.ctx.caps.timestamps {
            self.synchronize()?;
            return Ok(WgpuMarker { kind: MarkerKind::Host(Instant::now()) });
        }
        let set = self.ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("orrery marker"),
            ty: wgpu::QueryType::Timestamp,
            count: 1,
        });
        let resolve = self.ctx.create_buffer(
            8,
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            "orrery marker resolve",
        )?;
        let readback =
            self.ctx.create_buffer(8, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, "orrery marker")?;
        let mut rec = self.ctx.recorder();
        rec.write_timestamp(&set, &resolve, &readback);
        rec.flush();
        Ok(WgpuMarker {
            kind: MarkerKind::Timestamp {
                _set: set,
                _resolve: resolve,
                readback,
                period: self.ctx.queue.get_timestamp_period(),
                ticks: std::sync::OnceLock::new(),
            },
        })
    }

    fn elapsed(&self, start: &WgpuMarker, end: &WgpuMarker) -> Result<Duration> {
        match (&start.kind, &end.kind) {
            (MarkerKind::Host(a), MarkerKind::Host(b)) => Ok(b.saturating_duration_since(*a)),
            (
                MarkerKind::Timestamp { readback: ra, ticks: ta, period, .. },
                MarkerKind::Timestamp { readback: rb, ticks: tb, .. },
            ) => {
                let a = self.ticks(ra, ta)?;
                let b = self.ticks(rb, tb)?;
                Ok(ticks_to_duration(a, b, *period))
            }
            _ => Err(Error::InvalidArgument {
                what: "markers",
                reason: "one marker is a device timestamp and the other a host time".to_owned(),
            }),
        }
    }

    /// A handle on the same device, queue and scratch (a clone): wgpu has one queue per
    /// device, so the fork's work is ordered with this executor's as if on one stream.
    fn fork(&self) -> Result<Self> {
        Ok(self.clone())
    }

    /// A no-op: forks share one queue (see [`Executor::fork`]).
    fn signal(&self) -> Result<()> {
        Ok(())
    }

    /// A no-op: forks share one queue, so later work already follows the event.
    fn wait_for(&self, _event: &()) -> Result<()> {
        Ok(())
    }

    fn reserve(&self, reserve: &Reserve) -> Result<()> {
        let mut rec = self.ctx.recorder();
        if reserve.sort_pairs > 0 {
            let n = primitives::count(reserve.sort_pairs, "reserved sort pairs")?;
            for (slot, bytes) in primitives::sort::scratch_bytes(n) {
                rec.scratch(slot, bytes)?;
            }
        }
        if reserve.scan > 0 {
            let tiles = reserve.scan.div_ceil(SCAN_TILE as usize) as u64;
            rec.scratch(Scratch::ScanPartials, tiles * 4)?;
        }
        if reserve.reduce > 0 {
            let tiles = reserve.reduce.div_ceil(REDUCE_TILE as usize) as u64;
            rec.scratch(Scratch::ReducePartials, tiles * 8)?;
        }
        Ok(())
    }

    /// Captures the commands `body` enqueues from this thread (the recorder's capture
    /// mode, `src/record.rs`).
    fn record(&self, body: &mut dyn FnMut() -> Result<()>) -> Result<WgpuRecording> {
        {
            let mut rec = self.ctx.recorder();
            if rec.stream.capture.is_some() {
                return Err(Error::Recording {
                    backend: BACKEND,
                    reason: "already recording (one recording at a time per executor and its forks)".to_owned(),
                });
            }
            rec.stream.capture = Some(Capture::new());
        }
        // Ends the capture even when `body` panics.
        let guard = CaptureGuard(&self.ctx);
        let result = body();
        let capture = self.ctx.recorder().stream.capture.take();
        drop(guard);
        result?;
        let capture = capture.ok_or_else(|| Error::Recording {
            backend: BACKEND,
            reason: "the capture ended before the body returned".to_owned(),
        })?;
        capture.finish(&self.ctx)
    }

    fn replay(&self, recording: &WgpuRecording) -> Result<()> {
        let mut rec = self.ctx.recorder();
        rec.forbid("replay")?;
        recording.check_buffers()?;
        let commands = recording.encode(&self.ctx.device);
        rec.submit(commands);
        Ok(())
    }

    fn copy<'a, T: Storage>(
        &self,
        src: impl Into<ViewOf<'a, Self, T>>,
        dst: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (src, dst) = (src.into(), dst.into());
        check_len("copy destination", src.len(), dst.len())?;
        primitives::data::copy(&mut self.ctx.recorder(), arg(&src), arg_mut(&dst))
    }

    fn fill<'a, T: Storage>(&self, dst: impl Into<ViewMutOf<'a, Self, T>>, value: T) -> Result<()> {
        let dst = dst.into();
        primitives::data::fill(&mut self.ctx.recorder(), arg_mut(&dst), bytemuck::bytes_of(&value))
    }

    fn iota<'a>(&self, dst: impl Into<ViewMutOf<'a, Self, u32>>, start: u32) -> Result<()> {
        let dst = dst.into();
        primitives::data::iota(&mut self.ctx.recorder(), arg_mut(&dst), start)
    }

    fn gather<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, indices, output) = (input.into(), indices.into(), output.into());
        check_len("gather output", indices.len(), output.len())?;
        let mut rec = self.ctx.recorder();
        primitives::data::gather_scatter(&mut rec, size_of::<T>(), arg(&input), arg(&indices), arg_mut(&output), false)
    }

    fn scatter<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, indices, output) = (input.into(), indices.into(), output.into());
        check_len("scatter indices", input.len(), indices.len())?;
        let mut rec = self.ctx.recorder();
        primitives::data::gather_scatter(&mut rec, size_of::<T>(), arg(&input), arg(&indices), arg_mut(&output), true)
    }

    fn sort_pairs<'a>(
        &self,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
        values: impl Into<ViewMutOf<'a, Self, u32>>,
        bits: Range<u32>,
    ) -> Result<()> {
        let (keys, values) = (keys.into(), values.into());
        check_sort_pairs(keys.len(), values.len(), &bits)?;
        primitives::sort::sort_pairs(&mut self.ctx.recorder(), arg_mut(&keys), arg_mut(&values), bits)
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
        let (input, output) = (input.into(), output.into());
        check_len("scan output", input.len().saturating_add(1), output.len())?;
        primitives::scan::scan(&mut self.ctx.recorder(), arg(&input), None, arg_mut(&output), false)
    }

    fn exclusive_scan_counted<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, output) = (input.into(), output.into());
        check_len("counted scan input", count.bound(), input.len())?;
        check_len("counted scan output", count.bound() + 1, output.len())?;
        let slot = count.slot();
        primitives::scan::scan(&mut self.ctx.recorder(), arg(&input), Some(arg(&slot)), arg_mut(&output), false)
    }

    fn inclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, output) = (input.into(), output.into());
        check_len("inclusive scan output", input.len(), output.len())?;
        primitives::scan::scan(&mut self.ctx.recorder(), arg(&input), None, arg_mut(&output), true)
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
        let (input, output) = (input.into(), output.into());
        check_len("reduction output", 1, output.len())?;
        primitives::reduce::reduce::<T>(&mut self.ctx.recorder(), arg(&input), op, arg_mut(&output))
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
        let (input, flags, output, count) = (input.into(), flags.into(), output.into(), count.into());
        check_compact(input.len(), flags.len(), output.len(), count.len())?;
        let mut rec = self.ctx.recorder();
        primitives::compact::compact(
            &mut rec,
            size_of::<T>(),
            arg(&input),
            arg(&flags),
            None,
            arg_mut(&output),
            arg_mut(&count),
        )
    }

    fn compact_counted<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        live: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, flags, output, count) = (input.into(), flags.into(), output.into(), count.into());
        check_len("counted compaction input", live.bound(), input.len())?;
        check_compact(input.len(), flags.len(), output.len(), count.len())?;
        let slot = live.slot();
        let mut rec = self.ctx.recorder();
        primitives::compact::compact(
            &mut rec,
            size_of::<T>(),
            arg(&input),
            arg(&flags),
            Some(arg(&slot)),
            arg_mut(&output),
            arg_mut(&count),
        )
    }

    fn sfc_keys<'a, T: Real>(
        &self,
        x: impl Into<ViewOf<'a, Self, T>>,
        y: impl Into<ViewOf<'a, Self, T>>,
        z: impl Into<ViewOf<'a, Self, T>>,
        mapper: &KeyMapper<T, u64>,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
    ) -> Result<()> {
        let (x, y, z, keys) = (x.into(), y.into(), z.into(), keys.into());
        check_sfc_keys(x.len(), y.len(), z.len(), keys.len())?;
        primitives::keys::sfc_keys(&mut self.ctx.recorder(), [arg(&x), arg(&y), arg(&z)], mapper, arg_mut(&keys))
    }
}

impl WgpuExecutor {
    /// Reallocates to exactly `len` elements (when the headroom would exceed a limit).
    fn resize_exact<T: Storage>(&self, buf: &mut WgpuBuffer<T>, len: usize) -> Result<()> {
        let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
        let buffer = self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer")?;
        let new = WgpuBuffer::new(buffer, len, len);
        primitives::data::copy(
            &mut self.ctx.recorder(),
            Arg::whole(buf.arc()).read_only().with_len(buf.bytes()),
            Arg::whole(new.arc()),
        )?;
        *buf = new;
        Ok(())
    }

    /// The tick count of a timestamp marker, waiting for it on first use.
    fn ticks(&self, readback: &wgpu::Buffer, ticks: &std::sync::OnceLock<u64>) -> Result<u64> {
        if let Some(t) = ticks.get() {
            return Ok(*t);
        }
        // Hold the stream while mapping, so two threads never map the same marker.
        let mut rec = self.ctx.recorder();
        rec.flush();
        let mut bytes = [0u8; 8];
        map_read(&self.ctx, readback, 8, &mut bytes)?;
        drop(rec);
        Ok(*ticks.get_or_init(|| u64::from_le_bytes(bytes)))
    }
}
