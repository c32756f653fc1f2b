//! The one error type of every orrery library.
//!
//! orrery validates user input once, at the public boundary (the constructors of
//! [`crate::ParticlesView`], [`crate::Aabb`], the key mappers, the `check_*` helpers
//! that every executor calls first). Executors trust validated input and report only
//! what a caller cannot foresee: a missing driver, a kernel that fails to compile,
//! memory that runs out. Every variant names the offending value.

use std::fmt;

/// Result alias used throughout orrery.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which coordinate axis a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Axis {
    /// The first axis.
    X,
    /// The second axis.
    Y,
    /// The third axis.
    Z,
}

impl Axis {
    /// The axis with index `i` (0, 1 or 2).
    ///
    /// # Panics
    /// Never for `i < 3`; callers only pass loop indices over three axes.
    pub const fn from_index(i: usize) -> Axis {
        match i {
            0 => Axis::X,
            1 => Axis::Y,
            _ => Axis::Z,
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        })
    }
}

/// Everything that can go wrong in orrery.
///
/// The enum is `#[non_exhaustive]`: later crates add variants for their own inputs.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input had fewer elements than the operation needs.
    #[error("{what} is empty: it needs at least {min} element(s)")]
    EmptyInput {
        /// What was empty (e.g. "positions").
        what: &'static str,
        /// How many elements the operation needs at least.
        min: usize,
    },

    /// A coordinate was NaN or infinite.
    #[error("non-finite coordinate: {axis} of point {index} is {value}")]
    NonFiniteCoordinate {
        /// Index of the point.
        index: usize,
        /// Axis of the offending coordinate.
        axis: Axis,
        /// The value, widened to f64.
        value: f64,
    },

    /// A non-finite value where a finite one is needed (a mass, a box bound, a scalar).
    #[error("non-finite value: {what} at index {index} is {value}")]
    NonFiniteValue {
        /// Which array or argument.
        what: &'static str,
        /// Index inside it (0 for a scalar).
        index: usize,
        /// The value, widened to f64.
        value: f64,
    },

    /// A result of finite input that the element type cannot hold: finite in exact
    /// arithmetic, but beyond the type's largest finite value (e.g. the radius of a ball
    /// whose points lie near `f32::MAX` on opposite sides of the origin).
    #[error("{what} at index {index} is {value:e}, beyond the largest finite {dtype} ({max:e})")]
    Overflow {
        /// Which result (e.g. "ball radius").
        what: &'static str,
        /// Index of the result (e.g. the ball).
        index: usize,
        /// The result as computed in f64 (infinite when it exceeds f64 too).
        value: f64,
        /// Name of the element type (e.g. "f32").
        dtype: &'static str,
        /// The type's largest finite value, widened to f64.
        max: f64,
    },

    /// Two arrays that must have the same length do not.
    #[error("length mismatch: {what} has {actual} element(s), expected {expected}")]
    LengthMismatch {
        /// Which array is off.
        what: &'static str,
        /// Its required length.
        expected: usize,
        /// Its actual length.
        actual: usize,
    },

    /// A point lies outside the bounding box it was declared to lie in.
    #[error(
        "point {index} at ({}, {}, {}) lies outside the box [{}, {}] x [{}, {}] x [{}, {}]",
        position[0], position[1], position[2],
        box_min[0], box_max[0], box_min[1], box_max[1], box_min[2], box_max[2]
    )]
    OutsideBox {
        /// Index of the point.
        index: usize,
        /// Its position, widened to f64.
        position: [f64; 3],
        /// Lower corner of the box.
        box_min: [f64; 3],
        /// Upper corner of the box.
        box_max: [f64; 3],
    },

    /// A bounding box whose bounds are not finite or not ordered.
    #[error("invalid box on axis {axis}: min {min} and max {max} ({reason})")]
    InvalidBox {
        /// The axis with bad bounds.
        axis: Axis,
        /// Lower bound on that axis.
        min: f64,
        /// Upper bound on that axis.
        max: f64,
        /// Why the bounds are rejected.
        reason: &'static str,
    },

    /// An integer coordinate does not fit the key's resolution.
    #[error(
        "integer coordinate {value} on axis {axis} overflows the key resolution: \
         {bits}-bit {curve} keys hold coordinates up to {max}"
    )]
    CoordinateOverflow {
        /// Axis of the coordinate.
        axis: Axis,
        /// The coordinate.
        value: u64,
        /// The largest coordinate the key holds.
        max: u64,
        /// Key width in bits.
        bits: u32,
        /// Curve name (e.g. "3D Hilbert").
        curve: &'static str,
    },

    /// A key that is not a valid key of the curve (bits above the key range are set).
    #[error("key {key:#x} is out of range for {bits}-bit {curve} keys (largest key {max:#x})")]
    KeyOutOfRange {
        /// The key.
        key: u64,
        /// The largest valid key.
        max: u64,
        /// Key width in bits.
        bits: u32,
        /// Curve name.
        curve: &'static str,
    },

    /// A tree level outside `0..=max`.
    #[error("level {level} is out of range: {what} has levels 0..={max}")]
    LevelOutOfRange {
        /// The level asked for.
        level: u32,
        /// The deepest level.
        max: u32,
        /// Which key or tree.
        what: &'static str,
    },

    /// More elements than 32-bit indices can address.
    #[error("{count} {what} exceed the 32-bit index limit of {max}")]
    TooManyPoints {
        /// How many were given.
        count: usize,
        /// The limit.
        max: usize,
        /// What was counted (e.g. "points").
        what: &'static str,
    },

    /// A bit range for a radix sort that is empty, reversed or wider than the key.
    #[error("invalid key bit range {start}..{end}: must satisfy start <= end <= {key_bits}")]
    InvalidBitRange {
        /// First bit sorted.
        start: u32,
        /// One past the last bit sorted.
        end: u32,
        /// Width of the key type.
        key_bits: u32,
    },

    /// An index array names an element past the end of the array it indexes.
    #[error("{what}[{position}] = {index} is out of bounds for length {len}")]
    IndexOutOfBounds {
        /// Which index array.
        what: &'static str,
        /// Position inside the index array.
        position: usize,
        /// The offending index.
        index: u64,
        /// Length of the indexed array.
        len: usize,
    },

    /// A Cornerstone leaf array (or a tree built on one) that breaks its invariants.
    #[error("invalid tree at boundary {index}: {reason}")]
    InvalidTree {
        /// The first offending boundary (or leaf) index.
        index: usize,
        /// Which invariant it breaks.
        reason: String,
    },

    /// Any other argument that breaks a documented precondition.
    #[error("invalid argument {what}: {reason}")]
    InvalidArgument {
        /// The argument.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// The executor cannot do this operation (e.g. f64 arithmetic on a WGSL adapter).
    #[error("{executor} does not support {operation}: {reason}")]
    Unsupported {
        /// Executor name.
        executor: String,
        /// The operation.
        operation: String,
        /// Why not.
        reason: String,
    },

    /// No usable device or driver (libcuda missing, no wgpu adapter).
    #[error("{backend} is unavailable: {reason}")]
    DeviceUnavailable {
        /// "cuda" or "wgpu".
        backend: &'static str,
        /// What was missing.
        reason: String,
    },

    /// A kernel failed to compile; carries the compiler's log.
    #[error("kernel module {module} failed to compile for {target}:\n{log}")]
    KernelCompile {
        /// Module name.
        module: String,
        /// Target (e.g. "compute_90", "WGSL").
        target: String,
        /// The compiler's log.
        log: String,
    },

    /// Device memory ran out.
    #[error("{backend} out of device memory: {requested_bytes} bytes requested")]
    OutOfDeviceMemory {
        /// "cuda" or "wgpu".
        backend: &'static str,
        /// Size of the failed allocation.
        requested_bytes: u64,
    },

    /// A buffer larger than the device allows.
    #[error("{backend} buffer of {requested_bytes} bytes exceeds the device limit of {max_bytes} bytes")]
    BufferTooLarge {
        /// "cuda" or "wgpu".
        backend: &'static str,
        /// Size asked for.
        requested_bytes: u64,
        /// The adapter's limit.
        max_bytes: u64,
    },

    /// A kernel launch whose arguments do not match the kernel's declaration, or a
    /// declaration that does not match the kernel's CUDA signature or WGSL bindings.
    #[error("kernel {module}::{entry}: {reason}")]
    KernelSignature {
        /// Module name.
        module: String,
        /// Entry point.
        entry: String,
        /// What does not match.
        reason: String,
    },

    /// Something a recording cannot hold (a host read, an allocation), or a replay whose
    /// buffers are gone.
    #[error("{backend} recording: {reason}")]
    Recording {
        /// "cuda", "wgpu" or "cpu".
        backend: &'static str,
        /// What happened.
        reason: String,
    },

    /// Any other device failure, with the driver's message.
    #[error("{backend} device error during {operation}: {message}")]
    Device {
        /// "cuda" or "wgpu".
        backend: &'static str,
        /// What was being done.
        operation: String,
        /// The driver's message.
        message: String,
    },
}
