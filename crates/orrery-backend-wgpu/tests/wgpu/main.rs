//! Equivalence tests of the wgpu executor against the CPU executor, one module per
//! primitive. Integer outputs must be bit-identical; floating-point reductions agree
//! within the tolerance stated next to each test.
//!
//! Run on lavapipe with
//! `ORRERY_REQUIRE_WGPU=1 XDG_RUNTIME_DIR=$(mktemp -d) cargo test -p orrery-backend-wgpu`;
//! `ORRERY_LARGE_TESTS=1` adds the 1M-pair sorts, `ORRERY_WGPU_BACKEND=gl` runs the
//! same suite on the OpenGL adapter (no subgroups, no f64).

mod common;

mod compact;
mod data;
mod errors;
mod keys;
mod launch;
mod new_primitives;
mod reduce;
mod scan;
mod sort;
mod stream;
mod v2;
mod views;
