//! orrery-balltree's integration tests, one binary with a module per area. (Every test
//! binary links wgpu and naga through the dev-dependencies: one binary per crate instead
//! of one per file saves CI disk and link time.)
//!
//! Run one area with a filter on the module path, e.g.
//! `cargo test -p orrery-balltree --test balltree gpu_wgpu::`; the device scripts run
//! the release binary (`balltree-<hash>`) the same way. Fixtures are in
//! `tests/fixtures/` (see `golden`).

mod common;
mod gpu_common;

mod errors;
mod golden;
mod gpu_bench;
mod gpu_cuda;
mod gpu_wgpu;
mod layout_examples;
mod parallel;
mod properties;
