//! The orrery-traverse integration tests, one binary (every test binary links the GPU
//! backends again): initial conditions (`ic`), CPU direct summation and the accuracy
//! harness (`direct`), the FMM (`fmm`), multipoles (`multipoles`) and the CPU walks (`walks`) against
//! direct summation, and on CUDA and wgpu: direct summation (`gpu_direct`), the upward
//! pass (`gpu_upward`), the walks (`gpu_walk`), the whole evaluation (`gpu_solver`) and
//! the FMM's passes (`gpu_fmm`) against the CPU, with the NVRTC compiles of the CUDA
//! modules.

mod clouds;
mod common;
mod direct;
mod fmm;
mod gpu_direct;
mod gpu_fmm;
mod gpu_solver;
mod gpu_upward;
mod gpu_walk;
mod ic;
mod multipoles;
mod walks;
