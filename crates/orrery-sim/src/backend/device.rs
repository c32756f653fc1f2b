//! [`Device`]: the bodies in f32 on a GPU executor (CUDA or wgpu), the integrator's
//! kernels (`kernels/sim/integrate.cu`, `shaders/sim/integrate.wgsl`) and the GPU
//! solvers (tiled direct summation, [`GpuBarnesHut`] with its tree updated incrementally
//! on the device).
//!
//! Between steps nothing leaves the device but what the solvers read back to size their
//! launches (the Barnes-Hut step reads its bounding box and the tree's status); the
//! bodies are copied out only for diagnostics and snapshots ([`Backend::download`]).
//! The kicks and drifts round every product before the sum, as the CPU reference does
//! ([`crate::steps`]), so on CUDA they equal [`crate::steps::kick_body`] in f32 bit for
//! bit (a test checks the rungs and velocities).

use std::time::Instant;

use orrery_core::{GpuExecutor, KernelSource, LaunchConfig, ParticlesView, Slice as _};
use orrery_traverse::gpu::{DeviceBodies, DeviceForces, GpuBarnesHut, direct_sum_gpu};
use orrery_traverse::solver::BarnesHut;
use orrery_traverse::{Forces, Gravity, Opening};

use super::{Backend, ForceSolver, PhaseTimes, Physics, SolverSpec, TreeSettings};
use crate::steps::Kick;
use crate::{Result, SimError, State};

/// The module `sim/integrate`.
pub const MODULE: KernelSource =
    KernelSource::new("sim/integrate", orrery_kernels::sim::INTEGRATE, orrery_shaders::sim::INTEGRATE);

/// Every module this crate launches (for ahead-of-time checks: `cargo xtask kernels`
/// compiles each with NVRTC and validates its WGSL).
pub const KERNEL_MODULES: [KernelSource; 1] = [MODULE];

/// Threads per block (`SIM_THREADS` in the CUDA source).
pub const THREADS: u32 = 256;

const CLOSE: u32 = 1;
const OPEN: u32 = 2;
const ADAPT: u32 = 4;

mod k {
    orrery_core::kernels! {
        module = super::MODULE;
        /// `x += v dt`.
        pub(super) fn sim_drift(
            write x: f32, write y: f32, write z: f32, read vx: f32, read vy: f32, read vz: f32,
            scalar n: u32, scalar dt: f32, scalar opaque_zero: u32,
        );
        /// The block scheme's kick.
        pub(super) fn sim_kick(
            write vx: f32, write vy: f32, write vz: f32, read ax: f32, read ay: f32, read az: f32,
            write rung: u32,
            scalar n: u32, scalar tick: u32, scalar levels: u32, scalar flags: u32,
            scalar dt: f32, scalar dt4: f32, scalar c2: f32, scalar opaque_zero: u32,
        );
    }
}

/// A GPU backend on the executor `E` (see the [module documentation](self)).
pub struct Device<'a, E: GpuExecutor> {
    exec: &'a E,
}

impl<'a, E: GpuExecutor> Device<'a, E> {
    /// A backend on `exec`.
    pub fn new(exec: &'a E) -> Self {
        Self { exec }
    }

    /// The executor.
    pub fn executor(&self) -> &'a E {
        self.exec
    }

    fn config(n: usize) -> LaunchConfig<'static, E> {
        LaunchConfig::blocks((n as u32).div_ceil(THREADS), THREADS)
    }
}

/// Bodies on a device, f32, structure of arrays.
pub struct DeviceState<E: GpuExecutor> {
    /// Positions and masses (what the solvers read).
    pub bodies: DeviceBodies<E>,
    /// x velocities.
    pub vx: E::Buffer<f32>,
    /// y velocities.
    pub vy: E::Buffer<f32>,
    /// z velocities.
    pub vz: E::Buffer<f32>,
    /// Rungs of the block scheme.
    pub rung: E::Buffer<u32>,
}

fn to_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&a| a as f32).collect()
}

fn widen(v: Vec<f32>) -> Vec<f64> {
    v.into_iter().map(f64::from).collect()
}

impl<E: GpuExecutor + 'static> Backend for Device<'_, E> {
    type Bodies = DeviceState<E>;
    type Forces = DeviceForces<E>;

    fn describe(&self) -> String {
        format!("{} (f32)", self.exec.name())
    }

    fn upload(&self, state: &State) -> Result<DeviceState<E>> {
        state.check()?;
        let b = &state.bodies;
        let (x, y, z, m) = (to_f32(&b.x), to_f32(&b.y), to_f32(&b.z), to_f32(&b.mass));
        if let Some(i) = m.iter().position(|&m| m <= 0.0 || !m.is_finite()) {
            return Err(SimError::InvalidArgument {
                what: "mass",
                reason: format!("body {i} has mass {} which is not a positive f32", b.mass[i]),
            });
        }
        let bodies = DeviceBodies::upload(self.exec, &ParticlesView::new(&x, &y, &z, &m)?)?;
        Ok(DeviceState {
            bodies,
            vx: self.exec.upload(&to_f32(&b.vx))?,
            vy: self.exec.upload(&to_f32(&b.vy))?,
            vz: self.exec.upload(&to_f32(&b.vz))?,
            rung: self.exec.upload(&vec![0u32; b.len()])?,
        })
    }

    fn alloc_forces(&self, n: usize) -> Result<DeviceForces<E>> {
        Ok(DeviceForces::alloc(self.exec, n)?)
    }

    fn download(&self, d: &DeviceState<E>, state: &mut State) -> Result<()> {
        orrery_core::executor::check_len("state", d.bodies.len(), state.len())?;
        let e = self.exec;
        let b = &mut state.bodies;
        for (dst, src) in [(&mut b.x, &d.bodies.x), (&mut b.y, &d.bodies.y), (&mut b.z, &d.bodies.z)] {
            *dst = widen(e.download(src)?);
        }
        for (dst, src) in [(&mut b.vx, &d.vx), (&mut b.vy, &d.vy), (&mut b.vz, &d.vz)] {
            *dst = widen(e.download(src)?);
        }
        Ok(())
    }

    fn download_forces(&self, f: &DeviceForces<E>) -> Result<Forces<f64>> {
        Ok(f.download(self.exec)?.to_f64())
    }

    fn download_rungs(&self, d: &DeviceState<E>) -> Result<Vec<u32>> {
        Ok(self.exec.download(&d.rung)?)
    }

    fn drift(&self, d: &mut DeviceState<E>, dt: f64) -> Result<()> {
        let n = d.bodies.check()?;
        let b = &mut d.bodies;
        k::sim_drift(
            self.exec,
            &Self::config(n),
            &mut b.x,
            &mut b.y,
            &mut b.z,
            &d.vx,
            &d.vy,
            &d.vz,
            n as u32,
            dt as f32,
            0,
        )?;
        Ok(())
    }

    fn kick(&self, d: &mut DeviceState<E>, f: &DeviceForces<E>, kick: &Kick) -> Result<()> {
        let n = d.bodies.check()?;
        f.check_len(n)?;
        let mut flags = 0;
        for (on, flag) in [(kick.close, CLOSE), (kick.open, OPEN), (kick.open && kick.levels > 0, ADAPT)] {
            if on {
                flags |= flag;
            }
        }
        k::sim_kick(
            self.exec,
            &Self::config(n),
            &mut d.vx,
            &mut d.vy,
            &mut d.vz,
            &f.ax,
            &f.ay,
            &f.az,
            &mut d.rung,
            n as u32,
            kick.tick,
            kick.levels,
            flags,
            kick.dt as f32,
            kick.dt4 as f32,
            kick.c2 as f32,
            0,
        )?;
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn solver(&self, spec: &SolverSpec, physics: &Physics) -> Result<Box<dyn ForceSolver<Self>>> {
        let gravity: Gravity<f32> = super::host::gravity(physics)?.cast();
        Ok(match spec {
            SolverSpec::Direct => Box::new(DeviceDirect { gravity }),
            SolverSpec::BarnesHut(t) => Box::new(DeviceBarnesHut::new(self.exec, gravity, t)?),
        })
    }
}

/// Tiled f32 direct summation on the device ([`direct_sum_gpu`]).
#[derive(Debug, Clone, Copy)]
pub struct DeviceDirect {
    gravity: Gravity<f32>,
}

impl<E: GpuExecutor + 'static> ForceSolver<Device<'_, E>> for DeviceDirect {
    fn describe(&self) -> String {
        "direct summation (f32, tiled)".into()
    }

    fn compute(
        &mut self,
        dev: &Device<'_, E>,
        d: &DeviceState<E>,
        out: &mut DeviceForces<E>,
        times: &mut PhaseTimes,
    ) -> Result<()> {
        let start = Instant::now();
        direct_sum_gpu(dev.exec, &d.bodies, None, &self.gravity, out)?;
        dev.exec.synchronize()?;
        times.force += start.elapsed();
        Ok(())
    }
}

/// Barnes-Hut on the device ([`GpuBarnesHut`]): the tree updated from the previous step's
/// on the device, the chosen walk, the forces copied into the backend's buffers.
pub struct DeviceBarnesHut<E: GpuExecutor> {
    solver: GpuBarnesHut<E>,
}

impl<E: GpuExecutor> DeviceBarnesHut<E> {
    /// A solver of `gravity` with the tree settings.
    ///
    /// # Errors
    /// As [`GpuBarnesHut::new`]: a theta that is not positive and finite, a bucket of 0.
    pub fn new(exec: &E, gravity: Gravity<f32>, t: &TreeSettings) -> Result<Self> {
        let opening = Opening { mac: t.mac, theta: t.theta as f32 };
        let mut settings = BarnesHut::new(gravity, opening);
        settings.expansion = t.expansion;
        settings.bucket = t.bucket;
        Ok(Self { solver: GpuBarnesHut::new(exec, settings, t.walk)? })
    }
}

impl<E: GpuExecutor + 'static> ForceSolver<Device<'_, E>> for DeviceBarnesHut<E> {
    fn describe(&self) -> String {
        let s = self.solver.settings();
        format!(
            "Barnes-Hut (f32, theta {}, {:?} MAC, {:?}, {:?} walk)",
            s.opening.theta,
            s.opening.mac,
            s.expansion,
            self.solver.walk()
        )
    }

    fn compute(
        &mut self,
        dev: &Device<'_, E>,
        d: &DeviceState<E>,
        out: &mut DeviceForces<E>,
        times: &mut PhaseTimes,
    ) -> Result<()> {
        let e = dev.exec;
        let start = Instant::now();
        self.solver.update_tree(e, &d.bodies)?;
        e.synchronize()?;
        let tree = Instant::now();
        times.tree += tree - start;
        self.solver.evaluate(e)?;
        let n = d.bodies.len();
        let f = self.solver.forces().ok_or_else(|| SimError::InvalidArgument {
            what: "Barnes-Hut",
            reason: "the walk left no forces".into(),
        })?;
        out.check_len(n)?;
        e.copy(f.ax.slice(0..n)?, &mut out.ax)?;
        e.copy(f.ay.slice(0..n)?, &mut out.ay)?;
        e.copy(f.az.slice(0..n)?, &mut out.az)?;
        e.copy(f.pot.slice(0..n)?, &mut out.pot)?;
        e.synchronize()?;
        times.force += tree.elapsed();
        Ok(())
    }
}
