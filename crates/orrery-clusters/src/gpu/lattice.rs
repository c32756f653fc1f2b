//! The lattice search and its fused measurement on CUDA: [`crate::LatticeIndex`]'s
//! centroids, [`crate::LatticeIndex::search`] and [`crate::LatticeIndex::search_fused`],
//! bit for bit (module `clusters/probe`, `kernels/clusters/probe.cu`).
//!
//! - **Centroids** ([`GpuLatticeIndex::new`]): the centroid family's first pass in the
//!   CPU's order: every 4,096-member chunk of a cluster summed in f64 in member order
//!   (`pr_sum_items`), the chunks added in order and divided by the size
//!   (`pr_fold_items`); they equal [`crate::centroid::centroids`].
//! - **Search**: the user's clusters are the lists (no copy: the vectors are already in
//!   cluster order), through the list-probing engine of [`super::ProbeEngine`].
//! - **Fused** ([`GpuLatticeIndex::search_fused`]): the same search, whose partial pass
//!   also writes every scored member's distance to its centroid into a NaN-filled side
//!   buffer (the items of the first probing-query chunk of each list segment write it: a
//!   member of a probed list is in exactly one such item), reduced per 4,096-member chunk
//!   and then per cluster in order (`pr_side_chunks`, `pr_side_fold`): the CPU's
//!   [`crate::search::fused::reduce_member_distances`]. The neighbours are byte-identical
//!   to the unfused search's: the side writes touch nothing the ranking reads.
//!
//! wgpu: [`orrery_core::Error::Unsupported`] (WGSL has no f64).

use orrery_core::{GpuExecutor, Result};

use super::device::{DeviceClusters, DeviceVectors};
use super::probe::{DeviceLists, ProbeEngine, check_f64_executor, check_queries, grid, per_element, pk, probe_search};
use super::sources::{PR_CHUNK, PR_ROW_THREADS};
use crate::input::check_non_empty_offsets;
use crate::search::fused::FusedStats;
use crate::search::ivf::check_nprobe;
use crate::search::{Metric, Neighbors, check_k};

/// A lattice over device clusters: their f64 centroids and the chunking of their members.
pub struct GpuLatticeIndex<'c, E: GpuExecutor> {
    clusters: &'c DeviceClusters<E>,
    centroids: E::Buffer<f64>,
    /// Position ranges of the 4,096-member chunks (CSR over positions, `items + 1`).
    chunk_begin: E::Buffer<u32>,
    /// Per cluster, its chunks (CSR over chunks, `clusters + 1`).
    cluster_chunks: E::Buffer<u32>,
    chunks: usize,
    scratch: ProbeEngine<E>,
    /// The fused search's buffers, allocated at its first call and kept.
    fused: Option<FusedBuffers<E>>,
}

/// The side buffer of the fused search and its reductions (one set per index: the sizes
/// depend only on the clusters).
struct FusedBuffers<E: GpuExecutor> {
    side: E::Buffer<f64>,
    part_n: E::Buffer<u32>,
    part_s: E::Buffer<f64>,
    part_s2: E::Buffer<f64>,
    scored: E::Buffer<u32>,
    cohesion: E::Buffer<f64>,
    inertia: E::Buffer<f64>,
}

impl<E: GpuExecutor> FusedBuffers<E> {
    fn new(exec: &E, rows: usize, chunks: usize, clusters: usize) -> Result<Self> {
        Ok(Self {
            side: exec.alloc(rows.max(1))?,
            part_n: exec.alloc(chunks.max(1))?,
            part_s: exec.alloc(chunks.max(1))?,
            part_s2: exec.alloc(chunks.max(1))?,
            scored: exec.alloc(clusters)?,
            cohesion: exec.alloc(clusters)?,
            inertia: exec.alloc(clusters)?,
        })
    }
}

/// The chunks of [`crate::grid::ChunkGrid`] with [`crate::grid::MEMBER_CHUNK`] members:
/// every cluster's members in chunks, as position ranges (`begin`, one entry per chunk plus
/// the end) and the chunks of each cluster (`per_cluster`, CSR).
fn member_chunks(offsets: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let mut begin = Vec::new();
    let mut per_cluster = Vec::with_capacity(offsets.len());
    per_cluster.push(0u32);
    for w in offsets.windows(2) {
        let mut at = w[0];
        while at < w[1] {
            begin.push(at);
            at = at.saturating_add(PR_CHUNK as u32).min(w[1]);
        }
        per_cluster.push(begin.len() as u32);
    }
    begin.push(*offsets.last().unwrap_or(&0));
    (begin, per_cluster)
}

impl<'c, E: GpuExecutor> GpuLatticeIndex<'c, E> {
    /// Computes the centroids of `clusters` on the device.
    ///
    /// # Errors
    /// [`orrery_core::Error::Unsupported`] unless the executor is CUDA with f64
    /// arithmetic; [`orrery_core::Error::InvalidArgument`] (`what = "cluster offsets"`)
    /// naming the first empty cluster, as [`crate::LatticeIndex::new`]; compile and device
    /// failures.
    pub fn new(exec: &E, clusters: &'c DeviceClusters<E>) -> Result<Self> {
        check_f64_executor(exec, "the lattice search")?;
        check_non_empty_offsets(clusters.offsets())?;
        let (nc, dim) = (clusters.len(), clusters.dim());
        let (begin, per_cluster) = member_chunks(clusters.offsets());
        let chunks = begin.len() - 1;
        let chunk_begin = exec.upload(&begin)?;
        let cluster_chunks = exec.upload(&per_cluster)?;
        let mut part = exec.alloc::<f64>(chunks * dim)?;
        let mut centroids = exec.alloc::<f64>(nc * dim)?;
        let data = clusters.vectors().data();
        let no_rows = exec.alloc::<u32>(1)?;
        pk::pr_sum_items(
            exec,
            &grid(chunks, PR_ROW_THREADS),
            data,
            &no_rows,
            &chunk_begin,
            &mut part,
            chunks as u32,
            dim as u32,
            0,
        )?;
        pk::pr_fold_items(
            exec,
            &per_element(nc * dim),
            &part,
            &cluster_chunks,
            clusters.device_offsets(),
            &mut centroids,
            nc as u32,
            dim as u32,
            0,
        )?;
        Ok(Self {
            clusters,
            centroids,
            chunk_begin,
            cluster_chunks,
            chunks,
            scratch: ProbeEngine::default(),
            fused: None,
        })
    }

    /// The clusters.
    pub fn clusters(&self) -> &DeviceClusters<E> {
        self.clusters
    }

    /// Downloads the centroids (`clusters * dim` values).
    ///
    /// # Errors
    /// Transfer failures.
    pub fn centroids(&self, exec: &E) -> Result<Vec<f64>> {
        exec.download(&self.centroids)
    }

    /// The probe engine: step timing and the partial pass's tile choice
    /// ([`ProbeEngine::set_stage_timing`], [`ProbeEngine::set_narrow_tiles`]).
    pub fn engine(&mut self) -> &mut ProbeEngine<E> {
        &mut self.scratch
    }

    fn check(&self, queries: &DeviceVectors<E>, k: usize, nprobe: usize) -> Result<()> {
        check_k(k)?;
        check_nprobe(nprobe, self.clusters.len())?;
        check_queries(self.clusters.dim(), queries)
    }

    fn run(
        &mut self,
        exec: &E,
        queries: &DeviceVectors<E>,
        k: usize,
        nprobe: usize,
        metric: Metric,
        side: Option<&mut E::Buffer<f64>>,
    ) -> Result<Neighbors> {
        let lists = DeviceLists {
            vectors: self.clusters.vectors().data(),
            dim: self.clusters.dim(),
            offsets_host: self.clusters.offsets(),
            offsets: self.clusters.device_offsets(),
            rows: None,
            centroids: &self.centroids,
        };
        probe_search(exec, &lists, queries, k, nprobe, metric, &mut self.scratch, side)
    }

    /// The `k` nearest rows of every query among the members of its `nprobe` best
    /// clusters ([`crate::LatticeIndex::search`]'s rows and scores).
    ///
    /// # Errors
    /// [`orrery_core::Error::InvalidArgument`] for `k` outside `1..=128` or `nprobe`
    /// outside `1..=clusters`; [`orrery_core::Error::LengthMismatch`] when the dimensions
    /// differ; compile and device failures.
    pub fn search(
        &mut self,
        exec: &E,
        queries: &DeviceVectors<E>,
        k: usize,
        nprobe: usize,
        metric: Metric,
    ) -> Result<Neighbors> {
        self.check(queries, k, nprobe)?;
        self.run(exec, queries, k, nprobe, metric, None)
    }

    /// [`GpuLatticeIndex::search`], fused with the measurement of every scored member's
    /// distance to its centroid ([`crate::LatticeIndex::search_fused`]'s result).
    ///
    /// # Errors
    /// As [`GpuLatticeIndex::search`].
    pub fn search_fused(
        &mut self,
        exec: &E,
        queries: &DeviceVectors<E>,
        k: usize,
        nprobe: usize,
        metric: Metric,
    ) -> Result<(Neighbors, FusedStats)> {
        self.check(queries, k, nprobe)?;
        let (rows, nc) = (self.clusters.num_vectors(), self.clusters.len());
        let mut f = match self.fused.take() {
            Some(f) => f,
            None => FusedBuffers::new(exec, rows, self.chunks, nc)?,
        };
        let result = self.fused_pass(exec, &mut f, queries, k, nprobe, metric);
        self.fused = Some(f);
        result
    }

    /// The fused search with its buffers: side buffer, search, the two reductions, the
    /// downloads.
    fn fused_pass(
        &mut self,
        exec: &E,
        f: &mut FusedBuffers<E>,
        queries: &DeviceVectors<E>,
        k: usize,
        nprobe: usize,
        metric: Metric,
    ) -> Result<(Neighbors, FusedStats)> {
        let (rows, nc) = (self.clusters.num_vectors(), self.clusters.len());
        exec.fill(&mut f.side, f64::NAN)?;
        let neighbors = self.run(exec, queries, k, nprobe, metric, Some(&mut f.side))?;
        pk::pr_side_chunks(
            exec,
            &grid(self.chunks, PR_ROW_THREADS),
            &f.side,
            &self.chunk_begin,
            &mut f.part_n,
            &mut f.part_s,
            &mut f.part_s2,
            self.chunks as u32,
        )?;
        pk::pr_side_fold(
            exec,
            &per_element(nc),
            &f.part_n,
            &f.part_s,
            &f.part_s2,
            &self.cluster_chunks,
            &mut f.scored,
            &mut f.cohesion,
            &mut f.inertia,
            nc as u32,
        )?;
        let mut member_distance = exec.download(&f.side)?;
        member_distance.truncate(rows);
        let stats = FusedStats {
            member_distance,
            scored: exec.download(&f.scored)?,
            cohesion: exec.download(&f.cohesion)?,
            inertia: exec.download(&f.inertia)?,
        };
        Ok((neighbors, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::{ChunkGrid, MEMBER_CHUNK};

    #[test]
    fn member_chunks_are_the_cpu_grid() {
        let offsets = [0u32, 0, 3, 3, 3 + 2 * MEMBER_CHUNK as u32 + 5, 3 + 2 * MEMBER_CHUNK as u32 + 6];
        let (begin, per_cluster) = member_chunks(&offsets);
        let grid = ChunkGrid::new(&offsets, MEMBER_CHUNK);
        assert_eq!(begin.len() - 1, grid.len());
        for g in 0..grid.len() {
            let chunk = grid.decode(g);
            assert_eq!(begin[g] as usize..begin[g + 1] as usize, chunk.rows, "chunk {g}");
            assert!(per_cluster[chunk.cluster] as usize <= g && g < per_cluster[chunk.cluster + 1] as usize);
        }
        assert_eq!(per_cluster, [0, 0, 1, 1, 4, 5]);
    }
}
