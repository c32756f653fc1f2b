//! The GPU executors (CUDA and wgpu, any [`orrery_core::GpuExecutor`]): the tree walks
//! ([`walk`]).

pub mod walk;
