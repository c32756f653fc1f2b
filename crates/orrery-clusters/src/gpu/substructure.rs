//! The sub-structure family on GPUs ([`crate::substructure::substructure_stats`]'s result):
//! module `clusters/substructure` (`kernels/clusters/substructure.cu`,
//! `shaders/clusters/substructure.wgsl`), on CUDA and wgpu.
//!
//! # Passes
//! **Two-means** ([`GpuSubstructureStats::run_two_means`]): the seeds (first and last
//! member), exactly [`crate::substructure::LLOYD_ITERATIONS`] (3) iterations of an
//! assignment (a block per chunk of 128 members, ties to side A), per-chunk side sums and
//! an update (a side without members keeps its centroid), a final assignment, and a
//! per-cluster finish (sizes, split inertia, inertia ratio, balance, separation): 12
//! launches over all clusters whatever their sizes.
//! **Silhouette** ([`GpuSubstructureStats::run_silhouette`]): the CPU's row-tile pass, a
//! block per tile of 64 members that walks every column tile of its cluster, keeping each
//! row's distance sums to both sides in one thread (no atomics, nothing quadratic stored),
//! then a per-cluster merge of the tiles' sums in order: 2 launches.
//!
//! # Precision
//! f32 on both executors (WGSL has no f64) with compensated sums for the centroids, the
//! split inertia and the silhouette's row sums; results are widened to f64. A label is the
//! comparison of two f32 squared distances, so a member whose two CPU (f64) distances are
//! within about `dim * 2^-24` of each other relative to their size may land on the other
//! side, after which the iterations move apart; elsewhere labels equal the CPU's and the
//! statistics agree within a relative 1e-4 (the tests, tests/clusters/gpu_families.rs,
//! state the absolute floors).

use orrery_core::{GpuExecutor, Result};

use super::centroid::GpuCentroidStats;
use super::device::DeviceClusters;
use super::plan::{RowPlan, alloc, check_layout, column, grid};
use super::sources::{PT_MERGE_THREADS, PT_THREADS, PT_TILE, SUB_NAMES, SUBSTRUCTURE, TM_CHUNK_ROWS, TM_THREADS};
use crate::grid::PAIR_TILE;
use crate::substructure::{LLOYD_ITERATIONS, SubstructureStats, TwoMeans};

const _: () = assert!(PT_TILE as usize == PAIR_TILE);

mod k {
    orrery_core::kernels! {
        module = super::SUBSTRUCTURE;
        /// The seeds: a cluster's first and last member.
        pub(super) fn tm_seed(read vectors: f32, read offsets: u32, write means: f32, scalar dim: u32, scalar clusters: u32);
        /// The assignment: labels and squared distances of every member.
        pub(super) fn tm_assign(
            read vectors: f32, read offsets: u32, read chunk_cluster: u32, read chunk_start: u32, read means: f32,
            write labels: u32, write sq_distance: f32, scalar dim: u32, scalar chunks: u32,
        );
        /// Per chunk and side: compensated sums and counts.
        pub(super) fn tm_chunk_sums(
            read vectors: f32, read offsets: u32, read chunk_cluster: u32, read chunk_start: u32, read labels: u32,
            write part: f32, write part_count: u32, scalar dim: u32, scalar chunks: u32,
        );
        /// The update: each side's mean, or its old centroid.
        pub(super) fn tm_update(
            read part: f32, read part_count: u32, read chunk_first: u32, write means: f32, scalar dim: u32,
            scalar clusters: u32,
        );
        /// Sizes, split inertia, inertia ratio, balance, separation.
        pub(super) fn tm_finish(
            read means: f32, read labels: u32, read sq_distance: f32, read offsets: u32, read cstats: f32,
            write sizes: u32, write stats: f32, scalar dim: u32, scalar clusters: u32,
        );
        /// The silhouette's row tiles: per tile the sum of its members' s_i.
        pub(super) fn sil_rows(
            read vectors: f32, read offsets: u32, read tile_cluster: u32, read tile_start: u32, read labels: u32,
            read sizes: u32, write part_sil: f32, scalar dim: u32, scalar tiles: u32,
        );
        /// Per cluster: the tiles' sums in order, the silhouette.
        pub(super) fn sil_merge(
            read part_sil: f32, read offsets: u32, read tile_first: u32, read sizes: u32, write stats: f32,
            scalar clusters: u32,
        );
    }
}

/// Field indices of the statistics buffer (`SUB_F_*`).
mod field {
    pub const SPLIT_INERTIA: usize = 0;
    pub const INERTIA_RATIO: usize = 1;
    pub const SILHOUETTE: usize = 2;
    pub const BALANCE: usize = 3;
    pub const SEPARATION: usize = 4;
}

/// The sub-structure family of one cluster layout on one executor: the plans, the scratch
/// and the outputs, reusable for any number of runs.
///
/// ```no_run
/// # fn demo<E: orrery_core::GpuExecutor>(exec: &E, clusters: &orrery_clusters::Clusters<'_>) -> orrery_core::Result<()> {
/// use orrery_clusters::{CentroidParams, gpu::{DeviceClusters, GpuCentroidStats, GpuSubstructureStats}};
/// let device = DeviceClusters::upload(exec, clusters)?;
/// let mut centroid = GpuCentroidStats::new(exec, &device)?;
/// centroid.run(exec, &device, &CentroidParams::default())?;
/// let mut sub = GpuSubstructureStats::new(exec, &device)?;
/// sub.run(exec, &device, &centroid)?; // two-means, then the silhouette
/// let host = sub.download(exec)?;
/// # Ok(())
/// # }
/// ```
pub struct GpuSubstructureStats<E: GpuExecutor> {
    offsets: Vec<u32>,
    dim: usize,
    chunks: RowPlan<E>,
    tiles: RowPlan<E>,
    means: E::Buffer<f32>,
    labels: E::Buffer<u32>,
    sq_distance: E::Buffer<f32>,
    part: E::Buffer<f32>,
    part_count: E::Buffer<u32>,
    sizes: E::Buffer<u32>,
    part_sil: E::Buffer<f32>,
    stats: E::Buffer<f32>,
}

impl<E: GpuExecutor> GpuSubstructureStats<E> {
    /// The plans of `clusters`' layout (uploaded) and buffers for the scratch and outputs.
    ///
    /// # Errors
    /// Allocation and transfer failures.
    pub fn new(exec: &E, clusters: &DeviceClusters<E>) -> Result<Self> {
        let offsets = clusters.offsets().to_vec();
        let (k, n, dim) = (clusters.len(), clusters.num_vectors(), clusters.dim());
        let chunks = RowPlan::new(exec, &offsets, TM_CHUNK_ROWS)?;
        let tiles = RowPlan::new(exec, &offsets, PT_TILE)?;
        Ok(Self {
            dim,
            means: alloc(exec, 2 * k * dim)?,
            labels: alloc(exec, n)?,
            sq_distance: alloc(exec, n)?,
            part: alloc(exec, 2 * chunks.chunks * dim)?,
            part_count: alloc(exec, 2 * chunks.chunks)?,
            sizes: alloc(exec, 2 * k)?,
            part_sil: alloc(exec, tiles.chunks)?,
            stats: alloc(exec, SUB_NAMES.len() * k)?,
            chunks,
            tiles,
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

    /// Enqueues the two-means split and every statistic but the silhouette; `centroid` (a
    /// run of the centroid family on the same clusters) supplies the unsplit inertia.
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] when `clusters` or `centroid` has another
    /// layout; compile and device failures.
    pub fn run_two_means(
        &mut self,
        exec: &E,
        clusters: &DeviceClusters<E>,
        centroid: &GpuCentroidStats<E>,
    ) -> Result<()> {
        check_layout("clusters (the layout GpuSubstructureStats::new was given)", &self.offsets, self.dim, clusters)?;
        let (co, cd) = centroid.layout();
        check_layout("centroid statistics (of other clusters)", co, cd, clusters)?;
        let k = self.len();
        let (k32, dim32, chunks32) = (k as u32, self.dim as u32, self.chunks.chunks as u32);
        let slabs = self.dim.div_ceil(TM_THREADS as usize);
        let vectors = clusters.vectors().data();
        let offsets = clusters.device_offsets();
        let t = TM_THREADS;
        k::tm_seed(exec, &grid(k * slabs, t), vectors, offsets, &mut self.means, dim32, k32)?;
        let assign = |s: &mut Self| -> Result<()> {
            if s.chunks.chunks == 0 {
                return Ok(());
            }
            k::tm_assign(
                exec,
                &grid(s.chunks.chunks, t),
                vectors,
                offsets,
                &s.chunks.cluster,
                &s.chunks.start,
                &s.means,
                &mut s.labels,
                &mut s.sq_distance,
                dim32,
                chunks32,
            )
        };
        for _ in 0..LLOYD_ITERATIONS {
            assign(self)?;
            if self.chunks.chunks > 0 {
                k::tm_chunk_sums(
                    exec,
                    &grid(self.chunks.chunks * slabs, t),
                    vectors,
                    offsets,
                    &self.chunks.cluster,
                    &self.chunks.start,
                    &self.labels,
                    &mut self.part,
                    &mut self.part_count,
                    dim32,
                    chunks32,
                )?;
            }
            k::tm_update(
                exec,
                &grid(k * slabs, t),
                &self.part,
                &self.part_count,
                &self.chunks.first,
                &mut self.means,
                dim32,
                k32,
            )?;
        }
        assign(self)?;
        k::tm_finish(
            exec,
            &grid(k, t),
            &self.means,
            &self.labels,
            &self.sq_distance,
            offsets,
            centroid.stats_buffer(),
            &mut self.sizes,
            &mut self.stats,
            dim32,
            k32,
        )
    }

    /// Enqueues the silhouette over the labels of the last [`Self::run_two_means`].
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] when `clusters` has another layout; compile
    /// and device failures.
    pub fn run_silhouette(&mut self, exec: &E, clusters: &DeviceClusters<E>) -> Result<()> {
        check_layout("clusters (the layout GpuSubstructureStats::new was given)", &self.offsets, self.dim, clusters)?;
        let offsets = clusters.device_offsets();
        if self.tiles.chunks > 0 {
            k::sil_rows(
                exec,
                &grid(self.tiles.chunks, PT_THREADS),
                clusters.vectors().data(),
                offsets,
                &self.tiles.cluster,
                &self.tiles.start,
                &self.labels,
                &self.sizes,
                &mut self.part_sil,
                self.dim as u32,
                self.tiles.chunks as u32,
            )?;
        }
        let k = self.len();
        k::sil_merge(
            exec,
            &grid(k, PT_MERGE_THREADS),
            &self.part_sil,
            offsets,
            &self.tiles.first,
            &self.sizes,
            &mut self.stats,
            k as u32,
        )
    }

    /// [`Self::run_two_means`], then [`Self::run_silhouette`].
    ///
    /// # Errors
    /// As those two.
    pub fn run(&mut self, exec: &E, clusters: &DeviceClusters<E>, centroid: &GpuCentroidStats<E>) -> Result<()> {
        self.run_two_means(exec, clusters, centroid)?;
        self.run_silhouette(exec, clusters)
    }

    /// The labels on the device (one u32 per row: 0 for side A, 1 for side B).
    pub fn labels(&self) -> &E::Buffer<u32> {
        &self.labels
    }

    /// Waits for the last run and downloads its results (f32 widened to f64).
    ///
    /// # Errors
    /// Transfer failures.
    pub fn download(&self, exec: &E) -> Result<SubstructureStats> {
        let k = self.len();
        let n = self.offsets[k] as usize;
        let stats = exec.download(&self.stats)?;
        let sizes = exec.download(&self.sizes)?;
        let (labels, sq_distance) = if n == 0 {
            (Vec::new(), Vec::new())
        } else {
            let l = exec.download(&self.labels)?;
            let s = exec.download(&self.sq_distance)?;
            (l[..n].iter().map(|&x| x as u8).collect(), s[..n].iter().map(|&x| f64::from(x)).collect())
        };
        let means = exec.download(&self.means)?;
        let split = TwoMeans {
            dim: self.dim,
            centroids: means[..2 * k * self.dim].iter().map(|&x| f64::from(x)).collect(),
            labels,
            sq_distance,
            sizes: (0..k).map(|c| [sizes[2 * c], sizes[2 * c + 1]]).collect(),
        };
        Ok(SubstructureStats {
            split,
            split_inertia: column(&stats, field::SPLIT_INERTIA, k),
            inertia_ratio: column(&stats, field::INERTIA_RATIO, k),
            silhouette: column(&stats, field::SILHOUETTE, k),
            split_balance: column(&stats, field::BALANCE, k),
            split_separation: column(&stats, field::SEPARATION, k),
        })
    }
}
