//! All five families in one call, in their dependency order: centroid, then
//! sub-structure and scale (both use the centroid family), then the Gaussian potential
//! (uses the centroid family and `sigma`), and diversity.

use orrery_core::Result;

use crate::centroid::{CentroidParams, CentroidStats, centroid_stats};
use crate::diversity::{DiversityStats, diversity_stats};
use crate::input::Clusters;
use crate::potential::{PotentialStats, potential_stats};
use crate::scale::{ScaleStats, scale_stats};
use crate::substructure::{SubstructureStats, substructure_stats};

/// Every statistic of every cluster, one struct per family.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterStatistics {
    /// Distances to the centroid: cohesion, inertia, spread, skew, outliers, ...
    pub centroid: CentroidStats,
    /// The two-means split: inertia ratio, silhouette, ...
    pub substructure: SubstructureStats,
    /// `sigma`, the median pairwise distance.
    pub scale: ScaleStats,
    /// The Gaussian potential at width `sigma`: depth, curvature, escape, entanglement.
    pub potential: PotentialStats,
    /// Pairwise-distance moments and the 20-bin entropy.
    pub diversity: DiversityStats,
}

/// Computes all five families.
///
/// # Errors
/// Those of [`centroid_stats`] (bad thresholds).
pub fn cluster_statistics(clusters: &Clusters<'_>, params: &CentroidParams) -> Result<ClusterStatistics> {
    let centroid = centroid_stats(clusters, params)?;
    let substructure = substructure_stats(clusters, &centroid)?;
    let scale = scale_stats(clusters, &centroid)?;
    let potential = potential_stats(clusters, &centroid, &scale)?;
    let diversity = diversity_stats(clusters)?;
    Ok(ClusterStatistics { centroid, substructure, scale, potential, diversity })
}
