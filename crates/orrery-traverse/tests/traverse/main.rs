//! The orrery-traverse integration tests, one binary (every test binary links the GPU
//! backends again): initial conditions (`ic`), CPU direct summation and the accuracy
//! harness (`direct`), GPU direct summation on CUDA and wgpu and the NVRTC compile of the
//! CUDA module (`gpu_direct`).

mod common;
mod direct;
mod gpu_direct;
mod ic;
