//! # orrery-clusters
//!
//! Statistics of clusters of embeddings, and nearest-neighbour search over the same
//! vectors. Clusters are CSR: one row-major `f32` array of member vectors plus `u32`
//! offsets ([`Clusters`]); a cluster may hold a million members or none.
//!
//! Five families of per-cluster statistics (about 38 numbers per cluster; every one is
//! defined, with its population convention, units and edge-case sentinels, in
//! `docs/clusters/statistics.md`, and the choices in ADR 0017):
//!
//! - [`centroid`]: cohesion, inertia, spread, skew, embedding quality, novelty, outlier
//!   ratio, core-periphery ratio (three passes, no atomics, thresholds as arguments);
//! - [`substructure`]: a two-means split seeded at the first and last member with
//!   exactly three Lloyd iterations, its inertia ratio and silhouette;
//! - [`scale`]: `sigma`, the median pairwise distance from a 256-bin histogram (within
//!   one bin width);
//! - [`potential`]: the Gaussian potential at width `sigma`: depth, curvature, escape
//!   probability towards the nearest cluster, entanglement;
//! - [`diversity`]: pairwise-distance moments and the entropy of a 20-bin histogram.
//!
//! Search ([`search`]): exact k-NN ([`exact_search`], `k <= 128`, L2 or inner product,
//! ties to the lower row), an inverted file ([`IvfIndex`]: seeded k-means++ and Lloyd),
//! the lattice over the user's clusters ([`LatticeIndex`]) and its fused variant that
//! measures cohesion and inertia of the members it scores.
//!
//! GPU passes ([`gpu`], generic over `orrery_core::GpuExecutor`): the centroid family on
//! CUDA and wgpu, exact k-NN on CUDA, each tested against this crate's CPU reference.
//!
//! This crate is the CPU reference (rayon). Its passes are shaped like GPU kernels: one
//! flat grid over all clusters per pass, decoded by the index math of [`grid`]; moments
//! by Welford per work item and Chan's merge ([`moments`]); every reduction merged in a
//! fixed order, so every result is one function of the input, whatever the thread
//! count. Distances and scores are accumulated in `f64` ([`dist`]).
//!
//! ```
//! use orrery_clusters::{cluster_statistics, exact_search, CentroidParams, Metric, Vectors};
//! use orrery_clusters::synth::{gaussian_clusters, SynthParams};
//!
//! // 12 Gaussian clusters in 8 dimensions, log-normal sizes around 20 members.
//! let data = gaussian_clusters(&SynthParams { median_size: 20.0, ..SynthParams::new(12, 8) })?;
//! let clusters = data.clusters()?;
//! let stats = cluster_statistics(&clusters, &CentroidParams::default())?;
//! for c in 0..clusters.len() {
//!     let (cohesion, sigma) = (stats.centroid.cohesion[c], stats.scale.sigma[c]);
//!     assert!(cohesion > 0.0 && sigma > 0.0 && stats.diversity.entropy[c] <= 1.0);
//! }
//!
//! // The 5 nearest members of a query, exactly.
//! let query = Vectors::new(&data.vectors[..8], 8)?; // the first member itself
//! let nn = exact_search(&clusters.vectors(), &query, 5, Metric::L2)?;
//! assert_eq!((nn.rows_of(0)[0], nn.scores_of(0)[0]), (0, 0.0));
//! # Ok::<(), orrery_core::Error>(())
//! ```

pub mod centroid;
pub mod dist;
pub mod diversity;
pub mod gpu;
pub mod grid;
pub mod input;
pub mod moments;
pub mod potential;
pub mod scale;
pub mod search;
pub mod statistics;
pub mod substructure;
pub mod synth;

pub use centroid::{CentroidParams, CentroidStats, centroid_stats};
pub use diversity::{DiversityStats, diversity_stats};
pub use input::{Clusters, Vectors};
pub use potential::{PotentialStats, potential_stats};
pub use scale::{ScaleStats, scale_stats};
pub use search::exact::exact_search;
pub use search::fused::FusedStats;
pub use search::ivf::{IvfIndex, IvfParams};
pub use search::lattice::LatticeIndex;
pub use search::{MAX_K, Metric, NO_ROW, Neighbors};
pub use statistics::{ClusterStatistics, cluster_statistics};
pub use substructure::{SubstructureStats, substructure_stats};
