//! The orrery-traverse integration tests, one binary (every test binary links the GPU
//! backends again): initial conditions (`ic`), CPU direct summation and the accuracy
//! harness (`direct`).

mod common;
mod direct;
mod ic;
