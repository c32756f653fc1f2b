//! Kernel launches shared by the GPU executors, so an algorithm's GPU orchestration
//! (its level loop, buffer plan and convergence flags) is written once for CUDA and
//! wgpu.
//!
//! A [`KernelSource`] carries one module twice: CUDA C (compiled by NVRTC) and WGSL,
//! plus compile-time [`Define`]s. Both define the same entry points with the same
//! argument order, following one convention:
//!
//! - Arguments are buffers first, then scalars.
//! - CUDA: `extern "C" __global__ void entry(const T0* in, T1* out, ..., u32 s0, float
//!   s1, ...)`: a buffer the kernel only reads is a `const` pointer, one it writes is not;
//!   scalars are passed by value (`U64` as `unsigned long long`). A view's pointer
//!   already points at its first element.
//! - WGSL: buffer `i` is `@group(0) @binding(i)` (`var<storage, read>` for a buffer the
//!   kernel only reads, `var<storage, read_write>` otherwise); all scalars together are
//!   one `var<uniform> params: Params` at `@binding(number of buffers)`, a struct whose
//!   fields follow the scalar order (`U64` as `vec2<u32>`, low word first). A view that
//!   does not start at an aligned byte offset ([`crate::DeviceLimits::view_alignment`])
//!   is bound from the aligned offset below it and the kernel receives the remaining
//!   element offset in a `u32` field named `off_<binding variable>` of `Params`, which
//!   the executor fills (it is not one of the scalars): a kernel that declares such
//!   fields accepts any view; one that does not accepts aligned views only and reports
//!   an [`crate::Error::KernelSignature`] otherwise. The entry point is declared
//!   `@compute @workgroup_size(WORKGROUP_SIZE)` with `override WORKGROUP_SIZE: u32;`,
//!   which the executor sets to the launch's threads; dynamic shared memory is the
//!   override `DYNAMIC_SHARED_WORDS` (size a `var<workgroup>` array with it).
//! - Defines: CUDA gets `-DNAME=VALUE`; WGSL gets `const NAME = VALUE;` lines before the
//!   source, and `//#if NAME` sees them. Both module caches key on them.
//! - The grid is [`Grid::Blocks`] blocks or [`Grid::Indirect`] (the count read from a
//!   device buffer). CUDA launches them 1D; wgpu spreads them over a 2D dispatch when
//!   they exceed 65535, so WGSL kernels compute their linear block id as `wid.x + wid.y *
//!   num_workgroups.x` and return when it is `>= blocks`. An indirect launch's buffer
//!   holds [`INDIRECT_ARGS_WORDS`] words `[x, y, z, blocks]`
//!   ([`GpuExecutor::indirect_args`] writes them from a device count); wgpu dispatches
//!   `x * y * z` workgroups, CUDA launches `max_blocks` blocks, so a kernel launched
//!   indirectly takes the args buffer and returns when its block id is `>= args[3]`.
//!   A launch of zero blocks does nothing.
//! - WGSL sources may use the executor's preprocessor: `//#if SUBGROUP` ... `//#else`
//!   ... `//#endif` (subgroup operations present and verified on the adapter) and
//!   `//#include core/common` / `//#include core/wg_scan` (shared helpers).
//! - Buffers belong to the executor (and its forks) that made them.
//!
//! # Typed kernels
//! [`kernels!`](crate::kernels) declares entry points once and generates a typed
//! launcher per entry: the Rust compiler checks every call's argument count and types,
//! and the executor checks the declaration once, at first use, against the CUDA
//! signature (parameter count, pointer or value, `const`-ness, element and scalar sizes:
//! [`check_cuda_signature`] and the driver's parameter table) and against the WGSL
//! bindings (count, read or read-write, scalar fields). A mismatch is an
//! [`crate::Error::KernelSignature`] before anything reaches the driver.
//!
//! ```
//! use orrery_core::{gpu::KernelSource, kernels};
//! const MODULE: KernelSource = KernelSource::new("demo/scale", "/* CUDA */", "/* WGSL */");
//! kernels! {
//!     module = MODULE;
//!     /// `out[i] = in[i] * factor` for `i < n`.
//!     pub fn scale(read input: f32, write output: f32, scalar n: u32, scalar factor: f32);
//! }
//! ```

use std::ops::Range;

use crate::element::Storage;
use crate::error::{Error, Result};
use crate::executor::{DeviceCount, Executor, ViewMutOf, ViewOf};
use crate::view::{View, ViewMut};

/// One compile-time definition of a [`KernelSource`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Define {
    /// The name (a C / WGSL identifier).
    pub name: &'static str,
    /// The value (a number or an identifier; `""` defines the name with no value).
    pub value: &'static str,
}

/// One kernel module in both GPU languages.
#[derive(Debug, Clone, Copy)]
pub struct KernelSource {
    /// Module name, unique in the workspace (e.g. "core/primitives"); keys the caches.
    pub name: &'static str,
    /// CUDA C source.
    pub cuda: &'static str,
    /// WGSL source.
    pub wgsl: &'static str,
    /// Compile-time definitions, for both languages (part of both cache keys).
    pub defines: &'static [Define],
}

impl KernelSource {
    /// A module without defines.
    pub const fn new(name: &'static str, cuda: &'static str, wgsl: &'static str) -> Self {
        Self { name, cuda, wgsl, defines: &[] }
    }

    /// The same module with `defines` (a new cache entry in both executors).
    #[must_use]
    pub const fn with_defines(self, defines: &'static [Define]) -> Self {
        Self { defines, ..self }
    }

    /// The defines as NVRTC options (`-DNAME=VALUE`).
    pub fn cuda_options(&self) -> Vec<String> {
        self.defines
            .iter()
            .map(|d| if d.value.is_empty() { format!("-D{}", d.name) } else { format!("-D{}={}", d.name, d.value) })
            .collect()
    }

    /// The WGSL text with the defines' `const` lines before it (defines without a value
    /// only reach `//#if`).
    pub fn wgsl_with_defines(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        for d in self.defines.iter().filter(|d| !d.value.is_empty()) {
            let _ = writeln!(out, "const {} = {};", d.name, d.value);
        }
        out.push_str(self.wgsl);
        out
    }

    /// The defines as `NAME` or `NAME=VALUE` strings, sorted (a cache-key component).
    pub fn define_key(&self) -> String {
        let mut parts: Vec<String> = self
            .defines
            .iter()
            .map(|d| if d.value.is_empty() { d.name.to_owned() } else { format!("{}={}", d.name, d.value) })
            .collect();
        parts.sort_unstable();
        parts.join(",")
    }
}

/// The grid of one launch in the simplest form: `blocks` blocks of `threads` threads.
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

/// Words of an indirect launch's argument buffer: `[x, y, z, blocks]`.
pub const INDIRECT_ARGS_WORDS: usize = 4;

/// How many blocks a launch runs.
pub enum Grid<'a, E: Executor + ?Sized> {
    /// A number known on the host.
    Blocks(u32),
    /// A number read from the device when the launch runs: `args` holds
    /// [`INDIRECT_ARGS_WORDS`] words (see the module documentation); at most
    /// `max_blocks` run.
    Indirect {
        /// The argument words.
        args: ViewOf<'a, E, u32>,
        /// Most blocks the launch may need (CUDA launches this many).
        max_blocks: u32,
    },
}

impl<E: Executor + ?Sized> Clone for Grid<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for Grid<'_, E> {}

/// Everything about a launch but its arguments.
pub struct LaunchConfig<'a, E: Executor + ?Sized> {
    /// The blocks.
    pub grid: Grid<'a, E>,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block, in bytes (CUDA: the launch's dynamic shared
    /// memory; WGSL: the override `DYNAMIC_SHARED_WORDS = bytes / 4`).
    pub shared_bytes: u32,
}

impl<E: Executor + ?Sized> Clone for LaunchConfig<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E: Executor + ?Sized> Copy for LaunchConfig<'_, E> {}

impl<'a, E: Executor + ?Sized> LaunchConfig<'a, E> {
    /// `blocks` blocks of `threads` threads.
    pub fn blocks(blocks: u32, threads: u32) -> Self {
        Self { grid: Grid::Blocks(blocks), threads, shared_bytes: 0 }
    }

    /// Enough blocks of `threads` threads for one thread per item.
    pub fn per_item(items: usize, threads: u32) -> Self {
        Self::blocks(Launch::per_item(items, threads).blocks, threads)
    }

    /// An indirect launch of at most `max_blocks` blocks.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `args` holds [`INDIRECT_ARGS_WORDS`] words.
    pub fn indirect(args: impl Into<ViewOf<'a, E, u32>>, max_blocks: u32, threads: u32) -> Result<Self> {
        let args = args.into();
        crate::executor::check_len("indirect launch arguments", INDIRECT_ARGS_WORDS, args.len())?;
        Ok(Self { grid: Grid::Indirect { args, max_blocks }, threads, shared_bytes: 0 })
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    #[must_use]
    pub fn with_shared_bytes(self, bytes: u32) -> Self {
        Self { shared_bytes: bytes, ..self }
    }
}

impl<E: Executor + ?Sized> From<Launch> for LaunchConfig<'_, E> {
    fn from(l: Launch) -> Self {
        Self::blocks(l.blocks, l.threads)
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

impl Scalar {
    /// The scalar's type.
    pub fn ty(self) -> ScalarType {
        match self {
            Scalar::U32(_) => ScalarType::U32,
            Scalar::I32(_) => ScalarType::I32,
            Scalar::F32(_) => ScalarType::F32,
            Scalar::U64(_) => ScalarType::U64,
            Scalar::F64(_) => ScalarType::F64,
        }
    }
}

/// The type of a scalar parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
    /// `u64`.
    U64,
    /// `f64`.
    F64,
}

impl ScalarType {
    /// Size in bytes.
    pub const fn size(self) -> usize {
        match self {
            ScalarType::U32 | ScalarType::I32 | ScalarType::F32 => 4,
            ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// Whether the type is a floating-point type.
    pub const fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }
}

/// A Rust type that can be a scalar kernel parameter.
pub trait KernelScalar: Copy {
    /// Its parameter type.
    const TYPE: ScalarType;
    /// As a launch argument.
    fn scalar(self) -> Scalar;
}

macro_rules! kernel_scalar {
    ($t:ty, $v:ident) => {
        impl KernelScalar for $t {
            const TYPE: ScalarType = ScalarType::$v;
            fn scalar(self) -> Scalar {
                Scalar::$v(self)
            }
        }
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self {
                Scalar::$v(v)
            }
        }
    };
}
kernel_scalar!(u32, U32);
kernel_scalar!(i32, I32);
kernel_scalar!(f32, F32);
kernel_scalar!(u64, U64);
kernel_scalar!(f64, F64);

/// A buffer argument: a view with its element type erased.
pub struct BufferArg<'a, E: GpuExecutor + ?Sized> {
    /// The buffer.
    pub raw: &'a E::RawBuffer,
    /// Byte offset of the view's first element.
    pub offset_bytes: u64,
    /// Bytes of the view.
    pub len_bytes: u64,
    /// Size of one element.
    pub elem_bytes: u32,
    /// Whether the launch may write it (it came from a [`ViewMut`]).
    pub writable: bool,
}

/// One argument of a launch.
pub enum KernelArg<'a, E: GpuExecutor + ?Sized> {
    /// A device buffer or a view of one.
    Buffer(BufferArg<'a, E>),
    /// A scalar by value.
    Scalar(Scalar),
}

impl<'a, E: GpuExecutor + ?Sized> KernelArg<'a, E> {
    /// A view the kernel reads.
    pub fn read<T: Storage>(view: View<'a, T, E::Buffer<T>>) -> Self {
        let size = size_of::<T>() as u64;
        KernelArg::Buffer(BufferArg {
            raw: E::raw(view.buffer()),
            offset_bytes: view.offset() as u64 * size,
            len_bytes: view.len() as u64 * size,
            elem_bytes: size as u32,
            writable: false,
        })
    }

    /// A view the kernel writes (and may read).
    pub fn write<T: Storage>(view: ViewMut<'a, T, E::Buffer<T>>) -> Self {
        let size = size_of::<T>() as u64;
        let (buffer, range) = view.into_parts();
        let buffer: &'a E::Buffer<T> = buffer;
        KernelArg::Buffer(BufferArg {
            raw: E::raw(buffer),
            offset_bytes: range.start as u64 * size,
            len_bytes: range.len() as u64 * size,
            elem_bytes: size as u32,
            writable: true,
        })
    }

    /// A scalar.
    pub fn scalar(value: impl Into<Scalar>) -> Self {
        KernelArg::Scalar(value.into())
    }
}

/// Shorthand for a whole buffer the kernel may write (the untyped launch convention of
/// [`GpuExecutor::launch`], where writes go through shared references).
pub fn buf<E: GpuExecutor, T: Storage>(b: &E::Buffer<T>) -> KernelArg<'_, E> {
    let len = crate::executor::DeviceBuffer::len(b) as u64 * size_of::<T>() as u64;
    KernelArg::Buffer(BufferArg {
        raw: E::raw(b),
        offset_bytes: 0,
        len_bytes: len,
        elem_bytes: size_of::<T>() as u32,
        writable: true,
    })
}

/// How a kernel uses one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A buffer it only reads, of elements of `elem_bytes` bytes.
    Read {
        /// Element size.
        elem_bytes: u32,
    },
    /// A buffer it writes (and may read).
    Write {
        /// Element size.
        elem_bytes: u32,
    },
    /// A scalar by value.
    Scalar(ScalarType),
}

/// One declared parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Param {
    /// Its name in the declaration.
    pub name: &'static str,
    /// How the kernel uses it.
    pub kind: ParamKind,
}

/// The declaration of one entry point ([`kernels!`](crate::kernels) writes these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelSignature {
    /// Entry point name.
    pub entry: &'static str,
    /// Parameters in order: buffers, then scalars.
    pub params: &'static [Param],
}

impl KernelSignature {
    /// The buffer parameters.
    pub fn buffers(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| !matches!(p.kind, ParamKind::Scalar(_)))
    }

    /// The scalar parameters.
    pub fn scalars(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| matches!(p.kind, ParamKind::Scalar(_)))
    }

    /// Checks the declaration's own shape: buffers before scalars.
    ///
    /// # Errors
    /// [`Error::KernelSignature`].
    pub fn check_order(&self, module: &str) -> Result<()> {
        let first_scalar = self.params.iter().position(|p| matches!(p.kind, ParamKind::Scalar(_)));
        if let Some(first) = first_scalar
            && let Some(late) = self.params[first..].iter().find(|p| !matches!(p.kind, ParamKind::Scalar(_)))
        {
            return Err(signature_error(
                module,
                self.entry,
                format!("buffer {} follows a scalar: buffers come first", late.name),
            ));
        }
        Ok(())
    }
}

fn signature_error(module: &str, entry: &str, reason: String) -> Error {
    Error::KernelSignature { module: module.to_owned(), entry: entry.to_owned(), reason }
}

/// An executor that launches kernels from [`KernelSource`]s.
pub trait GpuExecutor: Executor {
    /// A buffer with its element type erased, as kernels see it.
    type RawBuffer: ?Sized;

    /// The untyped view of a buffer, for [`KernelArg::Buffer`].
    fn raw<T: Storage>(buf: &Self::Buffer<T>) -> &Self::RawBuffer;

    /// Compiles `source` for this device (or fetches it from the caches).
    ///
    /// # Errors
    /// [`crate::Error::KernelCompile`] with the compiler's log.
    fn prepare(&self, source: &KernelSource) -> Result<()>;

    /// Enqueues `entry` of `source` with `config` and `args` (compiling on first use).
    /// Buffers are passed by shared reference: a launch's writes are device effects
    /// ordered on the executor's stream. The argument count and sizes are checked
    /// against the compiled entry point before the launch.
    ///
    /// # Errors
    /// [`crate::Error::KernelCompile`], [`crate::Error::KernelSignature`], device
    /// failures.
    fn launch_with(
        &self,
        source: &KernelSource,
        entry: &str,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()>;

    /// [`GpuExecutor::launch_with`] with a plain grid.
    ///
    /// # Errors
    /// As [`GpuExecutor::launch_with`].
    fn launch(&self, source: &KernelSource, entry: &str, launch: Launch, args: &[KernelArg<'_, Self>]) -> Result<()> {
        self.launch_with(source, entry, &LaunchConfig::blocks(launch.blocks, launch.threads), args)
    }

    /// Checks a declaration against the compiled entry point (once per declaration;
    /// later calls are a cache lookup).
    ///
    /// # Errors
    /// [`crate::Error::KernelSignature`] naming the mismatch; compile errors.
    fn check_signature(&self, source: &KernelSource, signature: &'static KernelSignature) -> Result<()>;

    /// The typed launch: [`GpuExecutor::check_signature`], then the launch.
    ///
    /// # Errors
    /// As [`GpuExecutor::launch_with`] and [`GpuExecutor::check_signature`].
    fn launch_typed(
        &self,
        source: &KernelSource,
        signature: &'static KernelSignature,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        self.check_signature(source, signature)?;
        self.launch_with(source, signature.entry, config, args)
    }

    /// Writes the indirect-launch words `[x, y, z, blocks]` for one thread per item of
    /// `count` with `items_per_block` items per block (`blocks = ceil(count /
    /// items_per_block)`, spread over x and y within the device's grid limits).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `args` holds [`INDIRECT_ARGS_WORDS`] words;
    /// [`Error::InvalidArgument`] for zero items per block.
    fn indirect_args<'a>(
        &self,
        count: DeviceCount<'a, Self>,
        items_per_block: u32,
        args: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()>;
}

/// The `[x, y, z, blocks]` words for `blocks` blocks on a device with at most
/// `max_per_dimension` blocks per grid dimension (what [`GpuExecutor::indirect_args`]
/// computes on the device, as the host reference).
pub fn indirect_words(blocks: u32, max_per_dimension: u32) -> [u32; INDIRECT_ARGS_WORDS] {
    if blocks == 0 {
        return [0, 1, 1, 0];
    }
    let max = max_per_dimension.max(1);
    let rows = blocks.div_ceil(max);
    [blocks.div_ceil(rows), rows, 1, blocks]
}

/// Declares typed launchers for the entry points of one [`KernelSource`].
///
/// Each parameter is `read NAME: T` (a buffer of `T` the kernel only reads; the
/// launcher takes `impl Into<View<..>>`, e.g. `&buf` or `buf.slice(..)?`), `write NAME:
/// T` (a buffer it writes; `&mut buf` or a [`ViewMut`]) or `scalar NAME: T` (`u32`,
/// `i32`, `f32`, `u64`, `f64`), buffers first. The generated function is
/// `fn entry<E: GpuExecutor>(exec: &E, config: &LaunchConfig<'_, E>, args...) -> Result<()>`.
///
/// See [`crate::gpu`] for an example and for what is checked.
#[macro_export]
macro_rules! kernels {
    (
        module = $module:path;
        $(
            $(#[$meta:meta])*
            $vis:vis fn $entry:ident ( $( $mode:ident $arg:ident : $ty:ty ),* $(,)? );
        )*
    ) => {
        $(
            $(#[$meta])*
            #[allow(clippy::too_many_arguments, clippy::missing_errors_doc)]
            $vis fn $entry<'a, E: $crate::gpu::GpuExecutor>(
                exec: &E,
                config: &$crate::gpu::LaunchConfig<'a, E>,
                $( $arg: $crate::kernels!(@param 'a E $mode $ty) ),*
            ) -> $crate::Result<()> {
                static SIGNATURE: $crate::gpu::KernelSignature = $crate::gpu::KernelSignature {
                    entry: stringify!($entry),
                    params: &[ $( $crate::kernels!(@sig $mode $arg $ty) ),* ],
                };
                let args = [ $( $crate::kernels!(@arg E $mode $arg $ty) ),* ];
                exec.launch_typed(&$module, &SIGNATURE, config, &args)
            }
        )*
    };
    (@param $a:lifetime $E:ident read $ty:ty) => {
        impl Into<$crate::view::View<$a, $ty, <$E as $crate::Executor>::Buffer<$ty>>>
    };
    (@param $a:lifetime $E:ident write $ty:ty) => {
        impl Into<$crate::view::ViewMut<$a, $ty, <$E as $crate::Executor>::Buffer<$ty>>>
    };
    (@param $a:lifetime $E:ident scalar $ty:ty) => { $ty };
    (@sig read $arg:ident $ty:ty) => {
        $crate::gpu::Param { name: stringify!($arg), kind: $crate::gpu::ParamKind::Read { elem_bytes: size_of::<$ty>() as u32 } }
    };
    (@sig write $arg:ident $ty:ty) => {
        $crate::gpu::Param { name: stringify!($arg), kind: $crate::gpu::ParamKind::Write { elem_bytes: size_of::<$ty>() as u32 } }
    };
    (@sig scalar $arg:ident $ty:ty) => {
        $crate::gpu::Param { name: stringify!($arg), kind: $crate::gpu::ParamKind::Scalar(<$ty as $crate::gpu::KernelScalar>::TYPE) }
    };
    (@arg $E:ident read $arg:ident $ty:ty) => { $crate::gpu::KernelArg::<E>::read::<$ty>($arg.into()) };
    (@arg $E:ident write $arg:ident $ty:ty) => { $crate::gpu::KernelArg::<E>::write::<$ty>($arg.into()) };
    (@arg $E:ident scalar $arg:ident $ty:ty) => { $crate::gpu::KernelArg::<E>::Scalar($crate::gpu::KernelScalar::scalar($arg)) };
}

// ---- checking a declaration against a CUDA signature ------------------------------

/// One parameter of a CUDA entry point, as written in its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaParam {
    /// Whether it is a pointer.
    pub pointer: bool,
    /// Whether the pointee (or the value) is `const`.
    pub constant: bool,
    /// The base type's name (`u32`, `float`, `uint4`, ...).
    pub base: String,
}

impl CudaParam {
    /// Size of the base type where it is one of the known scalar or vector types.
    pub fn base_size(&self) -> Option<usize> {
        Some(match self.base.as_str() {
            "u32" | "i32" | "f32" | "int" | "unsigned" | "unsigned int" | "float" | "uint32_t" | "int32_t" => 4,
            "u64" | "i64" | "f64" | "double" | "unsigned long long" | "long long" | "uint64_t" | "int64_t"
            | "uint2" | "int2" | "float2" => 8,
            "uint4" | "int4" | "float4" | "double2" | "ulonglong2" => 16,
            _ => return None,
        })
    }

    /// Whether the base type is floating point (where known).
    pub fn base_is_float(&self) -> Option<bool> {
        self.base_size()?;
        Some(matches!(self.base.as_str(), "f32" | "float" | "f64" | "double" | "float2" | "float4" | "double2"))
    }
}

/// The parameters of `extern "C" __global__ ... entry(...)` in `source`, or `None` when
/// the source does not declare the entry literally (a macro-generated entry).
pub fn cuda_params(source: &str, entry: &str) -> Option<Vec<CudaParam>> {
    let mut search_from = 0;
    while let Some(found) = source[search_from..].find(entry) {
        let at = search_from + found;
        search_from = at + entry.len();
        let before = &source[..at];
        let after = source[at + entry.len()..].trim_start();
        let boundary_ok = before.chars().last().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if !boundary_ok || !after.starts_with('(') {
            continue;
        }
        // The declaration must be a __global__ function: look back to the previous ';' or '}'.
        let decl_start = before.rfind([';', '}']).map_or(0, |i| i + 1);
        if !before[decl_start..].contains("__global__") {
            continue;
        }
        let close = after.find(')')?;
        let list = &after[1..close];
        let params = list.split(',').map(str::trim).filter(|p| !p.is_empty()).map(parse_cuda_param).collect();
        return Some(params);
    }
    None
}

fn parse_cuda_param(text: &str) -> CudaParam {
    let pointer = text.contains('*');
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == '*')
        .filter(|w| !w.is_empty() && !w.starts_with("__restrict") && *w != "restrict")
        .collect();
    let constant = words.contains(&"const");
    let mut type_words: Vec<&str> = words.iter().copied().filter(|w| *w != "const").collect();
    // The last word is the parameter's name when there is more than one.
    if type_words.len() > 1 {
        type_words.pop();
    }
    CudaParam { pointer, constant, base: type_words.join(" ") }
}

/// Checks a declaration against the parameters of its CUDA entry point.
///
/// # Errors
/// [`Error::KernelSignature`] naming the first mismatch (count, pointer or value,
/// `const`-ness against read or write, element or scalar size, integer or float).
pub fn check_cuda_signature(module: &str, params: &[CudaParam], signature: &KernelSignature) -> Result<()> {
    let err = |reason: String| Err(signature_error(module, signature.entry, reason));
    if params.len() != signature.params.len() {
        return err(format!(
            "declared with {} parameter(s), the CUDA entry point has {}",
            signature.params.len(),
            params.len()
        ));
    }
    for (i, (p, d)) in params.iter().zip(signature.params).enumerate() {
        let name = d.name;
        match d.kind {
            ParamKind::Read { elem_bytes } | ParamKind::Write { elem_bytes } => {
                let write = matches!(d.kind, ParamKind::Write { .. });
                if !p.pointer {
                    return err(format!(
                        "parameter {i} ({name}) is declared a buffer, CUDA has the value `{}`",
                        p.base
                    ));
                }
                if write == p.constant {
                    return err(format!(
                        "parameter {i} ({name}) is declared {} but CUDA's pointer is {}",
                        if write { "write" } else { "read" },
                        if p.constant { "const" } else { "not const" }
                    ));
                }
                if let Some(size) = p.base_size()
                    && size != elem_bytes as usize
                {
                    return err(format!(
                        "parameter {i} ({name}) has {elem_bytes}-byte elements, CUDA's `{}` has {size}",
                        p.base
                    ));
                }
            }
            ParamKind::Scalar(ty) => {
                if p.pointer {
                    return err(format!("parameter {i} ({name}) is declared a scalar, CUDA has a pointer"));
                }
                if let Some(size) = p.base_size()
                    && (size != ty.size() || p.base_is_float() != Some(ty.is_float()))
                {
                    return err(format!("parameter {i} ({name}) is declared {ty:?}, CUDA has `{}`", p.base));
                }
            }
        }
    }
    Ok(())
}

/// The byte range a view covers in its buffer (for backends).
pub fn byte_range(arg: &BufferArg<'_, impl GpuExecutor + ?Sized>) -> Range<u64> {
    arg.offset_bytes..arg.offset_bytes + arg.len_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
        #define X 1
        __device__ u32 helper(u32 a) { return a; }
        extern "C" __global__ void __launch_bounds__(256) scale(const float* __restrict__ input,
            float* __restrict__ output, u32 n, float factor) { }
        extern "C" __global__ void other(u64* keys) {}
    "#;

    static SCALE: KernelSignature = KernelSignature {
        entry: "scale",
        params: &[
            Param { name: "input", kind: ParamKind::Read { elem_bytes: 4 } },
            Param { name: "output", kind: ParamKind::Write { elem_bytes: 4 } },
            Param { name: "n", kind: ParamKind::Scalar(ScalarType::U32) },
            Param { name: "factor", kind: ParamKind::Scalar(ScalarType::F32) },
        ],
    };

    #[test]
    fn cuda_parameters_are_read_from_the_declaration() {
        let p = cuda_params(SRC, "scale").unwrap();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0], CudaParam { pointer: true, constant: true, base: "float".into() });
        assert_eq!(p[1], CudaParam { pointer: true, constant: false, base: "float".into() });
        assert_eq!(p[2], CudaParam { pointer: false, constant: false, base: "u32".into() });
        assert!(cuda_params(SRC, "helper").is_none(), "not a __global__ function");
        assert!(cuda_params(SRC, "missing").is_none());
        check_cuda_signature("m", &p, &SCALE).unwrap();
    }

    #[test]
    #[allow(clippy::items_after_statements)] // each wrong table sits next to its check
    fn every_kind_of_mismatch_is_named() {
        let p = cuda_params(SRC, "scale").unwrap();
        let mut bad = SCALE;
        bad.params = &SCALE.params[..3];
        assert!(check_cuda_signature("m", &p, &bad).unwrap_err().to_string().contains("3 parameter(s)"));
        static SWAPPED: [Param; 4] = [
            Param { name: "input", kind: ParamKind::Write { elem_bytes: 4 } },
            Param { name: "output", kind: ParamKind::Write { elem_bytes: 4 } },
            Param { name: "n", kind: ParamKind::Scalar(ScalarType::U32) },
            Param { name: "factor", kind: ParamKind::Scalar(ScalarType::F32) },
        ];
        bad.params = &SWAPPED;
        assert!(check_cuda_signature("m", &p, &bad).unwrap_err().to_string().contains("const"));
        static WIDE: [Param; 4] = [
            Param { name: "input", kind: ParamKind::Read { elem_bytes: 8 } },
            Param { name: "output", kind: ParamKind::Write { elem_bytes: 4 } },
            Param { name: "n", kind: ParamKind::Scalar(ScalarType::U32) },
            Param { name: "factor", kind: ParamKind::Scalar(ScalarType::F32) },
        ];
        bad.params = &WIDE;
        assert!(check_cuda_signature("m", &p, &bad).unwrap_err().to_string().contains("8-byte"));
        static INT: [Param; 4] = [
            Param { name: "input", kind: ParamKind::Read { elem_bytes: 4 } },
            Param { name: "output", kind: ParamKind::Write { elem_bytes: 4 } },
            Param { name: "n", kind: ParamKind::Scalar(ScalarType::U32) },
            Param { name: "factor", kind: ParamKind::Scalar(ScalarType::U32) },
        ];
        bad.params = &INT;
        assert!(check_cuda_signature("m", &p, &bad).unwrap_err().to_string().contains("factor"));
    }

    #[test]
    fn declarations_put_buffers_first() {
        static LATE: KernelSignature = KernelSignature {
            entry: "k",
            params: &[
                Param { name: "n", kind: ParamKind::Scalar(ScalarType::U32) },
                Param { name: "out", kind: ParamKind::Write { elem_bytes: 4 } },
            ],
        };
        assert!(LATE.check_order("m").is_err());
        assert!(SCALE.check_order("m").is_ok());
    }

    #[test]
    fn indirect_words_cover_the_blocks_within_the_grid_limit() {
        assert_eq!(indirect_words(0, 65535), [0, 1, 1, 0]);
        assert_eq!(indirect_words(10, 65535), [10, 1, 1, 10]);
        let [x, y, z, b] = indirect_words(70000, 65535);
        assert!(x <= 65535 && y <= 65535 && z == 1 && b == 70000 && x * y >= 70000);
    }

    #[test]
    fn defines_become_options_consts_and_keys() {
        static DEFS: [Define; 2] = [Define { name: "TILE", value: "256" }, Define { name: "FAST", value: "" }];
        let s = KernelSource::new("m", "", "fn f() {}").with_defines(&DEFS);
        assert_eq!(s.cuda_options(), ["-DTILE=256", "-DFAST"]);
        assert!(s.wgsl_with_defines().starts_with("const TILE = 256;\n"));
        assert_eq!(s.define_key(), "FAST,TILE=256");
    }
}
