//! Helpers shared by the test modules.

use orrery_core::{ParticleSet, ParticlesView, Real};
use orrery_traverse::Forces;

/// A validated view of a set (panics on invalid test data).
pub fn view<T: Real>(set: &ParticleSet<T>) -> ParticlesView<'_, T> {
    set.view().unwrap()
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
