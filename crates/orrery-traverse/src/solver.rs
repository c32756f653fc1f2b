//! [`BarnesHut`]: the CPU solver in one call — keys, tree, view, multipoles, walk —
//! and [`Prepared`], its intermediate products, for callers (and tests) that walk
//! themselves or compare executors.

use orrery_core::sfc::Curve;
use orrery_core::{Aabb, Error, ParticlesView, Real, Result, Vec3};
use orrery_tree_build::view::{Geometry, TreeView};
use orrery_tree_build::{Criterion, Leaves, Rebalance, Shape, input};

use crate::bodies::{Forces, Gravity, check_bodies};
use crate::mac::Opening;
use crate::multipole::{Expansion, Multipoles};
use crate::tree_bodies::TreeBodies;
use crate::walk::{Interactions, WalkNodes, walk_groups, walk_targets};

/// Which CPU walk evaluates the forces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuWalk {
    /// [`walk_targets`]: every target its own walk.
    Targets,
    /// [`walk_groups`] with groups of this many targets.
    Groups(usize),
}

/// Barnes-Hut settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BarnesHut<T: Real> {
    /// The force law (Plummer softening).
    pub gravity: Gravity<T>,
    /// The opening criterion and angle.
    pub opening: Opening<T>,
    /// Monopole or quadrupole.
    pub expansion: Expansion,
    /// The tree: an octree over Morton or Hilbert keys, or the binary tree.
    pub shape: Shape,
    /// LeafCount bucket: at most this many bodies per leaf.
    pub bucket: u32,
    /// The walk.
    pub walk: CpuWalk,
}

/// What [`BarnesHut::prepare`] builds.
#[derive(Debug, Clone)]
pub struct Prepared<T: Real> {
    /// The tree's view.
    pub view: TreeView<T>,
    /// The bodies in tree order.
    pub bodies: TreeBodies<T>,
    /// Multipoles per node.
    pub multipoles: Multipoles<T>,
    /// The walk's node data.
    pub nodes: WalkNodes<T>,
}

/// Forces and interaction counts in the bodies' order.
#[derive(Debug, Clone)]
pub struct Solution<T> {
    /// Accelerations and potentials.
    pub forces: Forces<T>,
    /// Interactions per body.
    pub interactions: Interactions,
}

impl<T: Real> BarnesHut<T> {
    /// Quadrupoles on a Hilbert octree with leaves of at most 16 bodies, the per-target
    /// walk.
    pub fn new(gravity: Gravity<T>, opening: Opening<T>) -> Self {
        Self {
            gravity,
            opening,
            expansion: Expansion::Quadrupole,
            shape: Shape::Octree(Curve::Hilbert),
            bucket: 16,
            walk: CpuWalk::Targets,
        }
    }

    /// The tree over the bodies' bounding box, its view, the bodies in tree order, the
    /// multipoles and the walk data.
    ///
    /// The tree's box is [`walk_box`]: a single body and coincident bodies are valid
    /// input.
    ///
    /// # Errors
    /// As [`check_bodies`], [`Gravity::check`], [`Opening::check`]; a bucket of 0.
    pub fn prepare(&self, bodies: &ParticlesView<'_, T>) -> Result<Prepared<T>> {
        self.prepare_with(bodies, &mut None)
    }

    /// [`Self::prepare`] that keeps the tree between calls: the tree is updated
    /// incrementally from `leaves` when it holds a leaf array (a time-stepping code's
    /// previous step, or one restored from a snapshot), built from the root when it is
    /// `None`, and `leaves` holds the new tree's leaves afterwards. Leaves of another key
    /// layout than this solver's shape are ignored (the tree is built from the root).
    ///
    /// # Errors
    /// As [`Self::prepare`]; on error `leaves` is unchanged.
    pub fn prepare_with(&self, bodies: &ParticlesView<'_, T>, leaves: &mut Option<Leaves>) -> Result<Prepared<T>> {
        check_bodies(bodies)?;
        self.gravity.check()?;
        self.opening.check()?;
        let bbox = walk_box(bodies, self.shape)?;
        let sorted = input::sort_particles(bodies.positions(), Some(bbox), self.shape)?;
        if sorted.active != bodies.len() {
            return Err(Error::InvalidArgument {
                what: "gravity tree box",
                reason: format!(
                    "{} of {} bodies fell outside the padded bounding box",
                    bodies.len() - sorted.active,
                    bodies.len()
                ),
            });
        }
        let options = Rebalance::new(Criterion::leaf_count(self.bucket));
        let start = match leaves.as_ref().filter(|l| l.layout() == sorted.layout) {
            Some(previous) => previous.clone(),
            None => Leaves::root(sorted.layout),
        };
        let (next, _) = orrery_tree_build::build_from(start, &sorted.keys, &options)?;
        let view =
            TreeView::from_leaves(next.leaves(), &next.leaf_starts(), Geometry::new(self.shape, sorted.bbox), None)?;
        let tree_bodies = TreeBodies::gather(bodies, &sorted.order[..sorted.active])?;
        let multipoles = Multipoles::compute(&view, &tree_bodies)?;
        let nodes = WalkNodes::new(&view, &multipoles, &self.opening)?;
        *leaves = Some(next.leaves().clone());
        Ok(Prepared { view, bodies: tree_bodies, multipoles, nodes })
    }

    /// The settings' walk over prepared data: forces and interaction counts in tree order.
    ///
    /// # Errors
    /// As the walks.
    pub fn walk_prepared(&self, p: &Prepared<T>) -> Result<(Forces<T>, Interactions)> {
        match self.walk {
            CpuWalk::Targets => walk_targets(&p.nodes, &p.bodies, &self.gravity, self.expansion),
            CpuWalk::Groups(size) => walk_groups(&p.nodes, &p.bodies, &self.gravity, self.expansion, size),
        }
    }

    /// Forces on every body.
    ///
    /// # Errors
    /// As [`BarnesHut::prepare`] and the walks.
    pub fn solve(&self, bodies: &ParticlesView<'_, T>) -> Result<Solution<T>> {
        let p = self.prepare(bodies)?;
        let (forces, counts) = self.walk_prepared(&p)?;
        let n = bodies.len();
        let interactions = Interactions {
            particle_particle: p.bodies.scatter(&counts.particle_particle, n, 0),
            particle_cell: p.bodies.scatter(&counts.particle_cell, n, 0),
        };
        Ok(Solution { forces: p.bodies.scatter_forces(&forces, n), interactions })
    }
}

/// The box a gravity tree is built in: for an octree, a cube of the bounding box's
/// longest side (cubic cells keep the opening criteria's size meaningful), for the
/// binary tree the bounding box itself with every side at least `2^-10` of the longest;
/// both padded by `2^-16` of the longest side so that rounding keeps every body inside,
/// and of side 1 when all bodies coincide.
///
/// # Errors
/// As [`orrery_core::PositionsView::bounding_box`] (no bodies).
pub fn walk_box<T: Real>(bodies: &ParticlesView<'_, T>, shape: Shape) -> Result<Aabb<T>> {
    walk_box_of(&bodies.positions().bounding_box()?, shape)
}

/// [`walk_box`] of a bounding box computed elsewhere (a GPU reduction): the same box, bit
/// for bit, as the CPU solver's for the same bodies.
///
/// # Errors
/// [`orrery_core::Error::InvalidBox`] only for a box that is not finite.
pub fn walk_box_of<T: Real>(bb: &Aabb<T>, shape: Shape) -> Result<Aabb<T>> {
    let (lo, ext) = (bb.min(), bb.extent());
    let mut side = ext.x.max(ext.y).max(ext.z);
    if side <= T::zero() {
        side = T::one();
    }
    let margin = side * <T as Real>::from_f64(2f64.powi(-16));
    let thin = side * <T as Real>::from_f64(2f64.powi(-10));
    let width = |e: T| match shape {
        Shape::Octree(_) => side,
        Shape::Binary => e.max(thin),
    };
    let min = Vec3::new(lo.x - margin, lo.y - margin, lo.z - margin);
    let two = margin + margin;
    let max = Vec3::new(min.x + width(ext.x) + two, min.y + width(ext.y) + two, min.z + width(ext.z) + two);
    Aabb::new(min, max)
}
