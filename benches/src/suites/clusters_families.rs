//! `clusters` (continued): the sub-structure family's two passes, timed apart, on the
//! clusters of the centroid workloads' generator (equal sizes, Gaussian centres of spread 1,
//! members of spread 0.1). Called from [`super::clusters`]; the records belong to the
//! `clusters` suite.
//!
//! Workloads
//! - `two-means 10K x 1024`, `two-means 100K x 1024`: orrery's two-means split (seeds, three
//!   Lloyd iterations, the final assignment and the per-cluster finish: 12 launches) of
//!   100 and 1,000 clusters of 100 members. Throughput: member rows per second (each
//!   iteration reads every row twice).
//! - `silhouette 100K x 1024` (1,000 clusters of 100) and `silhouette 20K x 1024 c1000`
//!   (20 clusters of 1,000): the silhouette's row-tile pass over the two-means labels, which
//!   forms every ordered pair's distance (`sum n_c^2` pairs, the `elements` of the record).
//!
//! `--quick`: the same at 256 dimensions, 10K members.
//!
//! # What is timed
//! - **GPUs**: [`GpuSubstructureStats::run_two_means`] and
//!   [`GpuSubstructureStats::run_silhouette`] alone, between device event markers, the
//!   centroid family run once beforehand. One run is first checked against the CPU (labels
//!   equal, silhouette within 1e-4 absolute) and a mismatch is reported and not timed.
//! - **CPU**: [`two_means`] and [`substructure_stats`] (two-means *and* the silhouette: the
//!   CPU reference has no separate silhouette entry; the record's `info` says so), in the
//!   pool, on the host clock, fewer repeats (the CPU silhouette of 1e10 pair terms takes
//!   seconds).

// The GPU half is used only when the binary has a GPU executor.
#![cfg_attr(not(any(feature = "cuda", feature = "wgpu")), allow(dead_code, unused_imports))]

use orrery_clusters::gpu::{DeviceClusters, GpuCentroidStats, GpuSubstructureStats};
use orrery_clusters::substructure::{substructure_stats, two_means};
use orrery_clusters::synth::{SynthData, SynthParams, gaussian_clusters};
use orrery_clusters::{CentroidParams, centroid_stats};
use orrery_core::{CpuExecutor, Executor, GpuExecutor, Result};

use crate::report::Record;
use crate::stats::{Stats, measure};
use crate::suites::Config;

/// Which pass a workload times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    TwoMeans,
    Silhouette,
}

/// `clusters` clusters of `per` members of `dim` values.
#[derive(Debug, Clone, Copy)]
struct Workload {
    pass: Pass,
    clusters: usize,
    per: usize,
    dim: usize,
}

impl Workload {
    fn members(&self) -> usize {
        self.clusters * self.per
    }

    fn name(&self) -> String {
        let n = self.members();
        let size = if n.is_multiple_of(1000) { format!("{}K", n / 1000) } else { n.to_string() };
        let pass = match self.pass {
            Pass::TwoMeans => "two-means",
            Pass::Silhouette => "silhouette",
        };
        let per = if self.per == 100 { String::new() } else { format!(" c{}", self.per) };
        format!("{pass} {size} x {}{per}", self.dim)
    }

    fn data(&self) -> Result<SynthData> {
        gaussian_clusters(&SynthParams {
            median_size: self.per as f64,
            size_sigma: 0.0,
            seed: 1700 + (self.members() as u64) * 3 + self.per as u64,
            ..SynthParams::new(self.clusters, self.dim)
        })
    }

    /// Elements of the record: rows for two-means, ordered member pairs for the silhouette.
    fn elements(&self) -> usize {
        match self.pass {
            Pass::TwoMeans => self.members(),
            Pass::Silhouette => self.clusters * self.per * self.per,
        }
    }

    /// Bytes read from the vectors: 7 passes for two-means; the silhouette's tiles re-read
    /// each row once per column tile (`n_c / 64` times).
    fn bytes(&self) -> u64 {
        let row = (self.dim * 4) as u64;
        match self.pass {
            Pass::TwoMeans => 7 * self.members() as u64 * row,
            Pass::Silhouette => (self.members() * self.per.div_ceil(64) * 2) as u64 * row,
        }
    }
}

fn workloads(quick: bool) -> Vec<Workload> {
    if quick {
        return vec![
            Workload { pass: Pass::TwoMeans, clusters: 100, per: 100, dim: 256 },
            Workload { pass: Pass::Silhouette, clusters: 100, per: 100, dim: 256 },
        ];
    }
    vec![
        Workload { pass: Pass::TwoMeans, clusters: 100, per: 100, dim: 1024 },
        Workload { pass: Pass::TwoMeans, clusters: 1000, per: 100, dim: 1024 },
        Workload { pass: Pass::Silhouette, clusters: 1000, per: 100, dim: 1024 },
        Workload { pass: Pass::Silhouette, clusters: 20, per: 1000, dim: 1024 },
    ]
}

fn record(executor: String, w: &Workload, stats: Stats, info: String) -> Record {
    Record {
        suite: "clusters".into(),
        workload: w.name(),
        executor,
        elements: w.elements() as u64,
        bytes: w.bytes(),
        stats,
        info,
    }
}

/// The CPU records.
///
/// # Errors
/// Invalid workloads (a bug here).
pub fn run_cpu(exec: &CpuExecutor, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for w in workloads(cfg.quick) {
        let data = w.data()?;
        let clusters = data.clusters()?;
        let (stats, info) = match w.pass {
            Pass::TwoMeans => (
                measure(exec, cfg.warmup.min(1), cfg.repeats.min(5), || {
                    exec.install(|| drop(two_means(&clusters)));
                    Ok(())
                })?,
                String::new(),
            ),
            Pass::Silhouette => {
                let centroid = centroid_stats(&clusters, &CentroidParams::default())?;
                let stats = measure(exec, cfg.warmup.min(1), cfg.repeats.min(3), || {
                    exec.install(|| substructure_stats(&clusters, &centroid).map(drop))
                })?;
                (stats, "CPU: substructure_stats (two-means included)".into())
            }
        };
        records.push(record(exec.name(), &w, stats, info));
    }
    Ok(records)
}

/// The GPU records.
///
/// # Errors
/// Invalid workloads (a bug here), device failures.
pub fn run_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    let params = CentroidParams::default();
    for w in workloads(cfg.quick) {
        let data = w.data()?;
        let clusters = data.clusters()?;
        let dev = DeviceClusters::upload(exec, &clusters)?;
        let mut centroid = GpuCentroidStats::new(exec, &dev)?;
        centroid.run(exec, &dev, &params)?;
        let mut sub = GpuSubstructureStats::new(exec, &dev)?;
        sub.run(exec, &dev, &centroid)?;
        let got = sub.download(exec)?;
        let want = substructure_stats(&clusters, &centroid_stats(&clusters, &params)?)?;
        let labels_equal = got.split.labels == want.split.labels;
        let worst = got.silhouette.iter().zip(&want.silhouette).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
        if !labels_equal || worst > 1e-4 {
            eprintln!(
                "{}: {}: the GPU split differs from the CPU's (labels equal: {labels_equal}, silhouette off by \
                 {worst:e}); not timed",
                exec.name(),
                w.name()
            );
            continue;
        }
        let stats = match w.pass {
            Pass::TwoMeans => measure(exec, cfg.warmup, cfg.repeats, || sub.run_two_means(exec, &dev, &centroid))?,
            Pass::Silhouette => measure(exec, cfg.warmup, cfg.repeats, || sub.run_silhouette(exec, &dev))?,
        };
        records.push(record(exec.name(), &w, stats, format!("{} clusters of {}", w.clusters, w.per)));
    }
    Ok(records)
}
