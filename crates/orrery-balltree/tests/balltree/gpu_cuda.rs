//! The GPU build on CUDA against the CPU build (bit-identical indices and mask), the
//! kernels' NVRTC compilation (no GPU needed), and the benchmark workloads at full size.
//! Without a device the tests print "skipped: <reason>" and pass, unless
//! `ORRERY_REQUIRE_CUDA=1`; the compile test needs only libnvrtc (`ORRERY_REQUIRE_NVRTC=1`
//! makes its absence a failure).

use std::sync::OnceLock;

use orrery_backend_cuda::{CudaExecutor, check_nvrtc, compile_module_to_cubin, compile_module_to_ptx};
use orrery_balltree::gpu::KERNEL_MODULES;

use crate::gpu_common;

fn cuda() -> Option<&'static CudaExecutor> {
    static EXEC: OnceLock<Option<CudaExecutor>> = OnceLock::new();
    EXEC.get_or_init(|| gpu_common::open_or_skip(CudaExecutor::from_env, "ORRERY_REQUIRE_CUDA")).as_ref()
}

crate::gpu_tests!(cuda);

#[test]
fn kernels_compile_with_nvrtc_for_sm_90() {
    if let Err(e) = check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        println!("skipped: {e}");
        return;
    }
    let mut ptx = String::new();
    for module in &KERNEL_MODULES {
        ptx += &compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
    }
    for entry in [
        "bt_reset_bounds",
        "bt_bounds_f32",
        "bt_bounds_f64",
        "bt_choose_f32",
        "bt_choose_f64",
        "bt_keys_f32",
        "bt_keys_f64",
        "bt_node_keys",
        "bt_local_f32",
        "bt_local_f64",
    ] {
        assert!(ptx.contains(&format!(".entry {entry}(")), "no entry {entry}");
    }
    for module in &KERNEL_MODULES {
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{}: {e}", module.name));
        assert!(cubin.starts_with(b"\x7fELF"));
    }
}

/// The benchmark workloads (3D uniform: 64 x 16384 and 1 x 2^20) at full size.
#[test]
fn benchmark_workloads_match_the_cpu() {
    let Some(e) = cuda() else { return };
    let sizes = vec![16384usize; 64];
    let n: usize = sizes.iter().sum();
    gpu_common::check(e, "64 x 16384 uniform", &gpu_common::uniform(n, 3, 640), 3, &gpu_common::offsets(&sizes));
    let n = 1 << 20;
    gpu_common::check(e, "1 x 2^20 uniform", &gpu_common::uniform(n, 3, 1), 3, &[0, n]);
    gpu_common::check(e, "1 x 2^20 + 3 clustered", &gpu_common::clustered(n + 3, 3, 2), 3, &[0, n + 3]);
}
