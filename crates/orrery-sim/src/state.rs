//! [`State`]: the bodies and the clock of a simulation, in f64 on the host.

use orrery_traverse::ic::PhaseSpace;

use crate::{Result, SimError};

/// Positions, velocities, masses and ids of every body, and the clock.
///
/// This is what a snapshot holds and what a restart starts from. Solvers on a device keep
/// their own copy between steps and fill a `State` only for diagnostics and snapshots.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct State {
    /// Positions, velocities and masses.
    pub bodies: PhaseSpace,
    /// One 64-bit id per body (GADGET's ParticleIDs).
    pub ids: Vec<u64>,
    /// Simulation time.
    pub time: f64,
    /// Steps taken since the start of the run (restarts continue the count).
    pub step: u64,
}

impl State {
    /// A state at time 0, step 0, with ids `0..n`.
    pub fn new(bodies: PhaseSpace) -> Self {
        let ids = (0..bodies.len() as u64).collect();
        Self { bodies, ids, time: 0.0, step: 0 }
    }

    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.bodies.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }

    /// Checks that every column has one entry per body, that values are finite, masses
    /// positive and the clock finite.
    ///
    /// # Errors
    /// [`SimError::Core`] with [`orrery_core::Error::LengthMismatch`],
    /// [`orrery_core::Error::EmptyInput`], [`orrery_core::Error::NonFiniteValue`] or
    /// [`orrery_core::Error::InvalidArgument`] naming the first bad column.
    pub fn check(&self) -> Result<()> {
        use orrery_core::Error;
        let b = &self.bodies;
        let n = b.mass.len();
        if n == 0 {
            return Err(Error::EmptyInput { what: "bodies", min: 1 }.into());
        }
        let columns: [(&'static str, &[f64]); 6] =
            [("x", &b.x), ("y", &b.y), ("z", &b.z), ("vx", &b.vx), ("vy", &b.vy), ("vz", &b.vz)];
        for (what, c) in columns {
            orrery_core::executor::check_len(what, n, c.len())?;
            if let Some(i) = c.iter().position(|v| !v.is_finite()) {
                return Err(Error::NonFiniteValue { what, index: i, value: c[i] }.into());
            }
        }
        orrery_core::executor::check_len("ids", n, self.ids.len())?;
        if let Some(i) = b.mass.iter().position(|m| !(m.is_finite() && *m > 0.0)) {
            return Err(Error::InvalidArgument {
                what: "mass",
                reason: format!("body {i} has mass {}, masses must be positive and finite", b.mass[i]),
            }
            .into());
        }
        if !self.time.is_finite() {
            return Err(SimError::InvalidArgument { what: "time", reason: format!("{} is not finite", self.time) });
        }
        Ok(())
    }
}
