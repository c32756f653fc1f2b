//! The tree build on each executor: the CPU path calls orrery-tree-build's host functions
//! (inside the executor's pool), the GPU path drives `GpuTree` and the device TreeView;
//! both time the phases keys, sort, rebalance and view (the GPU also upload and
//! download) and return the same [`Built`] tree.

use orrery_core::{Aabb, CpuExecutor, GpuExecutor, PositionsView, Real, Result};
use orrery_tree_build::gpu::{GpuTree, TreeReal};
use orrery_tree_build::gpu_view::{GpuTreeViewBuilder, GpuViewReal};
use orrery_tree_build::view::{Geometry, TreeView};
use orrery_tree_build::{Convergence, Criterion, Rebalance, Shape, build, input};

use crate::timing::Phases;

/// What decides the leaves, before it is bound to a box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CriterionSpec {
    /// At most `bucket` particles per leaf.
    LeafCount {
        /// The bucket.
        bucket: u32,
    },
    /// At most `threshold` near-field pairs per leaf.
    NfCount {
        /// The threshold.
        threshold: u64,
    },
}

/// How to build: the shape, the criterion and the pass cap.
#[derive(Debug, Clone, Copy)]
pub struct BuildSpec {
    /// Octree of a curve, or binary.
    pub shape: Shape,
    /// The criterion.
    pub criterion: CriterionSpec,
    /// Most rebalance passes.
    pub max_passes: u32,
}

impl BuildSpec {
    /// The library's rebalance options for keys computed in `bbox`.
    ///
    /// # Errors
    /// NFCount in a box of zero extent.
    pub fn rebalance<T: Real>(&self, bbox: &Aabb<T>) -> Result<Rebalance> {
        let criterion = match self.criterion {
            CriterionSpec::LeafCount { bucket } => Criterion::leaf_count(bucket),
            CriterionSpec::NfCount { threshold } => Criterion::nf_count(self.shape, bbox)?.with_threshold(threshold),
        };
        Ok(Rebalance::new(criterion).with_max_passes(self.max_passes))
    }
}

/// A built tree, downloaded, with its view and the time of each phase.
#[derive(Debug)]
pub struct Built<T: Real> {
    /// Leaf boundaries (`L + 1` keys).
    pub leaves: Vec<u64>,
    /// The deepest leaf level.
    pub depth: u32,
    /// Particles per leaf (`L`).
    pub counts: Vec<u32>,
    /// NFCount's `n * S` per leaf.
    pub nf: Option<Vec<u64>>,
    /// `order[s]`: the input index of the particle in sorted slot `s`.
    pub order: Vec<u32>,
    /// Particles inside the box.
    pub active: usize,
    /// The box the keys were computed in.
    pub bbox: Aabb<T>,
    /// Passes and whether they converged.
    pub convergence: Convergence,
    /// Every node of the tree.
    pub view: TreeView<T>,
    /// Time per phase.
    pub phases: Phases,
}

/// Builds on the CPU (call inside the executor's pool, [`CpuExecutor::install`]).
///
/// # Errors
/// The library's errors.
pub fn on_cpu<T: Real>(exec: &CpuExecutor, cols: &[Vec<T>; 3], spec: &BuildSpec) -> Result<Built<T>> {
    let positions = PositionsView::new(&cols[0], &cols[1], &cols[2])?;
    let layout = spec.shape.layout();
    let mut phases = Phases::default();
    let (bbox, keys) = phases.time(exec, "keys", || {
        let bbox = input::tree_box(positions, None)?;
        Ok((bbox, input::particle_keys(positions, &bbox, spec.shape)))
    })?;
    let (keys, order, active) = phases.time(exec, "sort", || Ok(input::sort_keys(keys, layout)))?;
    let rebalance = spec.rebalance(&bbox)?;
    let (tree, convergence) = phases.time(exec, "rebalance", || build(&keys, layout, &rebalance))?;
    let view = phases.time(exec, "view", || {
        TreeView::from_leaves(tree.leaves(), &tree.leaf_starts(), Geometry::new(spec.shape, bbox), tree.nf())
    })?;
    Ok(Built {
        depth: tree.leaves().depth(),
        leaves: tree.leaves().keys().to_vec(),
        counts: tree.counts().to_vec(),
        nf: tree.nf().map(<[u64]>::to_vec),
        order,
        active,
        bbox,
        convergence,
        view,
        phases,
    })
}

/// Builds on a GPU executor: upload, keys, sort, rebalance, view, download.
///
/// # Errors
/// The library's and the device's errors.
pub fn on_gpu<E: GpuExecutor, T: TreeReal + GpuViewReal>(
    exec: &E,
    cols: &[Vec<T>; 3],
    spec: &BuildSpec,
) -> Result<Built<T>> {
    let positions = PositionsView::new(&cols[0], &cols[1], &cols[2])?;
    // The criterion's geometry needs a box of the keys' shape; the device computes the
    // same bounding box in its keys phase (and reads it back, as the CPU computes it).
    let host_box = input::tree_box(positions, None)?;
    let mut tree = GpuTree::new(exec, spec.shape, spec.rebalance(&host_box)?)?;
    let mut phases = Phases::default();
    let [x, y, z] =
        phases.time(exec, "upload", || Ok([exec.upload(&cols[0])?, exec.upload(&cols[1])?, exec.upload(&cols[2])?]))?;
    let bbox = phases.time(exec, "keys", || tree.compute_keys(exec, &x, &y, &z, None))?;
    phases.time(exec, "sort", || tree.sort(exec))?;
    let convergence = phases.time(exec, "rebalance", || tree.rebalance(exec))?;
    let geometry = Geometry::new(spec.shape, bbox);
    let mut builder = GpuTreeViewBuilder::<E, T>::new();
    let (tree_ref, builder_ref, geometry_ref) = (&mut tree, &mut builder, &geometry);
    let device_view = phases.time(exec, "view", move || tree_ref.build_view(exec, builder_ref, geometry_ref))?;
    let (view, leaves, counts, nf, order) = phases.time(exec, "download", || {
        let nf = match spec.criterion {
            CriterionSpec::NfCount { .. } => Some(tree.nf(exec)?),
            CriterionSpec::LeafCount { .. } => None,
        };
        Ok((device_view.download(exec)?, tree.leaves(exec)?, tree.counts(exec)?, nf, tree.order(exec)?))
    })?;
    Ok(Built {
        depth: leaves.depth(),
        leaves: leaves.into_keys(),
        counts,
        nf,
        order,
        active: tree.active(),
        bbox,
        convergence,
        view,
        phases,
    })
}
