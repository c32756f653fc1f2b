//! The leaf buffers of a GPU tree: a fixed capacity `C` of leaves, so that a whole update
//! (every pass, sized for `C`) can be recorded once and replayed.
//!
//! | buffer | elements | holds |
//! |---|---|---|
//! | `leaves[0]`, `leaves[1]` | `C + 1` | the current leaf array and the next one (a pass scatters from one into the other; the status word `CURRENT` says which is current) |
//! | `counts` | `C` | particles per leaf of the current tree |
//! | `ops` | `C` | the decide's operations |
//! | `offsets` | `C + 1` | their exclusive scan |
//! | `nf` (NFCount only) | | counts and `[W \| G]` per parity, starts, the geometry table ([`super::nf::NfBuffers`]) |
//!
//! The capacity has 25% headroom over what was needed
//! ([`orrery_core::executor::grown_capacity`]); a pass that would exceed it writes
//! nothing and sets the overflow flag, and the host grows the buffers with [`LeafBuffers::grow`]
//! (outside any recording) and resumes.

use orrery_core::executor::grown_capacity;
use orrery_core::{Error, Executor, Result, Slice};

use super::nf::NfBuffers;

/// The leaf buffers of one capacity.
pub(crate) struct LeafBuffers<E: Executor> {
    /// Leaves the buffers hold (`C`).
    pub capacity: usize,
    /// The two leaf arrays, `C + 1` keys each.
    pub leaves: [E::Buffer<u64>; 2],
    /// Particles per leaf, `C`.
    pub counts: E::Buffer<u32>,
    /// Operations, `C`.
    pub ops: E::Buffer<u32>,
    /// Their exclusive scan, `C + 1`.
    pub offsets: E::Buffer<u32>,
    /// NFCount's buffers (`None` for LeafCount).
    pub nf: Option<NfBuffers<E>>,
}

/// Rejects capacities whose arrays (`C + 1` elements) do not fit 32-bit indices.
fn check_capacity(capacity: usize) -> Result<()> {
    if capacity == 0 || capacity >= u32::MAX as usize {
        return Err(Error::TooManyPoints { count: capacity, max: u32::MAX as usize - 1, what: "leaf capacity" });
    }
    Ok(())
}

/// The capacity for a tree that needs `leaves` leaves: 25% headroom, at least 2.
pub(crate) fn with_headroom(leaves: usize) -> usize {
    grown_capacity(leaves).max(leaves + 1).max(2)
}

impl<E: Executor> LeafBuffers<E> {
    /// Buffers for `capacity` leaves (contents unspecified), with NFCount's when `nf`.
    pub fn new(exec: &E, capacity: usize, nf: bool) -> Result<Self> {
        check_capacity(capacity)?;
        Ok(Self {
            nf: if nf { Some(NfBuffers::new(exec, capacity)?) } else { None },
            capacity,
            leaves: [exec.alloc(capacity + 1)?, exec.alloc(capacity + 1)?],
            counts: exec.alloc(capacity)?,
            ops: exec.alloc(capacity)?,
            offsets: exec.alloc(capacity + 1)?,
        })
    }

    /// Grows to `capacity` leaves, keeping the current tree (`live` leaves in
    /// `leaves[current]`). The old buffers are dropped: recordings that used them no
    /// longer replay (the caller records again). NFCount's values are not kept: a run
    /// evaluates its first tree from scratch; the geometry table is written again before
    /// the next run.
    pub fn grow(&mut self, exec: &E, capacity: usize, live: usize, current: usize) -> Result<()> {
        let mut fresh = Self::new(exec, capacity, self.nf.is_some())?;
        exec.copy(self.leaves[current].slice(0..live + 1)?, fresh.leaves[current].slice_mut(0..live + 1)?)?;
        *self = fresh;
        Ok(())
    }
}
