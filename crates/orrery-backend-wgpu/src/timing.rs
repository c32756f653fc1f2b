//! Markers in the executor's timeline.
//!
//! With `TIMESTAMP_QUERY_INSIDE_ENCODERS` a marker is a GPU timestamp written into the
//! command stream after all recorded work, resolved into a small read-back buffer, and
//! the batch is submitted (no wait). [`crate::WgpuExecutor`]'s `elapsed` waits for both
//! markers and converts ticks with the queue's timestamp period. Without timestamps a
//! marker waits for the device and reads the host clock, so the interval includes
//! submission overhead and is an upper bound.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A point in the executor's timeline ([`orrery_core::Executor::Marker`]).
#[derive(Debug)]
pub struct WgpuMarker {
    pub(crate) kind: MarkerKind,
}

#[derive(Debug)]
pub(crate) enum MarkerKind {
    /// A GPU timestamp, read back on first use.
    Timestamp {
        /// Keeps the query set alive until the timestamp is resolved.
        _set: wgpu::QuerySet,
        /// Resolve target (QUERY_RESOLVE | COPY_SRC).
        _resolve: wgpu::Buffer,
        /// 8 bytes, MAP_READ.
        readback: wgpu::Buffer,
        /// Nanoseconds per tick.
        period: f32,
        /// The tick value once read.
        ticks: OnceLock<u64>,
    },
    /// Host clock after the device went idle.
    Host(Instant),
}

impl WgpuMarker {
    /// Whether this marker is a device timestamp (otherwise the host clock).
    pub fn is_device_timestamp(&self) -> bool {
        matches!(self.kind, MarkerKind::Timestamp { .. })
    }
}

/// Nanoseconds between two tick counts.
pub(crate) fn ticks_to_duration(start: u64, end: u64, period: f32) -> Duration {
    let ns = end.saturating_sub(start) as f64 * f64::from(period);
    Duration::from_nanos(ns.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::ticks_to_duration;
    use std::time::Duration;

    #[test]
    fn ticks_scale_by_the_period_and_never_go_negative() {
        assert_eq!(ticks_to_duration(100, 1100, 1.0), Duration::from_micros(1));
        assert_eq!(ticks_to_duration(0, 10, 2.5), Duration::from_nanos(25));
        assert_eq!(ticks_to_duration(10, 5, 1.0), Duration::ZERO);
    }
}
