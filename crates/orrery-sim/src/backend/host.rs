//! [`Host`]: the bodies in f64 on the host, kicks and drifts on rayon, and the CPU
//! solvers (f64 direct summation, f64 Barnes-Hut with the tree kept between steps).
//!
//! Every operation is a per-body function of that body's data, and the solvers sum each
//! target's terms in a fixed order, so a run is bit-for-bit reproducible whatever the
//! number of threads, and a restart from a snapshot (which saves the tree's leaves)
//! continues exactly as the uninterrupted run.

use std::time::Instant;

use orrery_core::sfc::Curve;
use orrery_core::{ParticlesView, Result as CoreResult};
use orrery_traverse::solver::{BarnesHut, CpuWalk};
use orrery_traverse::{Forces, Gravity, Opening, Targets, direct_sum_f64};
use orrery_tree_build::{Leaves, Shape};
use rayon::prelude::*;

use super::{Backend, ForceSolver, PhaseTimes, Physics, SolverSpec, TreeSettings};
use crate::steps::{Kick, kick_body};
use crate::{Result, SimError, State};

/// The CPU backend (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Host;

/// Bodies on the host, f64, structure of arrays.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostBodies {
    /// Positions.
    pub x: [Vec<f64>; 3],
    /// Velocities.
    pub v: [Vec<f64>; 3],
    /// Masses.
    pub mass: Vec<f64>,
    /// Rungs of the block scheme.
    pub rung: Vec<u32>,
}

impl HostBodies {
    /// The positions and masses as a view.
    ///
    /// # Errors
    /// Never for bodies from [`Host::upload`].
    pub fn view(&self) -> CoreResult<ParticlesView<'_, f64>> {
        ParticlesView::new(&self.x[0], &self.x[1], &self.x[2], &self.mass)
    }
}

fn check_forces(what: &'static str, n: usize, f: &Forces<f64>) -> Result<()> {
    Ok(orrery_core::executor::check_len(what, n, f.len())?)
}

impl Backend for Host {
    type Bodies = HostBodies;
    type Forces = Forces<f64>;

    fn describe(&self) -> String {
        format!("CPU ({} threads, f64)", rayon::current_num_threads())
    }

    fn upload(&self, state: &State) -> Result<HostBodies> {
        state.check()?;
        let b = &state.bodies;
        Ok(HostBodies {
            x: [b.x.clone(), b.y.clone(), b.z.clone()],
            v: [b.vx.clone(), b.vy.clone(), b.vz.clone()],
            mass: b.mass.clone(),
            rung: vec![0; b.len()],
        })
    }

    fn alloc_forces(&self, n: usize) -> Result<Forces<f64>> {
        Ok(Forces::zeros(n))
    }

    fn download(&self, bodies: &HostBodies, state: &mut State) -> Result<()> {
        orrery_core::executor::check_len("state", bodies.mass.len(), state.len())?;
        let b = &mut state.bodies;
        for (dst, src) in [&mut b.x, &mut b.y, &mut b.z].into_iter().zip(&bodies.x) {
            dst.copy_from_slice(src);
        }
        for (dst, src) in [&mut b.vx, &mut b.vy, &mut b.vz].into_iter().zip(&bodies.v) {
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    fn download_forces(&self, forces: &Forces<f64>) -> Result<Forces<f64>> {
        Ok(forces.clone())
    }

    fn download_rungs(&self, bodies: &HostBodies) -> Result<Vec<u32>> {
        Ok(bodies.rung.clone())
    }

    fn drift(&self, bodies: &mut HostBodies, dt: f64) -> Result<()> {
        for (x, v) in bodies.x.iter_mut().zip(&bodies.v) {
            x.par_iter_mut().zip(v.par_iter()).for_each(|(x, v)| *x = crate::steps::drift(*x, *v, dt));
        }
        Ok(())
    }

    fn kick(&self, bodies: &mut HostBodies, f: &Forces<f64>, kick: &Kick) -> Result<()> {
        check_forces("forces", bodies.mass.len(), f)?;
        let [vx, vy, vz] = &mut bodies.v;
        (vx.par_iter_mut(), vy.par_iter_mut(), vz.par_iter_mut(), bodies.rung.par_iter_mut())
            .into_par_iter()
            .enumerate()
            .for_each(|(i, (vx, vy, vz, rung))| {
                let mut v = [*vx, *vy, *vz];
                kick_body(&mut v, [f.ax[i], f.ay[i], f.az[i]], rung, kick);
                [*vx, *vy, *vz] = v;
            });
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn solver(&self, spec: &SolverSpec, physics: &Physics) -> Result<Box<dyn ForceSolver<Self>>> {
        let gravity = gravity(physics)?;
        Ok(match spec {
            SolverSpec::Direct => Box::new(HostDirect { gravity }),
            SolverSpec::BarnesHut(t) => Box::new(HostBarnesHut::new(gravity, t)?),
        })
    }
}

/// The f64 force law of `physics`, checked.
pub(crate) fn gravity(physics: &Physics) -> Result<Gravity<f64>> {
    let gravity = Gravity { g: physics.g, ..Gravity::plummer(physics.softening) };
    gravity.check()?;
    Ok(gravity)
}

/// f64 direct summation on the CPU.
#[derive(Debug, Clone, Copy)]
pub struct HostDirect {
    gravity: Gravity<f64>,
}

impl ForceSolver<Host> for HostDirect {
    fn describe(&self) -> String {
        "direct summation (f64)".into()
    }

    fn compute(&mut self, _: &Host, b: &HostBodies, out: &mut Forces<f64>, times: &mut PhaseTimes) -> Result<()> {
        let start = Instant::now();
        *out = direct_sum_f64(&b.view()?, Targets::All, &self.gravity)?;
        times.force += start.elapsed();
        Ok(())
    }
}

/// f64 Barnes-Hut on the CPU: a Hilbert octree updated from the previous step's leaves.
#[derive(Debug, Clone)]
pub struct HostBarnesHut {
    settings: BarnesHut<f64>,
    leaves: Option<Leaves>,
}

impl HostBarnesHut {
    /// A solver of `gravity` with the tree settings.
    ///
    /// # Errors
    /// A theta that is not positive and finite, a bucket of 0.
    pub fn new(gravity: Gravity<f64>, t: &TreeSettings) -> Result<Self> {
        let opening = Opening { mac: t.mac, theta: t.theta };
        opening.check()?;
        if t.bucket == 0 {
            return Err(SimError::InvalidArgument { what: "bucket", reason: "a leaf holds at least 1 body".into() });
        }
        let walk = match t.walk {
            orrery_traverse::gpu::GpuWalk::Group => CpuWalk::Groups(32),
            orrery_traverse::gpu::GpuWalk::Group64 => CpuWalk::Groups(64),
            _ => CpuWalk::Targets,
        };
        let settings = BarnesHut {
            gravity,
            opening,
            expansion: t.expansion,
            shape: Shape::Octree(Curve::Hilbert),
            bucket: t.bucket,
            walk,
        };
        Ok(Self { settings, leaves: None })
    }
}

impl ForceSolver<Host> for HostBarnesHut {
    fn describe(&self) -> String {
        let s = &self.settings;
        format!(
            "Barnes-Hut (f64, theta {}, {:?} MAC, {:?}, {:?} walk)",
            s.opening.theta, s.opening.mac, s.expansion, s.walk
        )
    }

    fn compute(&mut self, _: &Host, b: &HostBodies, out: &mut Forces<f64>, times: &mut PhaseTimes) -> Result<()> {
        let start = Instant::now();
        let s = &self.settings;
        let view = b.view()?;
        let p = s.prepare_with(&view, &mut self.leaves)?;
        let tree = Instant::now();
        times.tree += tree - start;
        let (forces, _) = s.walk_prepared(&p)?;
        *out = p.bodies.scatter_forces(&forces, view.len());
        times.force += tree.elapsed();
        Ok(())
    }

    fn tree_leaves(&self) -> Option<Vec<u64>> {
        self.leaves.as_ref().map(|l| l.keys().to_vec())
    }

    fn restore_tree_leaves(&mut self, leaves: Vec<u64>) -> Result<()> {
        self.leaves = Some(Leaves::from_keys(leaves, self.settings.shape.layout())?);
        Ok(())
    }
}
