//! Shared helpers of the CUDA test binaries: the device (or a skip), input generators
//! and the sizes every primitive is checked at.

#![allow(dead_code)]

use std::sync::OnceLock;

use orrery_backend_cuda::CudaExecutor;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Sizes every primitive is compared at: empty, one, around a warp, around a tile, a
/// million, and a size that is a multiple of no tile.
pub const SIZES: [usize; 9] = [0, 1, 31, 32, 33, 1023, 4097, 1 << 20, 1_000_003];

/// Whether a missing device must fail the test (`ORRERY_REQUIRE_CUDA=1`).
pub fn cuda_required() -> bool {
    std::env::var("ORRERY_REQUIRE_CUDA").is_ok_and(|v| v == "1")
}

/// [`SIZES`] up to `ORRERY_TEST_MAX_N` (sanitizer runs cap the sizes).
pub fn sizes() -> Vec<usize> {
    let max = std::env::var("ORRERY_TEST_MAX_N").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(usize::MAX);
    SIZES.iter().copied().filter(|&n| n <= max).collect()
}

/// The executor shared by the tests of one binary, or `None` after printing
/// "skipped: <reason>" on stderr (a failure instead with `ORRERY_REQUIRE_CUDA=1`).
pub fn device() -> Option<&'static CudaExecutor> {
    static EXEC: OnceLock<Result<CudaExecutor, String>> = OnceLock::new();
    match EXEC.get_or_init(|| CudaExecutor::from_env().map_err(|e| e.to_string())) {
        Ok(e) => Some(e),
        Err(reason) => {
            assert!(!cuda_required(), "ORRERY_REQUIRE_CUDA=1 but CUDA is unavailable: {reason}");
            orrery_core::skip::report("cuda test", reason);
            None
        }
    }
}

/// The device, or return from the test (after printing why).
#[macro_export]
macro_rules! cuda_or_skip {
    () => {
        match common::device() {
            Some(e) => e,
            None => return,
        }
    };
}

/// A reproducible generator per (test, size).
pub fn rng(test: u64, n: usize) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(test.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ n as u64)
}
