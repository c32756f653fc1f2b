//! [`GpuBarnesHut`]: the whole force evaluation on a GPU — box, keys, sort, tree update,
//! TreeView, bodies in tree order, upward pass, walk, and the scatter back — with the
//! particle data on the device between steps.
//!
//! A step reads three small values back: the bounding box (6 floats, for the tree's box,
//! [`crate::solver::walk_box_of`]), the tree's status block (one read per rebalance) and
//! the view's status (its depth and counts, which size the upward pass's launches). The
//! tree is updated incrementally from the previous step's ([`GpuTree::rebalance`]).
//! On CUDA every integer and every node value equals the CPU solver's
//! ([`crate::solver::BarnesHut`] in f32), so the interaction counts are the CPU's too.

use orrery_core::gpu::GpuExecutor;
use orrery_core::{Aabb, Error, ReduceOp, Result, Slice, Vec3};
use orrery_tree_build::gpu::GpuTree;
use orrery_tree_build::gpu_view::{GpuTreeViewBuilder, ViewStatus};
use orrery_tree_build::view::Geometry;
use orrery_tree_build::{Convergence, Criterion, Rebalance};

use super::device::DeviceBodies;
use super::upward::{DeviceTreeBodies, DeviceWalkNodes, compute_walk_nodes};
use super::walk::{GpuWalk, ScatteredOutput, WalkInput, WalkOutput, run_walk, scatter};
use crate::bodies::Forces;
use crate::solver::{BarnesHut, walk_box_of};
use crate::walk::{Interactions, walk_eps2};

/// Barnes-Hut on a GPU (see the [module documentation](self)).
pub struct GpuBarnesHut<E: GpuExecutor> {
    settings: BarnesHut<f32>,
    walk: GpuWalk,
    tree: GpuTree<E>,
    views: GpuTreeViewBuilder<E, f32>,
    bounds: E::Buffer<f32>,
    bodies: Option<DeviceTreeBodies<E>>,
    nodes: Option<DeviceWalkNodes<E>>,
    walked: Option<WalkOutput<E>>,
    out: Option<ScatteredOutput<E>>,
    /// The last update's view status and convergence.
    last: Option<(ViewStatus, Convergence)>,
}

impl<E: GpuExecutor> GpuBarnesHut<E> {
    /// A solver with the CPU solver's settings (its `walk` is ignored: `walk` is the GPU
    /// walk).
    ///
    /// # Errors
    /// As [`crate::Gravity::check`] and [`crate::Opening::check`] (the walks need
    /// Plummer softening), a bucket of 0; device failures.
    pub fn new(exec: &E, settings: BarnesHut<f32>, walk: GpuWalk) -> Result<Self> {
        walk_eps2(&settings.gravity)?;
        settings.opening.check()?;
        let tree = GpuTree::new(exec, settings.shape, Rebalance::new(Criterion::leaf_count(settings.bucket)))?;
        Ok(Self {
            settings,
            walk,
            tree,
            views: GpuTreeViewBuilder::new(),
            bounds: exec.alloc(6)?,
            bodies: None,
            nodes: None,
            walked: None,
            out: None,
            last: None,
        })
    }

    /// The walk.
    pub fn walk(&self) -> GpuWalk {
        self.walk
    }

    /// Sets the walk for the next evaluations.
    pub fn set_walk(&mut self, walk: GpuWalk) {
        self.walk = walk;
    }

    /// The settings.
    pub fn settings(&self) -> &BarnesHut<f32> {
        &self.settings
    }

    /// The last update's view status (nodes, leaves, depth) and rebalance report.
    pub fn last_update(&self) -> Option<(ViewStatus, Convergence)> {
        self.last
    }

    /// The tree phase of a step: box (one read), keys, sort, rebalance (a build the first
    /// time, then an update), view, bodies in tree order and the upward pass.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for buffers of other lengths, [`Error::EmptyInput`] for
    /// none; the tree-build and upward-pass errors; device failures.
    pub fn update_tree(&mut self, exec: &E, b: &DeviceBodies<E>) -> Result<Convergence> {
        use orrery_core::DeviceBuffer as _;
        let n = b.x.len();
        for (what, len) in [("y", b.y.len()), ("z", b.z.len()), ("mass", b.m.len())] {
            orrery_core::executor::check_len(what, n, len)?;
        }
        if n == 0 {
            return Err(Error::EmptyInput { what: "bodies", min: 1 });
        }
        for (a, v) in [&b.x, &b.y, &b.z].into_iter().enumerate() {
            exec.reduce(v, ReduceOp::Min, self.bounds.slice_mut(a..a + 1)?)?;
            exec.reduce(v, ReduceOp::Max, self.bounds.slice_mut(a + 3..a + 4)?)?;
        }
        let bb = exec.download(&self.bounds)?;
        if let Some(i) = bb.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFiniteValue { what: "body bounding box", index: i, value: f64::from(bb[i]) });
        }
        let bbox = walk_box_of(
            &Aabb::new(Vec3::new(bb[0], bb[1], bb[2]), Vec3::new(bb[3], bb[4], bb[5]))?,
            self.settings.shape,
        )?;
        let run = self.tree.step(exec, &b.x, &b.y, &b.z, Some(bbox))?;
        if self.tree.active() != n {
            return Err(Error::InvalidArgument {
                what: "gravity tree box",
                reason: format!("{} of {n} bodies fell outside the padded bounding box", n - self.tree.active()),
            });
        }
        let geometry = Geometry::new(self.settings.shape, bbox);
        let view = self.tree.build_view(exec, &mut self.views, &geometry)?;
        let status = view.status(exec)?;
        let order = self.tree.order_view()?;
        let bodies = match self.bodies.take() {
            Some(mut d) => {
                d.gather_into(exec, &b.x, &b.y, &b.z, &b.m, order, status.particles)?;
                d
            }
            None => DeviceTreeBodies::gather(exec, &b.x, &b.y, &b.z, &b.m, order, status.particles)?,
        };
        let mut nodes = match self.nodes.take() {
            Some(nodes) => nodes,
            None => DeviceWalkNodes::new(exec, status.nodes)?,
        };
        let result = compute_walk_nodes(exec, view, &status, &bodies, &self.settings.opening, &mut nodes);
        self.bodies = Some(bodies);
        self.nodes = Some(nodes);
        result?;
        self.last = Some((status, run));
        Ok(run)
    }

    /// The walk phase: forces of every body from the last [`Self::update_tree`], in the
    /// bodies' order, left on the device ([`Self::forces`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before an update; device failures.
    pub fn evaluate(&mut self, exec: &E) -> Result<()> {
        use orrery_core::DeviceBuffer as _;
        let (Some(bodies), Some(nodes)) = (&self.bodies, &self.nodes) else {
            return Err(Error::InvalidArgument {
                what: "GPU Barnes-Hut",
                reason: "no tree yet: run update_tree first".into(),
            });
        };
        let n = bodies.len();
        let walked = match &mut self.walked {
            Some(w) => w,
            None => self.walked.insert(WalkOutput::new(exec, n)?),
        };
        let k = 4 * nodes.len();
        let input = WalkInput {
            bodies: bodies.bodies().slice(0..4 * n)?,
            centres: nodes.centres().slice(0..k)?,
            masses: nodes.masses().slice(0..k)?,
            quads: nodes.quads().slice(0..k)?,
            links: nodes.links().slice(0..k)?,
        };
        run_walk(exec, self.walk, &input, n, &self.settings.gravity, self.settings.expansion, walked)?;
        let out = match &mut self.out {
            Some(o) if o.ax.len() >= n => o,
            _ => self.out.insert(ScatteredOutput::new(exec, n + n / 4)?),
        };
        scatter(exec, walked, bodies.order().slice(0..n)?, out)
    }

    /// [`Self::update_tree`] then [`Self::evaluate`].
    ///
    /// # Errors
    /// As both.
    pub fn step(&mut self, exec: &E, b: &DeviceBodies<E>) -> Result<Convergence> {
        let run = self.update_tree(exec, b)?;
        self.evaluate(exec)?;
        Ok(run)
    }

    /// The forces of the last evaluation on the device (input order; the first `n`
    /// entries of each buffer).
    pub fn forces(&self) -> Option<&ScatteredOutput<E>> {
        self.out.as_ref()
    }

    /// The forces and interaction counts of the last evaluation, downloaded.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before an evaluation; device failures.
    pub fn download(&self, exec: &E) -> Result<(Forces<f32>, Interactions)> {
        match (&self.out, &self.bodies) {
            (Some(out), Some(b)) => out.download(exec, b.len()),
            _ => Err(Error::InvalidArgument { what: "GPU Barnes-Hut", reason: "no evaluation yet".into() }),
        }
    }

    /// The packed node data of the last update, downloaded (for comparisons with the CPU
    /// walk).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before an update; device failures.
    pub fn download_nodes(&self, exec: &E) -> Result<crate::walk::WalkNodes<f32>> {
        self.nodes
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument { what: "GPU Barnes-Hut", reason: "no tree yet".into() })?
            .download(exec)
    }

    /// The bodies in tree order of the last update, downloaded.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before an update; device failures.
    pub fn download_bodies(&self, exec: &E) -> Result<crate::TreeBodies<f32>> {
        self.bodies
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument { what: "GPU Barnes-Hut", reason: "no tree yet".into() })?
            .download(exec)
    }
}
