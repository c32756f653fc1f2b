//! Time per phase, measured on the executor: the executor is synchronised before and
//! after each phase, so a phase's time is the wall time of its work on the device (and
//! the host code around it), not of enqueueing it.

use std::time::Instant;

use orrery_core::Executor;
use serde::Serialize;

/// One timed phase.
#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// The phase's name (`keys`, `sort`, ...).
    pub phase: String,
    /// Milliseconds.
    pub ms: f64,
}

/// The phases of one run, in order.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Phases(pub Vec<Phase>);

impl Phases {
    /// Runs `f` as the phase `name` on `exec` (synchronised before and after) and records
    /// its time.
    ///
    /// # Errors
    /// `f`'s error, or the executor's when it synchronises.
    pub fn time<E: Executor, R>(
        &mut self,
        exec: &E,
        name: &str,
        f: impl FnOnce() -> orrery_core::Result<R>,
    ) -> orrery_core::Result<R> {
        exec.synchronize()?;
        let start = Instant::now();
        let out = f()?;
        exec.synchronize()?;
        self.0.push(Phase { phase: name.to_owned(), ms: start.elapsed().as_secs_f64() * 1e3 });
        Ok(out)
    }

    /// The sum of every phase, in milliseconds.
    pub fn total_ms(&self) -> f64 {
        self.0.iter().map(|p| p.ms).sum()
    }

    /// `keys 1.234 ms, sort 0.5 ms, ...; total 2 ms`.
    pub fn summary(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(|p| format!("{} {:.3} ms", p.phase, p.ms)).collect();
        format!("{}; total {:.3} ms", parts.join(", "), self.total_ms())
    }
}
