//! Every built-in kernel module compiles with NVRTC, without a GPU: to PTX for
//! `compute_90`, and through ptxas to a CUBIN for `sm_90` (which also checks register
//! and shared-memory limits). Only libnvrtc is needed; CI gets it from the
//! `nvidia-cuda-nvrtc` wheel. Without NVRTC the tests print "skipped: <reason>" unless
//! `ORRERY_REQUIRE_NVRTC=1` (or `ORRERY_REQUIRE_CUDA=1`).

use orrery_backend_cuda::{CORE_MODULES, check_nvrtc, compile_module_to_cubin, compile_module_to_ptx, compile_to_ptx};
use orrery_core::{Error, KernelSource};

fn nvrtc_or_skip() -> bool {
    match check_nvrtc() {
        Ok(()) => true,
        Err(e) => {
            let required = ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"]
                .iter()
                .any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
            assert!(!required, "NVRTC is required but unavailable: {e}");
            eprintln!("skipped: {e}");
            false
        }
    }
}

/// The entry points each module must define (the host code launches them by name).
/// Modules of this crate's other primitives (search, segmented, histogram) are compiled
/// by the tests below too; their entry lists live with their own tests.
const ENTRIES: [(&str, &[&str]); 5] = [
    ("core/scan", &["scan_exclusive_u32", "scan_inclusive_u32", "compact_b4", "compact_b8", "compact_words"]),
    (
        "core/reduce",
        &[
            "reduce_sum_u32",
            "reduce_min_u32",
            "reduce_max_u32",
            "reduce_sum_i32",
            "reduce_min_i32",
            "reduce_max_i32",
            "reduce_sum_u64",
            "reduce_min_u64",
            "reduce_max_u64",
            "reduce_sum_i64",
            "reduce_min_i64",
            "reduce_max_i64",
            "reduce_sum_f32",
            "reduce_min_f32",
            "reduce_max_f32",
            "reduce_sum_f64",
            "reduce_min_f64",
            "reduce_max_f64",
        ],
    ),
    ("core/sort", &["radix_histogram", "radix_bin_offsets", "radix_onesweep"]),
    (
        "core/movement",
        &[
            "gather_b4",
            "gather_b8",
            "gather_words",
            "scatter_b4",
            "scatter_b8",
            "scatter_words",
            "fill_b8",
            "fill_words",
            "iota_u32",
            "indirect_args",
        ],
    ),
    (
        "core/sfc",
        &[
            "sfc_morton_f32",
            "sfc_morton_f64",
            "sfc_hilbert1_f32",
            "sfc_hilbert1_f64",
            "sfc_hilbert3_f32",
            "sfc_hilbert3_f64",
        ],
    ),
];

#[test]
fn every_core_module_compiles_to_ptx_for_compute_90() {
    if !nvrtc_or_skip() {
        return;
    }
    for module in &CORE_MODULES {
        let ptx = compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{e}"));
        let entries = ENTRIES.iter().find(|(name, _)| *name == module.name).map_or(&[][..], |(_, e)| *e);
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{} lacks entry {entry}", module.name);
        }
    }
}

#[test]
fn every_core_module_assembles_to_a_cubin_for_sm_90() {
    if !nvrtc_or_skip() {
        return;
    }
    for module in &CORE_MODULES {
        let cubin = compile_module_to_cubin(module, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        assert!(cubin.starts_with(b"\x7fELF"), "{} did not give an ELF image", module.name);
    }
}

#[test]
fn a_plain_source_compiles_to_ptx() {
    if !nvrtc_or_skip() {
        return;
    }
    let ptx = compile_to_ptx(r#"extern "C" __global__ void twice(float* v) { v[threadIdx.x] *= 2.0f; }"#, "compute_90")
        .unwrap();
    assert!(ptx.contains(".entry twice("));
}

#[test]
fn compile_errors_carry_the_nvrtc_log() {
    if !nvrtc_or_skip() {
        return;
    }
    let broken = KernelSource::new("test/broken", "extern \"C\" __global__ void k(int* p) { p[0] = nope; }", "");
    match compile_module_to_ptx(&broken, "compute_90") {
        Err(Error::KernelCompile { module, target, log }) => {
            assert_eq!((module.as_str(), target.as_str()), ("test/broken", "compute_90"));
            assert!(log.contains("nope"), "log: {log}");
        }
        other => panic!("expected KernelCompile, got {other:?}"),
    }
}

#[test]
fn missing_driver_is_an_error_not_a_panic() {
    // On a machine without libcuda (CI), creating an executor must fail cleanly.
    if orrery_backend_cuda::check_driver().is_err() {
        assert!(matches!(orrery_backend_cuda::CudaExecutor::new(0), Err(Error::DeviceUnavailable { .. })));
        assert!(matches!(orrery_backend_cuda::CudaExecutor::from_env(), Err(Error::DeviceUnavailable { .. })));
    }
}
