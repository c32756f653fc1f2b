//! Repeat a timed region and summarise it.
//!
//! Every sample is taken with the executor's own clock ([`Executor::mark`] /
//! [`Executor::elapsed`]: device events on GPUs), after warm-up runs that keep
//! compilation, allocation and first-touch page faults out of the numbers. We report
//! the median, and the 10th and 90th percentiles as the spread.

use std::time::{Duration, Instant};

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

/// Warm-up lasts at least this long (and at least the asked number of runs): after two
/// runs of 0.2 ms, the first workload of a process (the CPU ball tree's 16 x 1024 f32)
/// measured 0.2-1.0 ms on the H200 host where the next one, with twice the record size,
/// measured 0.15-0.32 ms: a fresh pool's threads still allocating their scratch.
const MIN_WARMUP: Duration = Duration::from_millis(20);
/// At most this many warm-up runs beyond the asked number, however short a run is.
const MAX_WARMUP_RUNS: usize = 1000;

/// Runs `f` `warmup` times (and for at least [`MIN_WARMUP`] of completed runs), then
/// `repeats` times timed with the executor's clock.
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
    let started = Instant::now();
    let mut runs = 0;
    while runs < warmup || (started.elapsed() < MIN_WARMUP && runs < MAX_WARMUP_RUNS) {
        setup(state)?;
        f(state)?;
        // Wait for the run: a GPU launch returns at once, and without the wait the loop
        // would enqueue MAX_WARMUP_RUNS runs of a long kernel within MIN_WARMUP.
        exec.synchronize()?;
        runs += 1;
    }
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
