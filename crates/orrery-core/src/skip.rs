//! Reporting a test that skips for want of a device where CI's log shows it.
//!
//! The test harness captures `println!` and `eprintln!` of passing tests, so a skip
//! printed that way never reaches the log. [`report`] writes straight to the process's
//! standard error and numbers the skips, so the log shows every skip and its last skip
//! line carries the count (the conformance runner prints its own summary).

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

static SKIPS: AtomicUsize = AtomicUsize::new(0);

/// Writes `SKIPPED #<n> <what>: <reason>` to standard error (uncaptured) and returns `n`,
/// the number of skips reported by this process so far.
pub fn report(what: &str, reason: &str) -> usize {
    let n = SKIPS.fetch_add(1, Ordering::Relaxed) + 1;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED #{n} {what}: {reason}");
    n
}

/// The number of skips reported so far.
pub fn count() -> usize {
    SKIPS.load(Ordering::Relaxed)
}
