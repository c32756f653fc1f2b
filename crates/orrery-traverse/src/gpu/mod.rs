//! The GPU passes of orrery-traverse, written once for every [`orrery_core::GpuExecutor`]
//! (CUDA and wgpu): the upward pass ([`upward`]), the tree walks ([`walk`]) and the whole
//! force evaluation on the device ([`solver`]).

pub mod solver;
pub mod upward;
pub mod walk;

pub use solver::{DeviceBodies, GpuBarnesHut, upload_bodies};
pub use upward::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
pub use walk::GpuWalk;
