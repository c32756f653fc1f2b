//! `orrery-bench`: runs a benchmark suite on every available executor, prints a table
//! and writes JSON and an SVG chart. `cargo xtask bench <suite>` builds and runs it;
//! `cargo xtask device-bundle` ships it to GPU machines.

mod data;
mod report;
mod stats;
mod suites;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use orrery_core::CpuExecutor;

use crate::report::{Environment, Record, Report};
use crate::suites::Config;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Suite {
    /// SFC keys and key/value sort (CPU anchors of the foundation issue).
    Keys,
    /// Device primitives: sort, scan, compaction, keys, and copy and sum as bandwidth
    /// references.
    Primitives,
    /// Sort of (u64 Hilbert key, u32 index) pairs of 2M and 25.6M uniform particles, the
    /// keys CUB sorts inside Cornerstone; peer: `cstone_octree_driver` through
    /// `benches/device/sort_peer.sh` (`--peer-files` writes its particle files).
    SortPeer,
    /// Batched ball tree build (Erwin layout): uniform and clustered points, 2D/3D/8D,
    /// both GPU strategies; peer: `benches/python/balltree_peer.py` (balltree-erwin).
    Balltree,
    /// Cornerstone tree build per phase (keys, sort, from scratch, incremental step) on
    /// the tree datasets; peer: `cstone_octree_driver` through `benches/device/tree.sh`.
    Tree,
    /// Barnes-Hut walks (independent, coherent, group) and direct summation on Plummer
    /// and uniform bodies, with error percentiles; peer: `ryoanji_driver` through
    /// `benches/device/gravity.sh`.
    Gravity,
    /// The FMM per phase (lists, upward, M2L, P2P, downward, total) with error
    /// percentiles on five models (uniform, Plummer, thin disk, two clusters, expanding
    /// sphere; 1M, 4M, 10M on GPUs, 100K on the CPU), adaptive and dense trees, and
    /// Barnes-Hut on the same bodies.
    Fmm,
    /// Node visits per target of every walk on the gravity workloads (CPU-computed: the
    /// same on every executor).
    GravityVisits,
    /// orrery-clusters on GPUs: the centroid family of 1K, 10K and 100K members x 1024
    /// dims, exact k-NN of 4096 queries over 1M x 128 (k = 10, L2 and inner product);
    /// peer: `benches/python/clusters_peer.py` (torch).
    Clusters,
    /// Steps per second of an orrery-sim Barnes-Hut run of a Plummer sphere (1M bodies on
    /// a GPU, 64K on the CPU) and each phase's share of a step: tree, force, integration,
    /// I/O (a snapshot every K steps), diagnostics.
    Sim,
}

impl Suite {
    /// The suite's name as given on the command line (`gravity-visits`), which also names
    /// its files (`<name>.json`, `<name>.svg`) and is the argument of a peer script.
    fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self)
            .map_or_else(|| format!("{self:?}").to_lowercase(), |v| v.get_name().to_owned())
    }
}

#[derive(Debug, Parser)]
#[command(about = "Runs an orrery benchmark suite on every available executor")]
struct Args {
    /// The suite.
    #[arg(value_enum)]
    suite: Suite,
    /// Executors to run (comma separated: cpu, cuda, wgpu).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["cpu".to_string(), "cuda".to_string(), "wgpu".to_string()])]
    executors: Vec<String>,
    /// Output folder for JSON and SVG.
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// Small sizes (smoke run).
    #[arg(long)]
    quick: bool,
    /// Untimed warm-up runs.
    #[arg(long, default_value_t = 2)]
    warmup: usize,
    /// Timed runs.
    #[arg(long, default_value_t = 10)]
    repeats: usize,
    /// CPU threads (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// How long the CPU pool's threads spin after each call, in microseconds (with
    /// `--threads`; default: `orrery_core::DEFAULT_SPIN`, as the recorded CPU numbers were
    /// measured, although the executor itself spins only when asked (ADR 0008); 0 lets
    /// them sleep at once, rayon's own behaviour).
    #[arg(long)]
    cpu_spin_us: Option<u64>,
    /// Also run this Python script (benches/python/peers.py for primitives,
    /// benches/python/balltree_peer.py for balltree, benches/python/clusters_peer.py for
    /// clusters) and merge the records it prints as
    /// JSON lines.
    #[arg(long)]
    peer: Option<PathBuf>,
    /// (tree) Write the 2M datasets in the peer drivers' format and our leaf arrays here;
    /// (gravity, sort-peer) write the workloads in the peer drivers' format here, before
    /// measuring.
    #[arg(long)]
    peer_files: Option<PathBuf>,
    /// The sim suite's options.
    #[command(flatten)]
    sim: suites::sim::Options,
}

/// A rayon pool of `--threads` workers (all cores by default), for the suites whose CPU
/// path is plain rayon code (tree build, gravity, the simulation) rather than the
/// executor's primitives.
fn rayon_pool(args: &Args) -> orrery_core::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads.unwrap_or(0))
        .build()
        .map_err(|e| orrery_core::Error::InvalidArgument { what: "--threads", reason: e.to_string() })
}

/// Runs `suite` on the CPU executor.
fn run_cpu(suite: Suite, exec: &CpuExecutor, cfg: &Config, args: &Args) -> orrery_core::Result<Vec<Record>> {
    eprintln!("running {suite:?} on {}", orrery_core::Executor::name(exec));
    match suite {
        Suite::Keys => suites::keys::run(exec, cfg),
        Suite::Primitives => suites::primitives::run(exec, cfg),
        Suite::SortPeer => suites::sort_peer::run(exec, cfg),
        Suite::Balltree => suites::balltree::run_cpu(exec, cfg),
        Suite::Tree => {
            let pool = rayon_pool(args)?;
            let name = format!("cpu:rayon ({} threads)", pool.current_num_threads());
            pool.install(|| suites::tree::run_cpu(cfg, &name, args.peer_files.as_deref()))
        }
        Suite::Gravity => {
            let pool = rayon_pool(args)?;
            let name = format!("cpu:rayon ({} threads)", pool.current_num_threads());
            pool.install(|| suites::gravity::run_cpu(cfg, &name))
        }
        Suite::GravityVisits => suites::gravity::run_visits(cfg, "cpu"),
        Suite::Fmm => {
            let pool = rayon_pool(args)?;
            let name = format!("cpu:rayon ({} threads)", pool.current_num_threads());
            pool.install(|| suites::fmm::run_cpu(cfg, &name))
        }
        Suite::Clusters => suites::clusters::run_cpu(exec, cfg),
        Suite::Sim => {
            let pool = rayon_pool(args)?;
            let name = format!("cpu:rayon ({} threads, f64)", pool.current_num_threads());
            pool.install(|| suites::sim::run_cpu(cfg, &args.sim, &name))
        }
    }
}

/// Runs `suite` on a GPU executor.
#[cfg(any(feature = "cuda", feature = "wgpu"))]
fn run_gpu<E: orrery_core::GpuExecutor + 'static>(
    suite: Suite,
    exec: &E,
    cfg: &Config,
    args: &Args,
) -> orrery_core::Result<Vec<Record>> {
    eprintln!("running {suite:?} on {}", exec.name());
    match suite {
        Suite::Keys => suites::keys::run(exec, cfg),
        Suite::Primitives => suites::primitives::run(exec, cfg),
        Suite::SortPeer => suites::sort_peer::run(exec, cfg),
        Suite::Balltree => suites::balltree::run_gpu(exec, cfg),
        Suite::Tree => suites::tree::run_gpu(exec, cfg),
        Suite::Gravity => suites::gravity::run_gpu(exec, cfg),
        // CPU-computed (see the suite); nothing to run on a GPU.
        Suite::GravityVisits => Ok(Vec::new()),
        Suite::Fmm => suites::fmm::run_gpu(exec, cfg),
        Suite::Clusters => suites::clusters::run_gpu(exec, cfg),
        Suite::Sim => suites::sim::run_gpu(exec, cfg, &args.sim),
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let cfg = Config { quick: args.quick, warmup: args.warmup, repeats: args.repeats, threads: args.threads };
    let mut env = Environment::detect();
    let mut records = Vec::new();
    let wants = |name: &str| args.executors.iter().any(|e| e == name);
    match (args.suite, &args.peer_files) {
        (Suite::Gravity, Some(dir)) => suites::gravity::write_peer_files(&cfg, dir)?,
        (Suite::SortPeer, Some(dir)) => suites::sort_peer::write_peer_files(&cfg, dir)?,
        _ => {}
    }

    if wants("cpu") {
        let mut cpu = match args.threads {
            Some(t) => CpuExecutor::with_threads(t)?,
            None => CpuExecutor::new(),
        };
        if args.threads.is_some() {
            let spin = args.cpu_spin_us.map_or(orrery_core::DEFAULT_SPIN, std::time::Duration::from_micros);
            cpu = cpu.with_spin(spin)?;
        } else if let Some(us) = args.cpu_spin_us {
            cpu = cpu.with_spin(std::time::Duration::from_micros(us))?;
        }
        records.extend(run_cpu(args.suite, &cpu, &cfg, &args).context("cpu executor")?);
    }
    #[cfg(feature = "cuda")]
    if wants("cuda") {
        match orrery_backend_cuda::CudaExecutor::from_env() {
            Ok(exec) => {
                env.gpus.push(orrery_core::Executor::name(&exec));
                records.extend(run_gpu(args.suite, &exec, &cfg, &args).context("cuda executor")?);
            }
            Err(e) => eprintln!("cuda skipped: {e}"),
        }
    }
    #[cfg(feature = "wgpu")]
    if wants("wgpu") {
        match orrery_backend_wgpu::WgpuExecutor::new() {
            Ok(exec) => {
                env.gpus.push(orrery_core::Executor::name(&exec));
                records.extend(run_gpu(args.suite, &exec, &cfg, &args).context("wgpu executor")?);
            }
            Err(e) => eprintln!("wgpu skipped: {e}"),
        }
    }
    if let Some(script) = &args.peer {
        records.extend(run_peer(script, args.suite, &cfg)?);
    }
    let _ = &mut env;
    let report = Report { environment: env, records };
    println!("{}", report.table());
    let name = args.suite.name();
    report.write(&args.out, &name)?;
    if args.suite == Suite::Balltree {
        // Side by side: rows "uniform 3D 16x1024", columns "<executor> <dtype> <strategy>".
        let pivot = report.pivot(3);
        println!("{pivot}");
        std::fs::write(args.out.join(format!("{name}.md")), pivot)?;
    }
    eprintln!("wrote {}/{name}.json and .svg", args.out.display());
    Ok(())
}

/// Runs a peer benchmark script (`python3 SCRIPT SUITE [--quick] --warmup W --repeats
/// R`, with `OMP_NUM_THREADS` set to `--threads` when given) and parses the JSON records
/// it prints one per line; its stderr passes through. A missing interpreter or module is reported and
/// skipped, not fatal: the peers exist only on some machines.
fn run_peer(script: &PathBuf, suite: Suite, cfg: &Config) -> Result<Vec<Record>> {
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(script).arg(suite.name());
    if cfg.quick {
        cmd.arg("--quick");
    }
    cmd.args(["--warmup", &cfg.warmup.to_string(), "--repeats", &cfg.repeats.to_string()]);
    if let Some(t) = cfg.threads {
        cmd.env("OMP_NUM_THREADS", t.to_string());
    }
    cmd.stderr(std::process::Stdio::inherit());
    eprintln!("running peer {}", script.display());
    let out = match cmd.output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => {
            eprintln!("peer {} failed with {}", script.display(), o.status);
            return Ok(Vec::new());
        }
        Err(e) => {
            eprintln!("peer {} not run: {e}", script.display());
            return Ok(Vec::new());
        }
    };
    let mut records = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.starts_with('{')) {
        let v: serde_json::Value = serde_json::from_str(line)?;
        let get = |k: &str| v[k].as_f64().unwrap_or(0.0);
        records.push(Record {
            suite: v["suite"].as_str().unwrap_or("").into(),
            workload: v["workload"].as_str().unwrap_or("").into(),
            executor: v["executor"].as_str().unwrap_or("peer").into(),
            elements: get("elements") as u64,
            bytes: get("bytes") as u64,
            stats: stats::Stats {
                median_ms: get("median_ms"),
                p10_ms: get("p10_ms"),
                p90_ms: get("p90_ms"),
                repeats: get("repeats") as usize,
            },
            info: v["info"].as_str().unwrap_or("").into(),
        });
    }
    Ok(records)
}
