//! The Executor trait: the device every orrery algorithm runs on.
//!
//! An executor owns memory ([`Executor::Buffer`] of any [`Storage`] type), moves data
//! between host and device, keeps time, and provides the data-parallel primitives that
//! tree builds and force walks are written in: a stable radix sort of `(u64 key, u32
//! value)` pairs, exclusive and inclusive scans, reductions, stream compaction, gather
//! and scatter, fill, iota, space-filling-curve keys, vectorised lower and upper bounds,
//! segmented (CSR) scans, reductions and top-k, and histograms.
//!
//! Every primitive takes views ([`crate::view`]): `&buf`, `&mut buf`, or
//! `buf.slice(a..b)?`. Scans and compactions also take a [`DeviceCount`], a length that
//! lives on the device; [`Executor::read_async`] reads a step's status block without
//! waiting; [`Executor::record`] and [`Executor::replay`] capture and rerun a launch
//! sequence; [`Executor::fork`] gives a second stream, ordered by events. ADR 0011 has
//! the reasons.
//!
//! # Contract
//! - Operations are enqueued in order on the executor's stream; a later operation sees
//!   the results of earlier ones. Only [`Executor::download`], [`Executor::read`],
//!   [`Executor::wait`] and [`Executor::synchronize`] wait for the device.
//! - Device-resident inputs that cannot be validated without a host read (CSR offsets,
//!   counts, indices) have a defined meaning for every value ([`segment_bounds`],
//!   [`DeviceCount`]): a bad value gives a defined, executor-independent answer, never a
//!   fault.
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

use crate::element::{Element, Real, Storage};
use crate::error::{Error, Result};
use crate::sfc::KeyMapper;
use crate::view::{View, ViewMut};

/// Buffers grow to `len * GROWTH_NUMERATOR / GROWTH_DENOMINATOR` (25% headroom).
pub const GROWTH_NUMERATOR: usize = 5;
/// See [`GROWTH_NUMERATOR`].
pub const GROWTH_DENOMINATOR: usize = 4;

/// The capacity a buffer grows to when `len` elements no longer fit.
pub const fn grown_capacity(len: usize) -> usize {
    len.saturating_mul(GROWTH_NUMERATOR) / GROWTH_DENOMINATOR
}

/// A typed array in an executor's memory. Its sub-ranges are views
/// ([`crate::Slice::slice`]).
pub trait DeviceBuffer<T>: Send + Sync {
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

    /// Combines two values. Min and max keep `a` unless `b` compares strictly below
    /// (above) it, so among equal values (`-0.0` and `+0.0`) the first wins, and a fold
    /// that starts from the identity never takes a NaN in (a NaN compares neither below
    /// nor above); `apply(NaN, x)` itself returns the NaN.
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

/// What a device offers, as typed values: algorithm crates size their launches and pick
/// their paths from these instead of branching on [`Executor::kind`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceLimits {
    /// Threads that run in lockstep and share subgroup (warp) operations; `None` where
    /// kernels may not rely on subgroups (the CPU; wgpu without verified subgroups).
    pub subgroup_size: Option<u32>,
    /// Most threads in one block (workgroup).
    pub max_threads_per_block: u32,
    /// Bytes of shared (workgroup) memory one block may use, static and dynamic together.
    pub max_shared_bytes_per_block: u32,
    /// Streaming multiprocessors (CUDA), an estimate of compute units (wgpu reports none:
    /// 1), or worker threads (CPU): what a persistent grid is sized by.
    pub compute_units: u32,
    /// Whether kernels may do f64 arithmetic (f64 *storage* works everywhere).
    pub f64: bool,
    /// Largest buffer in bytes.
    pub max_buffer_bytes: u64,
    /// Byte alignment a view's start needs to be bound without an element offset (1 on
    /// CUDA and the CPU; 256 on most wgpu adapters). Views at other offsets still work:
    /// the kernel receives the remainder as an element offset (see [`crate::gpu`]).
    pub view_alignment: u32,
    /// Most blocks of one launch.
    pub max_blocks: u64,
    /// Whether [`Executor::record`] captures launch sequences for [`Executor::replay`].
    pub replay: bool,
}

impl Default for DeviceLimits {
    /// The most conservative device (no subgroups, one thread per block, no shared
    /// memory, no f64 arithmetic, no replay, 4-byte view alignment). `DeviceLimits` is
    /// `#[non_exhaustive]`: executors outside this crate start from this value and set
    /// the fields they know.
    fn default() -> Self {
        Self {
            subgroup_size: None,
            max_threads_per_block: 1,
            max_shared_bytes_per_block: 0,
            compute_units: 1,
            f64: false,
            max_buffer_bytes: 0,
            view_alignment: 4,
            max_blocks: 0,
            replay: false,
        }
    }
}

/// Whether a scan includes each element in its own result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `out[i] = in[0] + ... + in[i - 1]` (0 for the first element).
    Exclusive,
    /// `out[i] = in[0] + ... + in[i]`.
    Inclusive,
}

/// Which end of the order [`Executor::segmented_top_k`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// The `k` smallest `(key, index)` pairs, ascending.
    Smallest,
    /// The `k` largest keys, descending by key and ascending by index among equal keys.
    Largest,
}

/// A length that lives on the device: one `u32` slot (a compaction's count, the last
/// element of a scan) with a host-side upper bound. Primitives that accept it work on
/// `min(slot, bound)` elements; their launches are sized for `bound` and return early
/// past the live count, so no host read is needed to chain them.
pub struct DeviceCount<'a, E: Executor + ?Sized> {
    slot: View<'a, u32, E::Buffer<u32>>,
    bound: usize,
}

impl<E: Executor + ?Sized> Clone for DeviceCount<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for DeviceCount<'_, E> {}

impl<'a, E: Executor + ?Sized> DeviceCount<'a, E> {
    /// The count in `slot` (a one-element view), promised to be at most `bound`; a larger
    /// device value is clamped to `bound`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `slot` does not have exactly one element;
    /// [`Error::TooManyPoints`] for a bound beyond 32-bit counts.
    pub fn new(slot: impl Into<View<'a, u32, E::Buffer<u32>>>, bound: usize) -> Result<Self> {
        let slot = slot.into();
        check_len("device count slot", 1, slot.len())?;
        if bound > u32::MAX as usize {
            return Err(Error::TooManyPoints { count: bound, max: u32::MAX as usize, what: "device count bound" });
        }
        Ok(Self { slot, bound })
    }

    /// The slot holding the count.
    pub fn slot(&self) -> View<'a, u32, E::Buffer<u32>> {
        self.slot
    }

    /// The host-side upper bound.
    pub fn bound(&self) -> usize {
        self.bound
    }
}

/// Which executor family an executor belongs to. Informational (names, reports): code
/// that chooses a path asks [`Executor::limits`] instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExecutorKind {
    /// The CPU (rayon) reference executor.
    Cpu,
    /// CUDA through cudarc and NVRTC.
    Cuda,
    /// wgpu (Vulkan, Metal, DX12).
    Wgpu,
}

/// Scratch an executor keeps for its primitives, sized ahead of [`Executor::record`]
/// (nothing may allocate while a sequence is recorded): the largest input each family
/// of primitives will see. Zero means "not used".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reserve {
    /// Pairs of the largest [`Executor::sort_pairs`].
    pub sort_pairs: usize,
    /// Elements of the largest scan or compaction (plain, counted or segmented).
    pub scan: usize,
    /// Elements of the largest reduction (plain or segmented).
    pub reduce: usize,
    /// Segments of the largest segmented primitive.
    pub segments: usize,
    /// Elements of the largest histogram input, and its most bins.
    pub histogram: (usize, usize),
}

/// Shorthand: a readable view of `E`'s buffer of `T`.
pub type ViewOf<'a, E, T> = View<'a, T, <E as Executor>::Buffer<T>>;
/// Shorthand: a writable view of `E`'s buffer of `T`.
pub type ViewMutOf<'a, E, T> = ViewMut<'a, T, <E as Executor>::Buffer<T>>;

/// The device every orrery algorithm runs on. See the module documentation for the
/// contract every implementation keeps.
pub trait Executor: Send + Sync {
    /// A typed array in this executor's memory.
    type Buffer<T: Storage>: DeviceBuffer<T> + 'static;
    /// A point in this executor's timeline, for [`Executor::elapsed`].
    type Marker;
    /// A copy to the host in flight ([`Executor::read_async`]).
    type Pending<T: Storage>: Send;
    /// A point in one stream's work that another stream can wait for.
    type Event: Send + Sync;
    /// A launch sequence captured by [`Executor::record`].
    type Recording: Send;

    /// The executor family (names and reports; choose paths by [`Executor::limits`]).
    fn kind(&self) -> ExecutorKind;

    /// A human-readable name including the device (e.g. "cuda:0 NVIDIA H200").
    fn name(&self) -> String;

    /// What the device offers.
    fn limits(&self) -> DeviceLimits;

    // ---- memory -------------------------------------------------------------------

    /// A buffer of `len` elements with unspecified contents (the next kernel writes
    /// them). Capacity is exactly `len`.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`], [`Error::BufferTooLarge`]; [`Error::Unsupported`]
    /// on a GPU for a type whose size is not a multiple of 4 bytes.
    fn alloc<T: Storage>(&self, len: usize) -> Result<Self::Buffer<T>>;

    /// A buffer holding a copy of `data`.
    ///
    /// # Errors
    /// As [`Executor::alloc`].
    fn upload<T: Storage>(&self, data: &[T]) -> Result<Self::Buffer<T>>;

    /// Copies `data` into `dst[offset..offset + data.len()]`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the range exceeds `dst.len()`.
    fn write<T: Storage>(&self, dst: &mut Self::Buffer<T>, offset: usize, data: &[T]) -> Result<()>;

    /// Copies `src[offset..offset + out.len()]` into `out`, waiting for pending work.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the range exceeds `src.len()`.
    fn read<T: Storage>(&self, src: &Self::Buffer<T>, offset: usize, out: &mut [T]) -> Result<()>;

    /// The whole buffer as a `Vec`, waiting for pending work.
    ///
    /// # Errors
    /// Device failures only.
    fn download<T: Storage>(&self, src: &Self::Buffer<T>) -> Result<Vec<T>> {
        let mut out = bytemuck::zeroed_vec(src.len());
        self.read(src, 0, &mut out)?;
        Ok(out)
    }

    /// Starts copying `src` to the host after the work enqueued so far, without waiting:
    /// the status block of a step is read this way, once per step, while the next
    /// step's work is already being enqueued. [`Executor::wait`] returns the values.
    ///
    /// # Errors
    /// Device failures; [`Error::Recording`] while recording (a host read cannot be part
    /// of a replayed sequence).
    fn read_async<'a, T: Storage>(&self, src: impl Into<ViewOf<'a, Self, T>>) -> Result<Self::Pending<T>>;

    /// Waits for a [`Executor::read_async`] (only for its copy, not for later work) and
    /// returns the values.
    ///
    /// # Errors
    /// Device failures.
    fn wait<T: Storage>(&self, pending: Self::Pending<T>) -> Result<Vec<T>>;

    /// Sets the length of `buf` to `len`. Elements `0..min(old, len)` are kept; new
    /// elements are unspecified. Reallocates to [`grown_capacity`]`(len)` only when
    /// `len` exceeds the capacity; never shrinks the allocation.
    ///
    /// # Errors
    /// As [`Executor::alloc`].
    fn resize<T: Storage>(&self, buf: &mut Self::Buffer<T>, len: usize) -> Result<()>;

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

    // ---- streams, recording ---------------------------------------------------------

    /// An executor on the same device with a stream of its own (and scratch of its own),
    /// for stages that can overlap. Buffers of one may be used by the other; order
    /// between the two streams only through [`Executor::signal`] and
    /// [`Executor::wait_for`]. Executors without concurrent queues (the CPU, wgpu) return
    /// a handle on the same stream, which keeps every ordering trivially.
    ///
    /// # Errors
    /// Device failures.
    fn fork(&self) -> Result<Self>
    where
        Self: Sized;

    /// An event after the work enqueued so far on this executor's stream.
    ///
    /// # Errors
    /// Device failures.
    fn signal(&self) -> Result<Self::Event>;

    /// Makes later work on this stream wait for `event` (of this executor or a fork),
    /// without blocking the host.
    ///
    /// # Errors
    /// Device failures.
    fn wait_for(&self, event: &Self::Event) -> Result<()>;

    /// Grows the primitives' scratch to hold `reserve`, so that a recorded sequence of
    /// primitives up to those sizes allocates nothing.
    ///
    /// # Errors
    /// As [`Executor::alloc`].
    fn reserve(&self, reserve: &Reserve) -> Result<()>;

    /// Runs `body` and captures the work it enqueues on this executor instead of running
    /// it; [`Executor::replay`] then runs the captured sequence, as often as wanted, with
    /// the same buffers and sizes (device counts are how sizes vary between replays).
    /// Inside `body` nothing may allocate (reserve scratch first), read to the host or
    /// synchronise: those return [`Error::Recording`]. Buffers the recording uses stay
    /// alive while it does; replaying after one of them was dropped or reallocated is
    /// [`Error::Recording`], never a fault.
    ///
    /// # Errors
    /// [`Error::Unsupported`] where [`DeviceLimits::replay`] is false; the first error of
    /// `body`; [`Error::Recording`].
    fn record(&self, body: &mut dyn FnMut() -> Result<()>) -> Result<Self::Recording>;

    /// Enqueues a recorded sequence.
    ///
    /// # Errors
    /// [`Error::Recording`] when a buffer it uses is gone; device failures.
    fn replay(&self, recording: &Self::Recording) -> Result<()>;

    // ---- data movement --------------------------------------------------------------

    /// Copies `src` into `dst` on the device.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the lengths differ.
    fn copy<'a, T: Storage>(
        &self,
        src: impl Into<ViewOf<'a, Self, T>>,
        dst: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    /// Sets every element of `dst` to `value`.
    ///
    /// # Errors
    /// Device failures.
    fn fill<'a, T: Storage>(&self, dst: impl Into<ViewMutOf<'a, Self, T>>, value: T) -> Result<()>;

    /// Writes `start, start + 1, ...` into `dst` (wrapping).
    ///
    /// # Errors
    /// Device failures.
    fn iota<'a>(&self, dst: impl Into<ViewMutOf<'a, Self, u32>>, start: u32) -> Result<()>;

    /// `output[i] = input[indices[i]]`. Indices must be in bounds (unchecked on the
    /// device, where an out-of-bounds index reads an unspecified value of the buffer or
    /// zero, never faults; [`check_indices`] validates host-side data).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != indices.len()`.
    fn gather<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    /// `output[indices[i]] = input[i]`. Indices must be in bounds and distinct (a
    /// permutation or part of one); on the device an out-of-bounds index is skipped.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `indices.len() != input.len()`.
    fn scatter<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    // ---- sorting and searching --------------------------------------------------------

    /// Sorts `(keys[i], values[i])` pairs by key, ascending and **stable**, looking only
    /// at key bits `bits` (bits outside the range must be equal across keys for a full
    /// ordering; they are neither compared nor changed). `bits = 0..64` sorts fully.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `values.len() != keys.len()`,
    /// [`Error::InvalidBitRange`] for `bits` not within `0..=64` or reversed.
    fn sort_pairs<'a>(
        &self,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
        values: impl Into<ViewMutOf<'a, Self, u32>>,
        bits: Range<u32>,
    ) -> Result<()>;

    /// For every query, the index of the first element of `sorted` that is not less
    /// than it (`sorted.len()` when there is none), comparing by [`Element::order_key`].
    /// Every executor runs the same binary search ([`lower_bound_one`]), so the result is
    /// the same function of the input even when `sorted` is not sorted.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != queries.len()`;
    /// [`Error::TooManyPoints`] beyond 32-bit indices.
    fn lower_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// As [`Executor::lower_bound`], for the first element greater than the query
    /// ([`upper_bound_one`]).
    ///
    /// # Errors
    /// As [`Executor::lower_bound`].
    fn upper_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// Per segment `s` (the elements `offsets[s]..offsets[s + 1]` of `keys`, see
    /// [`segment_bounds`]), the positions (indices into `keys`) of its `k` first
    /// elements in `order`, ties broken by the smaller position, written to
    /// `indices[s * k..(s + 1) * k]` in that order, and their keys to `top_keys`. A
    /// segment with fewer than `k` elements pads with position `u32::MAX` and key
    /// `T::HIGHEST` (Smallest) or `T::LOWEST` (Largest). Keys compare by
    /// [`Element::order_key`].
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `indices` and `top_keys` hold `segments * k`
    /// elements; [`Error::InvalidArgument`] for `k = 0` or `k > 1024`.
    fn segmented_top_k<'a, T: Element>(
        &self,
        keys: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        k: u32,
        order: Order,
        indices: impl Into<ViewMutOf<'a, Self, u32>>,
        top_keys: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    /// Counts of the values in `0..bins` where `bins = output.len()`: `output[b]` =
    /// number of `values[i] == b`; values `>= bins` are not counted. `output` is
    /// overwritten.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for zero bins.
    fn histogram<'a>(
        &self,
        values: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    // ---- scans and reductions -------------------------------------------------------

    /// Exclusive prefix sum in CSR-offsets form: `output[0] = 0`,
    /// `output[i + 1] = output[i] + input[i]` (wrapping), so `output` has
    /// `input.len() + 1` elements and its last element is the total.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != input.len() + 1`.
    fn exclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// [`Executor::exclusive_scan`] of the first `c = count` elements of `input` (a view
    /// of `count.bound()` elements): `output[0..=c]` as for a scan of `c` elements (the
    /// total at `output[c]`); `output` past `c` is left as it was.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `input` has `count.bound()` and `output`
    /// `count.bound() + 1` elements.
    fn exclusive_scan_counted<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// Inclusive prefix sum: `output[i] = input[0] + ... + input[i]` (wrapping).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the lengths differ.
    fn inclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// A scan restarted at every segment start: for `i` in segment `s`, the sum of the
    /// elements of `s` before `i` (exclusive) or up to `i` (inclusive); elements outside
    /// every segment are set to 0. Element `i` is in segment `s = upper_bound_one(offsets,
    /// i) - 1` when `s` is a segment and `i` lies in its [`segment_bounds`] (for CSR
    /// offsets: `offsets[s] <= i < offsets[s + 1]`), which defines the result for any
    /// offsets.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != input.len()`; [`Error::EmptyInput`]
    /// for empty `offsets`.
    fn segmented_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        kind: ScanKind,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// Reduces `input` with `op` into `output[0]`. An empty input gives the identity.
    /// Floating-point sums are computed in a fixed order (deterministic per executor).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `output.len() != 1`; [`Error::Unsupported`] where a
    /// backend lacks the type (f64 on some wgpu adapters).
    fn reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    /// Per segment `s` ([`segment_bounds`]), the reduction of its elements with `op`
    /// into `output[s]` (the identity for an empty segment). Each segment is reduced in
    /// a fixed order (tiles of [`SEGMENT_TILE`] elements left to right, each tile a fixed
    /// tree), so float results are reproducible run to run and thread count to thread
    /// count on each executor.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `output.len() + 1 == offsets.len()`;
    /// [`Error::Unsupported`] as for [`Executor::reduce`].
    fn segmented_reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()>;

    /// Stream compaction: copies the `input[i]` with `flags[i] != 0`, in order, to the
    /// front of `output`, and writes how many to `count[0]`. Elements of `output` past
    /// the count are unspecified.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when `flags` or `output` differ in length from `input`
    /// or `count.len() != 1`.
    fn compact<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// [`Executor::compact`] of the first `live` elements of `input` and `flags` (views
    /// of `live.bound()` elements).
    ///
    /// # Errors
    /// As [`Executor::compact`], with `live.bound()` for the input length.
    fn compact_counted<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        live: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;

    /// 64-bit space-filling-curve keys of positions: `keys[i] = mapper.key_clamped(x[i], y[i], z[i])`.
    /// Positions outside the mapper's box are clamped to its faces (validate with
    /// [`crate::PositionsView::check_inside`] where that matters).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] when the four views differ in length;
    /// [`Error::Unsupported`] for f64 positions on a backend without f64.
    fn sfc_keys<'a, T: Real>(
        &self,
        x: impl Into<ViewOf<'a, Self, T>>,
        y: impl Into<ViewOf<'a, Self, T>>,
        z: impl Into<ViewOf<'a, Self, T>>,
        mapper: &KeyMapper<T, u64>,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
    ) -> Result<()>;
}

/// Elements per tile of a segmented reduction (see [`Executor::segmented_reduce`]).
pub const SEGMENT_TILE: usize = 1024;

/// The elements `start..end` of segment `s` of a CSR `offsets` array over `n` elements,
/// as every executor reads them from device memory it cannot validate: `start =
/// min(offsets[s], n)`, `end = min(max(offsets[s + 1], start), n)`. So decreasing offsets
/// give empty segments and offsets past the end are cut: a defined answer, never a fault.
pub fn segment_bounds(offsets: &[u32], s: usize, n: usize) -> (usize, usize) {
    let start = (offsets[s] as usize).min(n);
    let end = (offsets[s + 1] as usize).max(start).min(n);
    (start, end)
}

/// The binary search every executor's [`Executor::lower_bound`] runs for one query.
pub fn lower_bound_one<T: Element>(sorted: &[T], query: T) -> u32 {
    let q = query.order_key();
    search(sorted, |v| v.order_key() < q)
}

/// The binary search every executor's [`Executor::upper_bound`] runs for one query.
pub fn upper_bound_one<T: Element>(sorted: &[T], query: T) -> u32 {
    let q = query.order_key();
    search(sorted, |v| v.order_key() <= q)
}

/// First index where `before` is false, by halving (`first`, `count`): the loop the
/// kernels run, so unsorted input gives the same index everywhere.
fn search<T: Copy>(sorted: &[T], before: impl Fn(T) -> bool) -> u32 {
    let mut first = 0usize;
    let mut count = sorted.len();
    while count > 0 {
        let step = count / 2;
        let probe = first + step;
        if before(sorted[probe]) {
            first = probe + 1;
            count -= step + 1;
        } else {
            count = step;
        }
    }
    first as u32
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

/// Most `k` of [`Executor::segmented_top_k`].
pub const MAX_TOP_K: u32 = 1024;

/// Rejects element counts that do not fit 32-bit indices.
///
/// # Errors
/// [`Error::TooManyPoints`].
pub fn check_count(what: &'static str, n: usize) -> Result<()> {
    if n > u32::MAX as usize { Err(Error::TooManyPoints { count: n, max: u32::MAX as usize, what }) } else { Ok(()) }
}

/// The number of segments of a CSR offsets array of `offsets` elements.
///
/// # Errors
/// [`Error::EmptyInput`] for no offsets at all.
pub fn check_segments(offsets: usize) -> Result<usize> {
    if offsets == 0 {
        return Err(Error::EmptyInput { what: "segment offsets", min: 1 });
    }
    Ok(offsets - 1)
}

/// Checks the lengths of [`Executor::lower_bound`] / [`Executor::upper_bound`].
///
/// # Errors
/// As [`Executor::lower_bound`].
pub fn check_bounds(sorted: usize, queries: usize, output: usize) -> Result<()> {
    check_len("bound output", queries, output)?;
    check_count("sorted array", sorted)
}

/// Checks the bins of [`Executor::histogram`].
///
/// # Errors
/// As [`Executor::histogram`].
pub fn check_histogram(bins: usize) -> Result<()> {
    if bins == 0 {
        return Err(Error::InvalidArgument { what: "histogram bins", reason: "at least one bin is needed".into() });
    }
    Ok(())
}

/// Checks [`Executor::segmented_scan`]; returns the number of segments.
///
/// # Errors
/// As [`Executor::segmented_scan`]; [`Error::TooManyPoints`] for inputs or offsets past
/// 32-bit counts.
pub fn check_segmented_scan(input: usize, offsets: usize, output: usize) -> Result<usize> {
    check_len("segmented scan output", input, output)?;
    let segments = check_segments(offsets)?;
    check_count("segmented scan input", input)?;
    check_count("segment offsets", offsets)?;
    Ok(segments)
}

/// Checks [`Executor::segmented_reduce`]; returns the number of segments.
///
/// # Errors
/// As [`Executor::segmented_reduce`].
pub fn check_segmented_reduce(input: usize, offsets: usize, output: usize) -> Result<usize> {
    let segments = check_segments(offsets)?;
    check_len("segmented reduction output", segments, output)?;
    check_count("segmented reduction input", input)?;
    Ok(segments)
}

/// Checks [`Executor::segmented_top_k`]; returns the number of segments.
///
/// # Errors
/// As [`Executor::segmented_top_k`].
pub fn check_top_k(keys: usize, offsets: usize, k: u32, indices: usize, top_keys: usize) -> Result<usize> {
    if k == 0 || k > MAX_TOP_K {
        return Err(Error::InvalidArgument { what: "k", reason: format!("{k} is not within 1..={MAX_TOP_K}") });
    }
    let segments = check_segments(offsets)?;
    let slots = segments.checked_mul(k as usize).ok_or(Error::TooManyPoints {
        count: usize::MAX,
        max: u32::MAX as usize,
        what: "top-k slots",
    })?;
    check_len("top-k indices", slots, indices)?;
    check_len("top-k keys", slots, top_keys)?;
    check_count("top-k keys", keys)?;
    Ok(segments)
}

/// Error for an operation a backend cannot perform.
pub fn unsupported(executor: &str, operation: &str, reason: &str) -> Error {
    Error::Unsupported { executor: executor.to_owned(), operation: operation.to_owned(), reason: reason.to_owned() }
}
