//! Keeping an owned pool's threads awake for a short while after each call, as OpenMP's
//! threads spin between parallel regions (ADR 0008).
//!
//! Rayon's idle workers go to sleep a few dozen microseconds after they run out of work,
//! and waking them costs a futex call each and, on a virtual machine, the wake-up of a
//! halted vCPU: measured on the H200 host (16 threads), starting a pool costs 13 us back
//! to back, 77 us after 200 us idle and 234 us after 2 ms idle. A tree build of 16 small
//! batches does 80-150 us of work per thread, so a caller that does other work between
//! builds (a training step) paid about as much to start the threads as to build: 16 x
//! 1024 f64 with the caller busy 0.1-1 ms between builds took 0.26-0.32 ms, and takes
//! 0.21-0.25 ms with the spin. Builds back to back gain nothing: rayon's own idle search
//! already spans their gaps.
//!
//! After an outermost [`crate::CpuExecutor::install`] returns, every worker of the pool
//! runs a spinner job: it polls until the next call into the pool starts (the call count
//! turns non-zero) or its deadline passes, then returns to rayon's own scheduling. A
//! spinner never runs other work itself: a spinner that ran jobs could end up nested
//! under the next call's job on its thread and hold it until its deadline. For the same
//! reason it stops as soon as any call is in flight, so a spinner picked up by a thread
//! waiting inside a call (in `rayon::join`) returns at once.
//!
//! Spinning is skipped when the pool has more threads than the machine has cores
//! (spinners would take the cores the working threads need, as libgomp also throttles).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long an owned pool's threads keep spinning after a call, unless set with
/// [`crate::CpuExecutor::with_spin`]: 1 ms, the order of libgomp's default spin count.
pub const DEFAULT_SPIN: Duration = Duration::from_millis(1);

/// Spin-polls between deadline checks (each `spin_loop` hint is a few to ~100 cycles).
const POLLS_PER_CHECK: u32 = 64;

/// A thread pool of an executor's own, with the count of calls into it in flight
/// (shared by every clone of the executor, whatever their spin setting).
#[derive(Debug)]
pub(super) struct OwnedPool {
    pool: rayon::ThreadPool,
    /// Outermost calls into the pool in flight; spinners stop while it is non-zero.
    active: AtomicUsize,
    /// Whether the pool fits the machine's cores (a larger pool never spins).
    may_spin: bool,
}

impl OwnedPool {
    /// Wraps `pool`.
    pub(super) fn new(pool: rayon::ThreadPool) -> Arc<Self> {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
        let may_spin = pool.current_num_threads() <= cores;
        Arc::new(Self { pool, active: AtomicUsize::new(0), may_spin })
    }

    /// Number of worker threads.
    pub(super) fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// How long the threads spin after a call when asked to spin for `spin`.
    pub(super) fn effective_spin(&self, spin: Duration) -> Duration {
        if self.may_spin { spin } else { Duration::ZERO }
    }

    /// Runs `f` in the pool: inline when already on one of its threads, otherwise as an
    /// outermost call, after which (the last of the calls in flight, also when `f`
    /// panics) the threads spin for `spin`.
    pub(super) fn install<R: Send>(self: &Arc<Self>, spin: Duration, f: impl FnOnce() -> R + Send) -> R {
        if self.pool.current_thread_index().is_some() {
            return f();
        }
        let _call = Call::start(self, self.effective_spin(spin));
        self.pool.install(f)
    }

    /// Posts one spinner on every thread. Posted through one spawned job so the caller
    /// does not pay for waking threads that slept during its call.
    fn post_spinners(self: &Arc<Self>, spin: Duration) {
        let state = Arc::clone(self);
        let deadline = Instant::now() + spin;
        self.pool.spawn(move || {
            rayon::spawn_broadcast(move |_| state.spin_until(deadline));
        });
    }

    /// Polls until a call starts or `deadline` passes.
    fn spin_until(&self, deadline: Instant) {
        while self.active.load(Ordering::Acquire) == 0 && Instant::now() < deadline {
            for _ in 0..POLLS_PER_CHECK {
                std::hint::spin_loop();
            }
        }
    }
}

/// An outermost call in flight; dropping it posts the spinners.
struct Call<'a> {
    pool: &'a Arc<OwnedPool>,
    spin: Duration,
}

impl<'a> Call<'a> {
    fn start(pool: &'a Arc<OwnedPool>, spin: Duration) -> Self {
        pool.active.fetch_add(1, Ordering::AcqRel);
        Self { pool, spin }
    }
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if self.pool.active.fetch_sub(1, Ordering::AcqRel) == 1 && !self.spin.is_zero() {
            self.pool.post_spinners(self.spin);
        }
    }
}
