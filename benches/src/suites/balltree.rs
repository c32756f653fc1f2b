//! `balltree`: the batched ball tree build of `orrery-balltree` (Erwin layout) on
//! Erwin's benchmark shapes, every executor side by side, with the reference
//! (`balltree-erwin`) as a peer (`benches/python/balltree_peer.py`).
//!
//! Workloads (`batches x points per batch`): 16x1024, 16x4096, 16x16384, 64x16384 and
//! 1x1M of
//! - 3D points uniform in the unit cube ([`crate::data::uniform_rows`]), f32, and f64 on
//!   the CPU and CUDA (wgpu has no f64);
//! - 3D clustered points, a Gaussian mixture of 32 clusters of varied widths
//!   ([`crate::data::clustered_rows`]), f32;
//! - 2D and 8D uniform points, f32.
//!
//! `--quick` replaces the shapes by 4x1024 and 1x16384. A record's workload reads
//! `"<distribution> <dim>D <batches>x<points> <dtype> <strategy>"`, e.g.
//! `"uniform 3D 16x1024 f32 Hybrid"`; the CPU's strategy is `recursive`.
//!
//! # What is timed
//! - **GPUs** (any [`GpuExecutor`]: CUDA, wgpu): [`GpuBallTreeBuilder::build`] alone,
//!   between two device event markers, for [`Strategy::Hybrid`],
//!   [`Strategy::LevelSort`] (the baseline) and [`Strategy::Select`] (the default). The points are already on the device, so
//!   there is no host validation, upload or download; the builder keeps its plan and
//!   buffers across builds, as a training loop with a fixed batch layout would. The
//!   warm-up builds (at least one) compile the kernels, upload the plan and grow the
//!   buffers.
//! - **CPU** ([`CpuExecutor`], in its own thread pool): [`build_balltree`] of an
//!   already validated [`PointCloud`] (finiteness and offsets checked once, untimed),
//!   on the host clock; the returned tree is allocated and dropped inside the timing.
//! - The peer times `balltree.build_balltree_with_offsets` on float64 arrays on the wall
//!   clock, which includes its own argument checks and output allocation.
//!
//! Every sample rotates over three input sets of the same distribution (different
//! seeds), so consecutive builds do not find one set in cache. The first GPU tree of
//! every workload and strategy is downloaded once (untimed) and compared with the CPU
//! build of the same points; a mismatch is reported and that workload is not timed.

// The GPU half of the suite is used only when the binary has a GPU executor.
#![cfg_attr(not(any(feature = "cuda", feature = "wgpu")), allow(dead_code, unused_imports))]

use orrery_balltree::gpu::{GpuBallTreeBuilder, GpuReal, Strategy};
use orrery_balltree::{Batches, PointCloud, build_balltree};
use orrery_core::{CpuExecutor, CpuIsa, Error, Executor, ExecutorKind, GpuExecutor, Real, Result};

use crate::data::{clustered_rows, size_label, uniform_rows};
use crate::report::Record;
use crate::stats::{Stats, measure_with_setup};
use crate::suites::Config;

/// Input sets per workload, rotated over the samples.
const INPUT_SETS: u64 = 3;

/// How the points are distributed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Distribution {
    /// Uniform in the unit cube.
    Uniform,
    /// A Gaussian mixture of 32 clusters.
    Clustered,
}

/// One shape of input: distribution, dimension, batches of equal size, and whether f64
/// is measured too.
#[derive(Debug, Clone, Copy)]
struct Workload {
    distribution: Distribution,
    dim: usize,
    batches: usize,
    points: usize,
    with_f64: bool,
}

impl Workload {
    fn num_points(&self) -> usize {
        self.batches * self.points
    }

    /// `"uniform 3D 16x1024 f32 Hybrid"`.
    fn label(&self, dtype: &str, strategy: &str) -> String {
        let dist = match self.distribution {
            Distribution::Uniform => "uniform",
            Distribution::Clustered => "clustered",
        };
        format!("{dist} {}D {}x{} {dtype} {strategy}", self.dim, self.batches, size_label(self.points))
    }

    fn batches(&self) -> Result<Batches> {
        let offsets: Vec<usize> = (0..=self.batches).map(|b| b * self.points).collect();
        Batches::from_offsets(&offsets)
    }

    /// Input set `set` (row-major f64; seeds differ per set, shape and distribution).
    fn points(&self, set: u64) -> Vec<f64> {
        let seed = 1000 + set + 17 * (self.dim as u64) + ((self.num_points() as u64) << 8);
        match self.distribution {
            Distribution::Uniform => uniform_rows(self.num_points(), self.dim, seed),
            Distribution::Clustered => clustered_rows(self.num_points(), self.dim, seed),
        }
    }
}

/// The workloads, in the order they run and print.
fn workloads(quick: bool) -> Vec<Workload> {
    let shapes: &[(usize, usize)] = if quick {
        &[(4, 1024), (1, 16384)]
    } else {
        &[(16, 1024), (16, 4096), (16, 16384), (64, 16384), (1, 1 << 20)]
    };
    let mut out = Vec::new();
    for (distribution, dim, with_f64) in [
        (Distribution::Uniform, 3, true),
        (Distribution::Clustered, 3, false),
        (Distribution::Uniform, 2, false),
        (Distribution::Uniform, 8, false),
    ] {
        for &(batches, points) in shapes {
            out.push(Workload { distribution, dim, batches, points, with_f64 });
        }
    }
    out
}

fn record(executor: String, workload: String, elements: usize, stats: Stats) -> Record {
    Record {
        suite: "balltree".into(),
        workload,
        executor,
        elements: elements as u64,
        bytes: 0,
        stats,
        info: String::new(),
    }
}

/// The input sets of `w` converted to `T`.
fn inputs<T: Real>(w: &Workload) -> Vec<Vec<T>> {
    (0..INPUT_SETS).map(|s| w.points(s).into_iter().map(<T as Real>::from_f64).collect()).collect()
}

fn cpu_workload<T: Real>(exec: &CpuExecutor, cfg: &Config, w: &Workload, dtype: &str) -> Result<Record> {
    let batches = w.batches()?;
    let sets = inputs::<T>(w);
    let clouds = sets.iter().map(|p| PointCloud::new(p, w.dim, batches.clone())).collect::<Result<Vec<_>>>()?;
    let mut k = 0usize;
    let stats = measure_with_setup(
        exec,
        cfg.warmup,
        cfg.repeats,
        &mut k,
        |k| {
            *k += 1;
            Ok(())
        },
        |k| exec.install(|| build_balltree(&clouds[*k % clouds.len()]).map(drop)),
    )?;
    // The executor's name carries the CPU's level; the build may run a lower one.
    let level = orrery_balltree::cpu::build_level(CpuIsa::active()?);
    Ok(record(format!("{} [build: {level}]", exec.name()), w.label(dtype, "recursive"), w.num_points(), stats))
}

/// Runs the suite on the CPU executor (in its thread pool).
///
/// # Errors
/// Invalid workloads (a bug here) and build failures.
pub fn run_cpu(exec: &CpuExecutor, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for w in workloads(cfg.quick) {
        records.push(cpu_workload::<f32>(exec, cfg, &w, "f32")?);
        if w.with_f64 {
            records.push(cpu_workload::<f64>(exec, cfg, &w, "f64")?);
        }
    }
    Ok(records)
}

/// The strategies timed on every GPU executor: [`Strategy::Hybrid`],
/// [`Strategy::LevelSort`] (the baseline) and [`Strategy::Select`] (the default).
const STRATEGIES: [Strategy; 3] = [Strategy::Hybrid, Strategy::LevelSort, Strategy::Select];

/// Times one strategy on the device-resident input sets of one workload; `None` when
/// the tree differs from the CPU build (reported, not timed).
fn gpu_strategy<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    cfg: &Config,
    w: &Workload,
    label: String,
    strategy: Strategy,
    (devs, batches, reference): (&[E::Buffer<T>], &Batches, &orrery_balltree::BallTree),
) -> Result<Option<Record>> {
    let mut builder = GpuBallTreeBuilder::<E>::new(strategy);
    let tree = builder.build(exec, &devs[0], w.dim, batches)?.download(exec)?;
    if tree != *reference {
        eprintln!("{}: {label}: the GPU tree differs from the CPU build; not timed", exec.name());
        return Ok(None);
    }
    let mut k = 0usize;
    let stats = measure_with_setup(
        exec,
        cfg.warmup,
        cfg.repeats,
        &mut k,
        |k| {
            *k += 1;
            Ok(())
        },
        |k| builder.build(exec, &devs[*k % devs.len()], w.dim, batches).map(drop),
    )?;
    Ok(Some(record(exec.name(), label, w.num_points(), stats)))
}

/// Times every strategy of one workload in coordinate type `T` on `exec`, skipping (and
/// reporting) a strategy the executor cannot hold or does not support.
fn gpu_workload<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    cfg: &Config,
    w: &Workload,
    dtype: &str,
    records: &mut Vec<Record>,
) -> Result<()> {
    let batches = w.batches()?;
    let sets = inputs::<T>(w);
    let reference = build_balltree(&PointCloud::new(&sets[0], w.dim, batches.clone())?)?;
    let devs = match sets.iter().map(|p| exec.upload(p)).collect::<Result<Vec<_>>>() {
        Ok(d) => d,
        Err(e) => return skip_unfit(&exec.name(), &w.label(dtype, "(all strategies)"), Err(e)),
    };
    drop(sets);
    for strategy in STRATEGIES {
        let label = w.label(dtype, &format!("{strategy:?}"));
        match gpu_strategy(exec, cfg, w, label.clone(), strategy, (&devs, &batches, &reference)) {
            Ok(Some(r)) => records.push(r),
            Ok(None) => {}
            Err(e) => skip_unfit(&exec.name(), &label, Err(e))?,
        }
    }
    Ok(())
}

/// Keeps going past a workload the executor cannot hold or run (reported on stderr).
fn skip_unfit(exec_name: &str, label: &str, result: Result<()>) -> Result<()> {
    match result {
        Err(e @ (Error::BufferTooLarge { .. } | Error::Unsupported { .. } | Error::OutOfDeviceMemory { .. })) => {
            eprintln!("{exec_name}: {label} skipped: {e}");
            Ok(())
        }
        other => other,
    }
}

/// Runs the suite on a GPU executor: every strategy it has ([`STRATEGIES`]), f32
/// everywhere and f64 on CUDA for the workloads that ask for it.
///
/// # Errors
/// Device failures other than a workload that does not fit or is unsupported.
pub fn run_gpu<E: GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for w in workloads(cfg.quick) {
        gpu_workload::<E, f32>(exec, cfg, &w, "f32", &mut records)?;
        if w.with_f64 && exec.kind() == ExecutorKind::Cuda {
            gpu_workload::<E, f64>(exec, cfg, &w, "f64", &mut records)?;
        }
    }
    Ok(records)
}
