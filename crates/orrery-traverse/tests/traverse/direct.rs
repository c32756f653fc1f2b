//! CPU direct summation against exact values and a naive loop, its conservation laws,
//! its precisions, target subsets, bad input; and the accuracy harness on a hand-made case.

use orrery_core::{Error, ParticleSet, ParticlesView};
use orrery_traverse::accuracy::{acceleration_errors, gather_targets, potential_errors};
use orrery_traverse::direct::{Targets, direct_sum, direct_sum_f64, evenly_spaced_targets};
use orrery_traverse::{Forces, Gravity, Softening, ic};

use crate::common::{same_bits, view, with_threads};

fn set(points: &[([f64; 3], f64)]) -> ParticleSet<f64> {
    let mut s = ParticleSet::with_capacity(points.len());
    for &(p, m) in points {
        s.push(orrery_core::Vec3::new(p[0], p[1], p[2]), m);
    }
    s
}

/// The pair rule written as plainly as possible, with the operations of the documented
/// order: the CPU kernel must equal it bit for bit.
fn naive(s: &ParticleSet<f64>, gravity: &Gravity<f64>) -> Forces<f64> {
    let n = s.len();
    let mut f = Forces::zeros(n);
    for i in 0..n {
        let (mut ax, mut ay, mut az, mut phi) = (0.0, 0.0, 0.0, 0.0);
        for j in 0..n {
            if j == i {
                continue;
            }
            let (dx, dy, dz) = (s.x[j] - s.x[i], s.y[j] - s.y[i], s.z[j] - s.z[i]);
            let r2 = dx * dx + dy * dy + dz * dz;
            let soft = match gravity.softening {
                Softening::Plummer(e) => r2 + e * e,
                Softening::Clamped(h) => r2.max((h + h) * (h + h)),
            };
            if soft > 0.0 {
                let inv = 1.0 / soft.sqrt();
                let minv = s.mass[j] * inv;
                let w = minv * inv * inv;
                ax += dx * w;
                ay += dy * w;
                az += dz * w;
                phi += minv;
            }
        }
        (f.ax[i], f.ay[i], f.az[i], f.pot[i]) = (gravity.g * ax, gravity.g * ay, gravity.g * az, -(gravity.g * phi));
    }
    f
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1e-300)
}

#[test]
fn two_bodies_have_exact_forces() {
    let s = set(&[([0.0, 0.0, 0.0], 1.0), ([1.0, 0.0, 0.0], 2.0)]);
    // Unsoftened, G = 1: a_0 = m_1 / r^2 towards body 1, a_1 = m_0 / r^2 back.
    let f = direct_sum(&view(&s), Targets::All, &Gravity::plummer(0.0)).unwrap();
    assert_eq!((f.acc(0), f.pot[0]), ([2.0, 0.0, 0.0], -2.0));
    assert_eq!((f.acc(1), f.pot[1]), ([-1.0, 0.0, 0.0], -1.0));
    // Plummer eps = 0.5, G = 2: s = 1.25.
    let g = Gravity { g: 2.0, softening: Softening::Plummer(0.5) };
    let f = direct_sum(&view(&s), Targets::All, &g).unwrap();
    assert!(close(f.ax[0], 2.0 * 2.0 / 1.25f64.powf(1.5), 1e-15) && f.ay[0] == 0.0);
    assert!(close(f.pot[0], -2.0 * 2.0 / 1.25f64.sqrt(), 1e-15));
    assert!(close(f.ax[1], -2.0 / 1.25f64.powf(1.5), 1e-15));
    // Clamped h = 1: s = max(1, 4) = 4, a = m / 8, phi = -m / 2 (exact in binary).
    let g = Gravity { g: 1.0, softening: Softening::Clamped(1.0) };
    let f = direct_sum(&view(&s), Targets::All, &g).unwrap();
    assert_eq!((f.acc(0), f.pot[0], f.acc(1), f.pot[1]), ([0.25, 0.0, 0.0], -1.0, [-0.125, 0.0, 0.0], -0.5));
    // f32 agrees to its precision.
    let s32 = ParticleSet { x: vec![0.0f32, 1.0], y: vec![0.0; 2], z: vec![0.0; 2], mass: vec![1.0, 2.0] };
    let f = direct_sum(&view(&s32), Targets::All, &Gravity { g: 2.0f32, softening: Softening::Plummer(0.5) }).unwrap();
    assert!(close(f.ax[0].into(), 4.0 / 1.25f64.powf(1.5), 1e-6));
}

/// The self pair is skipped; a coincident distinct pair contributes nothing without
/// softening and `-m / eps` to the potential with it.
#[test]
fn coincident_bodies_follow_the_pair_rule() {
    let s = set(&[([0.0, 0.0, 0.0], 1.0), ([0.0, 0.0, 0.0], 1.0), ([1.0, 0.0, 0.0], 1.0)]);
    let f = direct_sum_f64(&view(&s), Targets::All, &Gravity::plummer(0.0)).unwrap();
    assert_eq!((f.acc(0), f.pot[0]), ([1.0, 0.0, 0.0], -1.0));
    assert_eq!((f.acc(2), f.pot[2]), ([-2.0, 0.0, 0.0], -2.0));
    let f = direct_sum_f64(&view(&s), Targets::All, &Gravity::plummer(0.5)).unwrap();
    assert!(close(f.pot[0], -2.0 - 1.0 / 1.25f64.sqrt(), 1e-15), "{}", f.pot[0]);
    assert!(close(f.ax[0], 1.0 / 1.25f64.powf(1.5), 1e-15) && f.ay[0] == 0.0);
    // One body alone feels nothing.
    let one = set(&[([0.5, 0.5, 0.5], 3.0)]);
    let f = direct_sum(&view(&one), Targets::All, &Gravity::plummer(0.1)).unwrap();
    assert_eq!((f.acc(0), f.pot[0]), ([0.0; 3], 0.0));
}

/// The blocked, tiled kernel sums exactly what the plain double loop sums, in the same
/// order: equal bits, for both softenings, over sizes around the block and tile sizes,
/// and whatever the number of threads.
#[test]
fn the_kernel_equals_the_plain_loop_bit_for_bit() {
    for n in [1, 2, 7, 8, 9, 255, 256, 257, 700] {
        let s = ic::plummer(n, n as u64).unwrap().bodies::<f64>();
        for softening in [Softening::Plummer(0.0), Softening::Plummer(0.05), Softening::Clamped(0.02)] {
            let g = Gravity { g: 1.5, softening };
            let f = direct_sum(&view(&s), Targets::All, &g).unwrap();
            assert!(same_bits(&f, &naive(&s, &g)), "n {n} {softening:?}");
            let one = with_threads(1, || direct_sum(&view(&s), Targets::All, &g).unwrap());
            assert!(same_bits(&f, &one), "n {n} {softening:?}: one thread");
        }
    }
}

/// Newton's third law: `sum m a = 0`. Relative to `sum m |a|`: in f64 the pair terms
/// cancel to rounding (1e-16 per term, tolerance 1e-13); in f32 (6e-8 per rounding,
/// about sqrt(n) = 45 roundings of the largest terms accumulate: 2.7e-6; measured
/// 1.2e-8) tolerance 1e-5.
#[test]
fn momentum_is_conserved() {
    let ps = ic::plummer(2000, 21).unwrap();
    let residual = |f: &Forces<f64>, m: &[f64]| {
        let c = |v: &[f64]| v.iter().zip(m).map(|(a, m)| a * m).sum::<f64>();
        let total = (0..f.len()).map(|k| m[k] * f.acc(k).iter().map(|a| a * a).sum::<f64>().sqrt()).sum::<f64>();
        (c(&f.ax).powi(2) + c(&f.ay).powi(2) + c(&f.az).powi(2)).sqrt() / total
    };
    let s = ps.bodies::<f64>();
    for softening in [Softening::Plummer(0.01), Softening::Clamped(0.01)] {
        let g = Gravity { g: 1.0, softening };
        let r = residual(&direct_sum(&view(&s), Targets::All, &g).unwrap(), &s.mass);
        assert!(r < 1e-13, "f64 {softening:?}: {r}");
        let s32 = ps.bodies::<f32>();
        let f = direct_sum(&view(&s32), Targets::All, &g.cast::<f32>()).unwrap().to_f64();
        let r = residual(&f, &s.mass);
        assert!(r < 1e-5, "f32 {softening:?}: {r}");
    }
}

/// f32 against the f64 reference on the same (f32) bodies: the f32 sum of n = 3000
/// terms rounds at 6e-8 of its partial sums, about sqrt(n) = 55 of them accumulating
/// (3.3e-6), more where neighbours cancel. Measured median 6.5e-7, p99 1.8e-6, max
/// 3.3e-6; asserted: median below 2e-6, p99 below 1e-5, max below 3e-5.
#[test]
fn f32_agrees_with_the_f64_reference() {
    let s = ic::plummer(3000, 8).unwrap().bodies::<f32>();
    for softening in [Softening::Plummer(0.01f32), Softening::Plummer(0.0), Softening::Clamped(0.05)] {
        let g = Gravity { g: 1.0f32, softening };
        let reference = direct_sum_f64(&view(&s), Targets::All, &g.cast()).unwrap();
        let f32s = direct_sum(&view(&s), Targets::All, &g).unwrap();
        let a = acceleration_errors(&reference, &f32s).unwrap();
        let p = potential_errors(&reference, &f32s).unwrap();
        for (what, e) in [("acceleration", a), ("potential", p)] {
            assert!(e.median < 2e-6 && e.p99 < 1e-5 && e.max < 3e-5, "{softening:?}: {what} {e:?}");
        }
    }
}

/// The clamped kernel is the softened one with `max(r^2, (2h)^2)`: inside `2h` the force
/// grows linearly with distance; pairs beyond `2h` are unsoftened.
#[test]
fn the_clamped_kernel_is_newton_beyond_two_h() {
    let h = 0.25;
    let g = Gravity { g: 1.0, softening: Softening::Clamped(h) };
    for (r, expect_a, expect_phi) in [(0.2, 0.2 / 0.125, -2.0), (0.4, 0.4 / 0.125, -2.0), (0.8, 1.0 / 0.64, -1.25)] {
        let s = set(&[([0.0, 0.0, 0.0], 1.0), ([r, 0.0, 0.0], 1.0)]);
        let f = direct_sum_f64(&view(&s), Targets::All, &g).unwrap();
        assert!(close(f.ax[0], expect_a, 1e-15) && close(f.pot[0], expect_phi, 1e-15), "r {r}: {f:?}");
    }
}

/// Any list of targets (unsorted, repeated) gets the bits the full sum has there.
#[test]
fn target_subsets_equal_the_full_result() {
    let s = ic::hernquist(1500, 1.0, 4).unwrap().bodies::<f32>();
    let g = Gravity::plummer(0.02f32);
    let full = direct_sum(&view(&s), Targets::All, &g).unwrap();
    let mut idx = evenly_spaced_targets(1500, 100);
    idx.extend([1499, 0, 17, 17, 640]);
    idx.reverse();
    let sub = direct_sum(&view(&s), Targets::Indices(&idx), &g).unwrap();
    assert!(same_bits(&sub, &gather_targets(&full, &idx).unwrap()));
    let sub64 = direct_sum_f64(&view(&s), Targets::Indices(&idx), &g.cast()).unwrap();
    let full64 = direct_sum_f64(&view(&s), Targets::All, &g.cast()).unwrap();
    assert!(same_bits(&sub64, &gather_targets(&full64, &idx).unwrap()));
    // No targets: no forces.
    assert!(direct_sum(&view(&s), Targets::Indices(&[]), &g).unwrap().is_empty());
    assert_eq!(Targets::Indices(&idx).count(1500), idx.len());
}

#[test]
fn bad_input_gets_typed_errors() {
    let g = Gravity::plummer(0.1f64);
    let empty = ParticlesView::<f64>::new(&[], &[], &[], &[]).unwrap();
    assert!(matches!(direct_sum(&empty, Targets::All, &g), Err(Error::EmptyInput { .. })));
    assert!(matches!(direct_sum_f64(&empty, Targets::All, &g), Err(Error::EmptyInput { .. })));
    let v = [0.0, 1.0, 2.0];
    for bad_mass in [0.0, -1.0] {
        let m = [1.0, bad_mass, 1.0];
        let b = ParticlesView::new(&v, &v, &v, &m).unwrap();
        assert!(matches!(direct_sum(&b, Targets::All, &g), Err(Error::InvalidArgument { what: "mass", .. })));
    }
    let nan = [0.0, f64::NAN, 2.0];
    assert!(matches!(ParticlesView::new(&v, &nan, &v, &[1.0; 3]), Err(Error::NonFiniteCoordinate { index: 1, .. })));
    let b = ParticlesView::new(&v, &v, &v, &[1.0; 3]).unwrap();
    for softening in [Softening::Plummer(-0.1), Softening::Clamped(-1.0)] {
        let bad = Gravity { g: 1.0, softening };
        assert!(matches!(direct_sum(&b, Targets::All, &bad), Err(Error::InvalidArgument { what: "softening", .. })));
    }
    let nan_soft = Gravity { g: 1.0, softening: Softening::Plummer(f64::NAN) };
    assert!(matches!(direct_sum_f64(&b, Targets::All, &nan_soft), Err(Error::NonFiniteValue { .. })));
    let bad_g = Gravity { g: -1.0, softening: Softening::Plummer(0.1) };
    assert!(matches!(direct_sum(&b, Targets::All, &bad_g), Err(Error::InvalidArgument { .. })));
    let e = direct_sum(&b, Targets::Indices(&[0, 3]), &g).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfBounds { position: 1, index: 3, len: 3, .. }), "{e}");
    assert!(matches!(direct_sum_f64(&b, Targets::Indices(&[9]), &g), Err(Error::IndexOutOfBounds { .. })));
}

// ---- the accuracy harness ---------------------------------------------------------------

fn forces(acc: &[[f64; 3]], pot: &[f64]) -> Forces<f64> {
    Forces {
        ax: acc.iter().map(|a| a[0]).collect(),
        ay: acc.iter().map(|a| a[1]).collect(),
        az: acc.iter().map(|a| a[2]).collect(),
        pot: pot.to_vec(),
    }
}

/// Relative errors 0.1, 0, 0.25, 0.1 (sorted 0, 0.1, 0.1, 0.25): nearest-rank median is
/// rank 2 (0.1), p90 and p99 rank 4 (0.25).
#[test]
fn accuracy_stats_of_a_hand_made_case() {
    let reference =
        forces(&[[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 4.0], [3.0, 4.0, 0.0]], &[-1.0, -2.0, -4.0, -8.0]);
    let approx =
        forces(&[[1.1, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0], [3.0, 4.0, 0.5]], &[-1.0, -2.5, -4.0, -8.0]);
    let a = acceleration_errors(&reference, &approx).unwrap();
    assert_eq!(a.count, 4);
    assert!(close(a.median, 0.1, 1e-12) && close(a.p90, 0.25, 1e-12) && close(a.p99, 0.25, 1e-12), "{a:?}");
    assert!(close(a.max, 0.25, 1e-12) && close(a.mean, 0.1125, 1e-12), "{a:?}");
    let p = potential_errors(&reference, &approx).unwrap();
    assert_eq!((p.median, p.p90, p.max, p.mean), (0.0, 0.25, 0.25, 0.0625));
    // f32 approximations are widened.
    let a32 = Forces { ax: vec![1.0f32], ay: vec![0.0], az: vec![0.0], pot: vec![-1.0] };
    let r = forces(&[[1.0, 0.0, 0.0]], &[-1.0]);
    assert_eq!(acceleration_errors(&r, &a32).unwrap().max, 0.0);
    // A non-finite approximation is an infinite error.
    let inf = forces(&[[f64::NAN, 0.0, 0.0]], &[-1.0]);
    assert_eq!(acceleration_errors(&r, &inf).unwrap().max, f64::INFINITY);
}

#[test]
fn accuracy_input_errors_are_typed() {
    let r = forces(&[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], &[-1.0, -1.0]);
    let short = forces(&[[1.0, 0.0, 0.0]], &[-1.0]);
    assert!(matches!(acceleration_errors(&r, &short), Err(Error::LengthMismatch { .. })));
    assert!(matches!(potential_errors(&short, &r), Err(Error::LengthMismatch { .. })));
    let none = forces(&[], &[]);
    assert!(matches!(acceleration_errors(&none, &none), Err(Error::EmptyInput { .. })));
    let zero = forces(&[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]], &[-1.0, 0.0]);
    assert!(matches!(acceleration_errors(&zero, &r), Err(Error::InvalidArgument { .. })));
    assert!(matches!(potential_errors(&zero, &r), Err(Error::InvalidArgument { .. })));
    let nan = forces(&[[f64::NAN, 0.0, 0.0], [0.0, 1.0, 0.0]], &[-1.0, -1.0]);
    assert!(matches!(acceleration_errors(&nan, &r), Err(Error::NonFiniteValue { .. })));
    assert_eq!(gather_targets(&r, &[1, 1, 0]).unwrap().ay, [1.0, 1.0, 0.0]);
    assert!(matches!(gather_targets(&r, &[2]), Err(Error::IndexOutOfBounds { .. })));
}
