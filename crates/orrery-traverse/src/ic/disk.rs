//! A thin, cold, rotating exponential disk.
//!
//! Surface density `Sigma ~ exp(-R / R_d)` cut at `R = 5 R_d` (95.96% of the untruncated
//! mass; the enclosed fraction `1 - (1 + x) e^-x`, `x = R / R_d`, is inverted by
//! bisection, so radii are bit-reproducible), vertical profile `sech^2(z / z_0)` with
//! `z_0 = R_d / 20` (`z = z_0 atanh(2u - 1)`), and circular orbits `v = sqrt(G M(<R) / R)`
//! with the enclosed mass taken as if spherical, in the x-y plane, counter-clockwise seen
//! from +z. Without a halo such a disk is bar-unstable: it is a test of rotating flows,
//! not an equilibrium. `G = M = 1`, masses `1 / n`, not moved to the centre-of-mass frame.

use super::{PhaseSpace, body, check_length, check_n, generate, open_uniform};
use orrery_core::Result;

/// The cut radius in scale lengths.
pub const DISK_CUT: f64 = 5.0;

/// The vertical scale height in scale lengths.
pub const DISK_THICKNESS: f64 = 0.05;

/// The enclosed mass fraction of the untruncated exponential disk at `x = R / R_d`.
fn enclosed(x: f64) -> f64 {
    1.0 - (1.0 + x) * (-x).exp()
}

/// The `x` in `[0, DISK_CUT]` with `enclosed(x) = u` (bisection, 64 halvings).
fn radius_of(u: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, DISK_CUT);
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if enclosed(mid) < u { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// `n` bodies in a thin exponential disk of scale length `scale_length` on circular
/// orbits (see the module documentation).
///
/// # Errors
/// As [`super::uniform_cube`], for the scale length.
pub fn rotating_disk(n: usize, scale_length: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("scale length", scale_length)?;
    let cut = enclosed(DISK_CUT);
    let bodies = generate(n, seed, |rng| {
        let x = radius_of(open_uniform(rng, cut));
        let phi = std::f64::consts::TAU * open_uniform(rng, 1.0);
        let u = open_uniform(rng, 1.0);
        let z = DISK_THICKNESS * scale_length * (2.0 * u - 1.0).atanh();
        let r = x * scale_length;
        let v = (enclosed(x) / cut / r).sqrt();
        let (s, c) = phi.sin_cos();
        body([r * c, r * s, z], [-v * s, v * c, 0.0])
    });
    Ok(PhaseSpace::from_bodies(&bodies))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_inversion_is_the_enclosed_fraction() {
        for u in [1e-6, 0.1, 0.5, 0.9, enclosed(DISK_CUT) * 0.999] {
            assert!((enclosed(radius_of(u)) - u).abs() < 1e-12);
        }
    }

    #[test]
    fn the_disk_is_thin_cut_and_rotates_circularly() {
        let d = rotating_disk(5000, 2.0, 1).unwrap();
        for i in 0..d.len() {
            let r = d.x[i].hypot(d.y[i]);
            assert!(r <= 2.0 * DISK_CUT * (1.0 + 1e-12));
            // Tangential: v . R = 0, and the angular momentum points to +z.
            assert!((d.vx[i] * d.x[i] + d.vy[i] * d.y[i]).abs() < 1e-9 * (1.0 + r));
            assert!(d.x[i] * d.vy[i] - d.y[i] * d.vx[i] > 0.0);
        }
        let mean_abs_z = d.z.iter().map(|z| z.abs()).sum::<f64>() / d.len() as f64;
        // E|z| of sech^2(z / z0) is z0 ln 2.
        assert!((mean_abs_z / (0.1 * std::f64::consts::LN_2) - 1.0).abs() < 0.05, "{mean_abs_z}");
    }
}
