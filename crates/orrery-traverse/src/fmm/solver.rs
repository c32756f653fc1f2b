//! [`FmmSolver`]: the FMM in one call — box, keys, tree (LeafCount, NFCount or dense;
//! octree or binary), view, bodies in tree order, evaluation — with the forces returned
//! in the bodies' order. [`Fmm`] is the same evaluation on a tree the caller built.

use orrery_core::sfc::Curve;
use orrery_core::{Error, ParticlesView, Real, Result};
use orrery_tree_build::view::TreeView;
use orrery_tree_build::{Criterion, Rebalance, Shape, input};

use crate::bodies::{Forces, check_bodies};
use crate::fmm::dense::uniform_view;
use crate::fmm::evaluate::{Fmm, FmmStats};
use crate::solver::walk_box;
use crate::tree_bodies::TreeBodies;

/// Which tree the solver builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FmmTree {
    /// Cornerstone LeafCount: at most `bucket` bodies per leaf.
    LeafCount {
        /// Bodies per leaf at most.
        bucket: u32,
    },
    /// Cornerstone NFCount: at most `threshold` estimated near-field pairs per leaf
    /// ([`orrery_tree_build::nfcount`]).
    NfCount {
        /// Near-field pairs per leaf at most.
        threshold: u64,
    },
    /// Every leaf at this depth ([`crate::fmm::dense`]).
    Dense {
        /// The leaves' level.
        depth: u32,
    },
}

/// The FMM settings plus the tree to build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FmmSolver<T: Real> {
    /// Order, acceptance and force law.
    pub fmm: Fmm<T>,
    /// Octree (Morton or Hilbert keys) or binary tree.
    pub shape: Shape,
    /// The tree.
    pub tree: FmmTree,
}

/// A tree and the bodies in its order.
#[derive(Debug, Clone)]
pub struct FmmPrepared<T: Real> {
    /// The tree's view.
    pub view: TreeView<T>,
    /// The bodies in tree order.
    pub bodies: TreeBodies<T>,
}

/// Forces in the bodies' order and the work done.
#[derive(Debug, Clone)]
pub struct FmmSolution<T> {
    /// Accelerations and potentials.
    pub forces: Forces<T>,
    /// Work counts and timings.
    pub stats: FmmStats,
}

impl<T: Real> FmmSolver<T> {
    /// `fmm` on a Hilbert octree with LeafCount leaves of at most 64 bodies.
    pub fn new(fmm: Fmm<T>) -> Self {
        Self { fmm, shape: Shape::Octree(Curve::Hilbert), tree: FmmTree::LeafCount { bucket: 64 } }
    }

    /// The tree over the bodies' box ([`walk_box`]) and the bodies in its order.
    ///
    /// # Errors
    /// As [`check_bodies`] and [`Fmm::check`]; the tree builds' errors (a bucket or
    /// threshold of 0, a dense depth out of range).
    pub fn prepare(&self, bodies: &ParticlesView<'_, T>) -> Result<FmmPrepared<T>> {
        check_bodies(bodies)?;
        self.fmm.check()?;
        let bbox = walk_box(bodies, self.shape)?;
        let sorted = input::sort_particles(bodies.positions(), Some(bbox), self.shape)?;
        if sorted.active != bodies.len() {
            return Err(Error::InvalidArgument {
                what: "FMM tree box",
                reason: format!(
                    "{} of {} bodies fell outside the padded box",
                    bodies.len() - sorted.active,
                    bodies.len()
                ),
            });
        }
        let view = match self.tree {
            FmmTree::Dense { depth } => uniform_view(&sorted, self.shape, depth)?,
            FmmTree::LeafCount { bucket } => {
                let options = Rebalance::new(Criterion::leaf_count(bucket));
                let (tree, _) = orrery_tree_build::build(&sorted.keys, sorted.layout, &options)?;
                TreeView::from_tree(&tree, &sorted, self.shape, None)?
            }
            FmmTree::NfCount { threshold } => {
                let criterion = Criterion::nf_count(self.shape, &sorted.bbox)?.with_threshold(threshold);
                let (tree, _) = orrery_tree_build::build(&sorted.keys, sorted.layout, &Rebalance::new(criterion))?;
                TreeView::from_tree(&tree, &sorted, self.shape, tree.nf())?
            }
        };
        let tree_bodies = TreeBodies::gather(bodies, &sorted.order[..sorted.active])?;
        Ok(FmmPrepared { view, bodies: tree_bodies })
    }

    /// Forces on every body, in the bodies' order.
    ///
    /// # Errors
    /// As [`FmmSolver::prepare`] and [`Fmm::run`].
    pub fn solve(&self, bodies: &ParticlesView<'_, T>) -> Result<FmmSolution<T>> {
        let prepared = self.prepare(bodies)?;
        let (forces, stats) = self.fmm.run(&prepared.view, &prepared.bodies)?;
        Ok(FmmSolution { forces: prepared.bodies.scatter_forces(&forces, bodies.len()), stats })
    }
}
