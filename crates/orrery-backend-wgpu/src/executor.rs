//! [`WgpuExecutor`]: the [`Executor`] implementation.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orrery_core::executor::{check_compact, check_len, check_range, check_sfc_keys, check_sort_pairs, grown_capacity};
use orrery_core::sfc::KeyMapper;
use orrery_core::{Element, Executor, ExecutorKind, Real, ReduceOp, Result};

use crate::adapter::{self, Capabilities, WgpuOptions};
use crate::buffer::WgpuBuffer;
use crate::context::{Context, STORAGE_USAGE, map_read};
use crate::primitives::{self, count};
use crate::timing::{MarkerKind, WgpuMarker, ticks_to_duration};

/// The wgpu executor: one device and queue, a pipeline cache, and the core primitives
/// in WGSL. Cheap to clone (clones share the device and its stream).
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
        let mut ctx = Context::new(opened, options.timestamps, options.f64)?;
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

impl Executor for WgpuExecutor {
    type Buffer<T: Element> = WgpuBuffer<T>;
    type Marker = WgpuMarker;

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Wgpu
    }

    fn name(&self) -> String {
        format!("wgpu:{}", self.ctx.caps)
    }

    fn alloc<T: Element>(&self, len: usize) -> Result<WgpuBuffer<T>> {
        let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
        let buffer = self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer")?;
        Ok(WgpuBuffer::new(buffer, len, len))
    }

    fn upload<T: Element>(&self, data: &[T]) -> Result<WgpuBuffer<T>> {
        let buffer = self.ctx.create_buffer_init(bytemuck::cast_slice(data), STORAGE_USAGE, "orrery buffer")?;
        Ok(WgpuBuffer::new(buffer, data.len(), data.len()))
    }

    fn write<T: Element>(&self, dst: &mut WgpuBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        check_range("write destination", dst.len, offset, data.len())?;
        let mut rec = self.ctx.recorder();
        rec.write(dst.wgpu(), (offset * size_of::<T>()) as u64, bytemuck::cast_slice(data));
        Ok(())
    }

    fn read<T: Element>(&self, src: &WgpuBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        check_range("read source", src.len, offset, out.len())?;
        let mut rec = self.ctx.recorder();
        rec.read_bytes(src.wgpu(), (offset * size_of::<T>()) as u64, bytemuck::cast_slice_mut(out))
    }

    fn resize<T: Element>(&self, buf: &mut WgpuBuffer<T>, len: usize) -> Result<()> {
        if len > buf.capacity {
            let capacity = grown_capacity(len).max(len);
            let bytes = (capacity as u64).saturating_mul(size_of::<T>() as u64);
            // Headroom never pushes a size that fits over the device limit.
            let buffer = match self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer") {
                Err(orrery_core::Error::BufferTooLarge { .. }) if capacity > len => {
                    return self.resize_exact(buf, len);
                }
                other => other?,
            };
            let mut rec = self.ctx.recorder();
            rec.copy(buf.wgpu(), 0, &buffer, 0, buf.bytes());
            *buf = WgpuBuffer::new(buffer, len, capacity);
        } else {
            buf.len = len;
        }
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.recorder().wait("synchronize")
    }

    fn mark(&self) -> Result<WgpuMarker> {
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
            _ => Err(orrery_core::Error::InvalidArgument {
                what: "markers",
                reason: "one marker is a device timestamp and the other a host time".to_owned(),
            }),
        }
    }

    fn copy<T: Element>(&self, src: &WgpuBuffer<T>, dst: &mut WgpuBuffer<T>) -> Result<()> {
        check_len("copy destination", src.len, dst.len)?;
        self.ctx.recorder().copy(src.wgpu(), 0, dst.wgpu(), 0, src.bytes());
        Ok(())
    }

    fn fill<T: Element>(&self, buf: &mut WgpuBuffer<T>, value: T) -> Result<()> {
        let n = count(buf.len, "elements")?;
        primitives::data::fill(&mut self.ctx.recorder(), buf.wgpu(), n, bytemuck::bytes_of(&value))
    }

    fn iota(&self, buf: &mut WgpuBuffer<u32>, start: u32) -> Result<()> {
        let n = count(buf.len, "elements")?;
        primitives::data::iota(&mut self.ctx.recorder(), buf.wgpu(), n, start)
    }

    fn sort_pairs(&self, keys: &mut WgpuBuffer<u64>, values: &mut WgpuBuffer<u32>, bits: Range<u32>) -> Result<()> {
        check_sort_pairs(keys.len, values.len, &bits)?;
        let n = count(keys.len, "sort keys")?;
        primitives::sort::sort_pairs(&mut self.ctx.recorder(), keys.wgpu(), values.wgpu(), n, bits)
    }

    fn exclusive_scan(&self, input: &WgpuBuffer<u32>, output: &mut WgpuBuffer<u32>) -> Result<()> {
        check_len("scan output", input.len.saturating_add(1), output.len)?;
        let n = count(input.len, "scan input")?;
        primitives::scan::exclusive_scan(&mut self.ctx.recorder(), input.wgpu(), n, output.wgpu())
    }

    fn reduce<T: Element>(&self, input: &WgpuBuffer<T>, op: ReduceOp, output: &mut WgpuBuffer<T>) -> Result<()> {
        check_len("reduce output", 1, output.len)?;
        let n = count(input.len, "reduce input")?;
        primitives::reduce::reduce::<T>(&mut self.ctx.recorder(), input.wgpu(), n, op, output.wgpu())
    }

    fn compact<T: Element>(
        &self,
        input: &WgpuBuffer<T>,
        flags: &WgpuBuffer<u32>,
        output: &mut WgpuBuffer<T>,
        count_out: &mut WgpuBuffer<u32>,
    ) -> Result<()> {
        check_compact(input.len, flags.len, output.len, count_out.len)?;
        let n = count(input.len, "compaction input")?;
        primitives::compact::compact(
            &mut self.ctx.recorder(),
            size_of::<T>(),
            input.wgpu(),
            flags.wgpu(),
            n,
            output.wgpu(),
            count_out.wgpu(),
        )
    }

    fn gather<T: Element>(
        &self,
        input: &WgpuBuffer<T>,
        indices: &WgpuBuffer<u32>,
        output: &mut WgpuBuffer<T>,
    ) -> Result<()> {
        check_len("gather output", indices.len, output.len)?;
        let n = count(indices.len, "gather indices")?;
        primitives::data::gather(
            &mut self.ctx.recorder(),
            size_of::<T>(),
            input.wgpu(),
            indices.wgpu(),
            output.wgpu(),
            n,
        )
    }

    fn scatter<T: Element>(
        &self,
        input: &WgpuBuffer<T>,
        indices: &WgpuBuffer<u32>,
        output: &mut WgpuBuffer<T>,
    ) -> Result<()> {
        check_len("scatter indices", input.len, indices.len)?;
        let n = count(input.len, "scatter input")?;
        primitives::data::scatter(
            &mut self.ctx.recorder(),
            size_of::<T>(),
            input.wgpu(),
            indices.wgpu(),
            output.wgpu(),
            n,
        )
    }

    fn sfc_keys<T: Real>(
        &self,
        x: &WgpuBuffer<T>,
        y: &WgpuBuffer<T>,
        z: &WgpuBuffer<T>,
        mapper: &KeyMapper<T, u64>,
        keys: &mut WgpuBuffer<u64>,
    ) -> Result<()> {
        check_sfc_keys(x.len, y.len, z.len, keys.len)?;
        let n = count(x.len, "positions")?;
        primitives::keys::sfc_keys(&mut self.ctx.recorder(), [x.wgpu(), y.wgpu(), z.wgpu()], n, mapper, keys.wgpu())
    }
}

impl WgpuExecutor {
    /// Reallocates to exactly `len` elements (when the headroom would exceed a limit).
    fn resize_exact<T: Element>(&self, buf: &mut WgpuBuffer<T>, len: usize) -> Result<()> {
        let bytes = (len as u64).saturating_mul(size_of::<T>() as u64);
        let buffer = self.ctx.create_buffer(bytes, STORAGE_USAGE, "orrery buffer")?;
        self.ctx.recorder().copy(buf.wgpu(), 0, &buffer, 0, buf.bytes());
        *buf = WgpuBuffer::new(buffer, len, len);
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
