//! The kick-drift-kick leapfrog with block (hierarchical power-of-two) time steps: the
//! schedule and the per-body arithmetic that every backend runs.
//!
//! # The scheme
//! A *step* advances the clock by `dt` (the largest step). A body on rung `r` takes
//! sub-steps of `dt / 2^r`; with `L` levels (`r` in `0..=L`) the step is `2^L` ticks of
//! `dt / 2^L`, and a rung-`r` body is *active* at tick `s` when `2^(L-r)` divides `s`.
//! One step:
//!
//! 1. tick 0 (every body active): the opening half-kick `v += a dt_r / 2`, after
//!    choosing each body's rung from its acceleration;
//! 2. for each tick `s = 1 ..= 2^L`: drift every body by `dt / 2^L`, compute the forces,
//!    and for each body active at `s`: the closing half-kick with the new acceleration,
//!    then (for `s < 2^L`) a new rung and the next opening half-kick.
//!
//! After tick `2^L` every body is synchronised (positions and velocities at one time):
//! diagnostics and snapshots are taken there. `L = 0` is the fixed-step leapfrog.
//!
//! # The rung criterion
//! GADGET's `dt_i = sqrt(2 eta eps / |a_i|)` (`eta` the accuracy parameter, default
//! 0.025; `eps` the softening length): a body takes the largest `dt / 2^r <= dt_i`, at
//! most rung `L`. It is evaluated without a square root as
//! `(|a|^2 dt^4) 2^(-4r) <= (2 eta eps)^2`, the scaling by `2^(-4r)` being exact, so
//! every executor that rounds the same products and sums (CUDA with `__fmul_rn`, WGSL
//! with the opaque-zero guard against contraction, Rust) picks the same rung. A body may
//! move to a larger step only at a tick that step's period divides; otherwise it takes
//! the largest allowed one between the wanted rung and its current one.
//!
//! # Rounding
//! Kicks are `v + round(a * h)` with `h = dt 2^-(r+1)`, drifts `x + round(v * dt')`:
//! a product rounded, then a sum, never a fused multiply-add, in whatever precision `T`
//! the backend keeps (f64 on the host, f32 on devices).

use orrery_core::Real;

use crate::{Result, SimError};

/// Most levels of the block scheme: `2^20` ticks per step.
pub const MAX_LEVELS: u32 = 20;

/// GADGET's default accuracy parameter `eta` (ErrTolIntAccuracy).
pub const DEFAULT_ETA: f64 = 0.025;

/// The time-step settings of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeSteps {
    /// The largest step `dt` (rung 0); a fixed-step run's step.
    pub dt: f64,
    /// Levels `L` of the block scheme; 0 for fixed steps.
    pub levels: u32,
    /// The accuracy parameter `eta` of the rung criterion.
    pub eta: f64,
}

impl TimeSteps {
    /// Fixed steps of `dt`.
    pub fn fixed(dt: f64) -> Self {
        Self { dt, levels: 0, eta: DEFAULT_ETA }
    }

    /// Block steps of at most `dt`, at least `dt / 2^levels`, with accuracy `eta`.
    pub fn block(dt: f64, levels: u32, eta: f64) -> Self {
        Self { dt, levels, eta }
    }

    /// Ticks per step, `2^L`.
    pub fn ticks(&self) -> u32 {
        1 << self.levels
    }

    /// The drift of one tick, `dt / 2^L`.
    pub fn tick(&self) -> f64 {
        self.dt / f64::from(self.ticks())
    }

    /// Checks the settings; `softening` is the force's softening length (the rung
    /// criterion needs it positive when `levels > 0`).
    ///
    /// # Errors
    /// [`SimError::InvalidArgument`] for a step that is not positive and finite, more than
    /// [`MAX_LEVELS`] levels, an `eta` that is not positive and finite, or block steps
    /// without softening.
    pub fn check(&self, softening: f64) -> Result<()> {
        let bad = |what, reason: String| Err(SimError::InvalidArgument { what, reason });
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return bad("time step", format!("dt must be positive and finite, got {}", self.dt));
        }
        if self.levels > MAX_LEVELS {
            return bad("time-step levels", format!("at most {MAX_LEVELS}, got {}", self.levels));
        }
        if !(self.eta.is_finite() && self.eta > 0.0) {
            return bad("eta", format!("must be positive and finite, got {}", self.eta));
        }
        if self.levels > 0 && (softening.is_nan() || softening <= 0.0) {
            return bad(
                "time-step levels",
                "block steps choose rungs from the softening length: it must be positive".into(),
            );
        }
        Ok(())
    }

    /// The criterion's constants in `T`: `(dt^4, (2 eta eps)^2)`.
    pub fn criterion<T: Real>(&self, softening: f64) -> (T, T) {
        let c = 2.0 * self.eta * softening;
        (<T as Real>::from_f64(self.dt.powi(4)), <T as Real>::from_f64(c * c))
    }
}

/// One kick over all bodies: which tick, and whether it closes the active bodies' steps,
/// opens new ones, or both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kick {
    /// The tick, `0 ..= 2^L` (0 and `2^L` make every body active).
    pub tick: u32,
    /// Levels `L`.
    pub levels: u32,
    /// The largest step `dt`.
    pub dt: f64,
    /// Close the active bodies' steps (a half-kick on their current rung).
    pub close: bool,
    /// Open new steps: choose a rung (when `levels > 0`), then a half-kick on it.
    pub open: bool,
    /// `dt^4` of the rung criterion.
    pub dt4: f64,
    /// `(2 eta eps)^2` of the rung criterion.
    pub c2: f64,
}

/// `2^-k` in `T`, exactly (`k < 126`).
pub fn pow2_neg<T: Real>(k: u32) -> T {
    <T as Real>::from_f64(f64::from_bits((1023 - u64::from(k)) << 52))
}

/// Whether a body on `rung` is active at `tick` of an `levels`-level step.
pub fn is_active(rung: u32, tick: u32, levels: u32) -> bool {
    let period = 1u32 << (levels - rung.min(levels));
    tick.is_multiple_of(period)
}

/// `(ax ax + ay ay) + az az`, every product rounded.
pub fn norm2<T: Real>(a: [T; 3]) -> T {
    (a[0] * a[0] + a[1] * a[1]) + a[2] * a[2]
}

/// The rung the criterion asks for: the smallest `r <= levels` with
/// `(|a|^2 dt^4) 2^(-4r) <= c2` (see the module documentation); `levels` when none.
pub fn wanted_rung<T: Real>(a2: T, dt4: T, c2: T, levels: u32) -> u32 {
    let q = a2 * dt4;
    (0..=levels).find(|&r| q * pow2_neg::<T>(4 * r) <= c2).unwrap_or(levels)
}

/// The rung a body on `current` takes when it opens a step at `tick`: the wanted one, or
/// if that is a larger step than its period allows at `tick`, the largest allowed one.
pub fn next_rung(wanted: u32, current: u32, tick: u32, levels: u32) -> u32 {
    let mut r = wanted;
    while r < current && !is_active(r, tick, levels) {
        r += 1;
    }
    r
}

/// One body's kick (see [`Kick`]): updates `v` and `rung` in place when the body is
/// active.
pub fn kick_body<T: Real>(v: &mut [T; 3], a: [T; 3], rung: &mut u32, k: &Kick) {
    if !is_active(*rung, k.tick, k.levels) {
        return;
    }
    let dt = <T as Real>::from_f64(k.dt);
    if k.close {
        let h = dt * pow2_neg::<T>(*rung + 1);
        for c in 0..3 {
            v[c] += a[c] * h;
        }
    }
    if k.open {
        if k.levels > 0 {
            let wanted = wanted_rung(norm2(a), <T as Real>::from_f64(k.dt4), <T as Real>::from_f64(k.c2), k.levels);
            *rung = next_rung(wanted, *rung, k.tick, k.levels);
        }
        let h = dt * pow2_neg::<T>(*rung + 1);
        for c in 0..3 {
            v[c] += a[c] * h;
        }
    }
}

/// One coordinate's drift, `x + v dt`.
pub fn drift<T: Real>(x: T, v: T, dt: T) -> T {
    x + v * dt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_are_exact() {
        for k in 0..60i32 {
            assert_eq!(pow2_neg::<f64>(k.unsigned_abs()), 2f64.powi(-k));
            assert_eq!(pow2_neg::<f32>(k.unsigned_abs()), 2f32.powi(-k));
        }
    }

    #[test]
    fn activity_follows_the_rung_period() {
        assert!((0..=8).all(|t| is_active(3, t, 3)));
        assert_eq!((0..=8).filter(|&t| is_active(1, t, 3)).collect::<Vec<_>>(), [0, 4, 8]);
        assert_eq!((0..=8).filter(|&t| is_active(0, t, 3)).collect::<Vec<_>>(), [0, 8]);
        assert!(is_active(0, 0, 0) && is_active(0, 1, 0));
    }

    #[test]
    fn the_wanted_rung_is_the_largest_step_within_the_criterion() {
        // dt_i = sqrt(2 eta eps / |a|): with 2 eta eps = 1e-2, |a| = 1 gives dt_i = 0.1;
        // dt = 1 so rung r has step 2^-r: the first step <= 0.1 is 2^-4.
        let (dt4, c2) = (1.0f64, 1e-4);
        assert_eq!(wanted_rung(1.0, dt4, c2, 10), 4);
        assert_eq!(wanted_rung(1.0, dt4, c2, 2), 2);
        assert_eq!(wanted_rung(0.0, dt4, c2, 10), 0);
        assert_eq!(wanted_rung(f64::NAN, dt4, c2, 10), 10);
        // Exactly on the boundary (2 eta eps = 2^-7, |a| = 2^-1: dt_i = 2^-3) the step
        // dt_i itself is taken.
        assert_eq!(wanted_rung(0.25f64, 1.0, 2f64.powi(-14), 10), 3);
        assert_eq!(wanted_rung(0.25f32, 1.0, 2f32.powi(-14), 10), 3);
    }

    #[test]
    fn a_larger_step_waits_for_its_period() {
        // At tick 2 of 8, rung 1 (period 4) is not allowed; rung 2 (period 2) is.
        assert_eq!(next_rung(1, 3, 2, 3), 2);
        assert_eq!(next_rung(0, 3, 4, 3), 1);
        assert_eq!(next_rung(0, 3, 0, 3), 0);
        assert_eq!(next_rung(3, 1, 4, 3), 3);
    }

    #[test]
    fn a_fixed_step_kick_is_half_a_step_each_way() {
        let k = Kick { tick: 0, levels: 0, dt: 0.5, close: true, open: true, dt4: 0.0, c2: 0.0 };
        let (mut v, mut rung) = ([1.0f64, 0.0, -1.0], 0);
        kick_body(&mut v, [2.0, 4.0, 8.0], &mut rung, &k);
        assert_eq!(v, [2.0, 2.0, 3.0]);
        assert_eq!(rung, 0);
    }

    #[test]
    fn settings_are_checked() {
        assert!(TimeSteps::fixed(0.01).check(0.0).is_ok());
        assert!(TimeSteps::fixed(0.0).check(0.1).is_err());
        assert!(TimeSteps::fixed(f64::NAN).check(0.1).is_err());
        assert!(TimeSteps::block(0.01, 3, DEFAULT_ETA).check(0.0).is_err());
        assert!(TimeSteps::block(0.01, 21, DEFAULT_ETA).check(0.1).is_err());
        assert!(TimeSteps::block(0.01, 3, -1.0).check(0.1).is_err());
        assert_eq!(TimeSteps::block(1.0, 3, 0.1).tick(), 0.125);
    }
}
