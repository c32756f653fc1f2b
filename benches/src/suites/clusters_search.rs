//! The inverted file and the lattice of `orrery-clusters` on CUDA (part of `clusters`,
//! issue 16), on the exact k-NN workload's data: 1,000 clusters of 1,000 rows in 128
//! dimensions, 4,096 queries near cluster centres, k = 10.
//!
//! Workloads (CUDA only: the keys are f64):
//! - `ivf build 1M x 128 nlist 1024`: [`GpuIvfIndex::build`] (k-means++ seeding, 10 Lloyd
//!   iterations, the lists), host wall clock of one build (it reads back two small arrays
//!   per seed, so it is not a device-event region).
//! - `ivf L2 4096q 1M x 128 k10 nprobe P` for P in 1, 2, 4, 8, 16 (and IP): one search of
//!   all queries, device events around it (coarse keys, top-k, grouping, partial, merge and
//!   the download of the 4,096 x 10 result). `info`: recall@10 against the exact search of
//!   the same run (rows), and the queries per second relative to the exact threshold path's
//!   median of the same run (the goal: recall@10 >= 0.9 at >= 10x).
//! - `lattice L2 4096q 1M x 128 k10 nprobe P` (P = 1, 4) and `... fused`: the user's
//!   clusters as lists; the fused row also measures every scored member's distance to its
//!   centroid (its side buffer reduction and downloads included).
//!
//! Correctness is the tests' (`gpu_search`: every result bit-equal to the CPU); the CPU
//! index build at this size takes minutes, so the bench checks recall, not bits.

use orrery_clusters::gpu::{DeviceClusters, DeviceVectors, GpuIvfIndex, GpuLatticeIndex, ProbeTimes};
use orrery_clusters::synth::SynthData;
use orrery_clusters::{IvfParams, Metric, Neighbors};
use orrery_core::{GpuExecutor, Result};

use crate::report::Record;
use crate::stats::{Stats, measure};
use crate::suites::Config;

/// One exact-search workload's data and result, to search again approximately.
pub struct ExactRun<'a, E: GpuExecutor> {
    /// The data (clusters of the database).
    pub data: &'a SynthData,
    /// The database on the device.
    pub database: &'a DeviceVectors<E>,
    /// The queries on the device.
    pub queries: &'a DeviceVectors<E>,
    /// The exact result (the threshold path, equal to the CPU's).
    pub exact: &'a Neighbors,
    /// The exact path's median, ms.
    pub exact_ms: f64,
    /// The metric.
    pub metric: Metric,
    /// The workload name's tail (`4096q 1M x 128 k10`).
    pub shape: String,
}

/// Fraction of the exact rows found.
fn recall(got: &Neighbors, exact: &Neighbors) -> f64 {
    let hits: usize =
        (0..exact.len()).map(|q| got.rows_of(q).iter().filter(|r| exact.rows_of(q).contains(r)).count()).sum();
    hits as f64 / (exact.len() * exact.k) as f64
}

/// The step times of one search (an untimed run with markers between the steps).
fn steps(t: &ProbeTimes) -> String {
    format!(
        "steps (one marked run): coarse {:.3}, select {:.3}, group {:.3}, partial {:.3}, merge {:.3} ms",
        t.coarse_ms, t.select_ms, t.group_ms, t.partial_ms, t.merge_ms
    )
}

fn metric_name(metric: Metric) -> &'static str {
    match metric {
        Metric::L2 => "L2",
        Metric::InnerProduct => "IP",
    }
}

fn record(executor: String, workload: String, elements: usize, stats: Stats, info: String) -> Record {
    Record { suite: "clusters".into(), workload, executor, elements: elements as u64, bytes: 0, stats, info }
}

/// Lists of the index (about sqrt(rows)).
pub const NLIST: usize = 1024;

/// Trains the index once, timed on the host clock (`data_label`: `1M x 128`).
///
/// # Errors
/// Failures of the build.
pub fn build<E: GpuExecutor>(
    exec: &E,
    run: &ExactRun<'_, E>,
    data_label: &str,
    records: &mut Vec<Record>,
) -> Result<GpuIvfIndex<E>> {
    exec.synchronize()?;
    let t = std::time::Instant::now();
    let index = GpuIvfIndex::build(exec, run.database, &IvfParams::new(NLIST))?;
    exec.synchronize()?;
    let mut samples = [t.elapsed()];
    let stats = Stats::from_samples(&mut samples);
    let sizes = index.list_offsets().windows(2).map(|w| w[1] - w[0]);
    let (min, max) = sizes.fold((u32::MAX, 0), |(a, b), s| (a.min(s), b.max(s)));
    let info =
        format!("one build, host clock (incl. compile): k-means++ + 10 Lloyd iterations; list sizes {min}..={max}");
    records.push(record(exec.name(), format!("ivf build {data_label} nlist {NLIST}"), run.database.len(), stats, info));
    Ok(index)
}

/// The IVF and lattice rows of one exact workload (see the module docs).
///
/// # Errors
/// Failures of the searches.
pub fn run_gpu<E: GpuExecutor>(
    exec: &E,
    cfg: &Config,
    index: &mut GpuIvfIndex<E>,
    run: &ExactRun<'_, E>,
) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    let (k, m) = (run.exact.k, metric_name(run.metric));
    let nq = run.queries.len();
    for nprobe in [1usize, 2, 4, 8, 16] {
        index.engine().set_stage_timing(true);
        let got = index.search(exec, run.queries, k, nprobe, run.metric)?;
        let steps = index.engine().stage_times().map(|t| steps(&t)).unwrap_or_default();
        index.engine().set_stage_timing(false);
        let r = recall(&got, run.exact);
        let stats = measure(exec, cfg.warmup, cfg.repeats, || {
            index.search(exec, run.queries, k, nprobe, run.metric).map(drop)
        })?;
        let info = format!(
            "recall@10 {r:.4} vs exact; {:.1}x exact's queries/s (exact {:.2} ms); nlist {NLIST}, incl. result download; {steps}",
            run.exact_ms / stats.median_ms,
            run.exact_ms
        );
        records.push(record(exec.name(), format!("ivf {m} {} nprobe {nprobe}", run.shape), nq, stats, info));
        if nprobe <= 2 {
            // The baseline: the 32 x 32 tile for every item.
            index.engine().set_narrow_tiles(false);
            let base = measure(exec, cfg.warmup, cfg.repeats, || {
                index.search(exec, run.queries, k, nprobe, run.metric).map(drop)
            })?;
            index.engine().set_narrow_tiles(true);
            let info = format!(
                "square tiles only (the baseline of the 8 x 128 tile); {:.1}x exact's queries/s",
                run.exact_ms / base.median_ms
            );
            records.push(record(exec.name(), format!("ivf {m} {} nprobe {nprobe} square", run.shape), nq, base, info));
        }
    }
    let clusters = run.data.clusters()?;
    let dc = DeviceClusters::upload(exec, &clusters)?;
    let mut lattice = GpuLatticeIndex::new(exec, &dc)?;
    for nprobe in [1usize, 4] {
        lattice.engine().set_stage_timing(true);
        let got = lattice.search(exec, run.queries, k, nprobe, run.metric)?;
        let steps = lattice.engine().stage_times().map(|t| steps(&t)).unwrap_or_default();
        lattice.engine().set_stage_timing(false);
        let r = recall(&got, run.exact);
        let stats = measure(exec, cfg.warmup, cfg.repeats, || {
            lattice.search(exec, run.queries, k, nprobe, run.metric).map(drop)
        })?;
        let info = format!(
            "recall@10 {r:.4} vs exact; {:.1}x exact's queries/s; {} clusters; {steps}",
            run.exact_ms / stats.median_ms,
            clusters.len()
        );
        records.push(record(exec.name(), format!("lattice {m} {} nprobe {nprobe}", run.shape), nq, stats, info));
        let (fused, side) = lattice.search_fused(exec, run.queries, k, nprobe, run.metric)?;
        let same = fused == got;
        let scored: u64 = side.scored.iter().map(|&s| u64::from(s)).sum();
        let stats = measure(exec, cfg.warmup, cfg.repeats, || {
            lattice.search_fused(exec, run.queries, k, nprobe, run.metric).map(drop)
        })?;
        let info = format!(
            "neighbours {} the unfused search's; {scored} members measured; incl. the side buffer's reduction and downloads",
            if same { "equal to" } else { "DIFFER from" }
        );
        records.push(record(exec.name(), format!("lattice {m} {} nprobe {nprobe} fused", run.shape), nq, stats, info));
    }
    Ok(records)
}
