//! Shared helpers of the wgpu equivalence tests: executors, sizes, input generators.
//!
//! `executors()` gives the default executor (subgroups where the adapter has them) and,
//! when that one runs subgroups, a second one on the shared-memory paths, so every
//! equivalence test covers both. Without an adapter the tests print
//! "skipped: <reason>" and pass, unless `ORRERY_REQUIRE_WGPU=1`, which makes a missing
//! adapter a failure.

#![allow(dead_code)]

use std::sync::OnceLock;

use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::{CpuExecutor, Error};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Sizes every equivalence test runs: the edges of a subgroup, of a workgroup and of a
/// tile, and one size that needs several tiles of partials.
pub const SIZES: [usize; 7] = [0, 1, 31, 32, 33, 1023, 4097];

fn require() -> bool {
    std::env::var("ORRERY_REQUIRE_WGPU").is_ok_and(|v| v == "1")
}

fn open(options: &WgpuOptions) -> Result<WgpuExecutor, Error> {
    WgpuExecutor::with_options(options)
}

fn base_options() -> WgpuOptions {
    WgpuOptions::from_env().expect("ORRERY_WGPU_* variables are valid")
}

/// The executors every test runs on, created once per test binary: `(label, executor)`,
/// or why there are none.
fn opened() -> &'static Result<Vec<(String, WgpuExecutor)>, String> {
    static EXECS: OnceLock<Result<Vec<(String, WgpuExecutor)>, String>> = OnceLock::new();
    EXECS.get_or_init(|| {
        let default = match open(&base_options()) {
            Ok(e) => e,
            Err(e) => {
                assert!(!require(), "ORRERY_REQUIRE_WGPU=1 but no wgpu executor: {e}");
                return Err(format!("no wgpu executor: {e}"));
            }
        };
        let mut out = Vec::new();
        let runs_subgroups = default.capabilities().subgroup_size.is_some();
        out.push((format!("{} [default]", default.capabilities()), default));
        if runs_subgroups {
            let shared =
                open(&WgpuOptions { subgroups: false, ..base_options() }).expect("a second device on the same adapter");
            out.push((format!("{} [shared-memory paths]", shared.capabilities()), shared));
        }
        Ok(out)
    })
}

/// The executors every test runs on; empty (after printing "skipped: <reason>") without
/// an adapter.
pub fn executors() -> &'static [(String, WgpuExecutor)] {
    match opened() {
        Ok(execs) => execs,
        Err(reason) => {
            orrery_core::skip::report("wgpu test", reason);
            &[]
        }
    }
}

/// The default executor alone, or `None` (after printing why) without an adapter.
pub fn executor() -> Option<&'static WgpuExecutor> {
    executors().first().map(|(_, e)| e)
}

/// The CPU reference.
pub fn cpu() -> CpuExecutor {
    CpuExecutor::new()
}

/// A seeded generator, one stream per (test, size).
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Whether the large cases (1M-element sorts) run: `ORRERY_LARGE_TESTS=1`.
pub fn large_tests() -> bool {
    std::env::var("ORRERY_LARGE_TESTS").is_ok_and(|v| v == "1")
}

/// `n` random u32.
pub fn random_u32(rng: &mut ChaCha8Rng, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.random()).collect()
}

/// Runs `f` on every executor with its label.
pub fn each(mut f: impl FnMut(&str, &WgpuExecutor)) {
    for (label, exec) in executors() {
        f(label, exec);
    }
}

/// The default executor with views bound at multiples of 256 bytes, so views at other
/// offsets go through the kernels' `off_*` fields even where the adapter's alignment is
/// small (lavapipe); created once. `None` without an adapter.
pub fn coarse() -> Option<&'static WgpuExecutor> {
    static COARSE: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    COARSE
        .get_or_init(|| {
            executor()?;
            Some(
                open(&WgpuOptions { view_alignment: Some(256), ..base_options() })
                    .expect("a coarse-alignment executor"),
            )
        })
        .as_ref()
}

/// Workgroup memory of [`small_workgroup_memory`]: WebGPU's minimum
/// `max_compute_workgroup_storage_size`.
pub const SMALL_WORKGROUP_BYTES: u32 = 16 * 1024;

/// The default executor opened with [`SMALL_WORKGROUP_BYTES`] of workgroup memory, so
/// kernels that size theirs from the limit take their smaller paths (the one-level
/// Hilbert keys of `core/sfc`) even where the adapter has more; created once. `None`
/// without an adapter.
pub fn small_workgroup_memory() -> Option<&'static WgpuExecutor> {
    static SMALL: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    SMALL
        .get_or_init(|| {
            executor()?;
            Some(
                open(&WgpuOptions { max_workgroup_storage: Some(SMALL_WORKGROUP_BYTES), ..base_options() })
                    .expect("an executor with 16 KB of workgroup memory"),
            )
        })
        .as_ref()
}

/// Runs `f` on every executor of [`executors`] and on [`coarse`].
pub fn each_view(mut f: impl FnMut(&str, &WgpuExecutor)) {
    each(&mut f);
    if let Some(e) = coarse() {
        f("coarse view alignment (256 bytes)", e);
    }
}
