//! # orrery-backend-cuda
//!
//! [`CudaExecutor`]: orrery's [`Executor`](orrery_core::Executor) and
//! [`GpuExecutor`](orrery_core::GpuExecutor) on NVIDIA GPUs, through the CUDA driver API
//! ([cudarc], loaded at run time) and NVRTC.
//!
//! - **No CUDA at build time.** The crate builds anywhere; libcuda and libnvrtc are
//!   opened when an executor is created, and their absence is
//!   [`Error::DeviceUnavailable`](orrery_core::Error::DeviceUnavailable), never a panic.
//! - **Kernels are CUDA C** (`kernels/core/*.cu`, embedded), compiled by NVRTC for the
//!   device's architecture on first use and cached in memory per executor and on disk
//!   per user (see [`disk_cache_dir`]); a kernel that fails to compile is
//!   [`Error::KernelCompile`](orrery_core::Error::KernelCompile) with NVRTC's log.
//!   [`compile_to_ptx`] compiles without a GPU (CI does, for every module in
//!   [`CORE_MODULES`]); [`compile_module_with_log`] does so with the executor's own
//!   options ([`module_options`]) and keeps NVRTC's log, which is how `cargo xtask
//!   kernels` compiles every module of the workspace and reports ptxas's register use.
//! - **One stream per executor**, events for timing ([`CudaMarker`]), stream-ordered
//!   allocation; buffers grow with 25% headroom and never shrink.
//! - **Primitives are our own kernels** (no CUB: NVRTC has no CUB headers): an Onesweep
//!   LSD radix sort of `(u64, u32)` pairs over any bit range, a single-pass decoupled
//!   look-back scan and compaction, deterministic fixed-tree reductions, gather, scatter,
//!   fill, iota, and Morton / Hilbert keys bit-identical to the CPU's.
//! - **Tuning** lives in [`Policy`], handed to the kernels as `-D` defines.
//!
//! ```no_run
//! use orrery_core::{Executor, sfc::{Curve, KeyMapper}, Aabb};
//! use orrery_backend_cuda::CudaExecutor;
//!
//! let exec = CudaExecutor::from_env()?;
//! let (x, y, z) = (vec![0.1f32, 0.9, 0.5], vec![0.2f32, 0.8, 0.5], vec![0.3f32, 0.7, 0.5]);
//! let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0)?, Curve::Hilbert);
//! let (bx, by, bz) = (exec.upload(&x)?, exec.upload(&y)?, exec.upload(&z)?);
//! let mut keys = exec.alloc::<u64>(3)?;
//! exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys)?;
//! let mut order = exec.alloc::<u32>(3)?;
//! exec.iota(&mut order, 0)?;
//! exec.sort_pairs(&mut keys, &mut order, 0..63)?;
//! println!("{:?}", exec.download(&order)?);
//! # Ok::<(), orrery_core::Error>(())
//! ```

mod buffer;
mod device;
mod error;
mod executor;
mod external;
pub mod kernels;
mod launch;
mod module_cache;
pub mod policy;
mod primitives;
mod record;
mod scratch;
mod stream;

pub use buffer::{CudaBuffer, RawBuffer};
pub use device::{check_driver, check_nvrtc, device_count};
pub use executor::{CudaExecutor, DEVICE_ENV};
pub use kernels::CORE_MODULES;
pub use module_cache::{
    CompiledModule, compile_module_to_cubin, compile_module_to_ptx, compile_module_with_log, compile_to_ptx,
    disk_cache_dir, module_options, nvrtc_version,
};
pub use policy::Policy;
pub use record::CudaRecording;
pub use stream::{CudaEvent, CudaMarker, CudaPending};
