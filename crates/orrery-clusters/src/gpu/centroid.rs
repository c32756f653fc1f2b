//! The centroid family on GPUs ([`crate::centroid::centroid_stats`]'s result): module
//! `clusters/centroid` (`kernels/clusters/centroid.cu`, `shaders/clusters/centroid.wgsl`).
//!
//! # Passes
//! The host cuts every cluster into chunks of `CL_CHUNK_ROWS` (128) members, numbered
//! consecutively over all clusters (the CPU's [`crate::grid::ChunkGrid`] with a smaller
//! chunk, so one 100K-member cluster is 782 blocks), and uploads each chunk's cluster and
//! first row and each cluster's first chunk once ([`GpuCentroidStats::new`]). A run is nine
//! launches, each a chunk-, cluster- or dimension-parallel grid; every reduction writes
//! per-item partials that the next kernel merges in a fixed order, so there are no atomics
//! and a run's result is one function of its input (bit-identical run to run on one
//! executor):
//!
//! 1. sums: per chunk compensated column sums (`cl_sum_chunks`), per cluster their sum in
//!    chunk order and the centroid (`cl_centroids`), the global centroid through partials
//!    of 32 clusters (`cl_global_part`, `cl_global`);
//! 2. distances: per member `r_i` (`cl_distances`, a warp per row), Welford moments of `r`,
//!    `sum r^2`, `sum |x|` per chunk; per cluster Chan's merge and the thresholds
//!    (`cl_moments`);
//! 3. thresholds: per chunk the outliers, the core and the sums of `r` over core and
//!    periphery (`cl_thresholds`); per cluster `|mu|`, `|mu - G|` and the ratios
//!    (`cl_finish`); `s_G` by Huygens' theorem and the novelty (`cl_novelty`).
//!
//! # Precision
//! f32 arithmetic on both executors (WGSL has no f64), with compensated (Neumaier) column
//! sums; results are f32, widened to f64 by [`GpuCentroidStats::download`]. Against the
//! CPU's f64 (tests/clusters/gpu.rs): every statistic within a relative 1e-4 or an
//! absolute 1e-4 of its scale (the data's RMS coordinate magnitude for lengths, its
//! square times the cluster size for the inertia, 1 for the dimensionless fields). The
//! absolute floor is there because f32 rounding of the centroid moves every `r_i` of a
//! cluster together by about `u |mu|`, and because several statistics are differences
//! that can be near 0 (a skew of a symmetric distribution, a centroid coordinate,
//! the offset of a cluster at the global centroid). The counts of outliers and core
//! members compare f32 `r_i` with f32 thresholds: a member within rounding of a
//! threshold can be counted differently from the CPU (the tests allow exactly those).
//! Degenerate clusters get the CPU's sentinels (NaN for empty clusters, 0 spread and skew
//! for equal members), except that the f32 centroid of identical members may differ from
//! them by rounding, so their `r_i` are tiny rather than exactly 0.

use orrery_core::{Error, GpuExecutor, LaunchConfig, Result};

use super::device::DeviceClusters;
use super::plan::row_plan_host;
use super::sources::{
    CENTROID, CL_CHUNK_ROWS, CL_FIELDS, CL_GROUP, CL_MERGE_THREADS, CL_P2_FIELDS, CL_P3_FIELDS, CL_THREADS, field,
};
use crate::centroid::{CentroidParams, CentroidStats};
use crate::input::Clusters;

mod k {
    orrery_core::kernels! {
        module = super::CENTROID;
        /// Pass 1: compensated column sums of every chunk.
        pub(super) fn cl_sum_chunks(
            read vectors: f32, read offsets: u32, read chunk_cluster: u32, read chunk_start: u32,
            write part1: f32, scalar dim: u32, scalar chunks: u32,
        );
        /// Pass 1: per cluster the chunk sums in chunk order, and the centroid.
        pub(super) fn cl_centroids(
            read part1: f32, read offsets: u32, read chunk_first: u32, write sums: f32, write centroids: f32,
            scalar dim: u32, scalar clusters: u32,
        );
        /// Pass 1: sums of 32 clusters' sums.
        pub(super) fn cl_global_part(read sums: f32, write gpart: f32, scalar dim: u32, scalar clusters: u32);
        /// Pass 1: the global centroid.
        pub(super) fn cl_global(
            read gpart: f32, read offsets: u32, write global: f32, scalar dim: u32, scalar clusters: u32,
        );
        /// Pass 2: member distances and per-chunk moments.
        pub(super) fn cl_distances(
            read vectors: f32, read offsets: u32, read chunk_cluster: u32, read chunk_start: u32,
            read centroids: f32, write member_distance: f32, write part2: f32, scalar dim: u32, scalar chunks: u32,
        );
        /// Pass 2: per-cluster moments and thresholds.
        pub(super) fn cl_moments(
            read part2: f32, read offsets: u32, read chunk_first: u32, write stats: f32,
            scalar clusters: u32, scalar chunks: u32, scalar outlier_sigmas: f32, scalar core_scale: f32,
        );
        /// Pass 3: per-chunk counts against the thresholds.
        pub(super) fn cl_thresholds(
            read member_distance: f32, read offsets: u32, read chunk_cluster: u32, read chunk_start: u32,
            read stats: f32, write part3: u32, scalar clusters: u32, scalar chunks: u32,
        );
        /// Per cluster: |mu|, |mu - G|, the pass-3 ratios.
        pub(super) fn cl_finish(
            read centroids: f32, read global: f32, read offsets: u32, read chunk_first: u32, read part3: u32,
            write stats: f32, scalar dim: u32, scalar clusters: u32, scalar chunks: u32,
        );
        /// The global RMS radius and the novelty.
        pub(super) fn cl_novelty(
            read offsets: u32, write global: f32, write stats: f32, scalar dim: u32, scalar clusters: u32,
        );
    }
}

/// The centroid family of one cluster layout on one executor: the plan, the scratch and
/// the outputs, reusable for any number of runs over clusters of that layout.
///
/// ```no_run
/// # fn demo<E: orrery_core::GpuExecutor>(exec: &E, clusters: &orrery_clusters::Clusters<'_>) -> orrery_core::Result<()> {
/// use orrery_clusters::{CentroidParams, gpu::{DeviceClusters, GpuCentroidStats}};
/// let device = DeviceClusters::upload(exec, clusters)?;
/// let mut stats = GpuCentroidStats::new(exec, &device)?;
/// stats.run(exec, &device, &CentroidParams::default())?; // enqueued
/// let host = stats.download(exec)?;                      // waits, widens to f64
/// # Ok(())
/// # }
/// ```
pub struct GpuCentroidStats<E: GpuExecutor> {
    offsets: Vec<u32>,
    dim: usize,
    chunks: usize,
    chunk_cluster: E::Buffer<u32>,
    chunk_start: E::Buffer<u32>,
    chunk_first: E::Buffer<u32>,
    part1: E::Buffer<f32>,
    sums: E::Buffer<f32>,
    gpart: E::Buffer<f32>,
    part2: E::Buffer<f32>,
    part3: E::Buffer<u32>,
    centroids: E::Buffer<f32>,
    global: E::Buffer<f32>,
    member_distance: E::Buffer<f32>,
    stats: E::Buffer<f32>,
}

/// A buffer of `len` elements, at least one (wgpu binds no zero-sized buffer).
fn alloc<E: GpuExecutor, T: orrery_core::Storage>(exec: &E, len: usize) -> Result<E::Buffer<T>> {
    exec.alloc::<T>(len.max(1))
}

/// An upload of `data`, at least one element (a 0 when `data` is empty).
fn upload<E: GpuExecutor>(exec: &E, data: &[u32]) -> Result<E::Buffer<u32>> {
    if data.is_empty() { exec.upload(&[0u32]) } else { exec.upload(data) }
}

impl<E: GpuExecutor> GpuCentroidStats<E> {
    /// The plan of `clusters`' layout (uploaded) and buffers for its scratch and outputs.
    ///
    /// # Errors
    /// [`Error::TooManyPoints`] when a partial buffer would exceed the executor's largest
    /// buffer; allocation and transfer failures.
    pub fn new(exec: &E, clusters: &DeviceClusters<E>) -> Result<Self> {
        let offsets = clusters.offsets().to_vec();
        let (k, n, dim) = (clusters.len(), clusters.num_vectors(), clusters.dim());
        let (plan_cluster, plan_start, plan_first) = row_plan_host(&offsets, CL_CHUNK_ROWS);
        let chunks = plan_cluster.len();
        let groups = k.div_ceil(CL_GROUP as usize);
        let max = exec.limits().max_buffer_bytes;
        for (what, elems) in [
            ("centroid partials (chunks * dim)", chunks * dim),
            ("centroids (clusters * dim)", k * dim),
            ("vectors (rows * dim)", n * dim),
        ] {
            if max > 0 && (elems as u64).saturating_mul(4) > max {
                return Err(Error::TooManyPoints { count: elems, max: (max / 4) as usize, what });
            }
        }
        Ok(Self {
            dim,
            chunks,
            chunk_cluster: upload(exec, &plan_cluster)?,
            chunk_start: upload(exec, &plan_start)?,
            chunk_first: upload(exec, &plan_first)?,
            part1: alloc(exec, chunks * dim)?,
            sums: alloc(exec, k * dim)?,
            gpart: alloc(exec, groups * dim)?,
            part2: alloc(exec, CL_P2_FIELDS * chunks)?,
            part3: alloc(exec, CL_P3_FIELDS * chunks)?,
            centroids: alloc(exec, k * dim)?,
            global: alloc(exec, dim + 1)?,
            member_distance: alloc(exec, n)?,
            stats: alloc(exec, CL_FIELDS * k)?,
            offsets,
        })
    }

    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always `false` (there is at least one cluster).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Enqueues the three passes over `clusters` (of the layout this was made for) with the
    /// thresholds of `params`; the results are in the device buffers until
    /// [`GpuCentroidStats::download`].
    ///
    /// # Errors
    /// The errors of [`CentroidParams::validate`]; [`Error::LengthMismatch`] when `clusters`
    /// has another layout (offsets or dimension); compile and device failures.
    pub fn run(&mut self, exec: &E, clusters: &DeviceClusters<E>, params: &CentroidParams) -> Result<()> {
        params.validate()?;
        if clusters.offsets() != self.offsets.as_slice() || clusters.dim() != self.dim {
            return Err(Error::LengthMismatch {
                what: "clusters (the layout GpuCentroidStats::new was given)",
                expected: self.offsets.len() * self.dim,
                actual: clusters.offsets().len() * clusters.dim(),
            });
        }
        let k = self.len();
        let (k32, dim32, chunks32) = (k as u32, self.dim as u32, self.chunks as u32);
        let cols = if self.dim.is_multiple_of(4) { self.dim / 4 } else { self.dim };
        let slabs = cols.div_ceil(CL_THREADS as usize);
        let groups = k.div_ceil(CL_GROUP as usize);
        let grid = |items: usize, threads: u32| LaunchConfig::<E>::blocks(blocks(items), threads);
        let vectors = clusters.vectors().data();
        let offsets = clusters.device_offsets();
        let (os, cs) = (params.outlier_sigmas as f32, params.core_scale as f32);
        let t = CL_THREADS;
        if self.chunks > 0 {
            k::cl_sum_chunks(
                exec,
                &grid(self.chunks * slabs, t),
                vectors,
                offsets,
                &self.chunk_cluster,
                &self.chunk_start,
                &mut self.part1,
                dim32,
                chunks32,
            )?;
        }
        k::cl_centroids(
            exec,
            &grid(k * slabs, t),
            &self.part1,
            offsets,
            &self.chunk_first,
            &mut self.sums,
            &mut self.centroids,
            dim32,
            k32,
        )?;
        k::cl_global_part(exec, &grid(groups * slabs, t), &self.sums, &mut self.gpart, dim32, k32)?;
        k::cl_global(exec, &grid(slabs, t), &self.gpart, offsets, &mut self.global, dim32, k32)?;
        if self.chunks > 0 {
            k::cl_distances(
                exec,
                &grid(self.chunks, t),
                vectors,
                offsets,
                &self.chunk_cluster,
                &self.chunk_start,
                &self.centroids,
                &mut self.member_distance,
                &mut self.part2,
                dim32,
                chunks32,
            )?;
        }
        k::cl_moments(
            exec,
            &grid(k, CL_MERGE_THREADS),
            &self.part2,
            offsets,
            &self.chunk_first,
            &mut self.stats,
            k32,
            chunks32,
            os,
            cs,
        )?;
        if self.chunks > 0 {
            k::cl_thresholds(
                exec,
                &grid(self.chunks, CL_CHUNK_ROWS),
                &self.member_distance,
                offsets,
                &self.chunk_cluster,
                &self.chunk_start,
                &self.stats,
                &mut self.part3,
                k32,
                chunks32,
            )?;
        }
        k::cl_finish(
            exec,
            &grid(k, t),
            &self.centroids,
            &self.global,
            offsets,
            &self.chunk_first,
            &self.part3,
            &mut self.stats,
            dim32,
            k32,
            chunks32,
        )?;
        k::cl_novelty(exec, &grid(1, t), offsets, &mut self.global, &mut self.stats, dim32, k32)
    }

    /// The centroids on the device (`clusters * dim` f32, NaN rows for empty clusters).
    pub fn centroids(&self) -> &E::Buffer<f32> {
        &self.centroids
    }

    /// The member distances on the device (one f32 per row).
    pub fn member_distance(&self) -> &E::Buffer<f32> {
        &self.member_distance
    }

    /// The per-cluster statistics on the device (`CL_FIELDS * clusters` f32, field-major:
    /// the inertia and the largest member distance are read by the other families).
    pub(crate) fn stats_buffer(&self) -> &E::Buffer<f32> {
        &self.stats
    }

    /// The layout this engine was made for: the offsets and the dimension.
    pub(crate) fn layout(&self) -> (&[u32], usize) {
        (&self.offsets, self.dim)
    }

    /// Waits for the last run and downloads its results as [`CentroidStats`] (f32 values
    /// widened to f64).
    ///
    /// # Errors
    /// Transfer failures.
    pub fn download(&self, exec: &E) -> Result<CentroidStats> {
        let k = self.len();
        let n = self.offsets[k] as usize;
        let wide = |v: Vec<f32>, len: usize| -> Vec<f64> { v[..len].iter().map(|&x| f64::from(x)).collect() };
        let stats = exec.download(&self.stats)?;
        let col = |f: usize| -> Vec<f64> { stats[f * k..(f + 1) * k].iter().map(|&x| f64::from(x)).collect() };
        let global = wide(exec.download(&self.global)?, self.dim + 1);
        let member_distance = if n == 0 { Vec::new() } else { wide(exec.download(&self.member_distance)?, n) };
        Ok(CentroidStats {
            dim: self.dim,
            size: self.offsets.windows(2).map(|w| w[1] - w[0]).collect(),
            centroids: wide(exec.download(&self.centroids)?, k * self.dim),
            global_centroid: global[..self.dim].to_vec(),
            global_rms_radius: global[self.dim],
            member_distance,
            cohesion: col(field::COHESION),
            inertia: col(field::INERTIA),
            rms_radius: col(field::RMS),
            spread: col(field::SPREAD),
            skew: col(field::SKEW),
            min_radius: col(field::MIN),
            max_radius: col(field::MAX),
            mean_norm: col(field::MEAN_NORM),
            embedding_quality: col(field::QUALITY),
            centroid_offset: col(field::OFFSET),
            novelty: col(field::NOVELTY),
            outlier_ratio: col(field::OUTLIER),
            core_fraction: col(field::CORE),
            core_periphery_ratio: col(field::CORE_PERIPHERY),
        })
    }
}

/// A block count for the launch API (grids beyond `u32::MAX` blocks are not reachable:
/// chunks and clusters are below `u32::MAX` and slabs below 2^22).
fn blocks(items: usize) -> u32 {
    u32::try_from(items).unwrap_or(u32::MAX)
}

/// The centroid family of `clusters` on `exec`: upload, the three passes, download.
///
/// # Errors
/// As [`GpuCentroidStats::new`] and [`GpuCentroidStats::run`].
pub fn centroid_stats<E: GpuExecutor>(
    exec: &E,
    clusters: &Clusters<'_>,
    params: &CentroidParams,
) -> Result<CentroidStats> {
    params.validate()?;
    let device = DeviceClusters::upload(exec, clusters)?;
    let mut stats = GpuCentroidStats::new(exec, &device)?;
    stats.run(exec, &device, params)?;
    stats.download(exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunk_plan_covers_every_member_once_in_order() {
        let offsets = [0u32, 0, 300, 300, 301, 557];
        let (cluster, start, first) = row_plan_host(&offsets, CL_CHUNK_ROWS);
        assert_eq!(first, [0, 0, 3, 3, 4, 6]);
        assert_eq!(cluster, [1, 1, 1, 3, 4, 4]);
        assert_eq!(start, [0, 128, 256, 300, 301, 429]);
        let (cluster, _, first) = row_plan_host(&[0, 0], CL_CHUNK_ROWS);
        assert!(cluster.is_empty() && first == [0, 0]);
    }
}
