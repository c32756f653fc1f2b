//! Seeded test bodies and an f64 reference, for the walk and multipole tests.

use orrery_core::ParticleSet;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// `n` bodies of a clustered cloud (a Plummer-like core in a uniform halo), masses in
/// [0.5, 1.5) / n.
pub fn clustered(n: usize, seed: u64) -> ParticleSet<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut set = ParticleSet::with_capacity(n);
    for i in 0..n {
        let p = if i % 4 == 0 {
            orrery_core::Vec3::new(
                rng.random_range(-2.0..2.0),
                rng.random_range(-2.0..2.0),
                rng.random_range(-2.0..2.0),
            )
        } else {
            // Plummer radii: r = (u^(-2/3) - 1)^(-1/2), capped.
            let u: f64 = rng.random_range(1e-3..0.95);
            let r = (u.powf(-2.0 / 3.0) - 1.0).powf(-0.5);
            let (ct, ph): (f64, f64) = (rng.random_range(-1.0..1.0), rng.random_range(0.0..std::f64::consts::TAU));
            let st = (1.0 - ct * ct).sqrt();
            orrery_core::Vec3::new(r * st * ph.cos(), r * st * ph.sin(), r * ct)
        };
        set.push(p, rng.random_range(0.5..1.5) / n as f64);
    }
    set
}

/// The set in f32.
pub fn to_f32(set: &ParticleSet<f64>) -> ParticleSet<f32> {
    let c = |v: &[f64]| v.iter().map(|&a| a as f32).collect();
    ParticleSet { x: c(&set.x), y: c(&set.y), z: c(&set.z), mass: c(&set.mass) }
}

/// Plummer-softened direct summation in f64 of every body (the crate's reference).
pub fn direct_f64(set: &ParticleSet<f64>, eps: f64) -> orrery_traverse::Forces<f64> {
    let gravity = orrery_traverse::Gravity::plummer(eps);
    orrery_traverse::direct_sum_f64(&set.view().unwrap(), orrery_traverse::Targets::All, &gravity).unwrap()
}
