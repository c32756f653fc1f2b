//! Conserved quantities and the virial ratio of a synchronised state, in f64.
//!
//! With masses `m_i`, velocities `v_i` and the solver's potentials `phi_i` (`G`
//! included, the self pair excluded, Plummer-softened):
//! kinetic `T = sum m v^2 / 2`, potential `W = sum m phi / 2` (each pair counted once),
//! total `E = T + W`, linear momentum `P = sum m v`, angular momentum
//! `L = sum m x × v` (about the origin), virial ratio `Q = 2 T / |W|` (1 in equilibrium).
//! Sums run in body order, so they are reproducible.

use orrery_traverse::Forces;
use serde::Serialize;

use crate::State;

/// The diagnostics of one synchronised state.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Diagnostics {
    /// Simulation time.
    pub time: f64,
    /// Step count.
    pub step: u64,
    /// Kinetic energy.
    pub kinetic: f64,
    /// Potential energy.
    pub potential: f64,
    /// Total energy.
    pub total: f64,
    /// `(E - E_0) / |E_0|` against the run's first measurement (0 there).
    pub energy_error: f64,
    /// Linear momentum.
    pub momentum: [f64; 3],
    /// Angular momentum about the origin.
    pub angular_momentum: [f64; 3],
    /// `2 T / |W|`.
    pub virial_ratio: f64,
}

impl Diagnostics {
    /// The diagnostics of `state` with the potentials of `forces` (same order);
    /// `energy0` is the reference energy for the error (`None`: this state's own).
    pub fn measure(state: &State, forces: &Forces<f64>, energy0: Option<f64>) -> Self {
        let b = &state.bodies;
        let (mut kinetic, mut potential) = (0.0, 0.0);
        let (mut p, mut l) = ([0.0; 3], [0.0; 3]);
        for i in 0..b.len() {
            let m = b.mass[i];
            let (x, v) = ([b.x[i], b.y[i], b.z[i]], [b.vx[i], b.vy[i], b.vz[i]]);
            kinetic += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            potential += 0.5 * m * forces.pot[i];
            for c in 0..3 {
                p[c] += m * v[c];
            }
            l[0] += m * (x[1] * v[2] - x[2] * v[1]);
            l[1] += m * (x[2] * v[0] - x[0] * v[2]);
            l[2] += m * (x[0] * v[1] - x[1] * v[0]);
        }
        let total = kinetic + potential;
        let e0 = energy0.unwrap_or(total);
        let energy_error = if e0 == 0.0 { total - e0 } else { (total - e0) / e0.abs() };
        let virial_ratio = if potential == 0.0 { f64::INFINITY } else { 2.0 * kinetic / potential.abs() };
        Self {
            time: state.time,
            step: state.step,
            kinetic,
            potential,
            total,
            energy_error,
            momentum: p,
            angular_momentum: l,
            virial_ratio,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use orrery_traverse::ic::PhaseSpace;

    /// Two unit masses at distance 2 on a circular orbit about their centre: the
    /// textbook values.
    #[test]
    fn a_circular_binary_has_the_textbook_values() {
        // G = 1, m = 1, separation 2: v = sqrt(G m / (4 r)) with r = 1 -> v = 1/2.
        let bodies = PhaseSpace {
            x: vec![-1.0, 1.0],
            y: vec![0.0; 2],
            z: vec![0.0; 2],
            vx: vec![0.0; 2],
            vy: vec![-0.5, 0.5],
            vz: vec![0.0; 2],
            mass: vec![1.0; 2],
        };
        let state = State::new(bodies);
        let forces = Forces { ax: vec![0.25, -0.25], ay: vec![0.0; 2], az: vec![0.0; 2], pot: vec![-0.5, -0.5] };
        let d = Diagnostics::measure(&state, &forces, None);
        assert_eq!(d.kinetic, 0.25);
        assert_eq!(d.potential, -0.5);
        assert_eq!(d.total, -0.25);
        assert_eq!(d.virial_ratio, 1.0);
        assert_eq!(d.momentum, [0.0; 3]);
        assert_eq!(d.angular_momentum, [0.0, 0.0, 1.0]);
        assert_eq!(d.energy_error, 0.0);
        let later = Diagnostics::measure(&state, &forces, Some(-0.5));
        assert_eq!(later.energy_error, 0.5);
    }
}
