//! Device buffers.
//!
//! A [`WgpuBuffer<T>`] is a typed view of one `wgpu::Buffer` with usage
//! `STORAGE | COPY_SRC | COPY_DST`. Its allocation holds `capacity` elements and at
//! least 256 bytes (wgpu forbids zero-sized bindings, so an empty buffer still binds);
//! kernels get lengths as scalars and never look at the allocation size. 8-byte element
//! types are stored as their little-endian bytes, which WGSL reads as `vec2<u32>`
//! (low word first) for u64 and i64, and as `f64` where the device has `SHADER_F64`.

use std::marker::PhantomData;

use orrery_core::{DeviceBuffer, Element};

/// A buffer with its element type erased: what a kernel binds
/// ([`orrery_core::GpuExecutor::RawBuffer`]).
#[derive(Debug, Clone)]
pub struct WgpuRawBuffer {
    pub(crate) buffer: wgpu::Buffer,
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
pub struct WgpuBuffer<T: Element> {
    pub(crate) raw: WgpuRawBuffer,
    pub(crate) len: usize,
    pub(crate) capacity: usize,
    _element: PhantomData<T>,
}

impl<T: Element> WgpuBuffer<T> {
    pub(crate) fn new(buffer: wgpu::Buffer, len: usize, capacity: usize) -> Self {
        Self { raw: WgpuRawBuffer { buffer }, len, capacity, _element: PhantomData }
    }

    /// The wgpu buffer; see [`WgpuRawBuffer::wgpu_buffer`].
    pub fn wgpu_buffer(&self) -> &wgpu::Buffer {
        &self.raw.buffer
    }

    /// Bytes in use (`len * size_of::<T>()`).
    pub(crate) fn bytes(&self) -> u64 {
        (self.len * size_of::<T>()) as u64
    }

    /// The wgpu buffer (crate-internal shorthand).
    pub(crate) fn wgpu(&self) -> &wgpu::Buffer {
        &self.raw.buffer
    }
}

impl<T: Element> DeviceBuffer<T> for WgpuBuffer<T> {
    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }
}
