//! Bodies and forces in an executor's memory, shared by the GPU solvers.
//!
//! [`DeviceBodies`] is validated once, when it is uploaded from a [`ParticlesView`]
//! ([`check_bodies`]: at least one body, finite values, positive masses). Its fields are
//! public so that a caller's kernels (an integrator) can update the positions in place;
//! what they write is then the caller's responsibility: the solvers check lengths, not
//! values (device-resident values cannot be checked without a host read).

use orrery_core::executor::check_len;
use orrery_core::particles::check_index_range;
use orrery_core::{DeviceBuffer, Error, Executor, ParticlesView, Real, Result};

use crate::bodies::{Forces, check_bodies};

/// f32 bodies on a device, structure of arrays.
pub struct DeviceBodies<E: Executor> {
    /// x coordinates.
    pub x: E::Buffer<f32>,
    /// y coordinates.
    pub y: E::Buffer<f32>,
    /// z coordinates.
    pub z: E::Buffer<f32>,
    /// Masses (positive).
    pub m: E::Buffer<f32>,
}

impl<E: Executor> DeviceBodies<E> {
    /// Checks `bodies` ([`check_bodies`]) and uploads them.
    ///
    /// # Errors
    /// As [`check_bodies`]; the executor's allocation errors.
    pub fn upload(exec: &E, bodies: &ParticlesView<'_, f32>) -> Result<Self> {
        check_bodies(bodies)?;
        let p = bodies.positions();
        Ok(Self {
            x: exec.upload(p.x())?,
            y: exec.upload(p.y())?,
            z: exec.upload(p.z())?,
            m: exec.upload(bodies.mass())?,
        })
    }

    /// Number of bodies (the length of `m`).
    pub fn len(&self) -> usize {
        self.m.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.m.is_empty()
    }

    /// Checks the shape: four buffers of one length, at least one body, 32-bit indices.
    /// Returns the number of bodies.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`], [`Error::EmptyInput`], [`Error::TooManyPoints`].
    pub fn check(&self) -> Result<usize> {
        let n = self.m.len();
        check_len("bodies x", n, self.x.len())?;
        check_len("bodies y", n, self.y.len())?;
        check_len("bodies z", n, self.z.len())?;
        if n == 0 {
            return Err(Error::EmptyInput { what: "bodies", min: 1 });
        }
        check_index_range(n, "bodies")?;
        Ok(n)
    }
}

/// Accelerations and potentials on a device, one entry per target (f32 by default; f64
/// for the CUDA reference sum).
pub struct DeviceForces<E: Executor, T: Real = f32> {
    /// x components of the accelerations.
    pub ax: E::Buffer<T>,
    /// y components.
    pub ay: E::Buffer<T>,
    /// z components.
    pub az: E::Buffer<T>,
    /// Potentials.
    pub pot: E::Buffer<T>,
}

impl<E: Executor, T: Real> DeviceForces<E, T> {
    /// Room for `n` targets (contents unspecified until a solver writes them).
    ///
    /// # Errors
    /// The executor's allocation errors.
    pub fn alloc(exec: &E, n: usize) -> Result<Self> {
        Ok(Self { ax: exec.alloc(n)?, ay: exec.alloc(n)?, az: exec.alloc(n)?, pot: exec.alloc(n)? })
    }

    /// Number of targets (the length of `ax`).
    pub fn len(&self) -> usize {
        self.ax.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ax.is_empty()
    }

    /// Checks that all four buffers hold `count` entries.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming the first buffer that does not.
    pub fn check_len(&self, count: usize) -> Result<()> {
        check_len("forces ax", count, self.ax.len())?;
        check_len("forces ay", count, self.ay.len())?;
        check_len("forces az", count, self.az.len())?;
        check_len("forces pot", count, self.pot.len())
    }

    /// Copies the forces to the host (waits for the device).
    ///
    /// # Errors
    /// The executor's transfer errors.
    pub fn download(&self, exec: &E) -> Result<Forces<T>> {
        Ok(Forces {
            ax: exec.download(&self.ax)?,
            ay: exec.download(&self.ay)?,
            az: exec.download(&self.az)?,
            pot: exec.download(&self.pot)?,
        })
    }
}
