//! The GPU passes of orrery-traverse, written once for every [`orrery_core::GpuExecutor`]
//! (CUDA and wgpu): the upward pass ([`upward`]) and the tree walks ([`walk`]).

pub mod upward;
pub mod walk;

pub use upward::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
