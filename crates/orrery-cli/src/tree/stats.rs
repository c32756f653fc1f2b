//! What `orrery tree` reports about a built tree, as text or JSON, and the arrays it
//! writes with `--output`.

use orrery_core::sfc::Curve;
use orrery_core::{Element, Real};
use orrery_tree_build::Shape;
use serde::Serialize;

use super::build::{BuildSpec, Built, CriterionSpec};
use super::dtype_name;
use crate::output::OutputDir;
use crate::timing::Phases;

/// Particles per leaf.
#[derive(Debug, Clone, Serialize)]
pub struct LeafLoad {
    /// Fewest.
    pub min: u32,
    /// Mean (active particles / leaves).
    pub mean: f64,
    /// Most.
    pub max: u32,
}

/// The statistics of one build.
#[derive(Debug, Clone, Serialize)]
pub struct TreeStats {
    /// The executor's name.
    pub executor: String,
    /// Where the points came from.
    pub input: String,
    /// Number of points.
    pub points: usize,
    /// Points inside the tree's box (all of them: the box is their bounding box).
    pub active: usize,
    /// The precision the tree was built in.
    pub precision: &'static str,
    /// Why the precision differs from the input's, if it does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub precision_note: Option<String>,
    /// `octree hilbert`, `octree morton` or `binary`.
    pub shape: &'static str,
    /// `leaf-count` or `nf-count`.
    pub criterion: &'static str,
    /// The bucket (leaf-count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bucket: Option<u32>,
    /// The threshold (nf-count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    /// Leaves.
    pub leaves: usize,
    /// Leaves holding no particle.
    pub empty_leaves: usize,
    /// Nodes of the view (internal and leaves).
    pub nodes: usize,
    /// The deepest leaf level (the root is level 0).
    pub depth: u32,
    /// Particles per leaf.
    pub particles_per_leaf: LeafLoad,
    /// Rebalance passes run (the confirming one included).
    pub passes: u32,
    /// Whether the last pass changed nothing.
    pub converged: bool,
    /// The pass cap.
    pub max_passes: u32,
    /// The box's lower corner.
    pub box_min: [f64; 3],
    /// The box's upper corner.
    pub box_max: [f64; 3],
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

/// The shape's name in reports.
pub fn shape_name(shape: Shape) -> &'static str {
    match shape {
        Shape::Octree(Curve::Hilbert) => "octree hilbert",
        Shape::Octree(Curve::Morton) => "octree morton",
        Shape::Binary => "binary",
    }
}

impl TreeStats {
    /// The statistics of `built`.
    pub fn new<T: Real>(
        executor: String,
        input: &str,
        spec: &BuildSpec,
        built: &Built<T>,
        precision_note: Option<String>,
    ) -> Self {
        let leaves = built.counts.len();
        let (criterion, bucket, threshold) = match spec.criterion {
            CriterionSpec::LeafCount { bucket } => ("leaf-count", Some(bucket), None),
            CriterionSpec::NfCount { threshold } => ("nf-count", None, Some(threshold)),
        };
        let (box_min, box_max) = built.bbox.to_f64();
        Self {
            executor,
            input: input.to_owned(),
            points: built.order.len(),
            active: built.active,
            precision: dtype_name(T::DTYPE),
            precision_note,
            shape: shape_name(spec.shape),
            criterion,
            bucket,
            threshold,
            leaves,
            empty_leaves: built.counts.iter().filter(|&&c| c == 0).count(),
            nodes: built.view.num_nodes(),
            depth: built.depth,
            particles_per_leaf: LeafLoad {
                min: built.counts.iter().copied().min().unwrap_or(0),
                mean: if leaves == 0 { 0.0 } else { built.active as f64 / leaves as f64 },
                max: built.counts.iter().copied().max().unwrap_or(0),
            },
            passes: built.convergence.passes,
            converged: built.convergence.converged,
            max_passes: spec.max_passes,
            box_min,
            box_max,
            total_ms: built.phases.total_ms(),
            phases: built.phases.clone(),
            output: None,
            files: Vec::new(),
        }
    }

    /// The statistics as `name: value` lines.
    pub fn text(&self) -> String {
        let mut lines = vec![
            format!("executor: {}", self.executor),
            format!("input: {}", self.input),
            format!("points: {} ({} inside the box)", self.points, self.active),
        ];
        match &self.precision_note {
            Some(note) => lines.push(format!("precision: {} ({note})", self.precision)),
            None => lines.push(format!("precision: {}", self.precision)),
        }
        lines.push(format!("shape: {}", self.shape));
        lines.push(match (self.bucket, self.threshold) {
            (Some(b), _) => format!("criterion: {} (bucket {b})", self.criterion),
            (_, Some(t)) => format!("criterion: {} (threshold {t})", self.criterion),
            _ => format!("criterion: {}", self.criterion),
        });
        lines.push(format!("leaves: {}", self.leaves));
        lines.push(format!("empty leaves: {}", self.empty_leaves));
        lines.push(format!("nodes: {}", self.nodes));
        lines.push(format!("depth: {}", self.depth));
        let load = &self.particles_per_leaf;
        lines.push(format!("particles per leaf: min {}, mean {:.3}, max {}", load.min, load.mean, load.max));
        lines.push(if self.converged {
            format!("passes: {} (converged)", self.passes)
        } else {
            format!("passes: {} (not converged: the cap --max-passes {} was reached)", self.passes, self.max_passes)
        });
        lines.push(format!("time: {}", self.phases.summary()));
        if let Some(dir) = &self.output {
            lines.push(format!("output: {dir} ({})", self.files.join(", ")));
        }
        lines.join("\n") + "\n"
    }
}

/// Writes the tree's arrays into `dir`: the leaf boundaries (`leaves`, u64, `L + 1`), the
/// counts (`counts`, u32, `L`), NFCount's values (`nf`, u64), the sorted order (`order`,
/// u32: the input index of each sorted slot) and the view's node arrays (`view_*`; boxes
/// as `(N, 3)` in the build's precision).
///
/// # Errors
/// File-system errors.
pub fn write_arrays<T: Real + Element + npyz::AutoSerialize>(
    dir: &mut OutputDir,
    built: &Built<T>,
) -> anyhow::Result<()> {
    dir.write_1d("leaves", &built.leaves)?;
    dir.write_1d("counts", &built.counts)?;
    if let Some(nf) = &built.nf {
        dir.write_1d("nf", nf)?;
    }
    dir.write_1d("order", &built.order)?;
    let view = &built.view;
    dir.write_1d("view_keys", view.keys())?;
    for (name, values) in [
        ("view_levels", view.levels()),
        ("view_parents", view.parents()),
        ("view_first_children", view.first_children()),
        ("view_leaf_begins", view.leaf_begins()),
        ("view_leaf_counts", view.leaf_counts()),
        ("view_particle_begins", view.particle_begins()),
        ("view_particle_counts", view.particle_counts()),
        ("view_level_offsets", view.level_offsets()),
        ("view_leaf_nodes", view.leaf_nodes()),
        ("view_escapes", view.escapes()),
        ("view_dfs_order", view.dfs_order()),
    ] {
        dir.write_1d(name, values)?;
    }
    let flat = |boxes: &[[T; 3]]| boxes.iter().flatten().copied().collect::<Vec<T>>();
    dir.write("view_centres", &[view.num_nodes(), 3], &flat(view.centres()))?;
    dir.write("view_half_extents", &[view.num_nodes(), 3], &flat(view.half_extents()))?;
    Ok(())
}
