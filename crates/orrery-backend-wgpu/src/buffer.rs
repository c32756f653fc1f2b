//! Device buffers.
//!
//! A [`WgpuBuffer<T>`] is a typed view of one `wgpu::Buffer` with usage
//! `STORAGE | COPY_SRC | COPY_DST | INDIRECT` (any buffer can hold indirect-launch
//! arguments). Its allocation holds `capacity` elements and at least 256 bytes (wgpu
//! forbids zero-sized bindings, so an empty buffer still binds); kernels get lengths as
//! scalars and never look at the allocation size. `T` is any [`Storage`] type whose size
//! is a multiple of 4 bytes (WGSL sees 32-bit words): 8-byte scalars are stored as their
//! little-endian bytes, which WGSL reads as `vec2<u32>` (low word first) for u64 and
//! i64, and as `f64` where the device has `SHADER_F64`.
//!
//! The allocation sits behind an [`Arc`]: a recording ([`orrery_core::Executor::record`])
//! keeps a clone of every allocation it uses, and a replay checks that some buffer still
//! owns each one (`Arc::strong_count > 1`), so a replay after a buffer was dropped or
//! reallocated is an error instead of a write into memory nobody owns.

use std::marker::PhantomData;
use std::sync::Arc;

use orrery_core::{DeviceBuffer, Storage};

/// A buffer with its element type erased: what a kernel binds
/// ([`orrery_core::GpuExecutor::RawBuffer`]).
#[derive(Debug, Clone)]
pub struct WgpuRawBuffer {
    pub(crate) buffer: Arc<wgpu::Buffer>,
}

impl WgpuRawBuffer {
    /// The wgpu buffer, for interoperation with code that records its own wgpu work.
    /// Work recorded by the executor is submitted only at its synchronisation points:
    /// call [`orrery_core::Executor::synchronize`] before using the buffer elsewhere.
    pub fn wgpu_buffer(&self) -> &wgpu::Buffer {
        &self.buffer
    }
}

/// A typed array in device memory ([`orrery_core::Executor::Buffer`] of
/// [`crate::WgpuExecutor`]).
#[derive(Debug)]
pub struct WgpuBuffer<T: Storage> {
    pub(crate) raw: WgpuRawBuffer,
    pub(crate) len: usize,
    pub(crate) capacity: usize,
    _element: PhantomData<T>,
}

impl<T: Storage> WgpuBuffer<T> {
    pub(crate) fn new(buffer: wgpu::Buffer, len: usize, capacity: usize) -> Self {
        Self { raw: WgpuRawBuffer { buffer: Arc::new(buffer) }, len, capacity, _element: PhantomData }
    }

    /// The wgpu buffer; see [`WgpuRawBuffer::wgpu_buffer`].
    pub fn wgpu_buffer(&self) -> &wgpu::Buffer {
        &self.raw.buffer
    }

    /// Bytes in use (`len * size_of::<T>()`).
    pub(crate) fn bytes(&self) -> u64 {
        (self.len * size_of::<T>()) as u64
    }

    /// The shared allocation (crate-internal shorthand).
    pub(crate) fn arc(&self) -> &Arc<wgpu::Buffer> {
        &self.raw.buffer
    }
}

impl<T: Storage> DeviceBuffer<T> for WgpuBuffer<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }
}
