//! The ball-tree build on each executor: orrery-balltree's recursive CPU build inside
//! the executor's pool, or its GPU builder on CUDA / wgpu, phase by phase.

use orrery_balltree::gpu::{GpuBallTreeBuilder, GpuReal, Strategy};
use orrery_balltree::{BallTree, Batches, PointCloud};
use orrery_core::{CpuExecutor, GpuExecutor, Real, Result};

use crate::timing::Phases;

/// A built tree and the time of each phase.
#[derive(Debug)]
pub struct Built {
    /// The tree.
    pub tree: BallTree,
    /// Time per phase.
    pub phases: Phases,
}

/// `n` points in `batches` batches of equal size (the first `n % batches` batches hold
/// one point more).
///
/// # Errors
/// More batches than points.
pub fn equal_batches(n: usize, batches: usize) -> anyhow::Result<Batches> {
    if batches > n {
        anyhow::bail!("--batches {batches} exceeds the {n} points: every batch needs at least one point");
    }
    let (base, extra) = (n / batches, n % batches);
    let mut offsets = Vec::with_capacity(batches + 1);
    offsets.push(0usize);
    for b in 0..batches {
        let size = base + usize::from(b < extra);
        offsets.push(offsets[b] + size);
    }
    Ok(Batches::from_offsets(&offsets)?)
}

/// The three columns as row-major `(n, 3)` coordinates.
pub fn rows<T: Real>(cols: &[Vec<T>; 3]) -> Vec<T> {
    (0..cols[0].len()).flat_map(|i| [cols[0][i], cols[1][i], cols[2][i]]).collect()
}

/// Builds on the CPU (call inside the executor's pool): validate, build.
///
/// # Errors
/// The library's errors.
pub fn on_cpu<T: Real>(exec: &CpuExecutor, points: &[T], batches: &Batches) -> Result<Built> {
    let mut phases = Phases::default();
    let cloud = phases.time(exec, "validate", || PointCloud::new(points, 3, batches.clone()))?;
    let tree = phases.time(exec, "build", || orrery_balltree::build_balltree(&cloud))?;
    Ok(Built { tree, phases })
}

/// Builds on a GPU executor: validate, upload, build, download.
///
/// # Errors
/// The library's and the device's errors.
pub fn on_gpu<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    points: &[T],
    batches: &Batches,
    strategy: Strategy,
) -> Result<Built> {
    let mut phases = Phases::default();
    phases.time(exec, "validate", || PointCloud::new(points, 3, batches.clone()).map(drop))?;
    let buffer = phases.time(exec, "upload", || exec.upload(points))?;
    let mut builder = GpuBallTreeBuilder::<E>::new(strategy);
    let builder_ref = &mut builder;
    let device_tree = phases.time(exec, "build", move || builder_ref.build(exec, &buffer, 3, batches))?;
    let tree = phases.time(exec, "download", || device_tree.download(exec))?;
    Ok(Built { tree, phases })
}
