//! Helpers shared by the test modules: test data, comparisons, and the GPU executors
//! (one of each kind per test process, opened on first use; a missing one is reported as
//! a skip, or fails under `ORRERY_REQUIRE_CUDA=1` / `ORRERY_REQUIRE_WGPU=1`).

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::{ParticleSet, ParticlesView, Real};
use orrery_traverse::Forces;

/// An executor from `open`, or `None` after reporting the skip; with `require_var=1` a
/// missing executor is a failure.
pub fn open_or_skip<E>(open: impl FnOnce() -> orrery_core::Result<E>, require_var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            let required = std::env::var(require_var).is_ok_and(|v| v == "1");
            assert!(!required, "{require_var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("traverse GPU test ({require_var} not set)"), &e.to_string());
            None
        }
    }
}

/// One GPU test at a time: the executors are shared.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The CUDA executor, or `None` (skip reported).
pub fn cuda() -> Option<&'static CudaExecutor> {
    static EXEC: OnceLock<Option<CudaExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA")).as_ref()
}

/// The wgpu executor (subgroups where the adapter has them), or `None` (skip reported).
pub fn wgpu() -> Option<&'static WgpuExecutor> {
    static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU")).as_ref()
}

/// A wgpu executor that runs the paths without subgroups, or `None` (skip reported).
pub fn wgpu_without_subgroups() -> Option<&'static WgpuExecutor> {
    static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| {
        let options = WgpuOptions { subgroups: false, ..WgpuOptions::default() };
        open_or_skip(|| WgpuExecutor::with_options(&options), "ORRERY_REQUIRE_WGPU")
    })
    .as_ref()
}

/// A validated view of a set (panics on invalid test data).
pub fn view<T: Real>(set: &ParticleSet<T>) -> ParticlesView<'_, T> {
    set.view().unwrap()
}

/// The largest relative difference `|a - b| / max(|b|, floor)` over every entry of two
/// force results of one length (accelerations per component, relative to the norm of
/// `b`'s acceleration; potentials relative to `b`'s).
pub fn max_rel_diff(a: &Forces<f64>, b: &Forces<f64>) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths");
    let mut worst = 0.0f64;
    for k in 0..a.len() {
        let (ra, rb) = (a.acc(k), b.acc(k));
        let norm = (rb[0] * rb[0] + rb[1] * rb[1] + rb[2] * rb[2]).sqrt().max(1e-300);
        for c in 0..3 {
            worst = worst.max((ra[c] - rb[c]).abs() / norm);
        }
        worst = worst.max((a.pot[k] - b.pot[k]).abs() / b.pot[k].abs().max(1e-300));
    }
    worst
}

/// Whether two results are equal bit for bit.
pub fn same_bits<T: Real>(a: &Forces<T>, b: &Forces<T>) -> bool {
    let bits = |v: &[T]| v.iter().map(|&x| Into::<f64>::into(x).to_bits()).collect::<Vec<u64>>();
    bits(&a.ax) == bits(&b.ax)
        && bits(&a.ay) == bits(&b.ay)
        && bits(&a.az) == bits(&b.az)
        && bits(&a.pot) == bits(&b.pot)
}

/// Runs `f` in a rayon pool of `threads` threads.
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}

/// Asserts per target `|a_gpu - a_cpu| <= tolerance |a_cpu|` and, with `potentials`, the
/// same for the potentials.
pub fn assert_close(gpu: &Forces<f32>, cpu: &Forces<f32>, tolerance: f64, potentials: bool, what: &str) {
    for i in 0..cpu.len() {
        let (g, c) = (gpu.acc(i), cpu.acc(i));
        let diff = (0..3).map(|a| (f64::from(g[a]) - f64::from(c[a])).powi(2)).sum::<f64>().sqrt();
        let norm = (0..3).map(|a| f64::from(c[a]).powi(2)).sum::<f64>().sqrt();
        assert!(diff <= tolerance * norm + 1e-30, "{what}: target {i}: {g:?} vs {c:?}");
        if potentials {
            let dp = (f64::from(gpu.pot[i]) - f64::from(cpu.pot[i])).abs();
            assert!(dp <= tolerance * f64::from(cpu.pot[i]).abs() + 1e-30, "{what}: potential of target {i}");
        }
    }
}
