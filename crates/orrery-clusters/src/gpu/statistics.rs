//! All five families on one executor ([`crate::statistics::cluster_statistics`]'s result).

use orrery_core::{GpuExecutor, Result};

use super::centroid::GpuCentroidStats;
use super::device::DeviceClusters;
use super::pairwise::{GpuDiversityStats, GpuPotentialStats, GpuScaleStats};
use super::substructure::GpuSubstructureStats;
use crate::centroid::CentroidParams;
use crate::input::Clusters;
use crate::statistics::ClusterStatistics;

/// Every statistic of `clusters` on `exec`: one upload, the centroid family, then the
/// sub-structure, scale, potential (at the scale's sigma) and diversity families on the
/// device, one download per family.
///
/// # Errors
/// The errors of [`CentroidParams::validate`]; the limits of the engines
/// ([`GpuScaleStats::new`]); compile, allocation and device failures.
pub fn cluster_statistics<E: GpuExecutor>(
    exec: &E,
    clusters: &Clusters<'_>,
    params: &CentroidParams,
) -> Result<ClusterStatistics> {
    params.validate()?;
    let device = DeviceClusters::upload(exec, clusters)?;
    let mut centroid = GpuCentroidStats::new(exec, &device)?;
    centroid.run(exec, &device, params)?;
    let mut sub = GpuSubstructureStats::new(exec, &device)?;
    sub.run(exec, &device, &centroid)?;
    let mut scale = GpuScaleStats::new(exec, &device)?;
    scale.run(exec, &device, &centroid)?;
    let mut potential = GpuPotentialStats::new(exec, &device)?;
    potential.run(exec, &device, &centroid, &scale)?;
    let mut diversity = GpuDiversityStats::new(exec, &device)?;
    diversity.run(exec, &device)?;
    Ok(ClusterStatistics {
        centroid: centroid.download(exec)?,
        substructure: sub.download(exec)?,
        scale: scale.download(exec)?,
        potential: potential.download(exec)?,
        diversity: diversity.download(exec)?,
    })
}
