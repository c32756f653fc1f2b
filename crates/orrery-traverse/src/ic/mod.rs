//! Seeded, reproducible initial conditions: Plummer and Hernquist spheres and a uniform
//! cube, in f64, as a [`PhaseSpace`] (positions, velocities, masses).
//!
//! # Models and units
//! Every model has total mass `M = 1` in equal masses `1 / n` and assumes `G = 1`.
//!
//! - [`plummer`]: the Plummer (1911) sphere in Hénon units (`G = M = 1`, total energy
//!   `E = -1/4`, so the virial radius is 1 and the Plummer scale length is
//!   `a = 3 pi / 16` ([`HENON_PLUMMER_SCALE`]); the half-mass radius is
//!   `a / sqrt(2^(2/3) - 1) = 1.3048 a = 0.7686`). [`plummer_scaled`] is the same model
//!   with a given scale length (the benchmarks use `a = 1`, as the peers do).
//!   Sampling follows Aarseth, Hénon & Wielen (1974, A&A 37, 183): a radius from the
//!   cumulative mass `M(r) = r^3 / (r^2 + a^2)^(3/2)`, a speed `v = q v_esc(r)` with `q`
//!   by von Neumann rejection of `g(q) = q^2 (1 - q^2)^(7/2)` (bound 0.1; the maximum is
//!   0.0920 at `q^2 = 2/9`) and `v_esc = sqrt(2 G M) (r^2 + a^2)^(-1/4)`, isotropic
//!   directions. Cut-off: radii enclosing more than [`PLUMMER_MASS_CUT`] (99.9%) of the
//!   mass, `r > 38.7 a`, are resampled (the mass fraction is drawn below the cut, which is
//!   the same distribution), as in Starlab's `mkplummer`.
//! - [`hernquist`]: the Hernquist (1990, ApJ 356, 359) sphere, density
//!   `rho = M a / (2 pi r (r + a)^3)`, cumulative mass `M(r) = M r^2 / (r + a)^2` (half-mass
//!   radius `(1 + sqrt 2) a`), potential `-G M / (r + a)`. Radii invert `M(r)`; those
//!   enclosing more than [`HERNQUIST_MASS_CUT`] (99%) of the mass, `r > 198.5 a`, are
//!   resampled. Speeds come from the isotropic distribution function (Hernquist 1990,
//!   eq. 17) `f(E) ~ (1 - q^2)^(-5/2) [3 asin q + q (1 - q^2)^(1/2) (1 - 2 q^2)
//!   (8 q^4 - 8 q^2 - 3)]`, `q^2 = a E_b / (G M)`, `E_b = Psi(r) - v^2 / 2` the binding
//!   energy: `p(v) ~ v^2 f` on `0 < v < v_esc(r) = sqrt(2 Psi(r))` by rejection under its
//!   maximum (located per body by a grid and a golden-section search, then raised by 2%).
//!   Velocities are drawn from the untruncated model's distribution function, so the 1%
//!   of mass that the cut removes leaves the outskirts slightly out of equilibrium.
//! - [`uniform_cube`]: positions uniform in `[-h, h)^3`, zero velocities (a cold cube:
//!   the tree benchmarks' uniform workload).
//! - [`cold_sphere`] and [`expanding_sphere`] (a uniform ball at rest, or in a Hubble
//!   flow), [`rotating_disk`] (a thin exponential disk on circular orbits) and
//!   [`collision`] (two Plummer spheres on a parabolic orbit): the simulation's
//!   scenarios, documented in their modules.
//!
//! Plummer and Hernquist spheres are moved to the centre-of-mass frame (the mean
//! position and the mean velocity are subtracted, in f64); the cube is left as drawn.
//!
//! # Reproducibility
//! Body `i` draws its numbers from stream `i / CHUNK` (`CHUNK` = 4096 bodies) of a
//! [`ChaCha8Rng`] seeded with [`SeedableRng::seed_from_u64`]`(seed)`, in body order, so the
//! output is a function of `(n, seed)` only, whatever the number of threads. Directions use
//! Marsaglia's (1972) rejection method (square roots only); radii and the Hernquist
//! distribution function use `powf` and `asin`, whose last bits may differ between
//! platforms' math libraries: results are bit-identical for a seed on one platform.
//!
//! # Errors
//! `n = 0` is [`Error::EmptyInput`], `n > u32::MAX` [`Error::TooManyPoints`]; a length that
//! is not finite is [`Error::NonFiniteValue`], one that is not positive
//! [`Error::InvalidArgument`].

mod collision;
mod disk;
mod spheres;

pub use collision::collision;
pub use disk::{DISK_CUT, DISK_THICKNESS, rotating_disk};
pub use spheres::{cold_sphere, expanding_sphere};

use orrery_core::particles::check_index_range;
use orrery_core::{Error, ParticleSet, Real, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The Plummer scale length in Hénon units: `3 pi / 16`.
pub const HENON_PLUMMER_SCALE: f64 = 3.0 * std::f64::consts::PI / 16.0;

/// Mass fraction below which Plummer radii are drawn (the cut-off radius `38.7 a`).
pub const PLUMMER_MASS_CUT: f64 = 0.999;

/// Mass fraction below which Hernquist radii are drawn (the cut-off radius `198.5 a`).
pub const HERNQUIST_MASS_CUT: f64 = 0.99;

/// Bodies per random stream (see the module documentation).
const CHUNK: usize = 4096;

/// Positions, velocities and masses in structure-of-arrays form, f64.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseSpace {
    /// x coordinates.
    pub x: Vec<f64>,
    /// y coordinates.
    pub y: Vec<f64>,
    /// z coordinates.
    pub z: Vec<f64>,
    /// x velocities.
    pub vx: Vec<f64>,
    /// y velocities.
    pub vy: Vec<f64>,
    /// z velocities.
    pub vz: Vec<f64>,
    /// Masses.
    pub mass: Vec<f64>,
}

impl PhaseSpace {
    /// Number of bodies (the length of `mass`).
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// Positions and masses rounded to `T`.
    pub fn bodies<T: Real>(&self) -> ParticleSet<T> {
        ParticleSet { x: cast(&self.x), y: cast(&self.y), z: cast(&self.z), mass: cast(&self.mass) }
    }

    /// Velocities rounded to `T`: `[vx, vy, vz]`.
    pub fn velocities<T: Real>(&self) -> [Vec<T>; 3] {
        [cast(&self.vx), cast(&self.vy), cast(&self.vz)]
    }

    fn from_bodies(bodies: &[[f64; 6]]) -> Self {
        let n = bodies.len();
        let column = |c: usize| bodies.iter().map(|b| b[c]).collect::<Vec<f64>>();
        Self {
            x: column(0),
            y: column(1),
            z: column(2),
            vx: column(3),
            vy: column(4),
            vz: column(5),
            mass: vec![1.0 / n as f64; n],
        }
    }

    /// Subtracts the mass-weighted mean position and velocity (sequential f64 sums in
    /// body order, so the result does not depend on threads).
    fn move_to_centre_of_mass_frame(&mut self) {
        let total: f64 = self.mass.iter().sum();
        let mean = |v: &[f64]| v.iter().zip(&self.mass).map(|(a, m)| a * m).sum::<f64>() / total;
        let shift = [mean(&self.x), mean(&self.y), mean(&self.z), mean(&self.vx), mean(&self.vy), mean(&self.vz)];
        for (v, s) in
            [&mut self.x, &mut self.y, &mut self.z, &mut self.vx, &mut self.vy, &mut self.vz].into_iter().zip(shift)
        {
            v.par_iter_mut().for_each(|a| *a -= s);
        }
    }
}

fn cast<T: Real>(v: &[f64]) -> Vec<T> {
    v.par_iter().map(|&a| <T as Real>::from_f64(a)).collect()
}

fn check_n(n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::EmptyInput { what: "bodies", min: 1 });
    }
    check_index_range(n, "bodies")
}

fn check_length(what: &'static str, v: f64) -> Result<()> {
    if !v.is_finite() {
        return Err(Error::NonFiniteValue { what, index: 0, value: v });
    }
    if v <= 0.0 {
        return Err(Error::InvalidArgument { what, reason: format!("must be positive, got {v}") });
    }
    Ok(())
}

/// `n` bodies from `body`, each drawing from its chunk's stream in body order.
fn generate(n: usize, seed: u64, body: impl Fn(&mut ChaCha8Rng) -> [f64; 6] + Sync) -> Vec<[f64; 6]> {
    let mut out = vec![[0.0; 6]; n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(c as u64);
        for b in chunk {
            *b = body(&mut rng);
        }
    });
    out
}

/// A uniform point on the unit sphere (Marsaglia 1972).
fn unit_vector(rng: &mut ChaCha8Rng) -> [f64; 3] {
    loop {
        let a = 2.0 * rng.random::<f64>() - 1.0;
        let b = 2.0 * rng.random::<f64>() - 1.0;
        let s = a * a + b * b;
        if s < 1.0 {
            let f = 2.0 * (1.0 - s).sqrt();
            return [a * f, b * f, 1.0 - 2.0 * s];
        }
    }
}

/// A number uniform in the open interval `(0, hi)`.
fn open_uniform(rng: &mut ChaCha8Rng, hi: f64) -> f64 {
    loop {
        let u = rng.random::<f64>() * hi;
        if u > 0.0 {
            return u;
        }
    }
}

fn scaled(v: [f64; 3], s: f64) -> [f64; 3] {
    v.map(|c| c * s)
}

fn body(p: [f64; 3], v: [f64; 3]) -> [f64; 6] {
    [p[0], p[1], p[2], v[0], v[1], v[2]]
}

/// A Plummer sphere of `n` equal-mass bodies in Hénon units (`G = M = 1`, `E = -1/4`;
/// scale length [`HENON_PLUMMER_SCALE`]), in its centre-of-mass frame. See the module
/// documentation for the sampling (Aarseth, Hénon & Wielen 1974) and the cut-off.
///
/// # Errors
/// [`Error::EmptyInput`] for `n = 0`, [`Error::TooManyPoints`] beyond `u32::MAX`.
pub fn plummer(n: usize, seed: u64) -> Result<PhaseSpace> {
    plummer_scaled(n, HENON_PLUMMER_SCALE, seed)
}

/// A Plummer sphere of scale length `scale_length` (`G = M = 1`; the total energy is
/// `-3 pi / (64 a)`), in its centre-of-mass frame. [`plummer`] is this with
/// `a = 3 pi / 16`.
///
/// # Errors
/// As [`plummer`], plus [`Error::NonFiniteValue`] or [`Error::InvalidArgument`] for a
/// scale length that is not finite and positive.
pub fn plummer_scaled(n: usize, scale_length: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("scale length", scale_length)?;
    let a = scale_length;
    let v_unit = a.sqrt().recip();
    let bodies = generate(n, seed, |rng| {
        // Radius in units of a: M(x) = x^3 / (1 + x^2)^(3/2) = m.
        let m = open_uniform(rng, PLUMMER_MASS_CUT);
        let x = (m.powf(-2.0 / 3.0) - 1.0).sqrt().recip();
        let pos = scaled(unit_vector(rng), x * a);
        // Speed: q by von Neumann rejection of q^2 (1 - q^2)^(7/2) under 0.1.
        let q = loop {
            let q: f64 = rng.random();
            let y = 0.1 * rng.random::<f64>();
            if y < q * q * (1.0 - q * q).powf(3.5) {
                break q;
            }
        };
        let v_esc = std::f64::consts::SQRT_2 * (1.0 + x * x).powf(-0.25);
        body(pos, scaled(unit_vector(rng), q * v_esc * v_unit))
    });
    let mut ps = PhaseSpace::from_bodies(&bodies);
    ps.move_to_centre_of_mass_frame();
    Ok(ps)
}

/// The bracket of Hernquist's distribution function, times `(1 - q^2)^(-5/2)`: `f(q)` up
/// to a constant factor, for `0 <= q < 1`.
fn hernquist_df(q: f64) -> f64 {
    let q2 = q * q;
    let s = 1.0 - q2;
    let bracket = 3.0 * q.asin() + q * s.sqrt() * (1.0 - 2.0 * q2) * (8.0 * q2 * q2 - 8.0 * q2 - 3.0);
    // Rounding makes the bracket (~ 8/5 q^5 for small q) slightly negative near q = 0.
    bracket.max(0.0) * s.powf(-2.5)
}

/// The speed density `u^2 f(q(u))` of `u = v / v_esc` at relative potential `psi_a`
/// (`a Psi / (G M)`, in `(0, 1)`).
fn hernquist_speed_density(u: f64, psi_a: f64) -> f64 {
    let q2 = psi_a * (1.0 - u * u);
    u * u * hernquist_df(q2.max(0.0).sqrt())
}

/// The maximum of [`hernquist_speed_density`] over `u` in `(0, 1)`: the best of a grid of
/// 32 points, refined by a golden-section search in the bracket around it (the density
/// rises from 0 at `u = 0` to one peak and falls to 0 at `u = 1`).
fn hernquist_speed_max(psi_a: f64) -> f64 {
    const GRID: usize = 32;
    let p = |u: f64| hernquist_speed_density(u, psi_a);
    let best = (1..GRID).max_by(|&i, &j| p(i as f64 / GRID as f64).total_cmp(&p(j as f64 / GRID as f64))).unwrap_or(1);
    let (mut lo, mut hi) = ((best - 1) as f64 / GRID as f64, (best + 1) as f64 / GRID as f64);
    // Golden-section search: one new evaluation per step; 30 steps shrink the bracket of
    // 1/16 to 1e-8.
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (hi - ratio * (hi - lo), lo + ratio * (hi - lo));
    let (mut pc, mut pd) = (p(c), p(d));
    for _ in 0..30 {
        if pc > pd {
            (hi, d, pd) = (d, c, pc);
            c = hi - ratio * (hi - lo);
            pc = p(c);
        } else {
            (lo, c, pc) = (c, d, pd);
            d = lo + ratio * (hi - lo);
            pd = p(d);
        }
    }
    pc.max(pd).max(p(best as f64 / GRID as f64))
}

/// A Hernquist sphere of `n` equal-mass bodies (`G = M = 1`, scale length
/// `scale_length`), in its centre-of-mass frame: radii cut at [`HERNQUIST_MASS_CUT`] of
/// the mass, isotropic velocities below the escape speed from the distribution function.
/// See the module documentation.
///
/// # Errors
/// As [`plummer_scaled`].
pub fn hernquist(n: usize, scale_length: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("scale length", scale_length)?;
    let a = scale_length;
    let bodies = generate(n, seed, |rng| {
        // M(r) = r^2 / (r + a)^2 = m  =>  r = a sqrt(m) / (1 - sqrt(m)).
        let s = open_uniform(rng, HERNQUIST_MASS_CUT).sqrt();
        let r = a * s / (1.0 - s);
        let pos = scaled(unit_vector(rng), r);
        let psi_a = a / (r + a);
        let bound = 1.02 * hernquist_speed_max(psi_a);
        let u = loop {
            let u: f64 = rng.random();
            let y = bound * rng.random::<f64>();
            if y < hernquist_speed_density(u, psi_a) {
                break u;
            }
        };
        let v_esc = (2.0 / (r + a)).sqrt();
        body(pos, scaled(unit_vector(rng), u * v_esc))
    });
    let mut ps = PhaseSpace::from_bodies(&bodies);
    ps.move_to_centre_of_mass_frame();
    Ok(ps)
}

/// `n` bodies uniform in the cube `[-half_side, half_side)^3`, masses `1 / n`, at rest.
///
/// # Errors
/// As [`plummer_scaled`], for the half side.
pub fn uniform_cube(n: usize, half_side: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("half side", half_side)?;
    let h = half_side;
    let bodies = generate(n, seed, |rng| {
        let p = [0; 3].map(|_| h * (2.0 * rng.random::<f64>() - 1.0));
        body(p, [0.0; 3])
    });
    Ok(PhaseSpace::from_bodies(&bodies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_off_radii_are_the_documented_ones() {
        let x = (PLUMMER_MASS_CUT.powf(-2.0 / 3.0) - 1.0).sqrt().recip();
        assert!((x - 38.7).abs() < 0.05, "{x}");
        let s = HERNQUIST_MASS_CUT.sqrt();
        assert!((s / (1.0 - s) - 198.5).abs() < 0.05);
    }

    #[test]
    fn the_hernquist_speed_bound_is_above_the_density() {
        for psi_a in [1e-3, 0.01, 0.1, 0.5, 0.9, 0.999, 1.0 - 1e-7] {
            let max = hernquist_speed_max(psi_a);
            let dense = (1..100_000).map(|i| hernquist_speed_density(f64::from(i) / 1e5, psi_a)).fold(0.0, f64::max);
            assert!(dense <= 1.001 * max, "psi_a {psi_a}: grid {dense} above the search's {max}");
            assert!(max <= 1.001 * dense, "psi_a {psi_a}: the search's {max} is no maximum (grid {dense})");
        }
    }
}
