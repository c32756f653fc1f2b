//! Direct summation on GPUs: [`direct_sum_gpu`] (f32, CUDA and wgpu) and
//! [`direct_sum_gpu_f64`] (the f64 reference, CUDA only), the device twins of
//! [`crate::direct::direct_sum`] and [`crate::direct::direct_sum_f64`] with the same pair
//! rule (self pair skipped by index, a zero softened distance contributes nothing).
//!
//! # The f32 kernel
//! `kernels/traverse/direct.cu` (its header has the reasoning and the cost model): blocks
//! of [`THREADS`] threads, [`TARGETS_PER_THREAD`] targets per thread, shared-memory tiles
//! of [`THREADS`] sources as `float4` (x, y, z, m), the next tile prefetched into
//! registers, `rsqrt.approx.ftz`, fused multiply-adds, three inner loops chosen per tile
//! and uniform per block (no select when softened; the self pair skipped by index only in
//! the tiles that can hold one of the block's targets; `s > 0` selected when unsoftened).
//! Assumed cost: 14 issued instructions and 20 flops per interaction (an FMA counted as
//! 2, the rsqrt as 1); the H200 issue limit is then 2.35e12 interactions/s, and the goal
//! is 2e12 (twice Ryoanji's 1.09e12). The WGSL twin keeps one loop with both selects.
//!
//! # Precision
//! f32 results differ from the f64 reference by the f32 roundings of the sums (about
//! `sqrt(n)` ulps of the largest terms for random signs) plus the rsqrt's relative error
//! below 2^-22.9 (CUDA's `rsqrt.approx`; WGSL's `inverseSqrt` is specified to 2 ulps). A
//! Plummer softening whose square is below the f32 normal range (`eps < 1.1e-19`) is
//! passed as 0 (unsoftened) to the f32 kernels.
//!
//! # Targets
//! `None` computes every body (results in body order); `Some(targets)` the listed body
//! indices (results in list order). Device-resident indices are not validated (that would
//! need a host read): an index `>= n` yields zero acceleration and potential, never a
//! fault; validate on the host with [`orrery_core::executor::check_indices`] first if
//! needed.

use orrery_core::executor::{check_count, unsupported};
use orrery_core::{DeviceBuffer, Error, ExecutorKind, GpuExecutor, KernelSource, LaunchConfig, Result};

use super::device::{DeviceBodies, DeviceForces};
use crate::bodies::{Gravity, Softening};

/// The module `traverse/direct`.
pub const MODULE: KernelSource =
    KernelSource::new("traverse/direct", orrery_kernels::traverse::unit::DIRECT, orrery_shaders::traverse::DIRECT);

/// Threads per block of the f32 kernels, and sources per shared tile
/// (`TR_DIRECT_THREADS` / `THREADS` in the sources).
pub const THREADS: u32 = 128;

/// Targets per thread of the f32 kernels (`TR_DIRECT_TARGETS` / `TARGETS`).
pub const TARGETS_PER_THREAD: u32 = 4;

/// Threads per block (one target each) of the f64 kernels (`TR_DIRECT64_THREADS`).
pub const THREADS_F64: u32 = 128;

/// Most bodies and targets of one launch: the kernels index in u32 and round tile and
/// block bounds up by up to 1024.
pub const MAX_BODIES: usize = u32::MAX as usize - 1024;

/// The entry points of [`MODULE`] (the f64 ones exist in CUDA only).
pub const ENTRIES: [&str; 4] = ["direct_f32", "direct_targets_f32", "direct_f64", "direct_targets_f64"];

mod k {
    orrery_core::kernels! {
        module = super::MODULE;
        /// f32 forces on every body.
        pub(super) fn direct_f32(
            read x: f32, read y: f32, read z: f32, read m: f32,
            write ax: f32, write ay: f32, write az: f32, write pot: f32,
            scalar n: u32, scalar g: f32, scalar soft2: f32, scalar clamped: u32,
        );
        /// f32 forces on the listed targets.
        pub(super) fn direct_targets_f32(
            read x: f32, read y: f32, read z: f32, read m: f32, read targets: u32,
            write ax: f32, write ay: f32, write az: f32, write pot: f32,
            scalar n: u32, scalar count: u32, scalar g: f32, scalar soft2: f32, scalar clamped: u32,
        );
        /// f64 forces on every body (CUDA only).
        pub(super) fn direct_f64(
            read x: f32, read y: f32, read z: f32, read m: f32,
            write ax: f64, write ay: f64, write az: f64, write pot: f64,
            scalar n: u32, scalar g: f64, scalar soft2: f64, scalar clamped: u32,
        );
        /// f64 forces on the listed targets (CUDA only).
        pub(super) fn direct_targets_f64(
            read x: f32, read y: f32, read z: f32, read m: f32, read targets: u32,
            write ax: f64, write ay: f64, write az: f64, write pot: f64,
            scalar n: u32, scalar count: u32, scalar g: f64, scalar soft2: f64, scalar clamped: u32,
        );
    }
}

/// The kernels' `soft2` (`eps^2` or `(2h)^2`, as the CPU computes it) and `clamped` flag.
fn law<T: orrery_core::Real>(softening: Softening<T>) -> (T, u32) {
    match softening {
        Softening::Plummer(eps) => (eps * eps, 0),
        Softening::Clamped(h) => ((h + h) * (h + h), 1),
    }
}

/// Checks the common arguments; returns `(n, count)`.
fn check<E: GpuExecutor, T: orrery_core::Real>(
    bodies: &DeviceBodies<E>,
    targets: Option<&E::Buffer<u32>>,
    gravity: &Gravity<T>,
    out: &DeviceForces<E, T>,
) -> Result<(u32, u32)> {
    let n = bodies.check()?;
    gravity.check()?;
    let count = targets.map_or(n, DeviceBuffer::len);
    check_count("targets", count)?;
    for (what, len) in [("bodies", n), ("targets", count)] {
        if len > MAX_BODIES {
            return Err(Error::TooManyPoints { count: len, max: MAX_BODIES, what });
        }
    }
    out.check_len(count)?;
    Ok((n as u32, count as u32))
}

/// f32 accelerations and potentials of `targets` (every body for `None`) from every body,
/// into `out` (one entry per target, in target order), enqueued on the executor's stream.
///
/// # Errors
/// [`Error::LengthMismatch`], [`Error::EmptyInput`] or [`Error::TooManyPoints`] for the
/// shapes of `bodies` and `out` ([`DeviceBodies::check`], [`DeviceForces::check_len`];
/// more than [`MAX_BODIES`]); the errors of [`Gravity::check`]; compile and device
/// failures. An empty target list launches nothing.
pub fn direct_sum_gpu<E: GpuExecutor>(
    exec: &E,
    bodies: &DeviceBodies<E>,
    targets: Option<&E::Buffer<u32>>,
    gravity: &Gravity<f32>,
    out: &mut DeviceForces<E>,
) -> Result<()> {
    let (n, count) = check(bodies, targets, gravity, out)?;
    if count == 0 {
        return Ok(());
    }
    let (soft2, clamped) = law(gravity.softening);
    let soft2 = if soft2 < f32::MIN_POSITIVE { 0.0 } else { soft2 };
    let blocks = count.div_ceil(THREADS * TARGETS_PER_THREAD);
    let config = LaunchConfig::blocks(blocks, THREADS);
    let (b, g) = (bodies, gravity.g);
    let DeviceForces { ax, ay, az, pot } = out;
    match targets {
        None => k::direct_f32(exec, &config, &b.x, &b.y, &b.z, &b.m, ax, ay, az, pot, n, g, soft2, clamped),
        Some(t) => k::direct_targets_f32(
            exec, &config, &b.x, &b.y, &b.z, &b.m, t, ax, ay, az, pot, n, count, g, soft2, clamped,
        ),
    }
}

/// The f64 reference on the device: [`crate::direct::direct_sum_f64`]'s rule for the f32
/// bodies (widened), every operation in f64 and correctly rounded, the sources in index
/// order; otherwise as [`direct_sum_gpu`].
///
/// # Errors
/// [`Error::Unsupported`] unless the executor is CUDA with f64 arithmetic (the WGSL
/// module has no f64 entries); otherwise as [`direct_sum_gpu`].
pub fn direct_sum_gpu_f64<E: GpuExecutor>(
    exec: &E,
    bodies: &DeviceBodies<E>,
    targets: Option<&E::Buffer<u32>>,
    gravity: &Gravity<f64>,
    out: &mut DeviceForces<E, f64>,
) -> Result<()> {
    if exec.kind() != ExecutorKind::Cuda || !exec.limits().f64 {
        return Err(unsupported(&exec.name(), "direct_sum_gpu_f64", "f64 direct summation runs on CUDA only"));
    }
    let (n, count) = check(bodies, targets, gravity, out)?;
    if count == 0 {
        return Ok(());
    }
    let (soft2, clamped) = law(gravity.softening);
    let config = LaunchConfig::blocks(count.div_ceil(THREADS_F64), THREADS_F64);
    let (b, g) = (bodies, gravity.g);
    let DeviceForces { ax, ay, az, pot } = out;
    match targets {
        None => k::direct_f64(exec, &config, &b.x, &b.y, &b.z, &b.m, ax, ay, az, pot, n, g, soft2, clamped),
        Some(t) => k::direct_targets_f64(
            exec, &config, &b.x, &b.y, &b.z, &b.m, t, ax, ay, az, pot, n, count, g, soft2, clamped,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host's launch constants are the ones the sources are compiled for, and every
    /// entry point exists in both languages (the f64 ones in CUDA only).
    #[test]
    fn sources_match_the_host() {
        let cuda = MODULE.cuda;
        assert!(cuda.contains(&format!("#define TR_DIRECT_THREADS {THREADS}u")));
        assert!(cuda.contains(&format!("#define TR_DIRECT_TARGETS {TARGETS_PER_THREAD}u")));
        assert!(cuda.contains(&format!("#define TR_DIRECT64_THREADS {THREADS_F64}u")));
        assert!(MODULE.wgsl.contains(&format!("const THREADS: u32 = {THREADS}u;")));
        assert!(MODULE.wgsl.contains(&format!("const TARGETS: u32 = {TARGETS_PER_THREAD}u;")));
        for entry in ENTRIES {
            assert!(orrery_core::gpu::cuda_params(cuda, entry).is_some(), "CUDA lacks {entry}");
            let cuda_only = super::super::CUDA_ONLY_ENTRIES.contains(&entry);
            assert_eq!(MODULE.wgsl.contains(&format!("fn {entry}(")), !cuda_only, "WGSL and {entry}");
        }
    }

    #[test]
    fn softening_becomes_the_kernels_squared_length() {
        assert_eq!(law(Softening::Plummer(0.5f32)), (0.25, 0));
        assert_eq!(law(Softening::Clamped(0.5f64)), (1.0, 1));
    }
}
