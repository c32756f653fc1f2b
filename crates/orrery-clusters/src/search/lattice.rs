//! Lattice search: the user's clusters are the lists. Per query the `nprobe` clusters
//! with the best centroids (by the search metric, ties to the lower cluster), then a
//! partial top-k per query-cluster pair, merged by the same engine as the inverted file
//! (the list-probing engine of `search/probe.rs`). Rows are the clusters' global rows.
//!
//! The centroids are those of the centroid family's first pass
//! ([`crate::centroid::centroids`]), so the fused search ([`crate::search::fused`])
//! measures exactly the distances of [`crate::CentroidStats::member_distance`].

use orrery_core::Result;

use super::ivf::check_nprobe;
use super::probe::{Lists, probe_search};
use super::{Metric, Neighbors, check_k, check_query_dim};
use crate::centroid::centroids;
use crate::input::{Clusters, Vectors};

/// A lattice over clusters: their centroids, with the clusters borrowed.
#[derive(Debug, Clone)]
pub struct LatticeIndex<'a> {
    clusters: Clusters<'a>,
    centroids: Vec<f64>,
}

impl<'a> LatticeIndex<'a> {
    /// Computes the centroids of `clusters`.
    ///
    /// # Errors
    /// [`orrery_core::Error::InvalidArgument`] (`what = "cluster offsets"`) naming the
    /// first empty cluster: a cluster without members has no centroid to rank.
    pub fn new(clusters: Clusters<'a>) -> Result<Self> {
        clusters.check_non_empty()?;
        let centroids = centroids(&clusters);
        Ok(Self { clusters, centroids })
    }

    /// The clusters.
    pub fn clusters(&self) -> &Clusters<'a> {
        &self.clusters
    }

    /// The centroids, `clusters * dim` values.
    pub fn centroids(&self) -> &[f64] {
        &self.centroids
    }

    pub(crate) fn lists(&self) -> Lists<'_> {
        Lists {
            vectors: self.clusters.vectors(),
            offsets: self.clusters.offsets(),
            rows: None,
            centroids: &self.centroids,
        }
    }

    pub(crate) fn check(&self, queries: &Vectors<'_>, k: usize, nprobe: usize) -> Result<()> {
        check_k(k)?;
        check_nprobe(nprobe, self.clusters.len())?;
        check_query_dim(self.clusters.dim(), queries)
    }

    /// The `k` nearest rows of every query among the members of its `nprobe` best
    /// clusters.
    ///
    /// ```
    /// # use orrery_clusters::{search::lattice::LatticeIndex, Clusters, Metric, Vectors};
    /// let data = [0.0, 0.1, 0.2, 10.0, 10.1]; // 1-D, clusters {0, 0.1, 0.2} and {10, 10.1}
    /// let lattice = LatticeIndex::new(Clusters::new(&data, 1, &[0, 3, 5])?)?;
    /// let nn = lattice.search(&Vectors::new(&[9.0], 1)?, 2, 1, Metric::L2)?;
    /// assert_eq!(nn.rows_of(0), &[3, 4]);
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`orrery_core::Error::InvalidArgument`] for `k` outside `1..=128` or `nprobe`
    /// outside `1..=clusters`; [`orrery_core::Error::LengthMismatch`] when the
    /// dimensions differ.
    pub fn search(&self, queries: &Vectors<'_>, k: usize, nprobe: usize, metric: Metric) -> Result<Neighbors> {
        self.check(queries, k, nprobe)?;
        Ok(probe_search(&self.lists(), queries, k, nprobe, metric, None))
    }
}
