//! Record and replay ([`orrery_core::Executor::record`] / [`orrery_core::Executor::replay`]):
//! a capture mode of the recorder.
//!
//! While the body of `record` runs, every command the recording thread enqueues
//! (dispatches, copies, clears) is kept as data instead of being encoded: the pipeline,
//! the storage bindings (allocation and bound offset), the parameter block appended to
//! an arena of the capture, and the grid (a direct size or an indirect-argument view).
//! When the body returns, the arena becomes one uniform buffer owned by the recording
//! and every dispatch's bind group is built once against it. A replay checks the
//! allocations, encodes every command into one new encoder (consecutive dispatches in one
//! compute pass, as the stream records them) and submits it after the stream's pending
//! work; nothing is allocated or written per replay except that command buffer (wgpu
//! command buffers are single-use).
//!
//! Sizes that change between replays come from the device: device counts
//! ([`orrery_core::DeviceCount`]) and indirect grids ([`orrery_core::gpu::Grid::Indirect`]).
//! The recording holds one `Arc` of every allocation it touches (buffers, scratch, the
//! executor's internal tables); a replay requires `Arc::strong_count > 1` for each, i.e.
//! that something besides the recording still owns it, and returns
//! [`orrery_core::Error::Recording`] otherwise (a buffer dropped, or reallocated by a
//! resize or by scratch growth). Another recording holding the same allocation also
//! counts as an owner: the memory is then still alive, so such a replay is safe, only
//! not an error.
//!
//! Operations of other threads during a capture go to the stream as usual (the capture
//! is the recording thread's, like CUDA's thread-local stream capture).

use std::collections::HashMap;
use std::num::NonZeroU64;
use std::sync::Arc;
use std::thread::ThreadId;

use orrery_core::{Error, Result};

use crate::adapter::BACKEND;
use crate::context::{Batch, Bound, Context};
use crate::pipeline_cache::Pipeline;

/// The grid of a captured dispatch.
pub(crate) enum CapturedGrid {
    /// `x * y` workgroups.
    Direct(u32, u32),
    /// Indirect arguments at a byte offset of buffer `index` of the capture.
    Indirect(usize, u64),
}

enum Command {
    Dispatch {
        pipeline: Arc<Pipeline>,
        storage: Vec<(u32, usize, u64)>,
        uniform: Option<(u32, u64, u64)>,
        grid: CapturedGrid,
    },
    Copy {
        src: usize,
        src_offset: u64,
        dst: usize,
        dst_offset: u64,
        bytes: u64,
    },
    Clear {
        dst: usize,
        offset: u64,
        bytes: u64,
    },
}

/// The commands of one `record` body, as they are captured.
pub(crate) struct Capture {
    thread: ThreadId,
    buffers: Vec<Arc<wgpu::Buffer>>,
    index: HashMap<usize, usize>,
    params: Vec<u8>,
    commands: Vec<Command>,
}

impl Capture {
    /// An empty capture of the calling thread.
    pub(crate) fn new() -> Self {
        Self {
            thread: std::thread::current().id(),
            buffers: Vec::new(),
            index: HashMap::new(),
            params: Vec::new(),
            commands: Vec::new(),
        }
    }

    /// Whether the calling thread is the recording one.
    pub(crate) fn is_current_thread(&self) -> bool {
        self.thread == std::thread::current().id()
    }

    /// The capture's index of an allocation (one `Arc` per allocation).
    pub(crate) fn buffer(&mut self, buf: &Arc<wgpu::Buffer>) -> usize {
        let key = Arc::as_ptr(buf) as usize;
        *self.index.entry(key).or_insert_with(|| {
            self.buffers.push(buf.clone());
            self.buffers.len() - 1
        })
    }

    /// Appends a parameter block; returns (offset, binding size).
    pub(crate) fn push_params(&mut self, bytes: &[u8], align: u64) -> (u64, u64) {
        let offset = (self.params.len() as u64).next_multiple_of(align);
        let size = (bytes.len() as u64).max(1).next_multiple_of(16);
        self.params.resize(offset as usize, 0);
        self.params.extend_from_slice(bytes);
        self.params.resize((offset + size) as usize, 0);
        (offset, size)
    }

    pub(crate) fn dispatch(
        &mut self,
        pipeline: Arc<Pipeline>,
        bound: &[Bound<'_>],
        uniform: Option<(u32, (u64, u64))>,
        grid: CapturedGrid,
    ) {
        let storage = bound.iter().map(|&(binding, buf, offset)| (binding, self.buffer(buf), offset)).collect();
        let uniform = uniform.map(|(binding, (offset, size))| (binding, offset, size));
        self.commands.push(Command::Dispatch { pipeline, storage, uniform, grid });
    }

    pub(crate) fn copy(
        &mut self,
        src: &Arc<wgpu::Buffer>,
        src_offset: u64,
        dst: &Arc<wgpu::Buffer>,
        dst_offset: u64,
        bytes: u64,
    ) {
        let (src, dst) = (self.buffer(src), self.buffer(dst));
        self.commands.push(Command::Copy { src, src_offset, dst, dst_offset, bytes });
    }

    pub(crate) fn clear(&mut self, dst: &Arc<wgpu::Buffer>, offset: u64, bytes: u64) {
        let dst = self.buffer(dst);
        self.commands.push(Command::Clear { dst, offset, bytes });
    }

    /// The recording: the parameter buffer and every bind group, built once.
    pub(crate) fn finish(self, ctx: &Context) -> Result<WgpuRecording> {
        let params = if self.params.is_empty() {
            None
        } else {
            Some(ctx.create_buffer_init(&self.params, wgpu::BufferUsages::UNIFORM, "orrery recording params")?)
        };
        let mut commands = Vec::with_capacity(self.commands.len());
        for c in self.commands {
            commands.push(match c {
                Command::Dispatch { pipeline, storage, uniform, grid } => {
                    let mut entries: Vec<wgpu::BindGroupEntry<'_>> = storage
                        .iter()
                        .map(|&(binding, index, offset)| wgpu::BindGroupEntry {
                            binding,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: &self.buffers[index],
                                offset,
                                size: None,
                            }),
                        })
                        .collect();
                    if let (Some((binding, offset, size)), Some(params)) = (uniform, &params) {
                        entries.push(wgpu::BindGroupEntry {
                            binding,
                            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                                buffer: params,
                                offset,
                                size: NonZeroU64::new(size),
                            }),
                        });
                    }
                    let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                        label: Some("orrery recording"),
                        layout: &pipeline.layout,
                        entries: &entries,
                    });
                    Replayed::Dispatch { pipeline, bind_group, grid }
                }
                Command::Copy { src, src_offset, dst, dst_offset, bytes } => {
                    Replayed::Copy { src, src_offset, dst, dst_offset, bytes }
                }
                Command::Clear { dst, offset, bytes } => Replayed::Clear { dst, offset, bytes },
            });
        }
        ctx.take_error("record")?;
        Ok(WgpuRecording { buffers: self.buffers, _params: params, commands })
    }
}

enum Replayed {
    Dispatch { pipeline: Arc<Pipeline>, bind_group: wgpu::BindGroup, grid: CapturedGrid },
    Copy { src: usize, src_offset: u64, dst: usize, dst_offset: u64, bytes: u64 },
    Clear { dst: usize, offset: u64, bytes: u64 },
}

/// A captured launch sequence ([`orrery_core::Executor::Recording`] of
/// [`crate::WgpuExecutor`]): its commands with their bind groups, built once, the
/// parameter blocks in a uniform buffer of its own, and one `Arc` of every allocation it
/// uses.
pub struct WgpuRecording {
    buffers: Vec<Arc<wgpu::Buffer>>,
    _params: Option<wgpu::Buffer>,
    commands: Vec<Replayed>,
}

impl std::fmt::Debug for WgpuRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuRecording")
            .field("commands", &self.commands.len())
            .field("buffers", &self.buffers.len())
            .finish_non_exhaustive()
    }
}

impl WgpuRecording {
    /// Number of captured commands (dispatches, copies, clears).
    pub fn commands(&self) -> usize {
        self.commands.len()
    }

    /// [`Error::Recording`] when some allocation is owned by nothing but recordings.
    pub(crate) fn check_buffers(&self) -> Result<()> {
        if self.buffers.iter().any(|b| Arc::strong_count(b) <= 1) {
            return Err(Error::Recording {
                backend: BACKEND,
                reason: "a buffer used by this recording was dropped or reallocated".to_owned(),
            });
        }
        Ok(())
    }

    /// The commands encoded into one command buffer (`None` for an empty recording):
    /// consecutive dispatches share one compute pass, which a copy or clear ends (see
    /// [`crate::context`], "Batching").
    pub(crate) fn encode(&self, device: &wgpu::Device) -> Option<wgpu::CommandBuffer> {
        let mut batch = Batch::new("orrery replay");
        for c in &self.commands {
            match c {
                Replayed::Dispatch { pipeline, bind_group, grid } => {
                    let pass = batch.pass(device);
                    pass.set_pipeline(&pipeline.compute);
                    pass.set_bind_group(0, bind_group, &[]);
                    match *grid {
                        CapturedGrid::Direct(x, y) => pass.dispatch_workgroups(x, y, 1),
                        CapturedGrid::Indirect(index, offset) => {
                            pass.dispatch_workgroups_indirect(&self.buffers[index], offset);
                        }
                    }
                }
                Replayed::Copy { src, src_offset, dst, dst_offset, bytes } => {
                    batch.encoder(device).copy_buffer_to_buffer(
                        &self.buffers[*src],
                        *src_offset,
                        &self.buffers[*dst],
                        *dst_offset,
                        *bytes,
                    );
                }
                Replayed::Clear { dst, offset, bytes } => {
                    batch.encoder(device).clear_buffer(&self.buffers[*dst], *offset, Some(*bytes));
                }
            }
        }
        batch.finish()
    }
}
