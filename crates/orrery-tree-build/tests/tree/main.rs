//! The tree-build tests, one binary (every test binary links the GPU backends again).

mod common;
mod golden;
mod gpu;
mod gpu_nf;
mod invariants;
mod nfcount;
mod view;
