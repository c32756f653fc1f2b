//! orrery-clusters' integration tests, one binary with a module per area (CI links every
//! test binary separately; one binary per crate saves disk and link time).
//!
//! `gpu` compares the GPU passes with the CPU on every available executor (CUDA, wgpu).
//!
//! Every statistic is checked against a straightforward sequential `f64` formula in
//! `common` on small inputs; every search against a brute-force `f64` ranking. Run one
//! area with a filter on the module path, e.g.
//! `cargo test -p orrery-clusters --test clusters search_exact::`.

// The references index by cluster, member and dimension as the formulas do.
#![allow(clippy::needless_range_loop)]

mod common;

mod centroid;
mod determinism;
mod diversity;
mod edge_cases;
mod errors;
mod executors;
mod gpu;
mod gpu_families;
mod gpu_search;
mod grid;
mod potential;
mod scale;
mod search_exact;
mod search_fused;
mod search_ivf;
mod search_lattice;
mod substructure;
mod synth;
