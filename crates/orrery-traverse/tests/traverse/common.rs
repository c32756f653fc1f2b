//! Helpers shared by the test modules.

use orrery_core::{ParticleSet, ParticlesView, Real};
use orrery_traverse::Forces;

/// A validated view of a set (panics on invalid test data).
pub fn view<T: Real>(set: &ParticleSet<T>) -> ParticlesView<'_, T> {
    set.view().unwrap()
}

/// The largest relative difference `|a - b| / max(|b|, floor)` over every entry of two
/// force results of one length (accelerations per component, relative to the norm of
/// `b`'s acceleration; potentials relative to `b`'s).
pub fn max_rel_diff(a: &Forces<f64>, b: &Forces<f64>) -> f64 {
    assert_eq!(a.len(), b.len(), "lengths");
    let mut worst = 0.0f64;
    for k in 0..a.len() {
        let (ra, rb) = (a.acc(k), b.acc(k));
        let norm = (rb[0] * rb[0] + rb[1] * rb[1] + rb[2] * rb[2]).sqrt().max(1e-300);
        for c in 0..3 {
            worst = worst.max((ra[c] - rb[c]).abs() / norm);
        }
        worst = worst.max((a.pot[k] - b.pot[k]).abs() / b.pot[k].abs().max(1e-300));
    }
    worst
}

/// Whether two results are equal bit for bit.
pub fn same_bits<T: Real>(a: &Forces<T>, b: &Forces<T>) -> bool {
    let bits = |v: &[T]| v.iter().map(|&x| Into::<f64>::into(x).to_bits()).collect::<Vec<u64>>();
    bits(&a.ax) == bits(&b.ax)
        && bits(&a.ay) == bits(&b.ay)
        && bits(&a.az) == bits(&b.az)
        && bits(&a.pot) == bits(&b.pot)
}

/// Runs `f` in a rayon pool of `threads` threads.
pub fn with_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
}
