//! Repeat a timed region and summarise it.
//!
//! Every sample is taken with the executor's own clock ([`Executor::mark`] /
//! [`Executor::elapsed`]: device events on GPUs), after warm-up runs that keep
//! compilation, allocation and first-touch page faults out of the numbers. We report
//! the median, and the 10th and 90th percentiles as the spread.

use std::time::Duration;

use orrery_core::{Executor, Result};
use serde::Serialize;

/// Summary of repeated timings, in milliseconds.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stats {
    /// Median.
    pub median_ms: f64,
    /// 10th percentile.
    pub p10_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// Number of timed repeats.
    pub repeats: usize,
}

impl Stats {
    /// Summarises durations (at least one).
    pub fn from_samples(samples: &mut [Duration]) -> Self {
        samples.sort_unstable();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let at = |q: f64| ms(samples[((samples.len() - 1) as f64 * q).round() as usize]);
        Self { median_ms: at(0.5), p10_ms: at(0.1), p90_ms: at(0.9), repeats: samples.len() }
    }
}

/// Runs `f` `warmup` times, then `repeats` times timed with the executor's clock.
///
/// # Errors
/// Whatever `f` or the executor's clock returns.
pub fn measure<E: Executor>(
    exec: &E,
    warmup: usize,
    repeats: usize,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Stats> {
    measure_with_setup(exec, warmup, repeats, &mut (), |()| Ok(()), |()| f())
}

/// Like [`measure`], but runs `setup` untimed before every run (e.g. restoring the
/// unsorted input of an in-place sort). Both closures get the shared `state`.
///
/// # Errors
/// Whatever `setup`, `f` or the executor's clock returns.
pub fn measure_with_setup<E: Executor, S>(
    exec: &E,
    warmup: usize,
    repeats: usize,
    state: &mut S,
    mut setup: impl FnMut(&mut S) -> Result<()>,
    mut f: impl FnMut(&mut S) -> Result<()>,
) -> Result<Stats> {
    for _ in 0..warmup {
        setup(state)?;
        f(state)?;
    }
    exec.synchronize()?;
    let mut samples = Vec::with_capacity(repeats);
    for _ in 0..repeats.max(1) {
        setup(state)?;
        let start = exec.mark()?;
        f(state)?;
        let end = exec.mark()?;
        samples.push(exec.elapsed(&start, &end)?);
    }
    Ok(Stats::from_samples(&mut samples))
}
