//! Kernel launches: argument marshalling, the argument check against the driver's
//! parameter table, and the [`GpuExecutor`] implementation.
//!
//! Every launch path (the built-in primitives, [`GpuExecutor::launch_with`] and the typed
//! launchers) ends in [`CudaExecutor::launch_function`], which checks the argument count
//! and each argument's size against `cuFuncGetParamInfo` (read once per function), so a
//! wrong argument list is an [`Error::KernelSignature`] and never reaches
//! `cuLaunchKernel`. The launch's return code is checked at once; with the `debug-sync`
//! feature the stream is also synchronised after every launch so a device fault is
//! reported against the kernel that caused it.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use cudarc::driver::result;
use cudarc::driver::sys::{self, CUdeviceptr};
use orrery_core::executor::check_len;
use orrery_core::gpu::{Grid, KernelSignature, LaunchConfig};
use orrery_core::{
    DeviceCount, Error, GpuExecutor, KernelArg, KernelSource, Result, Scalar, Storage, View, ViewMut, ViewMutOf,
};

use crate::CudaExecutor;
use crate::buffer::{CudaBuffer, RawBuffer};
use crate::device::Context;
use crate::error::DriverResultExt;
use crate::kernels::MOVEMENT;
use crate::module_cache::Function;

/// Most arguments a launch takes without a heap allocation.
const INLINE_ARGS: usize = 24;

/// Shared memory a block may use without opting in (`cuFuncSetAttribute`).
const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// One kernel argument as the driver sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// A buffer at a byte offset (a recording keeps its allocation alive).
    Buf(&'a RawBuffer, u64),
    /// A device pointer into the executor's scratch (kept by the recording as a whole).
    Ptr(CUdeviceptr),
    /// `unsigned int`.
    U32(u32),
    /// `int`.
    I32(i32),
    /// `unsigned long long`.
    U64(u64),
    /// `float`.
    F32(f32),
    /// `double`.
    F64(f64),
}

impl<'a> Arg<'a> {
    /// The argument's bytes, little-endian in the low bytes of a u64 slot (the driver reads
    /// as many bytes as the parameter's size from the slot's address).
    fn bits(self) -> u64 {
        match self {
            Arg::Buf(raw, offset) => {
                if raw.device_ptr() == 0 {
                    0
                } else {
                    raw.device_ptr() + offset
                }
            }
            Arg::Ptr(p) | Arg::U64(p) => p,
            Arg::U32(v) => u64::from(v),
            Arg::I32(v) => u64::from(v.cast_unsigned()),
            Arg::F32(v) => u64::from(v.to_bits()),
            Arg::F64(v) => v.to_bits(),
        }
    }

    /// Size of the parameter this argument fills.
    fn size(self) -> usize {
        match self {
            Arg::Buf(..) | Arg::Ptr(_) | Arg::U64(_) | Arg::F64(_) => 8,
            Arg::U32(_) | Arg::I32(_) | Arg::F32(_) => 4,
        }
    }

    /// A view's first element.
    pub(crate) fn view<T: Storage>(v: View<'a, T, CudaBuffer<T>>) -> Self {
        Arg::Buf(&v.buffer().raw, (v.offset() * size_of::<T>()) as u64)
    }

    /// A writable view's first element (the view stays borrowed while the argument lives).
    pub(crate) fn view_mut<T: Storage>(v: &'a ViewMut<'_, T, CudaBuffer<T>>) -> Self {
        Arg::Buf(&v.buffer().raw, (v.offset() * size_of::<T>()) as u64)
    }
}

impl CudaExecutor {
    /// Notes that the current recording (if any) uses `raw`'s allocation.
    pub(crate) fn touch(&self, raw: &RawBuffer) {
        if self.stream.capturing() {
            let mut rec = self.recording.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(list) = rec.as_mut()
                && !list.iter().any(|a| std::sync::Arc::ptr_eq(a, &raw.alloc))
            {
                list.push(std::sync::Arc::clone(&raw.alloc));
            }
        }
    }

    /// Enqueues `f` with a 1D grid after checking `args` against its parameters. `what`
    /// names the kernel in errors.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn launch_function(
        &self,
        f: &Function,
        module: &str,
        what: &str,
        blocks: u32,
        threads: u32,
        shared_bytes: u32,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let sig_err =
            |reason: String| Error::KernelSignature { module: module.to_owned(), entry: what.to_owned(), reason };
        if args.len() != f.param_sizes.len() {
            return Err(sig_err(format!(
                "launched with {} argument(s), the compiled entry point has {} parameter(s)",
                args.len(),
                f.param_sizes.len()
            )));
        }
        for (i, (a, &size)) in args.iter().zip(&f.param_sizes).enumerate() {
            if a.size() != size {
                return Err(sig_err(format!("argument {i} has {} bytes, the compiled parameter {size}", a.size())));
            }
        }
        if threads == 0 || threads > self.ctx.max_threads_per_block {
            return Err(Error::InvalidArgument {
                what: "threads per block",
                reason: format!("{threads} is not within 1..={}", self.ctx.max_threads_per_block),
            });
        }
        if blocks == 0 {
            return Ok(());
        }
        self.stream.bind()?;
        // Static and dynamic shared memory share the default limit: a kernel with 18 KB of
        // static arrays needs the opt-in for 40 KB of dynamic memory.
        if f.static_shared.saturating_add(shared_bytes) > DEFAULT_SHARED_LIMIT
            && f.dynamic_shared.load(Ordering::Acquire) < shared_bytes
        {
            // SAFETY: `f` is a live function of the current context; the attribute takes a
            // byte count (the driver rejects values beyond the device's opt-in limit).
            unsafe {
                sys::cuFuncSetAttribute(
                    f.handle,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    i32::try_from(shared_bytes).unwrap_or(i32::MAX),
                )
            }
            .result()
            .during("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)")?;
            f.dynamic_shared.fetch_max(shared_bytes, Ordering::AcqRel);
        }
        for a in args {
            if let Arg::Buf(raw, _) = a {
                self.touch(raw);
            }
        }
        let mut inline_values = [0u64; INLINE_ARGS];
        let mut heap_values = Vec::new();
        let values: &mut [u64] = if args.len() <= INLINE_ARGS {
            &mut inline_values[..args.len()]
        } else {
            heap_values.resize(args.len(), 0u64);
            &mut heap_values
        };
        for (slot, a) in values.iter_mut().zip(args) {
            *slot = a.bits();
        }
        let mut inline_ptrs = [std::ptr::null_mut::<c_void>(); INLINE_ARGS];
        let mut heap_ptrs = Vec::new();
        let ptrs: &mut [*mut c_void] = if args.len() <= INLINE_ARGS {
            &mut inline_ptrs[..args.len()]
        } else {
            heap_ptrs.resize(args.len(), std::ptr::null_mut());
            &mut heap_ptrs
        };
        for (p, v) in ptrs.iter_mut().zip(values.iter_mut()) {
            *p = std::ptr::from_mut(v).cast();
        }
        // SAFETY: `f` is a live function of a module loaded in this context; `ptrs` holds
        // one pointer per kernel parameter (count and sizes checked above against the
        // driver's table), each to an 8-byte slot at least as large as the parameter,
        // alive until cuLaunchKernel returns (it copies the values). The buffers the
        // pointers name are alive (borrowed by the caller) and in this executor's memory.
        let r = unsafe {
            result::launch_kernel(f.handle, (blocks, 1, 1), (threads, 1, 1), shared_bytes, self.stream.raw(), ptrs)
        };
        Context::check_launch(what, r)?;
        if cfg!(feature = "debug-sync") && !self.stream.capturing() {
            self.stream.synchronize().map_err(|e| match e {
                Error::Device { backend, message, .. } => {
                    Error::Device { backend, operation: format!("kernel {what} (debug-sync)"), message }
                }
                other => other,
            })?;
        }
        Ok(())
    }

    /// Enqueues `entry` of a built-in or user module (no dynamic shared memory).
    pub(crate) fn launch_entry(
        &self,
        source: &KernelSource,
        entry: &str,
        blocks: u32,
        threads: u32,
        args: &[Arg<'_>],
    ) -> Result<()> {
        let f = self.modules.function(source, entry)?;
        self.launch_function(&f, source.name, entry, blocks, threads, 0, args)
    }
}

impl CudaExecutor {
    /// Converts `args`, sizes the grid and launches `f` (or `entry` of `source`, looked up).
    fn launch_resolved(
        &self,
        resolved: Option<std::sync::Arc<Function>>,
        source: &KernelSource,
        entry: &str,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        let mut inline = [Arg::U32(0); INLINE_ARGS];
        let mut heap = Vec::new();
        let converted: &mut [Arg<'_>] = if args.len() <= INLINE_ARGS {
            &mut inline[..args.len()]
        } else {
            heap.resize(args.len(), Arg::U32(0));
            &mut heap
        };
        for (i, (slot, a)) in converted.iter_mut().zip(args).enumerate() {
            *slot = match a {
                KernelArg::Buffer(b) => {
                    let end = b.offset_bytes.checked_add(b.len_bytes);
                    if end.is_none_or(|e| e > b.raw.len_bytes() as u64) {
                        return Err(Error::InvalidArgument {
                            what: "kernel buffer argument",
                            reason: format!(
                                "argument {i} of {entry}: bytes {}..+{} exceed the buffer's {} bytes",
                                b.offset_bytes,
                                b.len_bytes,
                                b.raw.len_bytes()
                            ),
                        });
                    }
                    Arg::Buf(b.raw, b.offset_bytes)
                }
                KernelArg::Scalar(s) => scalar_arg(*s),
            };
        }
        let blocks = match config.grid {
            Grid::Blocks(b) => b,
            Grid::Indirect { args, max_blocks } => {
                check_len("indirect launch arguments", orrery_core::gpu::INDIRECT_ARGS_WORDS, args.len())?;
                self.touch(&args.buffer().raw);
                max_blocks
            }
        };
        let f = match resolved {
            Some(f) => f,
            None => self.modules.function(source, entry)?,
        };
        self.launch_function(&f, source.name, entry, blocks, config.threads, config.shared_bytes, converted)
    }
}

fn scalar_arg<'a>(s: Scalar) -> Arg<'a> {
    match s {
        Scalar::U32(v) => Arg::U32(v),
        Scalar::I32(v) => Arg::I32(v),
        Scalar::F32(v) => Arg::F32(v),
        Scalar::U64(v) => Arg::U64(v),
        Scalar::F64(v) => Arg::F64(v),
    }
}

impl GpuExecutor for CudaExecutor {
    type RawBuffer = RawBuffer;

    fn raw<T: Storage>(buf: &CudaBuffer<T>) -> &RawBuffer {
        &buf.raw
    }

    fn prepare(&self, source: &KernelSource) -> Result<()> {
        self.modules.prepare(source)
    }

    /// Enqueues `entry` of `source`. A launch of zero blocks does nothing. An indirect
    /// grid launches `max_blocks` blocks: the kernel reads its block count from the
    /// argument words it takes (see [`orrery_core::gpu`]).
    fn launch_with(
        &self,
        source: &KernelSource,
        entry: &str,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        self.launch_resolved(None, source, entry, config, args)
    }

    /// The typed launch with one lookup: the checked declaration's entry point is cached
    /// with it, so the launch does not look the function up again.
    fn launch_typed(
        &self,
        source: &KernelSource,
        signature: &'static KernelSignature,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        let f = self.modules.typed_function(source, signature)?;
        self.launch_resolved(Some(f), source, signature.entry, config, args)
    }

    fn check_signature(&self, source: &KernelSource, signature: &'static KernelSignature) -> Result<()> {
        self.modules.check_signature(source, signature)
    }

    fn indirect_args<'a>(
        &self,
        count: DeviceCount<'a, Self>,
        items_per_block: u32,
        args: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let args = args.into();
        check_len("indirect launch arguments", orrery_core::gpu::INDIRECT_ARGS_WORDS, args.len())?;
        if items_per_block == 0 {
            return Err(Error::InvalidArgument { what: "items per block", reason: "must be at least 1".into() });
        }
        let max_per_dimension = self.ctx.max_grid_x.min(self.ctx.max_grid_y).max(1);
        let bound = u32::try_from(count.bound()).unwrap_or(u32::MAX);
        self.launch_entry(
            &MOVEMENT,
            "indirect_args",
            1,
            32,
            &[
                Arg::view(count.slot()),
                Arg::view_mut(&args),
                Arg::U32(bound),
                Arg::U32(items_per_block),
                Arg::U32(max_per_dimension),
            ],
        )
    }
}
