//! Initial conditions: reproducibility, the models' statistics (with tolerances stated
//! from the sampling noise), the centre-of-mass frame and bad arguments.

use orrery_core::Error;
use orrery_traverse::direct::{Targets, direct_sum_f64};
use orrery_traverse::ic::{self, HENON_PLUMMER_SCALE, HERNQUIST_MASS_CUT, PhaseSpace};
use orrery_traverse::{Gravity, Softening};

use crate::common::{view, with_threads};

fn bits(ps: &PhaseSpace) -> Vec<u64> {
    [&ps.x, &ps.y, &ps.z, &ps.vx, &ps.vy, &ps.vz, &ps.mass].iter().flat_map(|v| v.iter().map(|a| a.to_bits())).collect()
}

fn radii(ps: &PhaseSpace) -> Vec<f64> {
    (0..ps.len()).map(|i| (ps.x[i] * ps.x[i] + ps.y[i] * ps.y[i] + ps.z[i] * ps.z[i]).sqrt()).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Kinetic energy `T` and potential energy `W` (`1/2 sum m phi`, an f64 direct sum of
/// the unsoftened potential).
fn energies(ps: &PhaseSpace) -> (f64, f64) {
    let t: f64 = (0..ps.len())
        .map(|i| 0.5 * ps.mass[i] * (ps.vx[i] * ps.vx[i] + ps.vy[i] * ps.vy[i] + ps.vz[i] * ps.vz[i]))
        .sum();
    let set = ps.bodies::<f64>();
    let f = direct_sum_f64(&view(&set), Targets::All, &Gravity::plummer(0.0)).unwrap();
    let w: f64 = (0..ps.len()).map(|i| 0.5 * ps.mass[i] * f.pot[i]).sum();
    (t, w)
}

/// `|sum m v|` and `|sum m x|`.
fn momentum_and_centre(ps: &PhaseSpace) -> (f64, f64) {
    let total = |a: &[f64], b: &[f64], c: &[f64]| {
        let s = |v: &[f64]| v.iter().zip(&ps.mass).map(|(x, m)| x * m).sum::<f64>();
        (s(a).powi(2) + s(b).powi(2) + s(c).powi(2)).sqrt()
    };
    (total(&ps.vx, &ps.vy, &ps.vz), total(&ps.x, &ps.y, &ps.z))
}

type Model = fn(usize, u64) -> PhaseSpace;

fn models() -> [(&'static str, Model); 4] {
    [
        ("plummer", |n, s| ic::plummer(n, s).unwrap()),
        ("plummer a=1", |n, s| ic::plummer_scaled(n, 1.0, s).unwrap()),
        ("hernquist", |n, s| ic::hernquist(n, 1.5, s).unwrap()),
        ("cube", |n, s| ic::uniform_cube(n, 2.0, s).unwrap()),
    ]
}

#[test]
fn the_same_seed_gives_the_same_bits_whatever_the_threads() {
    // 10_000 bodies span three random streams (4096 bodies each).
    for (name, model) in models() {
        let a = model(10_000, 42);
        assert_eq!(bits(&a), bits(&model(10_000, 42)), "{name}");
        let one_thread = with_threads(1, || model(10_000, 42));
        assert_eq!(bits(&a), bits(&one_thread), "{name}: one thread");
        let b = model(10_000, 43);
        assert_ne!(a.x, b.x, "{name}: another seed");
        assert_eq!(a.len(), 10_000);
        assert!(a.mass.iter().all(|&m| m == 1.0 / 10_000.0), "{name}: equal masses");
    }
}

#[test]
fn casts_keep_the_bodies_and_velocities() {
    let ps = ic::plummer(100, 1).unwrap();
    let set = ps.bodies::<f32>();
    assert_eq!(set.len(), 100);
    assert_eq!(set.x[7], ps.x[7] as f32);
    assert_eq!(set.mass[3], 0.01f32);
    let [vx, vy, vz] = ps.velocities::<f32>();
    assert_eq!((vx[5], vy[6], vz[7]), (ps.vx[5] as f32, ps.vy[6] as f32, ps.vz[7] as f32));
    assert!(!ps.is_empty());
}

/// Plummer in Hénon units: half-mass radius `a / sqrt(2^(2/3) - 1) = 0.7686`. With
/// 100_000 bodies the sample median's standard error is 0.3% (`1 / (2 f sqrt n)`, `f =
/// dM/dr = 0.72` there); the 99.9% mass cut moves the median by 0.1%: tolerance 1.5%.
#[test]
fn plummer_half_mass_radius_is_henons() {
    let expected = HENON_PLUMMER_SCALE / (2f64.powf(2.0 / 3.0) - 1.0).sqrt();
    assert!((expected - 0.7686).abs() < 1e-4);
    let rh = median(radii(&ic::plummer(100_000, 5).unwrap()));
    assert!((rh / expected - 1.0).abs() < 0.015, "half-mass radius {rh}, expected {expected}");
    // The scaled model is the same shape: a = 1 gives 1.3048.
    let rh = median(radii(&ic::plummer_scaled(100_000, 1.0, 5).unwrap()));
    assert!((rh / 1.3048 - 1.0).abs() < 0.015, "a = 1: half-mass radius {rh}");
}

/// Hénon units: `T = 1/4`, `W = -1/2`, `2T / |W| = 1`. With 4096 bodies each energy
/// fluctuates by about 2% (sampling noise of `sum v^2` and of the pair sum); tolerance 6%
/// (3 sigma) on each.
#[test]
fn plummer_is_in_virial_equilibrium_in_henon_units() {
    let ps = ic::plummer(4096, 11).unwrap();
    let (t, w) = energies(&ps);
    let q = 2.0 * t / w.abs();
    assert!((q - 1.0).abs() < 0.06, "virial ratio {q} (T {t}, W {w})");
    assert!((t / 0.25 - 1.0).abs() < 0.06, "T {t}");
    assert!((w / -0.5 - 1.0).abs() < 0.06, "W {w}");
}

/// The centre of mass is at the origin and the total momentum is zero up to rounding of
/// the subtracted means (1e-16 of the largest values, summed over n).
#[test]
fn spheres_are_in_the_centre_of_mass_frame() {
    for (name, ps) in [
        ("plummer", ic::plummer(20_000, 3).unwrap()),
        ("plummer a=1", ic::plummer_scaled(20_000, 1.0, 3).unwrap()),
        ("hernquist", ic::hernquist(20_000, 1.0, 3).unwrap()),
    ] {
        let (p, c) = momentum_and_centre(&ps);
        assert!(p < 1e-12, "{name}: total momentum {p}");
        assert!(c < 1e-10, "{name}: centre of mass {c}");
    }
}

/// Hernquist: the radius `(1 + sqrt 2) a` encloses half of the model's mass, so half of
/// the 99% that is sampled: a fraction `0.5 / 0.99` of the bodies, with a binomial
/// standard error of 0.16% at 100_000 bodies; tolerance 0.8% (5 sigma). The sample's
/// median radius is the truncated model's, `a s / (1 - s)` with `s = sqrt(0.495)`.
#[test]
fn hernquist_half_mass_radius_is_one_plus_sqrt_2_a() {
    for a in [1.0, 2.5] {
        let ps = ic::hernquist(100_000, a, 9).unwrap();
        let r = radii(&ps);
        let inside = r.iter().filter(|&&x| x < (1.0 + 2f64.sqrt()) * a).count() as f64 / r.len() as f64;
        assert!((inside - 0.5 / HERNQUIST_MASS_CUT).abs() < 0.008, "a = {a}: fraction {inside}");
        let s = (0.5 * HERNQUIST_MASS_CUT).sqrt();
        let rh = median(r.clone());
        assert!((rh / (a * s / (1.0 - s)) - 1.0).abs() < 0.02, "a = {a}: median radius {rh}");
        // Radii stop at the cut (198.5 a), up to the small centre-of-mass shift.
        let rmax = r.iter().copied().fold(0.0, f64::max);
        assert!(rmax < 198.5 * a * 1.01, "a = {a}: largest radius {rmax}");
    }
}

/// Hernquist velocities: every speed is below the escape speed `sqrt(2 / (r + a))` (up to
/// the centre-of-mass shifts: the mean velocity removed is about `0.4 / sqrt(n) = 0.006`,
/// allowed for by 0.02), and the model is near virial equilibrium: `2T / |W|` within 6%
/// of 1 (4096 bodies: 2% noise, 3 sigma; the 1% mass cut adds a bias below 1%, the outskirts
/// drawn from the untruncated distribution; measured 0.993).
#[test]
fn hernquist_speeds_are_bound_and_virial() {
    let ps = ic::hernquist(4096, 1.0, 13).unwrap();
    for i in 0..ps.len() {
        let r = (ps.x[i].powi(2) + ps.y[i].powi(2) + ps.z[i].powi(2)).sqrt();
        let v = (ps.vx[i].powi(2) + ps.vy[i].powi(2) + ps.vz[i].powi(2)).sqrt();
        assert!(v < 1.01 * (2.0 / (r + 1.0)).sqrt() + 0.02, "body {i}: speed {v} at radius {r}");
    }
    let (t, w) = energies(&ps);
    let q = 2.0 * t / w.abs();
    assert!((q - 1.0).abs() < 0.06, "virial ratio {q} (T {t}, W {w})");
}

#[test]
fn the_cube_is_uniform_and_at_rest() {
    let h = 2.0;
    let ps = ic::uniform_cube(50_000, h, 17).unwrap();
    for v in [&ps.x, &ps.y, &ps.z] {
        assert!(v.iter().all(|&c| (-h..h).contains(&c)));
        // Mean of a uniform variable on [-h, h): standard error h / sqrt(3 n) = 0.005.
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.025, "mean {mean}");
        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(lo < -0.999 * h, "the cube is filled to its faces: {lo}");
    }
    assert!(ps.vx.iter().chain(&ps.vy).chain(&ps.vz).all(|&v| v == 0.0));
}

#[test]
fn bad_arguments_get_typed_errors() {
    assert!(matches!(ic::plummer(0, 1), Err(Error::EmptyInput { .. })));
    assert!(matches!(ic::hernquist(0, 1.0, 1), Err(Error::EmptyInput { .. })));
    assert!(matches!(ic::uniform_cube(0, 1.0, 1), Err(Error::EmptyInput { .. })));
    let too_many = u32::MAX as usize + 1;
    assert!(matches!(ic::plummer(too_many, 1), Err(Error::TooManyPoints { .. })));
    assert!(matches!(ic::uniform_cube(too_many, 1.0, 1), Err(Error::TooManyPoints { .. })));
    for bad in [0.0, -1.0] {
        assert!(matches!(ic::plummer_scaled(10, bad, 1), Err(Error::InvalidArgument { .. })));
        assert!(matches!(ic::hernquist(10, bad, 1), Err(Error::InvalidArgument { .. })));
        assert!(matches!(ic::uniform_cube(10, bad, 1), Err(Error::InvalidArgument { .. })));
    }
    for bad in [f64::NAN, f64::INFINITY] {
        assert!(matches!(ic::plummer_scaled(10, bad, 1), Err(Error::NonFiniteValue { .. })));
        assert!(matches!(ic::hernquist(10, bad, 1), Err(Error::NonFiniteValue { .. })));
        assert!(matches!(ic::uniform_cube(10, bad, 1), Err(Error::NonFiniteValue { .. })));
    }
    // One body is a valid model (at the origin, at rest, after the frame change).
    let one = ic::plummer(1, 1).unwrap();
    assert_eq!((one.x[0], one.vx[0], one.mass[0]), (0.0, 0.0, 1.0));
    // Softened potential energies of the sampled sphere are finite.
    let set = ic::plummer(64, 2).unwrap().bodies::<f64>();
    let g = Gravity { g: 1.0, softening: Softening::Clamped(0.01) };
    assert!(direct_sum_f64(&view(&set), Targets::All, &g).unwrap().pot.iter().all(|p| p.is_finite()));
}
