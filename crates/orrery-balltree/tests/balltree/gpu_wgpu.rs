//! The GPU build on wgpu against the CPU build (bit-identical indices and mask). Runs on
//! any adapter (lavapipe in CI). Without one the tests print "skipped: <reason>" and
//! pass, unless `ORRERY_REQUIRE_WGPU=1`.

use std::sync::OnceLock;

use orrery_backend_wgpu::WgpuExecutor;

use crate::gpu_common;

fn wgpu() -> Option<&'static WgpuExecutor> {
    static EXEC: OnceLock<Option<WgpuExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| gpu_common::open_or_skip(WgpuExecutor::new, "ORRERY_REQUIRE_WGPU")).as_ref()
}

crate::gpu_tests!(wgpu);
