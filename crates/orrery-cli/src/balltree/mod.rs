//! `orrery balltree`: builds the batched ball trees (Erwin's layout) of a point set on
//! the chosen executor, reports their shape and the time per phase (text or `--json`),
//! and optionally writes the tree arrays as `.npy`.
//!
//! orrery-balltree's trees are perfect binary trees down to leaves of two slots, so the
//! only parameters are the batches and, on GPUs, the build strategy (all strategies
//! give the same tree).

pub mod build;

use std::num::NonZeroUsize;

use clap::ValueEnum;
use orrery_balltree::gpu::{GpuReal, Strategy};
use orrery_balltree::{BallTree, Batches};
use orrery_core::{CpuExecutor, CpuIsa, Executor, GpuExecutor, Real};
use serde::Serialize;

use crate::executor::{ExecutorArgs, OnCpuOrGpu, runs_f64};
use crate::input::{Coords, PointArgs, Points};
use crate::output::{OutputArgs, OutputDir};
use crate::timing::Phases;
use crate::tree::dtype_name;

/// The GPU build strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// Median selection per level (the library's default and the fastest).
    Select,
    /// Global sorts for the large nodes, then a block per subtree.
    Hybrid,
    /// One sort of all points per level (the baseline).
    LevelSort,
}

impl StrategyArg {
    fn strategy(self) -> Strategy {
        match self {
            StrategyArg::Select => Strategy::Select,
            StrategyArg::Hybrid => Strategy::Hybrid,
            StrategyArg::LevelSort => Strategy::LevelSort,
        }
    }
}

/// The options of `orrery balltree`.
#[derive(Debug, Clone, clap::Args)]
pub struct BallTreeArgs {
    #[command(flatten)]
    points: PointArgs,
    /// Split the points, in input order, into this many batches of equal size (one
    /// tree each).
    #[arg(long, value_name = "B", default_value = "1")]
    batches: NonZeroUsize,
    /// GPU build strategy (default: the fastest for the executor); the CPU builds
    /// recursively and ignores it.
    #[arg(long, value_enum)]
    strategy: Option<StrategyArg>,
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

/// The statistics of one build.
#[derive(Debug, Clone, Serialize)]
pub struct BallTreeStats {
    /// The executor's name.
    pub executor: String,
    /// Where the points came from.
    pub input: String,
    /// Number of points.
    pub points: usize,
    /// The precision of the build.
    pub precision: &'static str,
    /// Why the precision differs from the input's, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision_note: Option<String>,
    /// `recursive` (CPU) or the GPU strategy.
    pub strategy: String,
    /// Batches (one tree each).
    pub batches: usize,
    /// Points of the smallest and the largest batch.
    pub batch_points: [usize; 2],
    /// The shallowest and the deepest tree's depth `L` (leaves at depth `L`).
    pub depth: [u32; 2],
    /// Levels of the deepest tree, root to leaves (`L + 1`).
    pub levels: u32,
    /// Slots of all batches (the padded size: each batch's next power of two).
    pub slots: usize,
    /// Fraction of the slots that are padding.
    pub padding_ratio: f64,
    /// Time per phase, in order.
    pub phases: Phases,
    /// Sum of the phases, in milliseconds.
    pub total_ms: f64,
    /// The output directory, if arrays were written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The files written into it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

impl BallTreeStats {
    /// The statistics as `name: value` lines.
    pub fn text(&self) -> String {
        let mut lines = vec![
            format!("executor: {}", self.executor),
            format!("input: {}", self.input),
            format!("points: {}", self.points),
        ];
        match &self.precision_note {
            Some(note) => lines.push(format!("precision: {} ({note})", self.precision)),
            None => lines.push(format!("precision: {}", self.precision)),
        }
        lines.push(format!("strategy: {}", self.strategy));
        lines.push(format!("batches: {} of {}..{} points", self.batches, self.batch_points[0], self.batch_points[1]));
        lines.push(format!("depth: {}..{}", self.depth[0], self.depth[1]));
        lines.push(format!("levels: {}", self.levels));
        lines.push(format!("slots: {} (padding {:.2}%)", self.slots, 100.0 * self.padding_ratio));
        lines.push(format!("time: {}", self.phases.summary()));
        if let Some(dir) = &self.output {
            lines.push(format!("output: {dir} ({})", self.files.join(", ")));
        }
        lines.join("\n") + "\n"
    }
}

/// Runs `orrery balltree`.
///
/// # Errors
/// Bad options, an output directory that exists without `--force`, a bad input file,
/// an executor that cannot be opened, build and write failures.
pub fn run(args: &BallTreeArgs) -> anyhow::Result<()> {
    let output = args.output.prepare()?;
    let points = args.points.load()?;
    let batches = build::equal_batches(points.coords.len(), args.batches.get())?;
    let selection = args.executor.open()?;
    eprintln!("{}", selection.report);
    let stats = selection.chosen.run_split(Task { args, points, batches, output })?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&stats)?);
    } else {
        print!("{}", stats.text());
    }
    Ok(())
}

/// The build as a task for [`crate::executor::Chosen::run_split`].
struct Task<'a> {
    args: &'a BallTreeArgs,
    points: Points,
    batches: Batches,
    output: Option<OutputDir>,
}

impl Task<'_> {
    /// Takes the points out, in the precision to compute in, and the note saying why when
    /// they were rounded.
    fn take_coords(&mut self, f64_kernels: bool) -> (Coords, Option<String>) {
        let (dtype, note) = self.args.points.precision(self.points.coords.dtype(), f64_kernels);
        let coords = std::mem::replace(&mut self.points.coords, Coords::F32(Default::default()));
        (coords.converted(dtype), note)
    }

    fn cpu_typed<T: Real>(
        self,
        exec: &CpuExecutor,
        cols: &[Vec<T>; 3],
        note: Option<String>,
    ) -> anyhow::Result<BallTreeStats> {
        let rows = build::rows(cols);
        for _ in 0..self.args.warmup {
            build::on_cpu(exec, &rows, &self.batches)?;
        }
        let built = build::on_cpu(exec, &rows, &self.batches)?;
        let level = orrery_balltree::cpu::build_level(CpuIsa::active()?);
        self.finish(exec.name(), format!("recursive (cpu, {level})"), T::DTYPE, &built, note)
    }

    fn gpu_typed<E: GpuExecutor, T: GpuReal>(
        self,
        exec: &E,
        cols: &[Vec<T>; 3],
        note: Option<String>,
    ) -> anyhow::Result<BallTreeStats> {
        let strategy = self.args.strategy.map_or_else(|| Strategy::fastest_for(exec.kind()), StrategyArg::strategy);
        let rows = build::rows(cols);
        for _ in 0..self.args.warmup {
            build::on_gpu(exec, &rows, &self.batches, strategy)?;
        }
        let built = build::on_gpu(exec, &rows, &self.batches, strategy)?;
        self.finish(exec.name(), format!("{strategy:?}"), T::DTYPE, &built, note)
    }

    fn finish(
        self,
        executor: String,
        strategy: String,
        dtype: orrery_core::DType,
        built: &build::Built,
        precision_note: Option<String>,
    ) -> anyhow::Result<BallTreeStats> {
        let tree = &built.tree;
        let layout = tree.layout();
        let sizes = layout.sizes();
        let depths = layout.depths();
        let deepest = depths.iter().copied().max().unwrap_or(0);
        let mut stats = BallTreeStats {
            executor,
            input: self.points.origin.clone(),
            points: tree.num_points(),
            precision: dtype_name(dtype),
            precision_note,
            strategy,
            batches: tree.num_batches(),
            batch_points: [
                sizes.iter().copied().min().unwrap_or(0) as usize,
                sizes.iter().copied().max().unwrap_or(0) as usize,
            ],
            depth: [depths.iter().copied().min().unwrap_or(0), deepest],
            levels: deepest + 1,
            slots: tree.num_slots(),
            padding_ratio: tree.padding_ratio(),
            total_ms: built.phases.total_ms(),
            phases: built.phases.clone(),
            output: None,
            files: Vec::new(),
        };
        if let Some(mut dir) = self.output {
            write_arrays(&mut dir, tree)?;
            stats.output = Some(dir.path().display().to_string());
            let mut files = dir.written().to_vec();
            files.push("stats.json".to_owned());
            stats.files = files;
            dir.write_text("stats.json", &serde_json::to_string_pretty(&stats)?)?;
        }
        Ok(stats)
    }
}

/// Writes the tree's arrays into `dir`: `indices` (u32 per slot: the point in it),
/// `mask` (u8 per slot: 1 for a real point, 0 for padding), `permutation` (u32: the
/// points in tree order without padding), `inverse_permutation` (u32: each point's
/// position in it), `slot_offsets` and `point_offsets` (u32, CSR per batch).
///
/// # Errors
/// File-system errors.
pub fn write_arrays(dir: &mut OutputDir, tree: &BallTree) -> anyhow::Result<()> {
    dir.write_1d("indices", tree.indices())?;
    let mask: Vec<u8> = tree.mask().iter().map(|&m| u8::from(m)).collect();
    dir.write_1d("mask", &mask)?;
    dir.write_1d("permutation", &tree.permutation())?;
    dir.write_1d("inverse_permutation", &tree.inverse_permutation())?;
    dir.write_1d("slot_offsets", tree.layout().slot_offsets())?;
    dir.write_1d("point_offsets", tree.layout().point_offsets())?;
    Ok(())
}

impl OnCpuOrGpu for Task<'_> {
    type Output = anyhow::Result<BallTreeStats>;

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
