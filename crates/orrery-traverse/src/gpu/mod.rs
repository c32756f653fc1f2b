//! Gravity on GPUs: one orchestration for every [`GpuExecutor`](orrery_core::GpuExecutor)
//! (CUDA and wgpu), checked against the CPU solvers of this crate.
//!
//! - Bodies and results live on the device as [`DeviceBodies`] (f32 structure of arrays:
//!   x, y, z, m, validated once at upload) and [`DeviceForces`] (ax, ay, az, pot).
//! - [`direct_sum_gpu`] is the tiled all-pairs sum in f32 on both executors;
//!   [`direct_sum_gpu_f64`] the f64 reference sum of the same f32 bodies, on CUDA only
//!   (an [`orrery_core::Error::Unsupported`] elsewhere).
//! - [`upward`]: bodies in tree order and the multipoles of a device TreeView, packed as
//!   the walks read them ([`compute_walk_nodes`]).
//! - [`walk`]: the independent, coherent and group walks ([`GpuWalk`]).
//! - [`solver`]: the whole force evaluation on the device ([`GpuBarnesHut`]).
//! - [`fmm`]: the FMM's passes on a tree and its host-built lists ([`GpuFmm`]; the f64
//!   expansion passes on CUDA only, the near field everywhere).
//!
//! # Kernel modules
//! | module | CUDA | WGSL | host |
//! |---|---|---|---|
//! | `traverse/direct` | `kernels/traverse/direct.cu` (after `common.cuh`) | `shaders/traverse/direct.wgsl` | [`direct`] |
//! | `traverse/upward` | `kernels/traverse/upward.cu` | `shaders/traverse/upward.wgsl` | [`upward`] |
//! | `traverse/walk` | `kernels/traverse/walk.cu` | `shaders/traverse/walk.wgsl` | [`walk`] |
//! | `traverse/fmm` | `kernels/traverse/fmm.cu` (f64) | none (CUDA only) | [`fmm`] |
//! | `traverse/fmm_p2p` | `kernels/traverse/fmm_p2p.cu` | `shaders/traverse/fmm_p2p.wgsl` | [`fmm`] |
//!
//! Entry points have the same name and arguments in both languages (buffers first, then
//! scalars; see [`orrery_core::gpu`]), declared once with [`orrery_core::kernels!`] and
//! checked against both at first use; the f64 entries exist in CUDA only
//! ([`CUDA_ONLY_ENTRIES`], and the whole module `traverse/fmm`).

pub mod device;
pub mod direct;
pub mod fmm;
pub mod solver;
pub mod upward;
pub mod walk;

pub use device::{DeviceBodies, DeviceForces};
pub use direct::{direct_sum_gpu, direct_sum_gpu_f64};
pub use fmm::GpuFmm;
pub use solver::GpuBarnesHut;
pub use upward::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
pub use walk::GpuWalk;

use orrery_core::KernelSource;

/// Every module this crate launches (for ahead-of-time compile checks: the tests compile
/// each with NVRTC).
pub const KERNEL_MODULES: [KernelSource; 5] = [direct::MODULE, upward::UPWARD, walk::WALK, fmm::FMM, fmm::FMM_P2P];

/// Every entry point of [`KERNEL_MODULES`], by module name.
pub const KERNEL_ENTRIES: [(&str, &[&str]); 5] = [
    ("traverse/direct", &direct::ENTRIES),
    ("traverse/upward", &upward::KERNEL_ENTRIES),
    ("traverse/walk", &walk::ENTRIES),
    ("traverse/fmm", &fmm::FMM_ENTRIES),
    ("traverse/fmm_p2p", &fmm::FMM_P2P_ENTRIES),
];

/// Entry points of [`KERNEL_ENTRIES`] that WGSL lacks (f64 arithmetic).
pub const CUDA_ONLY_ENTRIES: [&str; 2] = ["direct_f64", "direct_targets_f64"];
