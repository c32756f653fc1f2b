//! Uniform spheres: cold (the cold-collapse test) and expanding (a Hubble flow).
//!
//! Both place `n` bodies of mass `1 / n` uniformly in a ball of radius `R`: a radius
//! `R u^(1/3)` (`u` uniform in (0, 1]) and an isotropic direction. The cold sphere is at
//! rest and collapses in the free-fall time `t_ff = (pi / 2) sqrt(R^3 / (2 G M))`
//! (`1.11` for `R = G = M = 1`). The expanding sphere moves radially, `v = H r`, with
//! `H = f sqrt(2 G M / R^3)`: `f = 1` is the marginally bound (parabolic) expansion,
//! `f < 1` recollapses, `f > 1` escapes. Neither is moved to the centre-of-mass frame.

use super::{PhaseSpace, body, check_length, check_n, generate, open_uniform, scaled, unit_vector};
use orrery_core::Result;

/// A point uniform in the ball of radius `radius`.
fn in_ball(rng: &mut rand_chacha::ChaCha8Rng, radius: f64) -> [f64; 3] {
    let r = radius * open_uniform(rng, 1.0).cbrt();
    scaled(unit_vector(rng), r)
}

/// `n` bodies uniform in a ball of radius `radius`, at rest (see the module
/// documentation).
///
/// # Errors
/// As [`super::uniform_cube`], for the radius.
pub fn cold_sphere(n: usize, radius: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("radius", radius)?;
    let bodies = generate(n, seed, |rng| body(in_ball(rng, radius), [0.0; 3]));
    Ok(PhaseSpace::from_bodies(&bodies))
}

/// `n` bodies uniform in a ball of radius `radius`, expanding with `v = H r`,
/// `H = expansion sqrt(2 / radius^3)` (`G = M = 1`; see the module documentation).
///
/// # Errors
/// As [`cold_sphere`]; an `expansion` that is negative or not finite is
/// [`orrery_core::Error::InvalidArgument`] / [`orrery_core::Error::NonFiniteValue`].
pub fn expanding_sphere(n: usize, radius: f64, expansion: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    check_length("radius", radius)?;
    if expansion != 0.0 {
        check_length("expansion", expansion)?;
    }
    let h = expansion * (2.0 / (radius * radius * radius)).sqrt();
    let bodies = generate(n, seed, |rng| {
        let p = in_ball(rng, radius);
        body(p, scaled(p, h))
    });
    Ok(PhaseSpace::from_bodies(&bodies))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A body uniform in the ball of radius R has `E[r^2] = 3 R^2 / 5`.
    #[test]
    fn the_ball_has_its_radius_and_second_moment() {
        let s = cold_sphere(20_000, 2.0, 7).unwrap();
        let r2: Vec<f64> = (0..s.len()).map(|i| s.x[i] * s.x[i] + s.y[i] * s.y[i] + s.z[i] * s.z[i]).collect();
        assert!(r2.iter().all(|&v| v <= 4.0 + 1e-12));
        let mean = r2.iter().sum::<f64>() / r2.len() as f64;
        assert!((mean / 4.0 - 0.6).abs() < 0.01, "{mean}");
        assert!(s.vx.iter().chain(&s.vy).chain(&s.vz).all(|&v| v == 0.0));
    }

    #[test]
    fn the_expansion_is_radial_with_the_stated_rate() {
        let s = expanding_sphere(1000, 1.0, 1.0, 3).unwrap();
        let h = 2f64.sqrt();
        for i in 0..s.len() {
            assert!((s.vx[i] - h * s.x[i]).abs() < 1e-12 && (s.vz[i] - h * s.z[i]).abs() < 1e-12);
        }
        assert!(expanding_sphere(10, 1.0, -1.0, 3).is_err());
        assert!(cold_sphere(0, 1.0, 3).is_err());
    }
}
