//! Two Plummer spheres on a collision orbit.
//!
//! The bodies are split in two halves (`n / 2` and `n - n / 2`, masses `1 / n` each, so
//! the spheres weigh `M_1 = n_1 / n` and `M_2 = n_2 / n`), each a [`super::plummer`]
//! sphere in Hénon units scaled to its mass (positions kept, velocities times
//! `sqrt(M_i)`, which keeps it in virial equilibrium). Their centres start `D = (d, b, 0)`
//! apart (`d` the separation along x, `b` the impact parameter) and approach on the
//! parabolic orbit of two point masses, relative speed `sqrt(2 G M / |D|)` along -x, in
//! the common centre-of-mass frame. The second sphere draws from seed `seed + 1`.

use super::{PhaseSpace, check_length, check_n, plummer};
use orrery_core::{Error, Result};

/// Two Plummer spheres `separation` apart along x with impact parameter `impact`
/// (see the module documentation).
///
/// # Errors
/// [`Error::EmptyInput`] for fewer than 2 bodies; a separation that is not positive and
/// finite, or an impact parameter that is negative or not finite, is
/// [`Error::InvalidArgument`] / [`Error::NonFiniteValue`].
pub fn collision(n: usize, separation: f64, impact: f64, seed: u64) -> Result<PhaseSpace> {
    check_n(n)?;
    if n < 2 {
        return Err(Error::EmptyInput { what: "bodies of two spheres", min: 2 });
    }
    check_length("separation", separation)?;
    if impact != 0.0 {
        check_length("impact parameter", impact)?;
    }
    let (n1, n2) = (n / 2, n - n / 2);
    let (m1, m2) = (n1 as f64 / n as f64, n2 as f64 / n as f64);
    let d = [separation, impact, 0.0];
    let speed = (2.0 / separation.hypot(impact)).sqrt();
    let mut out = PhaseSpace::default();
    for (count, mass, sign, seed) in [(n1, m1, -m2, seed), (n2, m2, m1, seed.wrapping_add(1))] {
        let s = plummer(count, seed)?;
        let v = mass.sqrt();
        let offset = d.map(|c| sign * c);
        let drift = -sign * speed;
        out.x.extend(s.x.iter().map(|a| a + offset[0]));
        out.y.extend(s.y.iter().map(|a| a + offset[1]));
        out.z.extend(s.z.iter().map(|a| a + offset[2]));
        out.vx.extend(s.vx.iter().map(|a| a * v + drift));
        out.vy.extend(s.vy.iter().map(|a| a * v));
        out.vz.extend(s.vz.iter().map(|a| a * v));
    }
    out.mass = vec![1.0 / n as f64; n];
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spheres_approach_in_the_centre_of_mass_frame() {
        let s = collision(2001, 10.0, 1.0, 5).unwrap();
        assert_eq!(s.len(), 2001);
        let total = |v: &[f64]| v.iter().zip(&s.mass).map(|(a, m)| a * m).sum::<f64>();
        // Each sphere is centred, so the centre of mass and momentum vanish up to rounding.
        for c in [&s.x, &s.y, &s.vx, &s.vy] {
            assert!(total(c).abs() < 1e-9, "{}", total(c));
        }
        let (n1, mean) = (1000, |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64);
        let dx = mean(&s.x[n1..]) - mean(&s.x[..n1]);
        let dvx = mean(&s.vx[n1..]) - mean(&s.vx[..n1]);
        assert!((dx - 10.0).abs() < 1e-9);
        assert!((dvx + (2.0 / 10f64.hypot(1.0)).sqrt()).abs() < 1e-9, "{dvx}");
        assert!(collision(1, 10.0, 0.0, 5).is_err());
        assert!(collision(10, 0.0, 0.0, 5).is_err());
    }
}
