//! Kernel launches: argument marshalling and the [`GpuExecutor`] implementation.
//!
//! A launch looks up the cached function handle (two hash lookups under short-lived
//! locks), packs the arguments into a stack array and calls `cuLaunchKernel` on the
//! executor's stream. The launch's return code is checked at once; with the
//! `debug-sync` feature the stream is also synchronised after every launch so a device
//! fault is reported against the kernel that caused it.

use std::ffi::c_void;

use cudarc::driver::result;
use cudarc::driver::sys::CUdeviceptr;
use orrery_core::{Element, GpuExecutor, KernelArg, KernelSource, Launch, Result, Scalar};

use crate::CudaExecutor;
use crate::buffer::{CudaBuffer, RawBuffer};
use crate::device::Device;
use crate::module_cache::Function;

/// Most arguments a launch takes without a heap allocation.
const INLINE_ARGS: usize = 24;

/// One kernel argument as the driver sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    /// A device pointer.
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

impl Arg {
    /// The argument's bytes, little-endian in the low bytes of a u64 slot (the driver reads
    /// as many bytes as the parameter's size from the slot's address).
    fn bits(self) -> u64 {
        match self {
            Arg::Ptr(p) | Arg::U64(p) => p,
            Arg::U32(v) => u64::from(v),
            Arg::I32(v) => u64::from(v.cast_unsigned()),
            Arg::F32(v) => u64::from(v.to_bits()),
            Arg::F64(v) => v.to_bits(),
        }
    }

    /// A buffer argument.
    pub(crate) fn buf<T: Element>(b: &CudaBuffer<T>) -> Self {
        Arg::Ptr(b.raw.device_ptr())
    }
}

impl CudaExecutor {
    /// Enqueues `f` with a 1D grid. `what` names the kernel in errors.
    pub(crate) fn launch_function(
        &self,
        f: Function,
        what: &str,
        blocks: u32,
        threads: u32,
        args: &[Arg],
    ) -> Result<()> {
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
        self.device.bind()?;
        // SAFETY: `f` is a live function of a module loaded in this context; `ptrs` holds
        // one pointer per kernel parameter, each to a slot at least as large as the
        // parameter, alive until cuLaunchKernel returns (it copies the values). The
        // buffers the pointers name are alive (borrowed by the caller) and owned by this
        // executor's stream order.
        let r = unsafe { result::launch_kernel(f.0, (blocks, 1, 1), (threads, 1, 1), 0, self.device.stream(), ptrs) };
        Device::check_launch(what, r)?;
        if cfg!(feature = "debug-sync") {
            self.device.synchronize().map_err(|e| match e {
                orrery_core::Error::Device { backend, message, .. } => {
                    orrery_core::Error::Device { backend, operation: format!("kernel {what} (debug-sync)"), message }
                }
                other => other,
            })?;
        }
        Ok(())
    }

    /// Enqueues `entry` of a built-in or user module.
    pub(crate) fn launch_entry(
        &self,
        source: &KernelSource,
        entry: &str,
        blocks: u32,
        threads: u32,
        args: &[Arg],
    ) -> Result<()> {
        if blocks == 0 {
            return Ok(());
        }
        let f = self.modules.function(source, entry)?;
        self.launch_function(f, entry, blocks, threads, args)
    }
}

impl GpuExecutor for CudaExecutor {
    type RawBuffer = RawBuffer;

    fn raw<T: Element>(buf: &CudaBuffer<T>) -> &RawBuffer {
        &buf.raw
    }

    fn prepare(&self, source: &KernelSource) -> Result<()> {
        self.modules.prepare(source)
    }

    /// Enqueues `entry` of `source`. A launch of zero blocks does nothing (kernels over
    /// empty inputs need no special case at the call site).
    fn launch(&self, source: &KernelSource, entry: &str, launch: Launch, args: &[KernelArg<'_, Self>]) -> Result<()> {
        let mut inline = [Arg::U32(0); INLINE_ARGS];
        let mut heap = Vec::new();
        let converted: &mut [Arg] = if args.len() <= INLINE_ARGS {
            &mut inline[..args.len()]
        } else {
            heap.resize(args.len(), Arg::U32(0));
            &mut heap
        };
        for (slot, a) in converted.iter_mut().zip(args) {
            *slot = match a {
                KernelArg::Buffer(b) => Arg::Ptr(b.device_ptr()),
                KernelArg::Scalar(Scalar::U32(v)) => Arg::U32(*v),
                KernelArg::Scalar(Scalar::I32(v)) => Arg::I32(*v),
                KernelArg::Scalar(Scalar::F32(v)) => Arg::F32(*v),
                KernelArg::Scalar(Scalar::U64(v)) => Arg::U64(*v),
                KernelArg::Scalar(Scalar::F64(v)) => Arg::F64(*v),
            };
        }
        self.launch_entry(source, entry, launch.blocks, launch.threads, converted)
    }
}
