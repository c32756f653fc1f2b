//! Gravity on GPUs: one orchestration for every [`GpuExecutor`](orrery_core::GpuExecutor)
//! (CUDA and wgpu), checked against the CPU solvers of this crate.
//!
//! Bodies and results live on the device as [`DeviceBodies`] (f32 structure of arrays:
//! x, y, z, m, validated once at upload) and [`DeviceForces`] (ax, ay, az, pot), shared by
//! every GPU solver. [`direct_sum_gpu`] is the tiled all-pairs sum in f32 on both
//! executors; [`direct_sum_gpu_f64`] the f64 reference sum of the same f32 bodies, on
//! CUDA only (an [`orrery_core::Error::Unsupported`] elsewhere).
//!
//! # Kernel modules
//! | module | CUDA | WGSL | host |
//! |---|---|---|---|
//! | `traverse/direct` | `kernels/traverse/direct.cu` (after `common.cuh`) | `shaders/traverse/direct.wgsl` | [`direct`] |
//!
//! Entry points have the same name and arguments in both languages (buffers first, then
//! scalars; see [`orrery_core::gpu`]), declared once with [`orrery_core::kernels!`] and
//! checked against both at first use; the f64 entries exist in CUDA only
//! ([`CUDA_ONLY_ENTRIES`]).

pub mod device;
pub mod direct;

pub use device::{DeviceBodies, DeviceForces};
pub use direct::{direct_sum_gpu, direct_sum_gpu_f64};

use orrery_core::KernelSource;

/// Every module this crate launches (for ahead-of-time compile checks: the tests compile
/// each with NVRTC).
pub const KERNEL_MODULES: [KernelSource; 1] = [direct::MODULE];

/// Every entry point of [`KERNEL_MODULES`], by module name.
pub const KERNEL_ENTRIES: [(&str, &[&str]); 1] = [("traverse/direct", &direct::ENTRIES)];

/// Entry points of [`KERNEL_ENTRIES`] that WGSL lacks (f64 arithmetic).
pub const CUDA_ONLY_ENTRIES: [&str; 2] = ["direct_f64", "direct_targets_f64"];
