//! The integration tests of orrery-traverse, one binary (every extra test binary links
//! wgpu again): CPU multipoles and walks against direct summation, and the GPU executors
//! against the CPU.

mod clouds;
mod gpu_solver;
mod gpu_upward;
mod gpu_walk;
mod multipoles;
mod walks;
