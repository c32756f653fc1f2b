//! The device, its one logical stream, and the recorder every operation goes through.
//!
//! # Batching
//! Work is recorded into one pending [`wgpu::CommandEncoder`] (a compute pass per
//! dispatch, so wgpu places the barriers between dependent dispatches) and submitted
//! only when the host needs a result or an ordering point: [`Recorder::wait`] (read,
//! download, synchronize, host-clock markers), [`Recorder::flush`] (write, markers),
//! or when a batch reaches [`MAX_BATCH_COMMANDS`] commands or fills its parameter arena.
//! No primitive waits for the device.
//!
//! # Scalar parameters
//! Each dispatch's uniform block is appended to a host-side arena, one slot per dispatch
//! at the device's uniform offset alignment; at submit the arena is written into one
//! uniform buffer with `Queue::write_buffer`, which the queue orders before the
//! batch's command buffers and after every earlier submission. So the steady state
//! creates no buffers for parameters, only a bind group per dispatch.
//!
//! # Errors
//! Allocation runs inside error scopes (out of memory and validation are reported at
//! once). Errors of asynchronous work go to the device's uncaptured-error handler, which
//! keeps the first one; the next wait returns it as [`Error::Device`] (or
//! [`Error::OutOfDeviceMemory`]).

use std::num::NonZeroU64;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use orrery_core::executor::grown_capacity;
use orrery_core::{Error, Result};

use crate::adapter::{BACKEND, Capabilities, Opened};
use crate::pipeline_cache::{BindingKind, Pipeline, PipelineCache};
use crate::shaders::{self, CoreModule};

/// Smallest uniform parameter arena of one batch: at least 256 parameter slots at the
/// device's uniform offset alignment (256 bytes on many GPUs, 32 on lavapipe), so a
/// batch ends at 256 to 512 dispatches through the arena or at
/// [`MAX_BATCH_COMMANDS`], whichever comes first. (On lavapipe the arena fills first,
/// so the tests exercise that path.)
const MIN_ARENA_BYTES: u64 = 16 * 1024;
/// Commands after which a batch is submitted even without a reason to.
pub(crate) const MAX_BATCH_COMMANDS: usize = 1024;
/// Smallest allocation: wgpu forbids zero-sized bindings, and a binding must hold at
/// least one element of the array type the shader declares (up to 16 bytes for `vec4`).
pub(crate) const MIN_BUFFER_BYTES: u64 = 256;
/// Usage of every executor buffer.
pub(crate) const STORAGE_USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// Scratch buffers owned by the executor: grown with headroom, never shrunk, shared by
/// the primitives (each primitive holds the recorder for its whole recording, so two
/// primitives never interleave on them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scratch {
    /// Alternate keys of the radix sort.
    SortKeys,
    /// Alternate values of the radix sort.
    SortValues,
    /// Per-(digit, tile) counts of a radix-sort pass.
    SortCounts,
    /// Their exclusive scan.
    SortOffsets,
    /// Tile sums of a scan or compaction.
    ScanPartials,
    /// Tile results of a reduction.
    ReducePartials,
}

const SCRATCH_SLOTS: usize = 6;

/// The first asynchronous error, kept until the next wait reports it.
type ErrorSlot = Arc<Mutex<Option<Error>>>;

/// Recording state of the executor's stream.
pub(crate) struct Stream {
    encoder: Option<wgpu::CommandEncoder>,
    commands: usize,
    arena: Vec<u8>,
    arena_buffer: wgpu::Buffer,
    arena_bytes: u64,
    staging: Option<(wgpu::Buffer, u64)>,
    scratch: [Option<(wgpu::Buffer, u64)>; SCRATCH_SLOTS],
    /// Whether queue writes wait for a submit.
    writes_pending: bool,
}

/// Everything the executor shares between threads.
pub(crate) struct Context {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub limits: wgpu::Limits,
    pub caps: Capabilities,
    /// Whether the SUBGROUP define is set for core and user kernels.
    pub subgroups: bool,
    cache: Mutex<PipelineCache>,
    stream: Mutex<Stream>,
    errors: ErrorSlot,
    hilbert_table: OnceLock<wgpu::Buffer>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves plain data behind; keep going.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn device_error(operation: &str, message: impl Into<String>) -> Error {
    Error::Device { backend: BACKEND, operation: operation.to_owned(), message: message.into() }
}

fn from_wgpu(e: &wgpu::Error, operation: &str) -> Error {
    match e {
        wgpu::Error::OutOfMemory { .. } => Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: 0 },
        other => device_error(operation, other.to_string()),
    }
}

impl Context {
    /// Wraps an opened device. Subgroups are off until [`Context::probe_subgroups`].
    pub(crate) fn new(opened: Opened, timestamps: bool, f64: bool) -> Result<Self> {
        let Opened { device, queue, info, features, limits } = opened;
        let errors: ErrorSlot = Arc::new(Mutex::new(None));
        let slot = errors.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut first = lock(&slot);
            if first.is_none() {
                *first = Some(from_wgpu(&e, "asynchronous work"));
            }
        }));
        let slot = errors.clone();
        device.set_device_lost_callback(move |reason, message| {
            let mut first = lock(&slot);
            if first.is_none() {
                *first = Some(device_error("device", format!("device lost ({reason:?}): {message}")));
            }
        });
        let caps = Capabilities {
            adapter: info.name.clone(),
            backend: info.backend,
            device_type: info.device_type,
            subgroup_size: None,
            timestamps: timestamps && features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
            f64: f64 && features.contains(wgpu::Features::SHADER_F64),
            max_buffer_size: limits.max_buffer_size,
            max_storage_binding: limits.max_storage_buffer_binding_size,
            max_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        };
        let arena_bytes = MIN_ARENA_BYTES.max(256 * u64::from(limits.min_uniform_buffer_offset_alignment));
        let arena_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orrery params"),
            size: arena_bytes,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let stream = Stream {
            encoder: None,
            commands: 0,
            arena: Vec::with_capacity(arena_bytes as usize),
            arena_buffer,
            arena_bytes,
            staging: None,
            scratch: Default::default(),
            writes_pending: false,
        };
        let ctx = Self {
            device,
            queue,
            limits,
            caps,
            subgroups: false,
            cache: Mutex::new(PipelineCache::default()),
            stream: Mutex::new(stream),
            errors,
            hilbert_table: OnceLock::new(),
        };
        ctx.take_error("device creation")?;
        Ok(ctx)
    }

    /// Runs the subgroup probe (`shaders/core/probe.wgsl`) and turns the subgroup paths
    /// on when the subgroups are full, ordered as the kernels assume, and every subgroup
    /// operation the kernels use gives the right answer. A probe that fails to compile
    /// (a backend whose shader translator lacks a subgroup built-in) leaves them off.
    pub(crate) fn probe_subgroups(&mut self) -> Result<()> {
        if !self.device.features().contains(wgpu::Features::SUBGROUP) {
            return Ok(());
        }
        let w = shaders::WORKGROUP as usize;
        let out = self.create_buffer(((2 * w + 1) * 4) as u64, STORAGE_USAGE, "orrery subgroup probe")?;
        let mut words = vec![0u32; 2 * w + 1];
        {
            let mut rec = self.recorder();
            let Ok(pipeline) = rec.pipeline_with(shaders::PROBE, &["SUBGROUP"], "probe_subgroups") else {
                return Ok(());
            };
            rec.dispatch(&pipeline, &[&out], &[], 1)?;
            rec.read_bytes(&out, 0, bytemuck::cast_slice_mut(&mut words))?;
        }
        if let Some(size) = probe_verdict(&words, w) {
            self.subgroups = true;
            self.caps.subgroup_size = Some(size);
        }
        Ok(())
    }

    /// Takes the first asynchronous error, if any.
    pub(crate) fn take_error(&self, operation: &str) -> Result<()> {
        match lock(&self.errors).take() {
            None => Ok(()),
            Some(Error::Device { backend, message, .. }) => {
                Err(Error::Device { backend, operation: format!("work recorded before {operation}"), message })
            }
            Some(e) => Err(e),
        }
    }

    /// Locks the stream for recording.
    pub(crate) fn recorder(&self) -> Recorder<'_> {
        Recorder { ctx: self, stream: lock(&self.stream) }
    }

    /// A pipeline of a user or core kernel; `SUBGROUP` is added to `defines` when the
    /// subgroup paths are on.
    pub(crate) fn pipeline(
        &self,
        name: &str,
        wgsl: &str,
        defines: &[&str],
        entry: &str,
        workgroup_size: u32,
        core: bool,
    ) -> Result<Arc<Pipeline>> {
        let mut all: Vec<&str> = defines.to_vec();
        if self.subgroups && !all.contains(&"SUBGROUP") {
            all.push("SUBGROUP");
        }
        all.sort_unstable();
        lock(&self.cache).pipeline(&self.device, name, wgsl, &all, entry, workgroup_size, !core)
    }

    /// Compiles a module without building pipelines.
    pub(crate) fn prepare_module(&self, name: &str, wgsl: &str) -> Result<()> {
        let defines: &[&str] = if self.subgroups { &["SUBGROUP"] } else { &[] };
        lock(&self.cache).module(&self.device, name, wgsl, defines).map(|_| ())
    }

    /// Checks `bytes` against the device's limits.
    fn check_size(&self, bytes: u64, usage: wgpu::BufferUsages) -> Result<()> {
        let mut max = self.limits.max_buffer_size;
        if usage.contains(wgpu::BufferUsages::STORAGE) {
            max = max.min(self.limits.max_storage_buffer_binding_size);
        }
        if bytes > max {
            Err(Error::BufferTooLarge { backend: BACKEND, requested_bytes: bytes, max_bytes: max })
        } else {
            Ok(())
        }
    }

    /// Runs `create` inside out-of-memory and validation error scopes.
    fn scoped<R>(&self, bytes: u64, create: impl FnOnce() -> R) -> Result<R> {
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let value = create();
        let invalid = pollster::block_on(validation.pop());
        let out_of_memory = pollster::block_on(oom.pop());
        if out_of_memory.is_some() {
            return Err(Error::OutOfDeviceMemory { backend: BACKEND, requested_bytes: bytes });
        }
        if let Some(e) = invalid {
            return Err(device_error("buffer allocation", e.to_string()));
        }
        Ok(value)
    }

    /// A buffer of at least `bytes` bytes (at least [`MIN_BUFFER_BYTES`], a multiple of 4).
    ///
    /// # Errors
    /// [`Error::BufferTooLarge`] beyond the device limits, [`Error::OutOfDeviceMemory`].
    pub(crate) fn create_buffer(&self, bytes: u64, usage: wgpu::BufferUsages, label: &str) -> Result<wgpu::Buffer> {
        self.check_size(bytes, usage)?;
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        self.scoped(bytes, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })
    }

    /// A buffer holding `data` (padded to at least [`MIN_BUFFER_BYTES`]).
    ///
    /// # Errors
    /// As [`Context::create_buffer`].
    pub(crate) fn create_buffer_init(
        &self,
        data: &[u8],
        usage: wgpu::BufferUsages,
        label: &str,
    ) -> Result<wgpu::Buffer> {
        let bytes = data.len() as u64;
        self.check_size(bytes, usage)?;
        let size = bytes.max(MIN_BUFFER_BYTES).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let buffer = self.scoped(bytes, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: true,
            })
        })?;
        if bytes > 0 {
            let mut view =
                buffer.slice(0..bytes).get_mapped_range_mut().map_err(|e| device_error("upload", e.to_string()))?;
            view.copy_from_slice(data);
        }
        buffer.unmap();
        Ok(buffer)
    }

    /// The Hilbert table of `shaders/core/sfc.wgsl`: orrery_core's `ENCODE_3D`, widened
    /// to u32, uploaded once.
    pub(crate) fn hilbert_table(&self) -> Result<wgpu::Buffer> {
        if let Some(t) = self.hilbert_table.get() {
            return Ok(t.clone());
        }
        let words: Vec<u32> = orrery_core::sfc::hilbert::ENCODE_3D.iter().map(|&e| u32::from(e)).collect();
        let table =
            self.create_buffer_init(bytemuck::cast_slice(&words), wgpu::BufferUsages::STORAGE, "orrery hilbert table")?;
        Ok(self.hilbert_table.get_or_init(|| table).clone())
    }
}

/// The subgroup size when the probe's output (`words`, for a workgroup of `w`) shows
/// full, subgroup-major subgroups whose operations all passed.
fn probe_verdict(words: &[u32], w: usize) -> Option<u32> {
    let mut seen = vec![false; w];
    let ranks_ok = words[..w].iter().all(|&r| (r as usize) < w && !std::mem::replace(&mut seen[r as usize], true));
    let checks_ok = words[w..2 * w].iter().all(|&f| f == 0);
    let size = words[2 * w];
    (ranks_ok && checks_ok && size > 0 && (w as u32).is_multiple_of(size)).then_some(size)
}

/// Exclusive access to the stream while an operation records its commands.
pub(crate) struct Recorder<'a> {
    /// The device.
    pub ctx: &'a Context,
    stream: MutexGuard<'a, Stream>,
}

/// Splits `blocks` workgroups into a 2D grid of at most `max` per dimension.
pub(crate) fn grid(blocks: u32, max: u32) -> Option<(u32, u32)> {
    let rows = blocks.div_ceil(max);
    (rows <= max).then(|| (blocks.div_ceil(rows.max(1)), rows.max(1)))
}

impl Recorder<'_> {
    /// A pipeline of a core module.
    pub(crate) fn pipeline(&self, module: CoreModule, defines: &[&str], entry: &str) -> Result<Arc<Pipeline>> {
        self.ctx.pipeline(module.name, module.wgsl, defines, entry, shaders::WORKGROUP, true)
    }

    /// A pipeline of a core module with exactly `defines` (no automatic `SUBGROUP`).
    fn pipeline_with(&self, module: CoreModule, defines: &[&str], entry: &str) -> Result<Arc<Pipeline>> {
        lock(&self.ctx.cache).pipeline(
            &self.ctx.device,
            module.name,
            module.wgsl,
            defines,
            entry,
            shaders::WORKGROUP,
            false,
        )
    }

    fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        let device = &self.ctx.device;
        self.stream.commands += 1;
        self.stream.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("orrery") })
        })
    }

    /// Submits when the batch is long enough.
    fn maybe_flush(&mut self) {
        if self.stream.commands >= MAX_BATCH_COMMANDS {
            self.flush();
        }
    }

    /// Records one dispatch of `blocks` workgroups. `buffers[i]` is binding `i` and the
    /// parameter block is the uniform at binding `buffers.len()`; bindings the entry
    /// point does not use are left out. `params` is padded with zeros to the uniform's size.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the kernel uses a binding that was not given, or
    /// the parameters exceed its uniform; grids beyond the device's dispatch limits.
    pub(crate) fn dispatch(
        &mut self,
        pipeline: &Pipeline,
        buffers: &[&wgpu::Buffer],
        params: &[u8],
        blocks: u32,
    ) -> Result<()> {
        if blocks == 0 {
            return Ok(());
        }
        let max = self.ctx.limits.max_compute_workgroups_per_dimension;
        let (x, y) = grid(blocks, max).ok_or_else(|| Error::InvalidArgument {
            what: "launch blocks",
            reason: format!("{blocks} workgroups exceed the device's {max} x {max} grid"),
        })?;
        let params_binding = buffers.len() as u32;
        let mut uniform = None;
        for (binding, kind) in &pipeline.bindings.bindings {
            match kind {
                BindingKind::Storage { .. } if (*binding as usize) < buffers.len() => {}
                BindingKind::Uniform { size, .. } if *binding == params_binding => {
                    if params.len() as u64 > *size {
                        return Err(Error::InvalidArgument {
                            what: "kernel scalars",
                            reason: format!(
                                "{} takes {size} bytes of scalars, {} were given",
                                pipeline.label,
                                params.len()
                            ),
                        });
                    }
                    uniform = Some(*size);
                }
                _ => {
                    return Err(Error::InvalidArgument {
                        what: "kernel arguments",
                        reason: format!(
                            "{} uses binding {binding} as {kind:?}, but the launch has {} buffer(s) (bindings 0..{}) and the scalars at binding {}",
                            pipeline.label,
                            buffers.len(),
                            buffers.len(),
                            buffers.len()
                        ),
                    });
                }
            }
        }
        let slot = match uniform {
            None => None,
            Some(size) => Some(self.push_params(params, size)?),
        };
        let mut entries = Vec::with_capacity(pipeline.bindings.bindings.len());
        for (binding, kind) in &pipeline.bindings.bindings {
            let resource = match kind {
                BindingKind::Storage { .. } => buffers[*binding as usize].as_entire_binding(),
                BindingKind::Uniform { .. } => {
                    let (offset, size) = slot.expect("uniform slot reserved above");
                    wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &self.stream.arena_buffer,
                        offset,
                        size: NonZeroU64::new(size),
                    })
                }
            };
            entries.push(wgpu::BindGroupEntry { binding: *binding, resource });
        }
        let bind_group = self.ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.layout,
            entries: &entries,
        });
        let encoder = self.encoder();
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes: None });
        pass.set_pipeline(&pipeline.compute);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
        drop(pass);
        self.maybe_flush();
        Ok(())
    }

    /// Appends a parameter block to the arena; returns its (offset, binding size).
    fn push_params(&mut self, params: &[u8], size: u64) -> Result<(u64, u64)> {
        let binding = size.max(1).next_multiple_of(16);
        let align = u64::from(self.ctx.limits.min_uniform_buffer_offset_alignment).max(16);
        let arena_bytes = self.stream.arena_bytes;
        if binding > arena_bytes {
            return Err(Error::InvalidArgument {
                what: "kernel scalars",
                reason: format!("a parameter block of {size} bytes exceeds the {arena_bytes}-byte arena"),
            });
        }
        let mut offset = (self.stream.arena.len() as u64).next_multiple_of(align);
        if offset + binding > arena_bytes {
            self.flush();
            offset = 0;
        }
        let arena = &mut self.stream.arena;
        arena.resize(offset as usize, 0);
        arena.extend_from_slice(params);
        arena.resize((offset + binding) as usize, 0);
        Ok((offset, binding))
    }

    /// Records a buffer-to-buffer copy (no-op for 0 bytes).
    pub(crate) fn copy(
        &mut self,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        bytes: u64,
    ) {
        if bytes == 0 {
            return;
        }
        self.encoder().copy_buffer_to_buffer(src, src_offset, dst, dst_offset, bytes);
        self.maybe_flush();
    }

    /// Records zeroing the first `bytes` bytes of `buf` (no-op for 0 bytes).
    pub(crate) fn clear(&mut self, buf: &wgpu::Buffer, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.encoder().clear_buffer(buf, 0, Some(bytes));
        self.maybe_flush();
    }

    /// Records a timestamp (the device has `TIMESTAMP_QUERY_INSIDE_ENCODERS`).
    pub(crate) fn write_timestamp(&mut self, set: &wgpu::QuerySet, resolve: &wgpu::Buffer, readback: &wgpu::Buffer) {
        let encoder = self.encoder();
        encoder.write_timestamp(set, 0);
        encoder.resolve_query_set(set, 0..1, resolve, 0);
        encoder.copy_buffer_to_buffer(resolve, 0, readback, 0, 8);
    }

    /// Queues a host-to-device copy after everything recorded so far.
    pub(crate) fn write(&mut self, dst: &wgpu::Buffer, offset: u64, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        // Queue writes run before the next submission's commands: submit what was
        // recorded first, so the write lands after it.
        self.flush();
        self.ctx.queue.write_buffer(dst, offset, data);
        self.stream.writes_pending = true;
    }

    /// Submits the pending batch (no wait).
    pub(crate) fn flush(&mut self) {
        let encoder = self.stream.encoder.take();
        if encoder.is_none() && !self.stream.writes_pending {
            return;
        }
        if !self.stream.arena.is_empty() {
            self.ctx.queue.write_buffer(&self.stream.arena_buffer, 0, &self.stream.arena);
            self.stream.arena.clear();
        }
        self.ctx.queue.submit(encoder.map(wgpu::CommandEncoder::finish));
        self.stream.commands = 0;
        self.stream.writes_pending = false;
    }

    /// Submits and waits until the device is idle; reports asynchronous errors.
    ///
    /// # Errors
    /// The first error of earlier asynchronous work, device loss.
    pub(crate) fn wait(&mut self, operation: &str) -> Result<()> {
        self.flush();
        self.ctx
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| device_error(operation, e.to_string()))?;
        self.ctx.take_error(operation)
    }

    /// Copies `out.len()` bytes from `src` at `offset` to the host, after all recorded work.
    ///
    /// # Errors
    /// As [`Recorder::wait`]; allocation of the staging buffer.
    pub(crate) fn read_bytes(&mut self, src: &wgpu::Buffer, offset: u64, out: &mut [u8]) -> Result<()> {
        let bytes = out.len() as u64;
        if bytes == 0 {
            return self.wait("read");
        }
        let staging = match &self.stream.staging {
            Some((buffer, capacity)) if *capacity >= bytes => buffer.clone(),
            _ => {
                let capacity = grown_capacity(bytes as usize) as u64;
                let buffer = self.ctx.create_buffer(
                    capacity,
                    wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                    "orrery readback",
                )?;
                self.stream.staging = Some((buffer.clone(), capacity));
                buffer
            }
        };
        self.copy(src, offset, &staging, 0, bytes);
        self.flush();
        map_read(self.ctx, &staging, bytes, out)
    }

    /// A scratch buffer of at least `bytes` bytes; grows with headroom, never shrinks.
    ///
    /// # Errors
    /// As [`Context::create_buffer`].
    pub(crate) fn scratch(&mut self, slot: Scratch, bytes: u64) -> Result<wgpu::Buffer> {
        let index = slot as usize;
        if let Some((buffer, capacity)) = &self.stream.scratch[index]
            && *capacity >= bytes
        {
            return Ok(buffer.clone());
        }
        let capacity = (grown_capacity(bytes as usize) as u64).max(MIN_BUFFER_BYTES).next_multiple_of(8);
        // The headroom must not push a legal size over the limit.
        let capacity = if self.ctx.check_size(capacity, STORAGE_USAGE).is_ok() { capacity } else { bytes };
        let buffer = self.ctx.create_buffer(capacity, STORAGE_USAGE, "orrery scratch")?;
        self.stream.scratch[index] = Some((buffer.clone(), capacity));
        Ok(buffer)
    }
}

/// Maps the first `bytes` bytes of a `MAP_READ` buffer whose copy was submitted, waits,
/// and copies them into `out`.
pub(crate) fn map_read(ctx: &Context, buffer: &wgpu::Buffer, bytes: u64, out: &mut [u8]) -> Result<()> {
    let slice = buffer.slice(0..bytes);
    let (tx, rx) = mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        // The receiver waits below; a failed send only means it gave up.
        let _ = tx.send(r);
    });
    ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| device_error("read", e.to_string()))?;
    ctx.take_error("read")?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(device_error("read", e.to_string())),
        Err(_) => return Err(device_error("read", "the mapping callback never ran")),
    }
    {
        let view = slice.get_mapped_range().map_err(|e| device_error("read", e.to_string()))?;
        out.copy_from_slice(&view[..out.len()]);
    }
    buffer.unmap();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{grid, probe_verdict};

    #[test]
    fn the_probe_accepts_only_full_ordered_subgroups() {
        let w = 8;
        let good = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&good, w), Some(4));
        let repeated_rank = [0, 1, 2, 3, 4, 5, 6, 6, 0, 0, 0, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&repeated_rank, w), None);
        let failed_op = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 2, 0, 0, 0, 0, 0, 4];
        assert_eq!(probe_verdict(&failed_op, w), None);
        let odd_size = [0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 3];
        assert_eq!(probe_verdict(&odd_size, w), None);
    }

    #[test]
    fn grids_stay_within_the_dimension_limit() {
        assert_eq!(grid(1, 65535), Some((1, 1)));
        assert_eq!(grid(65535, 65535), Some((65535, 1)));
        assert_eq!(grid(65536, 65535), Some((32768, 2)));
        let (x, y) = grid(1 << 24, 65535).unwrap();
        assert!(x <= 65535 && y <= 65535 && u64::from(x) * u64::from(y) >= 1 << 24);
        assert_eq!(grid(u32::MAX, 65535), None);
    }
}
