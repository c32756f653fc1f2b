//! The GPU executors of the GPU test modules (`gpu`, `gpu_families`): one CUDA and one wgpu
//! executor per test binary, opened on first use, and one lock so that GPU tests run one at
//! a time. Without a device a test skips and says so in the log, unless
//! `ORRERY_REQUIRE_CUDA=1` / `ORRERY_REQUIRE_WGPU=1` asks for it: then it fails.

use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;

fn open_or_skip<E>(open: impl FnOnce() -> orrery_core::Result<E>, require_var: &str) -> Option<E> {
    match open() {
        Ok(e) => Some(e),
        Err(e) => {
            let required = std::env::var(require_var).is_ok_and(|v| v == "1");
            assert!(!required, "{require_var}=1 but no executor: {e}");
            orrery_core::skip::report(&format!("clusters GPU test ({require_var} not set)"), &e.to_string());
            None
        }
    }
}

/// One GPU test at a time: the executors are shared.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The CUDA executor, or `None` (skip) without a device.
pub fn cuda() -> Option<&'static CudaExecutor> {
    static EXEC: OnceLock<Option<CudaExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA")).as_ref()
}

/// The wgpu executor, or `None` (skip) without an adapter.
pub fn wgpu() -> Option<&'static WgpuExecutor> {
    static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU")).as_ref()
}

/// Declares `mod cuda` and `mod wgpu`, each with one `#[test]` per case: the case runs on
/// that executor (skipping, and saying so, without one), one GPU test at a time.
macro_rules! gpu_cases {
    ($($case:ident),+ $(,)?) => {
        mod cuda {
            $crate::executors::gpu_cases!(@each cuda, $($case),+);
        }
        mod wgpu {
            $crate::executors::gpu_cases!(@each wgpu, $($case),+);
        }
    };
    (@each $exec:ident, $($case:ident),+) => {
        $(
            #[test]
            fn $case() {
                let _guard = $crate::executors::serial();
                if let Some(e) = $crate::executors::$exec() {
                    super::$case(e);
                }
            }
        )+
    };
}
pub(crate) use gpu_cases;
