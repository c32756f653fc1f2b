//! Kernel launches shared by the GPU executors, so an algorithm's GPU orchestration
//! (its level loop, buffer plan and convergence flags) is written once for CUDA and
//! wgpu.
//!
//! A [`KernelSource`] carries one module twice: CUDA C (compiled by NVRTC) and WGSL.
//! Both define the same entry points with the same argument order, following one
//! convention:
//!
//! - Arguments are buffers first, then scalars, in the order of the `args` slice.
//! - CUDA: `extern "C" __global__ void entry(T0* buf0, ..., u32 s0, float s1, ...)`;
//!   scalars are passed by value (`U64` as `unsigned long long`).
//! - WGSL: buffer `i` is `@group(0) @binding(i)` (`var<storage, read>` or
//!   `var<storage, read_write>`); all scalars together are one
//!   `var<uniform> params: Params` at `@binding(number of buffers)`, a struct whose
//!   fields follow the scalar order, each 4 bytes (`U64` as `vec2<u32>`, low word
//!   first, 8-byte aligned). The entry point is declared
//!   `@compute @workgroup_size(WORKGROUP_SIZE)` with `override WORKGROUP_SIZE: u32;`,
//!   which the executor sets to [`Launch::threads`].
//! - The grid is `Launch::blocks` blocks. CUDA launches them 1D; wgpu spreads them over
//!   a 2D dispatch when they exceed 65535, so WGSL kernels compute their linear block
//!   id as `wid.x + wid.y * num_workgroups.x` and return when it is `>= blocks`
//!   (kernels take the block count, or the element count, as a scalar for that).
//!   A launch of zero blocks does nothing.
//! - WGSL sources may use the executor's preprocessor: `//#if SUBGROUP` ... `//#else`
//!   ... `//#endif` (subgroup operations present and verified on the adapter) and
//!   `//#include core/common` / `//#include core/wg_scan` (shared helpers).
//! - Buffers belong to the executor that made them; passing one to another executor is
//!   a logic error that the type system does not catch between two executors of the
//!   same type.

use crate::element::Element;
use crate::error::Result;
use crate::executor::Executor;

/// One kernel module in both GPU languages.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// Module name, unique in the workspace (e.g. "core/primitives"); keys the caches.
    pub name: &'static str,
    /// CUDA C source.
    pub cuda: &'static str,
    /// WGSL source.
    pub wgsl: &'static str,
}

/// The grid of one launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Launch {
    /// Number of blocks (workgroups).
    pub blocks: u32,
    /// Threads per block (workgroup size).
    pub threads: u32,
}

impl Launch {
    /// Enough blocks of `threads` threads for one thread per item.
    pub const fn per_item(items: usize, threads: u32) -> Self {
        let blocks = items.div_ceil(threads as usize);
        Self { blocks: if blocks > u32::MAX as usize { u32::MAX } else { blocks as u32 }, threads }
    }
}

/// A scalar kernel argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// `unsigned int` / `u32`.
    U32(u32),
    /// `int` / `i32`.
    I32(i32),
    /// `float` / `f32`.
    F32(f32),
    /// `unsigned long long` / `vec2<u32>` (low, high).
    U64(u64),
    /// `double` / `f64` (WGSL only where the adapter has `SHADER_F64`).
    F64(f64),
}

/// One argument of a launch.
pub enum KernelArg<'a, E: GpuExecutor + ?Sized> {
    /// A device buffer (read or written by the kernel as its source declares).
    Buffer(&'a E::RawBuffer),
    /// A scalar by value.
    Scalar(Scalar),
}

/// An executor that launches kernels from [`KernelSource`]s.
pub trait GpuExecutor: Executor {
    /// A buffer with its element type erased, as kernels see it.
    type RawBuffer: ?Sized;

    /// The untyped view of a buffer, for [`KernelArg::Buffer`].
    fn raw<T: Element>(buf: &Self::Buffer<T>) -> &Self::RawBuffer;

    /// Compiles `source` for this device (or fetches it from the caches).
    ///
    /// # Errors
    /// [`crate::Error::KernelCompile`] with the compiler's log.
    fn prepare(&self, source: &KernelSource) -> Result<()>;

    /// Enqueues `entry` of `source` with `launch` and `args` (compiling on first use).
    /// Buffers are passed by shared reference: a launch's writes are device effects
    /// ordered on the executor's stream.
    ///
    /// # Errors
    /// [`crate::Error::KernelCompile`], device failures.
    fn launch(&self, source: &KernelSource, entry: &str, launch: Launch, args: &[KernelArg<'_, Self>]) -> Result<()>;
}

/// Shorthand for a buffer argument.
pub fn buf<E: GpuExecutor, T: Element>(b: &E::Buffer<T>) -> KernelArg<'_, E> {
    KernelArg::Buffer(E::raw(b))
}
