//! Seeded datasets of the tests: the shapes the issue names, small enough for debug builds.

use orrery_core::{Aabb, PositionsView, Vec3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Positions as three arrays.
pub struct Cloud {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub z: Vec<f64>,
}

impl Cloud {
    pub fn view(&self) -> PositionsView<'_, f64> {
        PositionsView::new(&self.x, &self.y, &self.z).unwrap()
    }

    fn from_fn(n: usize, seed: u64, mut f: impl FnMut(&mut ChaCha8Rng) -> [f64; 3]) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (mut x, mut y, mut z) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let p = f(&mut rng);
            x.push(p[0]);
            y.push(p[1]);
            z.push(p[2]);
        }
        Self { x, y, z }
    }

    /// Moves every particle by a Gaussian step of `sigma` per axis.
    pub fn jitter(&mut self, sigma: f64, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for v in self.x.iter_mut().chain(self.y.iter_mut()).chain(self.z.iter_mut()) {
            *v += sigma * gauss(&mut rng);
        }
    }
}

fn gauss(rng: &mut ChaCha8Rng) -> f64 {
    // Box-Muller: enough for test data.
    let u: f64 = rng.random_range(f64::EPSILON..1.0);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The unit box every dataset lies in.
pub fn unit_box() -> Aabb<f64> {
    Aabb::cube(-1.0, 1.0).unwrap()
}

pub fn uniform(n: usize, seed: u64) -> Cloud {
    Cloud::from_fn(n, seed, |r| [r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), r.random_range(-1.0..1.0)])
}

pub fn gaussian(n: usize, seed: u64) -> Cloud {
    Cloud::from_fn(n, seed, |r| [0.0; 3].map(|_| (0.2 * gauss(r)).clamp(-1.0, 1.0)))
}

/// Plummer sphere of scale 0.05, radii cut at 1 (clamped into the box).
pub fn plummer(n: usize, seed: u64) -> Cloud {
    Cloud::from_fn(n, seed, |r| {
        let m: f64 = r.random_range(1e-6..0.999);
        let rad = (0.05 / (m.powf(-2.0 / 3.0) - 1.0).sqrt()).min(0.99);
        let (cz, phi): (f64, f64) = (r.random_range(-1.0..1.0), r.random_range(0.0..std::f64::consts::TAU));
        let s = (1.0 - cz * cz).sqrt();
        [rad * s * phi.cos(), rad * s * phi.sin(), rad * cz]
    })
}

/// A thin disk (thickness 1e-3) in the unit box.
pub fn thin_disk(n: usize, seed: u64) -> Cloud {
    Cloud::from_fn(n, seed, |r| {
        let (rad, phi): (f64, f64) = (0.9 * r.random::<f64>().sqrt(), r.random_range(0.0..std::f64::consts::TAU));
        [rad * phi.cos(), rad * phi.sin(), 1e-3 * gauss(r)]
    })
}

/// Two tight clusters far apart.
pub fn two_clusters(n: usize, seed: u64) -> Cloud {
    let mut k = 0usize;
    Cloud::from_fn(n, seed, |r| {
        k += 1;
        let c = if k.is_multiple_of(2) { -0.7 } else { 0.6 };
        [0.0; 3].map(|_| (c + 0.02 * gauss(r)).clamp(-1.0, 1.0))
    })
}

/// Every particle at one point.
pub fn identical(n: usize) -> Cloud {
    Cloud { x: vec![0.25; n], y: vec![-0.5; n], z: vec![0.125; n] }
}

/// Every dataset of the invariant tests, by name.
pub fn all(n: usize, seed: u64) -> Vec<(&'static str, Cloud)> {
    vec![
        ("uniform", uniform(n, seed)),
        ("gaussian", gaussian(n, seed)),
        ("plummer", plummer(n, seed)),
        ("thin disk", thin_disk(n, seed)),
        ("two clusters", two_clusters(n, seed)),
        ("identical", identical(n)),
    ]
}

#[allow(dead_code)]
pub fn point(c: &Cloud, i: usize) -> Vec3<f64> {
    Vec3::new(c.x[i], c.y[i], c.z[i])
}
