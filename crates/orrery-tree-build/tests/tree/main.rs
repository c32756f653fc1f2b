//! The tree-build tests, one binary (every test binary links the GPU backends again).

mod common;
mod golden;
mod gpu;
mod gpu_nf;
mod gpu_view;
mod invariants;
mod nfcount;
mod view;
