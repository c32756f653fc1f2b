//! The fused lattice search: the search of [`LatticeIndex::search`] that also writes,
//! for every member it scores, the member's distance to its own cluster's centroid into
//! a side buffer, then reduces the buffer to cohesion and inertia per cluster.
//!
//! - The side buffer has one `f64` per row, prefilled with NaN ("not scored"). The
//!   partial pass of a (query, cluster) pair already has the member's vector in hand; it
//!   writes `|x_i - mu_c|` ([`crate::dist::l2`] against the centroid family's `f64`
//!   centroid) when the slot is still NaN. Several pairs may score the same member: each
//!   computes the same bits from the same operands, so the buffer does not depend on
//!   which write lands (a plain, relaxed store; no read-modify-write atomics, nothing
//!   accumulated in the buffer).
//! - The reduction is a per-member pass over all clusters ([`crate::grid::ChunkGrid`],
//!   partials merged in item order) over the non-NaN entries: `scored`, `sum d` and
//!   `sum d^2`, so `cohesion = sum d / scored` and `inertia = sum d^2` of the scored
//!   members. With every cluster probed, they equal the centroid family's cohesion and
//!   inertia up to the rounding of the order of summation (and of `d^2` against the
//!   unrounded squared distance).
//! - The search output is byte-identical to the unfused path: the side writes touch
//!   nothing the ranking reads.

use std::sync::atomic::AtomicU64;

use orrery_core::Result;

use super::lattice::LatticeIndex;
use super::probe::probe_search;
use super::{Metric, Neighbors};
use crate::grid::{ChunkGrid, MEMBER_CHUNK, reduce_chunks};
use crate::input::{Clusters, Vectors, check_family_len};

/// What a fused search measured besides its neighbours.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedStats {
    /// Per row: the distance to its own cluster's centroid, NaN where no query scored it.
    pub member_distance: Vec<f64>,
    /// Per cluster: members scored at least once.
    pub scored: Vec<u32>,
    /// Per cluster: mean `member_distance` over the scored members (NaN when none).
    pub cohesion: Vec<f64>,
    /// Per cluster: `sum member_distance^2` over the scored members (NaN when none).
    pub inertia: Vec<f64>,
}

/// The reduction pass: cohesion and inertia per cluster over the non-NaN entries of
/// `member_distance` (one per row).
///
/// # Errors
/// [`orrery_core::Error::LengthMismatch`] when `member_distance` does not have one
/// entry per row.
pub fn reduce_member_distances(clusters: &Clusters<'_>, member_distance: Vec<f64>) -> Result<FusedStats> {
    check_family_len("member distances", clusters.num_vectors(), member_distance.len())?;
    let grid = ChunkGrid::new(clusters.offsets(), MEMBER_CHUNK);
    let sums = reduce_chunks(
        &grid,
        || (0u32, 0.0f64, 0.0f64),
        |chunk, acc| {
            for &d in &member_distance[chunk.rows.clone()] {
                if !d.is_nan() {
                    acc.0 += 1;
                    acc.1 += d;
                    acc.2 += d * d;
                }
            }
        },
        |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2),
    );
    let scored = sums.iter().map(|s| s.0).collect();
    let cohesion = sums.iter().map(|s| if s.0 == 0 { f64::NAN } else { s.1 / f64::from(s.0) }).collect();
    let inertia = sums.iter().map(|s| if s.0 == 0 { f64::NAN } else { s.2 }).collect();
    Ok(FusedStats { member_distance, scored, cohesion, inertia })
}

impl LatticeIndex<'_> {
    /// [`LatticeIndex::search`], fused with the measurement of every scored member's
    /// distance to its centroid (see the module docs).
    ///
    /// # Errors
    /// As [`LatticeIndex::search`].
    pub fn search_fused(
        &self,
        queries: &Vectors<'_>,
        k: usize,
        nprobe: usize,
        metric: Metric,
    ) -> Result<(Neighbors, FusedStats)> {
        self.check(queries, k, nprobe)?;
        let rows = self.clusters().num_vectors();
        let side: Vec<AtomicU64> = (0..rows).map(|_| AtomicU64::new(f64::NAN.to_bits())).collect();
        let neighbors = probe_search(&self.lists(), queries, k, nprobe, metric, Some(&side));
        let distances = side.into_iter().map(|a| f64::from_bits(a.into_inner())).collect();
        Ok((neighbors, reduce_member_distances(self.clusters(), distances)?))
    }
}
