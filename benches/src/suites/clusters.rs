//! `clusters`: the GPU passes of `orrery-clusters` (issue 16) beside the CPU reference, with
//! torch as a peer (`benches/python/clusters_peer.py`: segment reductions for the centroid
//! family, `cdist` / matmul + `topk` for exact search).
//!
//! Workloads (the same shapes in the peer; names are identical so the tables line up):
//! - `centroid 1K x 1024`, `centroid 10K x 1024`, `centroid 100K x 1024`: the whole
//!   centroid family ([`orrery_clusters::centroid_stats`]'s 20 fields) of 10, 100 and 1,000
//!   clusters of 100 members each (Gaussian centres of spread 1, members of spread 0.1:
//!   [`orrery_clusters::synth`] with equal sizes), 1,024 `f32` dimensions. The goal for
//!   100K x 1024 on the H200 is under 0.5 ms (two reads of 409.6 MB at copy rate are about
//!   0.2 ms).
//! - `knn L2 4096q 1M x 128 k10` and `knn IP 4096q 1M x 128 k10`: exact k-NN of 4,096
//!   queries (near random cluster centres, spread 0.1) over 1,000 clusters of 1,000 rows
//!   in 128 dimensions, k = 10. The goal is at least 2x torch (89-99 ms there).
//!
//! - `two-means ...` and `silhouette ...`: the sub-structure family's two passes
//!   ([`super::clusters_families`]).
//!
//! `--quick`: `centroid 1K x 256`, `centroid 10K x 256`, `knn L2 256q 64K x 128 k10`.
//!
//! # What is timed
//! - **GPUs** ([`GpuExecutor`]): the device-resident passes alone, between two device
//!   event markers, with the plan and buffers made beforehand ([`GpuCentroidStats::run`];
//!   [`GpuExactSearch::enqueue`]: the screen and the refinement of every query, the
//!   database's norms computed once beforehand, as an index would). Centroid samples
//!   rotate over three input sets. Before timing, one run is checked against the CPU
//!   (centroid: cohesion, inertia and the centroids within the tests' tolerance; k-NN: the
//!   rows and scores of the first 64 queries equal to the CPU's exact search) and a
//!   mismatch is reported and not timed. The k-NN record's `info` names the exact-path
//!   queries of that run (0 expected), the plan and the norms' one-time cost. Each k-NN
//!   workload runs with both strategies: the default threshold path under the workload's
//!   name, the per-split lists (the baseline) as `... lists`.
//! - **CPU** ([`CpuExecutor`]'s pool): [`centroid_stats`] of validated clusters, and
//!   [`exact_search`] of the first 64 queries only (`knn ... 64q`: all 4,096 would take
//!   minutes), on the host clock.
//! - The peer: CUDA events around the torch code (see its header).

// The GPU half of the suite is used only when the binary has a GPU executor.
#![cfg_attr(not(any(feature = "cuda", feature = "wgpu")), allow(dead_code, unused_imports))]

use orrery_clusters::gpu::knn::{FilterPlan, QUERY_BATCH, sample_stride};
use orrery_clusters::gpu::{DeviceClusters, DeviceVectors, GpuCentroidStats, GpuExactSearch, Strategy};
use orrery_clusters::synth::{SynthData, SynthParams, gaussian_clusters, gaussian_queries};
use orrery_clusters::{CentroidParams, CentroidStats, Metric, Vectors, centroid_stats, exact_search};
use orrery_core::{CpuExecutor, Executor, ExecutorKind, GpuExecutor, Result};

use crate::report::Record;
use crate::stats::{Stats, measure, measure_with_setup};
use crate::suites::{Config, clusters_search};

/// Input sets of the centroid workloads, rotated over the samples.
const INPUT_SETS: u64 = 3;
/// Members per cluster of the centroid workloads.
const MEMBERS: usize = 100;
/// Queries the CPU searches (and the GPU result is checked on).
const CPU_QUERIES: usize = 64;

/// `1K`, `10K`, `1M`, else the number.
fn label(n: usize) -> String {
    match n {
        n if n >= 1_000_000 && n.is_multiple_of(1_000_000) => format!("{}M", n / 1_000_000),
        n if n >= 1_000 && n.is_multiple_of(1_000) => format!("{}K", n / 1_000),
        n if n >= 1 << 10 && n.is_multiple_of(1 << 10) && !n.is_multiple_of(1000) => format!("{}K", n >> 10),
        n => n.to_string(),
    }
}

/// A centroid workload: `members` rows of `dim` values in clusters of [`MEMBERS`].
#[derive(Debug, Clone, Copy)]
struct CentroidWorkload {
    members: usize,
    dim: usize,
}

impl CentroidWorkload {
    fn clusters(&self) -> usize {
        self.members / MEMBERS
    }

    fn name(&self) -> String {
        format!("centroid {} x {}", label(self.members), self.dim)
    }

    fn data(&self, set: u64) -> Result<SynthData> {
        gaussian_clusters(&SynthParams {
            median_size: MEMBERS as f64,
            size_sigma: 0.0,
            seed: 1600 + set + (self.members as u64) * 7,
            ..SynthParams::new(self.clusters(), self.dim)
        })
    }

    /// Each vector read twice (passes 1 and 2), the member distances written once.
    fn bytes(&self) -> u64 {
        (2 * self.members * self.dim * 4 + self.members * 4) as u64
    }
}

fn centroid_workloads(quick: bool) -> Vec<CentroidWorkload> {
    let dim = if quick { 256 } else { 1024 };
    let sizes: &[usize] = if quick { &[1_000, 10_000] } else { &[1_000, 10_000, 100_000] };
    sizes.iter().map(|&members| CentroidWorkload { members, dim }).collect()
}

/// A k-NN workload: `queries` queries over `clusters` clusters of `per` rows.
#[derive(Debug, Clone, Copy)]
struct KnnWorkload {
    clusters: usize,
    per: usize,
    dim: usize,
    queries: usize,
    k: usize,
    metric: Metric,
}

impl KnnWorkload {
    fn rows(&self) -> usize {
        self.clusters * self.per
    }

    fn name(&self, queries: usize) -> String {
        let m = match self.metric {
            Metric::L2 => "L2",
            Metric::InnerProduct => "IP",
        };
        format!("knn {m} {}q {} x {} k{}", queries, label(self.rows()), self.dim, self.k)
    }

    fn data(&self) -> Result<(SynthData, Vec<f32>)> {
        let data = gaussian_clusters(&SynthParams {
            median_size: self.per as f64,
            size_sigma: 0.0,
            seed: 1616,
            ..SynthParams::new(self.clusters, self.dim)
        })?;
        let q = gaussian_queries(&data, self.queries, 0.1, 1617);
        Ok((data, q))
    }
}

fn knn_workloads(quick: bool) -> Vec<KnnWorkload> {
    if quick {
        vec![KnnWorkload { clusters: 64, per: 1024, dim: 128, queries: 256, k: 10, metric: Metric::L2 }]
    } else {
        [Metric::L2, Metric::InnerProduct]
            .into_iter()
            .map(|metric| KnnWorkload { clusters: 1000, per: 1000, dim: 128, queries: 4096, k: 10, metric })
            .collect()
    }
}

fn record(executor: String, workload: String, elements: usize, bytes: u64, stats: Stats, info: String) -> Record {
    Record { suite: "clusters".into(), workload, executor, elements: elements as u64, bytes, stats, info }
}

/// Runs the suite on the CPU executor (in its thread pool).
///
/// # Errors
/// Invalid workloads (a bug here) and failures of the passes.
pub fn run_cpu(exec: &CpuExecutor, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    let params = CentroidParams::default();
    for w in centroid_workloads(cfg.quick) {
        let sets = (0..INPUT_SETS).map(|s| w.data(s)).collect::<Result<Vec<_>>>()?;
        let clusters = sets.iter().map(SynthData::clusters).collect::<Result<Vec<_>>>()?;
        let mut i = 0usize;
        let stats = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            &mut i,
            |i| {
                *i += 1;
                Ok(())
            },
            |i| exec.install(|| centroid_stats(&clusters[*i % clusters.len()], &params).map(drop)),
        )?;
        let info = format!("{} clusters", w.clusters());
        records.push(record(exec.name(), w.name(), w.members, w.bytes(), stats, info));
    }
    for w in knn_workloads(cfg.quick) {
        let (data, qv) = w.data()?;
        let db = data.vectors()?;
        let nq = CPU_QUERIES.min(w.queries);
        let q = Vectors::new(&qv[..nq * w.dim], w.dim)?;
        let stats = measure(exec, cfg.warmup.min(1), cfg.repeats.min(3), || {
            exec.install(|| exact_search(&db, &q, w.k, w.metric).map(drop))
        })?;
        records.push(record(
            exec.name(),
            w.name(nq),
            nq * w.rows(),
            (w.rows() * w.dim * 4) as u64,
            stats,
            String::new(),
        ));
    }
    records.extend(super::clusters_families::run_cpu(exec, cfg)?);
    Ok(records)
}

/// `|got - want| <= 1e-4 max(|want|, floor)` (the tests' rule), or both NaN.
fn near(got: f64, want: f64, floor: f64) -> bool {
    (got.is_nan() && want.is_nan()) || (got - want).abs() <= 1e-4 * want.abs().max(floor)
}

/// The first disagreement of a GPU run with the CPU (cohesion, inertia, centroids).
fn centroid_mismatch(gpu: &CentroidStats, cpu: &CentroidStats, scale: f64) -> Option<String> {
    for c in 0..cpu.len() {
        let n = f64::from(cpu.size[c]);
        if !near(gpu.cohesion[c], cpu.cohesion[c], scale) || !near(gpu.inertia[c], cpu.inertia[c], n * scale * scale) {
            return Some(format!("cluster {c}: cohesion {} vs {}", gpu.cohesion[c], cpu.cohesion[c]));
        }
    }
    gpu.centroids
        .iter()
        .zip(&cpu.centroids)
        .position(|(g, w)| !near(*g, *w, scale))
        .map(|i| format!("centroid value {i}: {} vs {}", gpu.centroids[i], cpu.centroids[i]))
}

/// Runs the suite on a GPU executor: the centroid family everywhere, exact k-NN on CUDA.
///
/// # Errors
/// Invalid workloads (a bug here), device failures.
pub fn run_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = centroid_gpu(exec, cfg)?;
    records.extend(super::clusters_families::run_gpu(exec, cfg)?);
    if exec.kind() != ExecutorKind::Cuda {
        eprintln!("{}: exact k-NN, IVF and lattice search run on CUDA only (f64 keys); not timed", exec.name());
        return Ok(records);
    }
    knn_gpu(exec, cfg, &mut records)?;
    Ok(records)
}

/// The centroid family's rows.
fn centroid_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    let params = CentroidParams::default();
    for w in centroid_workloads(cfg.quick) {
        let sets = (0..INPUT_SETS).map(|s| w.data(s)).collect::<Result<Vec<_>>>()?;
        let clusters = sets.iter().map(SynthData::clusters).collect::<Result<Vec<_>>>()?;
        let devs = clusters.iter().map(|c| DeviceClusters::upload(exec, c)).collect::<Result<Vec<_>>>()?;
        // One engine per set (the layouts are equal, the plan is the same).
        let mut engines = devs.iter().map(|d| GpuCentroidStats::new(exec, d)).collect::<Result<Vec<_>>>()?;
        engines[0].run(exec, &devs[0], &params)?;
        let got = engines[0].download(exec)?;
        let want = centroid_stats(&clusters[0], &params)?;
        let scale = sets[0].vectors.iter().fold(0.0f64, |m, &x| m.max(f64::from(x).abs()));
        if let Some(m) = centroid_mismatch(&got, &want, scale) {
            eprintln!("{}: {}: the GPU result differs from the CPU's ({m}); not timed", exec.name(), w.name());
            continue;
        }
        let mut i = 0usize;
        let stats = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            &mut i,
            |i| {
                *i += 1;
                Ok(())
            },
            |i| {
                let s = *i % devs.len();
                engines[s].run(exec, &devs[s], &params)
            },
        )?;
        let info = format!("{} clusters, 9 launches", w.clusters());
        records.push(record(exec.name(), w.name(), w.members, w.bytes(), stats, info));
    }
    Ok(records)
}

/// The exact k-NN rows of both strategies, then the IVF and lattice rows on the same data.
fn knn_gpu<E: GpuExecutor>(exec: &E, cfg: &Config, records: &mut Vec<Record>) -> Result<()> {
    let mut index = None;
    for w in knn_workloads(cfg.quick) {
        let (data, qv) = w.data()?;
        let db = data.vectors()?;
        let q = Vectors::new(&qv, w.dim)?;
        let d = DeviceVectors::upload(exec, &db)?;
        let dq = DeviceVectors::upload(exec, &q)?;
        let mut exact = None;
        for strategy in [Strategy::Threshold, Strategy::Lists] {
            exec.synchronize()?;
            let t = std::time::Instant::now();
            let mut search = GpuExactSearch::new(exec, &d)?.with_strategy(strategy);
            let prep_ms = t.elapsed().as_secs_f64() * 1e3;
            let got = search.search(exec, &d, &dq, w.k, w.metric)?;
            let fallback = search.fallback_queries();
            let nq = CPU_QUERIES.min(w.queries);
            let want = exact_search(&db, &Vectors::new(&qv[..nq * w.dim], w.dim)?, w.k, w.metric)?;
            let same = (0..nq).all(|i| {
                got.rows_of(i) == want.rows_of(i)
                    && got.scores_of(i).iter().zip(want.scores_of(i)).all(|(a, b)| a.to_bits() == b.to_bits())
            });
            let name = match strategy {
                Strategy::Threshold => w.name(w.queries),
                Strategy::Lists => format!("{} lists", w.name(w.queries)),
            };
            if !same {
                eprintln!("{}: {name}: the GPU result differs from the CPU's exact search; not timed", exec.name());
                continue;
            }
            let stats =
                measure(exec, cfg.warmup, cfg.repeats, || search.enqueue(exec, &d, &dq, w.k, w.metric).map(drop))?;
            let info = match strategy {
                Strategy::Threshold => {
                    let plan = FilterPlan::new(w.rows(), w.queries.min(QUERY_BATCH), exec.limits().compute_units);
                    format!(
                        "threshold path; exact path: {fallback} queries; sample every {} rows; filter {} splits of {} rows; norms (once) {prep_ms:.2} ms incl. compile",
                        sample_stride(w.rows(), w.k),
                        plan.splits,
                        plan.split_rows
                    )
                }
                Strategy::Lists => {
                    let plan = search.plan(exec, w.queries, w.k);
                    format!(
                        "lists path (baseline); exact path: {fallback} queries; {} splits of {} rows, lists of {}; norms (once) {prep_ms:.2} ms incl. compile",
                        plan.splits, plan.split_rows, plan.kp
                    )
                }
            };
            records.push(record(exec.name(), name, w.queries * w.rows(), (w.rows() * w.dim * 4) as u64, stats, info));
            if strategy == Strategy::Threshold {
                exact = Some((got, stats.median_ms));
            }
        }
        // The inverted file and the lattice on the same data, against this exact result.
        let Some((exact, exact_ms)) = exact else { continue };
        let run = clusters_search::ExactRun {
            data: &data,
            database: &d,
            queries: &dq,
            exact: &exact,
            exact_ms,
            metric: w.metric,
            shape: format!("{}q {} x {} k{}", w.queries, label(w.rows()), w.dim, w.k),
        };
        if index.is_none() {
            let data_label = format!("{} x {}", label(w.rows()), w.dim);
            index = Some(clusters_search::build(exec, &run, &data_label, records)?);
        }
        if let Some(index) = index.as_mut() {
            records.extend(clusters_search::run_gpu(exec, cfg, index, &run)?);
        }
    }
    Ok(())
}
