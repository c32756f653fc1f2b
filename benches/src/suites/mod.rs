//! Benchmark suites. Each is a generic function over [`orrery_core::Executor`], so one
//! definition measures every executor side by side; `balltree` has a CPU entry point
//! and one generic over [`orrery_core::GpuExecutor`], because its GPU build is not an
//! executor primitive.

pub mod balltree;
pub mod clusters;
pub mod clusters_families;
pub mod clusters_search;
pub mod fmm;
pub mod gravity;
pub mod keys;
pub mod primitives;
pub mod sim;
pub mod sort_peer;
pub mod tree;

/// Options shared by the suites.
#[derive(Debug, Clone)]
pub struct Config {
    /// Shrink sizes for a smoke run (CI, quick checks).
    pub quick: bool,
    /// Untimed runs before timing.
    pub warmup: usize,
    /// Timed runs.
    pub repeats: usize,
    /// CPU threads asked for (`None`: all cores); also handed to peers.
    pub threads: Option<usize>,
}
