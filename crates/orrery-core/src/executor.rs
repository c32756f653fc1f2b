//! The Executor trait: the device every orrery algorithm runs on.
//!
//! An executor owns memory ([`Executor::Buffer`]), moves data between host and device,
//! keeps time, and provides the data-parallel primitives that tree builds and force
//! walks are written in: a stable radix sort of `(u64 key, u32 value)` pairs, an
//! exclusive scan into CSR offsets, reductions, stream compaction, gather and scatter,
//! fill, iota, and space-filling-curve keys from positions.
//!
//! # Contract
//! - Operations are enqueued in order on one logical stream; a later operation sees the
//!   results of earlier ones. Only [`Executor::download`], [`Executor::read`] and
//!   [`Executor::synchronize`] wait for the device.
//! - Results stay on the device: a scan's total, a reduction's value, a compaction's
//!   count are written to device buffers, so an algorithm can chain passes without a
//!   host round trip and read one status back per step.
//! - Integer results are bit-identical across executors. Floating-point reductions are
//!   deterministic per executor (fixed order), and agree across executors within
//!   rounding.
//! - Arguments are validated by the `check_*` functions of this module, which every
//!   implementation calls first; the implementation itself reports only device failures.
//! - Buffers grow with headroom ([`GROWTH_NUMERATOR`] / [`GROWTH_DENOMINATOR`]) and never
//!   shrink; elements exposed by growth hold unspecified values.

use std::ops::Range;
use std::time::Duration;

use crate::element::{Element, Real};
use crate::error::{Error, Result};
use crate::sfc::KeyMapper;

/// Buffers grow to `len * GROWTH_NUMERATOR / GROWTH_DENOMINATOR` (25% headroom).
pub const GROWTH_NUMERATOR: usize = 5;
/// See [`GROWTH_NUMERATOR`].
pub const GROWTH_DENOMINATOR: usize = 4;

/// The capacity a buffer grows to when `len` elements no longer fit.
pub const fn grown_capacity(len: usize) -> usize {
    len.saturating_mul(GROWTH_NUMERATOR) / GROWTH_DENOMINATOR
}

/// A typed array in an executor's memory.
pub trait DeviceBuffer<T: Element>: Send + Sync {
    /// Number of elements in use.
    fn len(&self) -> usize;

    /// Whether the buffer holds no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of elements the allocation holds (`>= len`).
    fn capacity(&self) -> usize;
}

/// The associative operation of a reduction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (wrapping for integers). Identity 0.
    Sum,
    /// Minimum. Identity: the type's highest value (`+inf` for floats).
    Min,
    /// Maximum. Identity: the type's lowest value (`-inf` for floats).
    Max,
}

impl ReduceOp {
    /// The identity element: the result of reducing an empty input.
    pub fn identity<T: Element>(self) -> T {
        match self {
            ReduceOp::Sum => T::ZERO,
            ReduceOp::Min => T::HIGHEST,
            ReduceOp::Max => T::LOWEST,
        }
    }

    /// Combines two values. Float min/max return the other operand when one is NaN
    /// (inputs are validated finite, so this does not arise for positions).
    pub fn apply<T: Element>(self, a: T, b: T) -> T {
        match self {
            ReduceOp::Sum => a.add(b),
            ReduceOp::Min => {
                if b < a {
                    b
                } else {
                    a
                }
            }
            ReduceOp::Max => {
                if b > a {
                    b
                } else {
                    a
                }
            }
        }
    }
}

/// Which executor family an executor belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecutorKind {
    /// The CPU (rayon) reference executor.
    Cpu,
    /// CUDA through cudarc and NVRTC.
    Cuda,
    /// wgpu (Vulkan, Metal, DX12).
    Wgpu,
}

/// The device every orrery algorithm runs on. See the module documentation for the
/// contract every implementation keeps.
pub trait Executor: Send + Sync {
    /// A typed array in this executor's memory.
    type Buffer<T: Element>: DeviceBuffer<T>;
    /// A point in this executor's timeline, for [`Executor::elapsed`].
    type Marker;

    /// The executor family.
    fn kind(&self) -> ExecutorKind;

    /// A human-readable name including the device (e.g. "cuda:0 NVIDIA H200").
    fn name(&self) -> String;

    // ---- memory -------------------------------------------------------------------

    /// A buffer of `len` elements with unspecified contents (the next kernel writes
    /// them). Capacity is exactly `len`.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`], [`Error::BufferTooLarge`].
    fn alloc<T: Element>(&self, len: usize) -> Result<Self::Buffer<T>>;

    /// A buffer holding a copy of `data`.
    ///
    /// # Errors
    /// As [`Executor::alloc`].
    fn upload<T: Element>(&self, data: &[T]) -> Result<Self::Buffer<T>>;

    /// Copies `data` into `dst[offset..offset + data.len()]`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the range exceeds `dst.len()`.
    fn write<T: Element>(&self, dst: &mut Self::Buffer<T>, offset: usize, data: &[T]) -> Result<()>;

    /// Copies `src[offset..offset + out.len()]` into `out`, waiting for pending work.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the range exceeds `src.len()`.
    fn read<T: Element>(&self, src: &Self::Buffer<T>, offset: usize, out: &mut [T]) -> Result<()>;

    /// The whole buffer as a `Vec`, waiting for pending work.
    ///
    /// # Errors
    /// Device failures only.
    fn download<T: Element>(&self, src: &Self::Buffer<T>) -> Result<Vec<T>> {
        let mut out = vec![T::ZERO; src.len()];
        self.read(src, 0, &mut out)?;
        Ok(out)
    }

    /// Sets the length of `buf` to `len`. Elements `0..min(old, len)` are kept; new
    /// elements are unspecified. Reallocates to [`grown_capacity`]`(len)` only when
    /// `len` exceeds the capacity; never shrinks the allocation.
    ///
    /// # Errors
    /// As [`Executor::alloc`].
    fn resize<T: Element>(&self, buf: &mut Self::Buffer<T>, len: usize) -> Result<()>;

    /// Waits until all enqueued work is done.
    ///
    /// # Errors
    /// Device failures (including those of earlier asynchronous work).
    fn synchronize(&self) -> Result<()>;

    /// Records a point in the executor's timeline after all enqueued work.
    ///
    /// # Errors
    /// Device failures.
    fn mark(&self) -> Result<Self::Marker>;

    /// Device time between two markers (waits for `end`).
    ///
    /// # Errors
    /// Device failures.
    fn elapsed(&self, start: &Self::Marker, end: &Self::Marker) -> Result<Duration>;

    // ---- primitives ---------------------------------------------------------------

    /// Copies `src` into `dst` on the device.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the lengths differ.
    fn copy<T: Element>(&self, src: &Self::Buffer<T>, dst: &mut Self::Buffer<T>) -> Result<()>;

    /// Sets every element of `buf` to `value`.
    ///
    /// # Errors
    /// Device failures.
    fn fill<T: Element>(&self, buf: &mut Self::Buffer<T>, value: T) -> Result<()>;

    /// Writes `start, start + 1, ...` into `buf` (wrapping).
    ///
    /// # Errors
    /// Device failures.
    fn iota(&self, buf: &mut Self::Buffer<u32>, start: u32) -> Result<()>;

    /// Sorts `(keys[i], values[i])` pairs by key, ascending and **stable**, looking only
    /// at key bits `bits` (bits outside the range must be equal across keys for a full
    /// ordering; they are neither compared nor changed). `bits = 0..64` sorts fully.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `values.len() != keys.len()`,
    /// [`Error::InvalidBitRange`] for `bits` not within `0..=64` or reversed.
    fn sort_pairs(&self, keys: &mut Self::Buffer<u64>, values: &mut Self::Buffer<u32>, bits: Range<u32>) -> Result<()>;

    /// Exclusive prefix sum in CSR-offsets form: `output[0] = 0`,
    /// `output[i + 1] = output[i] + input[i]` (wrapping), so `output` has
    /// `input.len() + 1` elements and its last element is the total.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != input.len() + 1`.
    fn exclusive_scan(&self, input: &Self::Buffer<u32>, output: &mut Self::Buffer<u32>) -> Result<()>;

    /// Reduces `input` with `op` into `output[0]`. An empty input gives the identity.
    /// Floating-point sums are computed in a fixed order (deterministic per executor).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != 1`; [`Error::Unsupported`] where a
    /// backend lacks the type (f64 on some wgpu adapters).
    fn reduce<T: Element>(&self, input: &Self::Buffer<T>, op: ReduceOp, output: &mut Self::Buffer<T>) -> Result<()>;

    /// Stream compaction: copies the `input[i]` with `flags[i] != 0`, in order, to the
    /// front of `output`, and writes how many to `count[0]`. Elements of `output` past
    /// the count are unspecified.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `flags` or `output` differ in length from `input`
    /// or `count.len() != 1`.
    fn compact<T: Element>(
        &self,
        input: &Self::Buffer<T>,
        flags: &Self::Buffer<u32>,
        output: &mut Self::Buffer<T>,
        count: &mut Self::Buffer<u32>,
    ) -> Result<()>;

    /// `output[i] = input[indices[i]]`. Indices must be in bounds (unchecked on the
    /// device; [`check_indices`] validates host-side data).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != indices.len()`.
    fn gather<T: Element>(
        &self,
        input: &Self::Buffer<T>,
        indices: &Self::Buffer<u32>,
        output: &mut Self::Buffer<T>,
    ) -> Result<()>;

    /// `output[indices[i]] = input[i]`. Indices must be in bounds and distinct
    /// (a permutation or part of one).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `indices.len() != input.len()`.
    fn scatter<T: Element>(
        &self,
        input: &Self::Buffer<T>,
        indices: &Self::Buffer<u32>,
        output: &mut Self::Buffer<T>,
    ) -> Result<()>;

    /// 64-bit space-filling-curve keys of positions: `keys[i] = mapper.key_clamped(x[i], y[i], z[i])`.
    /// Positions outside the mapper's box are clamped to its faces (validate with
    /// [`crate::PositionsView::check_inside`] where that matters).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the four buffers differ in length;
    /// [`Error::Unsupported`] for f64 positions on a backend without f64.
    fn sfc_keys<T: Real>(
        &self,
        x: &Self::Buffer<T>,
        y: &Self::Buffer<T>,
        z: &Self::Buffer<T>,
        mapper: &KeyMapper<T, u64>,
        keys: &mut Self::Buffer<u64>,
    ) -> Result<()>;
}

// ---- argument checks shared by every implementation ------------------------------

/// Checks that an array has the length an operation requires.
///
/// # Errors
/// [`Error::LengthMismatch`].
pub fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual { Ok(()) } else { Err(Error::LengthMismatch { what, expected, actual }) }
}

/// Checks that `offset + len` fits in a buffer of `buffer_len` elements.
///
/// # Errors
/// [`Error::LengthMismatch`] naming the buffer length the range needs.
pub fn check_range(what: &'static str, buffer_len: usize, offset: usize, len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= buffer_len => Ok(()),
        _ => Err(Error::LengthMismatch { what, expected: offset.saturating_add(len), actual: buffer_len }),
    }
}

/// Checks a radix-sort bit range for keys of `key_bits` bits.
///
/// # Errors
/// [`Error::InvalidBitRange`].
pub fn check_bit_range(bits: &Range<u32>, key_bits: u32) -> Result<()> {
    if bits.start <= bits.end && bits.end <= key_bits {
        Ok(())
    } else {
        Err(Error::InvalidBitRange { start: bits.start, end: bits.end, key_bits })
    }
}

/// Checks host-side indices against the length of the array they index.
///
/// # Errors
/// [`Error::IndexOutOfBounds`] for the first offending index.
pub fn check_indices(what: &'static str, indices: &[u32], len: usize) -> Result<()> {
    match indices.iter().position(|&i| i as usize >= len) {
        None => Ok(()),
        Some(position) => Err(Error::IndexOutOfBounds { what, position, index: indices[position] as u64, len }),
    }
}

/// Checks the buffer lengths of [`Executor::sort_pairs`].
///
/// # Errors
/// As [`Executor::sort_pairs`].
pub fn check_sort_pairs(keys: usize, values: usize, bits: &Range<u32>) -> Result<()> {
    check_len("sort values", keys, values)?;
    check_bit_range(bits, 64)
}

/// Checks the buffer lengths of [`Executor::compact`].
///
/// # Errors
/// As [`Executor::compact`].
pub fn check_compact(input: usize, flags: usize, output: usize, count: usize) -> Result<()> {
    check_len("compaction flags", input, flags)?;
    check_len("compaction output", input, output)?;
    check_len("compaction count", 1, count)
}

/// Checks the buffer lengths of [`Executor::sfc_keys`].
///
/// # Errors
/// As [`Executor::sfc_keys`].
pub fn check_sfc_keys(x: usize, y: usize, z: usize, keys: usize) -> Result<()> {
    check_len("y", x, y)?;
    check_len("z", x, z)?;
    check_len("keys", x, keys)
}

/// Error for an operation a backend cannot perform.
pub fn unsupported(executor: &str, operation: &str, reason: &str) -> Error {
    Error::Unsupported { executor: executor.to_owned(), operation: operation.to_owned(), reason: reason.to_owned() }
}
