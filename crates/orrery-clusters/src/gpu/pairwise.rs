//! The scale, Gaussian-potential and diversity families on GPUs
//! ([`crate::scale::scale_stats`], [`crate::potential::potential_stats`] and
//! [`crate::diversity::diversity_stats`]'s results): module `clusters/pairwise`
//! (`kernels/clusters/pairwise.cu`, `shaders/clusters/pairwise.wgsl`), on CUDA and wgpu.
//!
//! # Passes
//! Every pairwise pass is one launch over all clusters: a block per *item*, a run of
//! consecutive tile pairs `(ti, tj)` of one cluster decoded from the flat grid of the
//! `T_c^2` tile pairs of 64 rows per cluster (`T_c = ceil(n_c / 64)`; items of a cluster
//! hold `max(1, ceil(T_c^2 / 4096))` tile pairs, so no cluster has more than 4,096 items
//! and a 3-member cluster has one); tile pairs below the diagonal are skipped at once, the
//! diagonal takes `j > i`. The distances of a tile pair are formed in shared memory (64 x 64
//! at a time, 32 dimensions per stage) and never stored.
//!
//! - [`GpuScaleStats`]: `sc_hist` (256 bins over `[0, 2 max_radius]`, integer counters),
//!   `sc_sigma` (the lower median's bin, interpolated).
//! - [`GpuPotentialStats`]: `pot_nearest` (the nearest other centroid), `pot_entangle`
//!   (the upper-triangle sum of `exp(-d^2 / sigma^2)`; no Gram matrix), `pot_finish` (depth,
//!   curvature, escape probability, entanglement).
//! - [`GpuDiversityStats`]: `div_moments` (Welford per thread, Chan's merge per block),
//!   `div_merge` (Chan's merge of a cluster's items in order), `div_hist` (20 bins over the
//!   first pass's `[min, max]`), `div_entropy`.
//!
//! # Precision
//! f32 arithmetic on both executors (WGSL has no f64), widened to f64. Moments and sums
//! are compared with the CPU within a relative 1e-4 (absolute floors in the tests). A
//! histogram counts f32 distances: a pair whose distance lies within rounding (about
//! `dim * 2^-24` relative) of a bin edge may be counted in the neighbouring bin, so a
//! histogram may differ from the CPU's by exactly those pairs, and sigma by up to one bin
//! width `h` (the bound sigma has against the exact median in any case). The potential
//! family is evaluated at the GPU's own sigma, so it is compared with the CPU's formulas at
//! that sigma. The entropy inherits the histogram's differences.

use orrery_core::{GpuExecutor, Result};

use super::centroid::GpuCentroidStats;
use super::device::DeviceClusters;
use super::plan::{ItemPlan, alloc, check_layout, column, counters, grid};
use super::sources::{DIV_BINS, DIV_NAMES, PAIRWISE, POT_NAMES, PT_MERGE_THREADS, PT_THREADS, SC_NAMES, SIGMA_BINS};
use crate::diversity::DiversityStats;
use crate::potential::PotentialStats;
use crate::scale::ScaleStats;

mod k {
    orrery_core::kernels! {
        module = super::PAIRWISE;
        /// Sigma's 256-bin histogram of every cluster's pair distances.
        pub(super) fn sc_hist(
            read vectors: f32, read offsets: u32, read item_prefix: u32, read cstats: f32, write hist: u32,
            scalar dim: u32, scalar clusters: u32, scalar items: u32,
        );
        /// Sigma and the bin width of every cluster.
        pub(super) fn sc_sigma(
            read offsets: u32, read cstats: f32, read hist: u32, write sstats: f32, scalar clusters: u32,
        );
        /// The nearest other non-empty centroid.
        pub(super) fn pot_nearest(
            read centroids: f32, read offsets: u32, write nearest: u32, write pstats: f32, scalar dim: u32,
            scalar clusters: u32,
        );
        /// Per item: the sum of exp(-d^2 / sigma^2) over its pairs.
        pub(super) fn pot_entangle(
            read vectors: f32, read offsets: u32, read item_prefix: u32, read sstats: f32, write part_e: f32,
            scalar dim: u32, scalar clusters: u32, scalar items: u32,
        );
        /// Depth, curvature, escape probability, entanglement.
        pub(super) fn pot_finish(
            read member_distance: f32, read offsets: u32, read item_prefix: u32, read part_e: f32, read sstats: f32,
            write pstats: f32, scalar dim: u32, scalar clusters: u32,
        );
        /// Per item: moments of its pair distances.
        pub(super) fn div_moments(
            read vectors: f32, read offsets: u32, read item_prefix: u32, write part_m: f32, scalar dim: u32,
            scalar clusters: u32, scalar items: u32,
        );
        /// Per cluster: the items' moments in order, the histogram's edges.
        pub(super) fn div_merge(
            read part_m: f32, read offsets: u32, read item_prefix: u32, write dstats: f32, scalar clusters: u32,
            scalar items: u32,
        );
        /// The 20-bin histogram of every cluster's pair distances.
        pub(super) fn div_hist(
            read vectors: f32, read offsets: u32, read item_prefix: u32, read dstats: f32, write hist: u32,
            scalar dim: u32, scalar clusters: u32, scalar items: u32,
        );
        /// Entropy and perplexity of every histogram.
        pub(super) fn div_entropy(read offsets: u32, read hist: u32, write dstats: f32, scalar clusters: u32);
    }
}

/// Field indices of the three statistics buffers (`SC_F_*`, `POT_F_*`, `DIV_F_*`).
mod field {
    pub const SIGMA: usize = 0;
    pub const WIDTH: usize = 1;
    pub const DEPTH: usize = 0;
    pub const CURVATURE: usize = 1;
    pub const ESCAPE: usize = 2;
    pub const ENTANGLEMENT: usize = 3;
    pub const NEAREST_DISTANCE: usize = 4;
    pub const MEAN: usize = 0;
    pub const STD: usize = 1;
    pub const SKEW: usize = 2;
    pub const CV: usize = 3;
    pub const MIN: usize = 4;
    pub const MAX: usize = 5;
    pub const ENTROPY: usize = 6;
    pub const PERPLEXITY: usize = 7;
}

/// Pairs `n (n - 1) / 2` of every cluster.
fn pair_counts(offsets: &[u32]) -> Vec<u64> {
    offsets
        .windows(2)
        .map(|w| {
            let n = u64::from(w[1] - w[0]);
            n * n.saturating_sub(1) / 2
        })
        .collect()
}

/// Scale ([`ScaleStats`]) of one cluster layout on one executor.
pub struct GpuScaleStats<E: GpuExecutor> {
    offsets: Vec<u32>,
    dim: usize,
    plan: ItemPlan<E>,
    hist: E::Buffer<u32>,
    stats: E::Buffer<f32>,
}

impl<E: GpuExecutor> GpuScaleStats<E> {
    /// The item plan of `clusters`' layout and the output buffers.
    ///
    /// # Errors
    /// [`orrery_core::Error::TooManyPoints`] (see the module docs' limits); allocation and
    /// transfer failures.
    pub fn new(exec: &E, clusters: &DeviceClusters<E>) -> Result<Self> {
        let k = clusters.len();
        Ok(Self {
            offsets: clusters.offsets().to_vec(),
            dim: clusters.dim(),
            plan: ItemPlan::new(exec, clusters.offsets())?,
            hist: alloc(exec, 2 * SIGMA_BINS * k)?,
            stats: alloc(exec, SC_NAMES.len() * k)?,
        })
    }

    /// Enqueues the histogram pass and sigma; `centroid` (a run of the centroid family on
    /// the same clusters) supplies `max_radius`.
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] for another layout; device failures.
    pub fn run(&mut self, exec: &E, clusters: &DeviceClusters<E>, centroid: &GpuCentroidStats<E>) -> Result<()> {
        check_layout("clusters (the layout GpuScaleStats::new was given)", &self.offsets, self.dim, clusters)?;
        let (co, cd) = centroid.layout();
        check_layout("centroid statistics (of other clusters)", co, cd, clusters)?;
        let k32 = (self.offsets.len() - 1) as u32;
        exec.fill(&mut self.hist, 0u32)?;
        if self.plan.items > 0 {
            k::sc_hist(
                exec,
                &grid(self.plan.items, PT_THREADS),
                clusters.vectors().data(),
                clusters.device_offsets(),
                &self.plan.prefix,
                centroid.stats_buffer(),
                &mut self.hist,
                self.dim as u32,
                k32,
                self.plan.items as u32,
            )?;
        }
        k::sc_sigma(
            exec,
            &grid((k32 as usize).div_ceil(PT_THREADS as usize), PT_THREADS),
            clusters.device_offsets(),
            centroid.stats_buffer(),
            &self.hist,
            &mut self.stats,
            k32,
        )
    }

    /// Waits for the last run and downloads it as [`ScaleStats`].
    ///
    /// # Errors
    /// Transfer failures.
    pub fn download(&self, exec: &E) -> Result<ScaleStats> {
        let k = self.offsets.len() - 1;
        let stats = exec.download(&self.stats)?;
        Ok(ScaleStats {
            sigma: column(&stats, field::SIGMA, k),
            bin_width: column(&stats, field::WIDTH, k),
            pair_count: pair_counts(&self.offsets),
            histogram: counters(&exec.download(&self.hist)?, SIGMA_BINS * k),
        })
    }
}

/// The Gaussian-potential family ([`PotentialStats`]) of one cluster layout on one
/// executor.
pub struct GpuPotentialStats<E: GpuExecutor> {
    offsets: Vec<u32>,
    dim: usize,
    plan: ItemPlan<E>,
    nearest: E::Buffer<u32>,
    part_e: E::Buffer<f32>,
    stats: E::Buffer<f32>,
}

impl<E: GpuExecutor> GpuPotentialStats<E> {
    /// The item plan of `clusters`' layout and the output buffers.
    ///
    /// # Errors
    /// As [`GpuScaleStats::new`].
    pub fn new(exec: &E, clusters: &DeviceClusters<E>) -> Result<Self> {
        let k = clusters.len();
        let plan = ItemPlan::new(exec, clusters.offsets())?;
        Ok(Self {
            offsets: clusters.offsets().to_vec(),
            dim: clusters.dim(),
            nearest: alloc(exec, k)?,
            part_e: alloc(exec, plan.items)?,
            stats: alloc(exec, POT_NAMES.len() * k)?,
            plan,
        })
    }

    /// Enqueues the family at the width of `scale` (a run on the same clusters);
    /// `centroid` supplies the centroids and member distances.
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] for another layout; device failures.
    pub fn run(
        &mut self,
        exec: &E,
        clusters: &DeviceClusters<E>,
        centroid: &GpuCentroidStats<E>,
        scale: &GpuScaleStats<E>,
    ) -> Result<()> {
        check_layout("clusters (the layout GpuPotentialStats::new was given)", &self.offsets, self.dim, clusters)?;
        let (co, cd) = centroid.layout();
        check_layout("centroid statistics (of other clusters)", co, cd, clusters)?;
        check_layout("scale statistics (of other clusters)", &scale.offsets, scale.dim, clusters)?;
        let k32 = (self.offsets.len() - 1) as u32;
        let (dim32, offsets) = (self.dim as u32, clusters.device_offsets());
        k::pot_nearest(
            exec,
            &grid(k32 as usize, PT_THREADS),
            centroid.centroids(),
            offsets,
            &mut self.nearest,
            &mut self.stats,
            dim32,
            k32,
        )?;
        if self.plan.items > 0 {
            k::pot_entangle(
                exec,
                &grid(self.plan.items, PT_THREADS),
                clusters.vectors().data(),
                offsets,
                &self.plan.prefix,
                &scale.stats,
                &mut self.part_e,
                dim32,
                k32,
                self.plan.items as u32,
            )?;
        }
        k::pot_finish(
            exec,
            &grid(k32 as usize, PT_THREADS),
            centroid.member_distance(),
            offsets,
            &self.plan.prefix,
            &self.part_e,
            &scale.stats,
            &mut self.stats,
            dim32,
            k32,
        )
    }

    /// Waits for the last run and downloads it as [`PotentialStats`].
    ///
    /// # Errors
    /// Transfer failures.
    pub fn download(&self, exec: &E) -> Result<PotentialStats> {
        let k = self.offsets.len() - 1;
        let stats = exec.download(&self.stats)?;
        let nearest = exec.download(&self.nearest)?;
        Ok(PotentialStats {
            depth: column(&stats, field::DEPTH, k),
            curvature: column(&stats, field::CURVATURE, k),
            nearest_cluster: nearest[..k].to_vec(),
            nearest_distance: column(&stats, field::NEAREST_DISTANCE, k),
            escape_probability: column(&stats, field::ESCAPE, k),
            entanglement: column(&stats, field::ENTANGLEMENT, k),
        })
    }
}

/// The diversity family ([`DiversityStats`]) of one cluster layout on one executor.
pub struct GpuDiversityStats<E: GpuExecutor> {
    offsets: Vec<u32>,
    dim: usize,
    plan: ItemPlan<E>,
    part_m: E::Buffer<f32>,
    hist: E::Buffer<u32>,
    stats: E::Buffer<f32>,
}

impl<E: GpuExecutor> GpuDiversityStats<E> {
    /// The item plan of `clusters`' layout and the output buffers.
    ///
    /// # Errors
    /// As [`GpuScaleStats::new`].
    pub fn new(exec: &E, clusters: &DeviceClusters<E>) -> Result<Self> {
        let k = clusters.len();
        let plan = ItemPlan::new(exec, clusters.offsets())?;
        Ok(Self {
            offsets: clusters.offsets().to_vec(),
            dim: clusters.dim(),
            part_m: alloc(exec, 6 * plan.items)?,
            hist: alloc(exec, 2 * DIV_BINS * k)?,
            stats: alloc(exec, DIV_NAMES.len() * k)?,
            plan,
        })
    }

    /// Enqueues both passes (moments, then the histogram over their range).
    ///
    /// # Errors
    /// [`orrery_core::Error::LengthMismatch`] for another layout; device failures.
    pub fn run(&mut self, exec: &E, clusters: &DeviceClusters<E>) -> Result<()> {
        check_layout("clusters (the layout GpuDiversityStats::new was given)", &self.offsets, self.dim, clusters)?;
        let k32 = (self.offsets.len() - 1) as u32;
        let (dim32, items32, offsets) = (self.dim as u32, self.plan.items as u32, clusters.device_offsets());
        let vectors = clusters.vectors().data();
        exec.fill(&mut self.hist, 0u32)?;
        let blocks = grid(self.plan.items, PT_THREADS);
        if self.plan.items > 0 {
            k::div_moments(exec, &blocks, vectors, offsets, &self.plan.prefix, &mut self.part_m, dim32, k32, items32)?;
        }
        k::div_merge(
            exec,
            &grid(k32 as usize, PT_MERGE_THREADS),
            &self.part_m,
            offsets,
            &self.plan.prefix,
            &mut self.stats,
            k32,
            items32,
        )?;
        if self.plan.items > 0 {
            k::div_hist(
                exec,
                &blocks,
                vectors,
                offsets,
                &self.plan.prefix,
                &self.stats,
                &mut self.hist,
                dim32,
                k32,
                items32,
            )?;
        }
        k::div_entropy(
            exec,
            &grid((k32 as usize).div_ceil(PT_THREADS as usize), PT_THREADS),
            offsets,
            &self.hist,
            &mut self.stats,
            k32,
        )
    }

    /// Waits for the last run and downloads it as [`DiversityStats`].
    ///
    /// # Errors
    /// Transfer failures.
    pub fn download(&self, exec: &E) -> Result<DiversityStats> {
        let k = self.offsets.len() - 1;
        let stats = exec.download(&self.stats)?;
        let hist = counters(&exec.download(&self.hist)?, DIV_BINS * k);
        Ok(DiversityStats {
            pair_count: pair_counts(&self.offsets),
            mean_distance: column(&stats, field::MEAN, k),
            distance_std: column(&stats, field::STD, k),
            distance_skew: column(&stats, field::SKEW, k),
            distance_cv: column(&stats, field::CV, k),
            min_distance: column(&stats, field::MIN, k),
            max_distance: column(&stats, field::MAX, k),
            entropy: column(&stats, field::ENTROPY, k),
            perplexity: column(&stats, field::PERPLEXITY, k),
            histogram: hist.chunks_exact(DIV_BINS).map(|h| h.try_into().expect("20 bins")).collect(),
        })
    }
}
