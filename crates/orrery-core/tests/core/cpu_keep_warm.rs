//! The CPU executor's keep-warm spin (ADR 0008): spinning threads must never hold up a
//! call into their pool, whether it follows at once, runs concurrently from another
//! thread, or is nested; and the setting is validated.
//!
//! Every test spins for [`LONG_SPIN`] (a minute), so a spinner that kept a thread from a
//! call would stall that call for a minute: the time limits below (seconds) are far from
//! what a correct pool takes (microseconds) and from what a broken one takes.

use std::time::{Duration, Instant};

use orrery_core::{CpuExecutor, DEFAULT_SPIN, Error};
use rayon::prelude::*;

const LONG_SPIN: Duration = Duration::from_secs(60);

/// A call that needs every thread of the pool: a broadcast runs once on each.
fn every_thread(exec: &CpuExecutor) -> usize {
    exec.install(|| rayon::broadcast(|ctx| ctx.index()).len())
}

/// An executor whose threads spin for a minute: at most 4 threads and no more than the
/// machine's cores, so that it does spin.
fn long_spinning() -> CpuExecutor {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let exec = CpuExecutor::with_threads(cores.min(4)).unwrap().with_spin(LONG_SPIN).unwrap();
    assert_eq!(exec.spin(), LONG_SPIN, "the test needs a spinning pool");
    exec
}

#[test]
fn a_call_right_after_a_call_is_not_held_by_spinners() {
    let exec = long_spinning();
    let start = Instant::now();
    for _ in 0..50 {
        assert_eq!(every_thread(&exec), exec.threads());
        let sum: u64 = exec.install(|| (0..100_000u64).into_par_iter().sum());
        assert_eq!(sum, 4_999_950_000);
    }
    assert!(start.elapsed() < Duration::from_secs(20), "calls waited for spinners: {:?}", start.elapsed());
}

#[test]
fn concurrent_callers_are_not_held_by_spinners() {
    let exec = long_spinning();
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| {
                for _ in 0..100 {
                    assert_eq!(every_thread(&exec), exec.threads());
                }
            });
        }
    });
    assert!(start.elapsed() < Duration::from_secs(20), "calls waited for spinners: {:?}", start.elapsed());
}

#[test]
fn nested_calls_run_inline_and_post_no_spinners() {
    let exec = long_spinning();
    let start = Instant::now();
    let threads = exec.install(|| {
        let inner = exec.install(|| rayon::current_thread_index().is_some());
        assert!(inner, "the nested call runs on the pool's thread");
        // Spinners posted by the nested call would be picked up here by every thread
        // waiting in the broadcast and hold it.
        (0..20).map(|_| rayon::broadcast(|_| ()).len()).max()
    });
    assert_eq!(threads, Some(exec.threads()));
    assert!(start.elapsed() < Duration::from_secs(20), "nested call waited for spinners: {:?}", start.elapsed());
}

#[test]
fn a_panicking_call_leaves_the_pool_usable() {
    let exec = long_spinning();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| exec.install(|| panic!("in the pool"))));
    assert!(caught.is_err());
    let start = Instant::now();
    assert_eq!(every_thread(&exec), exec.threads());
    assert!(start.elapsed() < Duration::from_secs(20), "call waited for spinners: {:?}", start.elapsed());
}

#[test]
fn spin_settings() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    // Opt-in: an own pool sleeps when idle unless asked to spin.
    assert_eq!(CpuExecutor::with_threads(1).unwrap().spin(), Duration::ZERO);
    assert_eq!(CpuExecutor::with_threads(1).unwrap().with_spin(DEFAULT_SPIN).unwrap().spin(), DEFAULT_SPIN);
    assert_eq!(CpuExecutor::with_threads(1).unwrap().with_spin(Duration::ZERO).unwrap().spin(), Duration::ZERO);
    // More threads than cores: spinners would take the working threads' cores.
    assert_eq!(CpuExecutor::with_threads(cores + 1).unwrap().with_spin(DEFAULT_SPIN).unwrap().spin(), Duration::ZERO);
    assert_eq!(CpuExecutor::new().spin(), Duration::ZERO);
    assert_eq!(CpuExecutor::new().with_spin(Duration::ZERO).unwrap().spin(), Duration::ZERO);
    assert!(matches!(
        CpuExecutor::new().with_spin(Duration::from_micros(1)),
        Err(Error::InvalidArgument { what: "spin", .. })
    ));
}

#[test]
fn clones_share_the_pool_with_their_own_spin() {
    let spinning = long_spinning();
    let quiet = spinning.clone().with_spin(Duration::ZERO).unwrap();
    assert_eq!(quiet.spin(), Duration::ZERO);
    assert_eq!(spinning.spin(), LONG_SPIN);
    let start = Instant::now();
    for _ in 0..20 {
        // The spinning clone's spinners must give way to the quiet clone's calls.
        assert_eq!(every_thread(&spinning), spinning.threads());
        assert_eq!(every_thread(&quiet), quiet.threads());
    }
    assert!(start.elapsed() < Duration::from_secs(20), "calls waited for spinners: {:?}", start.elapsed());
}
