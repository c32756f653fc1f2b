//! `orrery tree`: builds the Cornerstone tree of a point set on the chosen executor and
//! reports its statistics (text or `--json`), optionally writing its arrays as `.npy`.

pub mod build;
pub mod stats;

use anyhow::bail;
use clap::ValueEnum;
use orrery_core::sfc::Curve;
use orrery_core::{CpuExecutor, DType, Executor, GpuExecutor, Real};
use orrery_tree_build::Shape;
use orrery_tree_build::gpu::TreeReal;
use orrery_tree_build::gpu_view::GpuViewReal;
use orrery_tree_build::nfcount::DEFAULT_THRESHOLD;

use crate::executor::{ExecutorArgs, OnCpuOrGpu, runs_f64};
use crate::input::{Coords, PointArgs, Points};
use crate::output::{OutputArgs, OutputDir};
use build::{BuildSpec, Built, CriterionSpec};
use stats::TreeStats;

/// The default LeafCount bucket (Cornerstone's benchmarks use 16).
pub const DEFAULT_BUCKET: u32 = 16;

/// The space-filling curve of an octree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CurveArg {
    /// Hilbert keys (the default).
    Hilbert,
    /// Morton (Z-order) keys.
    Morton,
}

/// The refinement criterion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum CriterionArg {
    /// At most --bucket particles per leaf.
    #[default]
    LeafCount,
    /// At most --threshold estimated near-field pairs per leaf.
    NfCount,
}

/// The options of `orrery tree`.
#[derive(Debug, Clone, clap::Args)]
pub struct TreeArgs {
    #[command(flatten)]
    points: PointArgs,
    /// Space-filling curve of the octree.
    #[arg(long, value_enum, conflicts_with = "binary")]
    curve: Option<CurveArg>,
    /// Build the binary (longest-side) tree instead of the octree.
    #[arg(long)]
    binary: bool,
    /// Refinement criterion.
    #[arg(long, value_enum, default_value_t = CriterionArg::LeafCount)]
    criterion: CriterionArg,
    /// Most particles per leaf (leaf-count; default 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    bucket: Option<u32>,
    /// Most near-field pairs n * S per leaf (nf-count; default 27 * 64^2).
    #[arg(long, value_name = "W", value_parser = clap::value_parser!(u64).range(1..))]
    threshold: Option<u64>,
    /// Most rebalance passes.
    #[arg(long, value_name = "N", default_value_t = orrery_tree_build::Rebalance::DEFAULT_MAX_PASSES, value_parser = clap::value_parser!(u32).range(1..))]
    max_passes: u32,
    /// Untimed builds before the timed one (GPU kernels compile on the first).
    #[arg(long, value_name = "N", default_value_t = 0)]
    warmup: u32,
    #[command(flatten)]
    executor: ExecutorArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// Print the statistics as JSON.
    #[arg(long)]
    json: bool,
}

impl TreeArgs {
    /// The build the options describe.
    ///
    /// # Errors
    /// A bucket with nf-count or a threshold with leaf-count.
    fn spec(&self) -> anyhow::Result<BuildSpec> {
        let criterion = match self.criterion {
            CriterionArg::LeafCount => {
                if self.threshold.is_some() {
                    bail!("--threshold applies to --criterion nf-count");
                }
                CriterionSpec::LeafCount { bucket: self.bucket.unwrap_or(DEFAULT_BUCKET) }
            }
            CriterionArg::NfCount => {
                if self.bucket.is_some() {
                    bail!("--bucket applies to --criterion leaf-count");
                }
                CriterionSpec::NfCount { threshold: self.threshold.unwrap_or(DEFAULT_THRESHOLD) }
            }
        };
        let shape = match (self.binary, self.curve) {
            (true, _) => Shape::Binary,
            (false, Some(CurveArg::Morton)) => Shape::Octree(Curve::Morton),
            (false, _) => Shape::Octree(Curve::Hilbert),
        };
        Ok(BuildSpec { shape, criterion, max_passes: self.max_passes })
    }
}

/// Runs `orrery tree`.
///
/// # Errors
/// Bad options, an output directory that exists without `--force`, a bad input file,
/// an executor that cannot be opened, build and write failures.
pub fn run(args: &TreeArgs) -> anyhow::Result<()> {
    let spec = args.spec()?;
    let output = args.output.prepare()?;
    let points = args.points.load()?;
    let selection = args.executor.open()?;
    eprintln!("{}", selection.report);
    let stats = selection.chosen.run_split(Task { args, spec, points, output })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        print!("{}", stats.text());
    }
    Ok(())
}

/// The build as a task for [`crate::executor::Chosen::run_split`].
struct Task<'a> {
    args: &'a TreeArgs,
    spec: BuildSpec,
    points: Points,
    output: Option<OutputDir>,
}

impl Task<'_> {
    /// Takes the points out, in the precision to compute in, and the note saying why
    /// when they were rounded.
    fn take_coords(&mut self, f64_kernels: bool) -> (Coords, Option<String>) {
        let (dtype, note) = self.args.points.precision(self.points.coords.dtype(), f64_kernels);
        let coords = std::mem::replace(&mut self.points.coords, Coords::F32(Default::default()));
        (coords.converted(dtype), note)
    }

    /// The warm-up builds, the timed one, and its statistics.
    fn cpu_typed<T: Real + npyz::AutoSerialize>(
        self,
        exec: &CpuExecutor,
        cols: &[Vec<T>; 3],
        note: Option<String>,
    ) -> anyhow::Result<TreeStats> {
        for _ in 0..self.args.warmup {
            build::on_cpu(exec, cols, &self.spec)?;
        }
        let built = build::on_cpu(exec, cols, &self.spec)?;
        self.finish(exec.name(), &built, note)
    }

    /// As [`Task::cpu_typed`], on a GPU executor.
    fn gpu_typed<E: GpuExecutor, T: TreeReal + GpuViewReal + npyz::AutoSerialize>(
        self,
        exec: &E,
        cols: &[Vec<T>; 3],
        note: Option<String>,
    ) -> anyhow::Result<TreeStats> {
        for _ in 0..self.args.warmup {
            build::on_gpu(exec, cols, &self.spec)?;
        }
        let built = build::on_gpu(exec, cols, &self.spec)?;
        self.finish(exec.name(), &built, note)
    }

    /// Statistics of a build, after writing its arrays where asked.
    fn finish<T: Real + npyz::AutoSerialize>(
        self,
        executor: String,
        built: &Built<T>,
        note: Option<String>,
    ) -> anyhow::Result<TreeStats> {
        let mut stats = TreeStats::new(executor, &self.points.origin, &self.spec, built, note);
        if let Some(mut dir) = self.output {
            stats::write_arrays(&mut dir, built)?;
            stats.output = Some(dir.path().display().to_string());
            let mut files = dir.written().to_vec();
            files.push("stats.json".to_owned());
            stats.files = files;
            dir.write_text("stats.json", &serde_json::to_string_pretty(&stats)?)?;
        }
        Ok(stats)
    }
}

impl OnCpuOrGpu for Task<'_> {
    type Output = anyhow::Result<TreeStats>;

    fn cpu(mut self, exec: &CpuExecutor) -> Self::Output {
        let (coords, note) = self.take_coords(true);
        exec.install(|| match coords {
            Coords::F32(c) => self.cpu_typed(exec, &c, note),
            Coords::F64(c) => self.cpu_typed(exec, &c, note),
        })
    }

    fn gpu<E: GpuExecutor>(mut self, exec: &E) -> Self::Output {
        let (coords, note) = self.take_coords(runs_f64(exec));
        match coords {
            Coords::F32(c) => self.gpu_typed(exec, &c, note),
            Coords::F64(c) => self.gpu_typed(exec, &c, note),
        }
    }
}

/// The dtype's name for reports.
pub fn dtype_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "f32",
        DType::F64 => "f64",
        _ => "other",
    }
}
