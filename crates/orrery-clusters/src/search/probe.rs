//! The list-probing engine behind the inverted file and the lattice search.
//!
//! Per batch of [`QUERY_BATCH`] queries, three passes:
//!
//! 1. **Coarse**: per query the top-`nprobe` lists by the key of the query against the
//!    list centroids (the same [`TopK`], ties to the lower list).
//! 2. **Partial**: per (query, probed list) pair a sorted top-`k` over the list's
//!    members. With a side buffer (the fused search), every member scored also gets its
//!    distance to its list's centroid written at its row, once (a later writer would
//!    write the same bits; see [`crate::search::fused`]).
//! 3. **Merge**: per query [`merge_sorted`] of its `nprobe` partial lists.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::topk::{Candidate, TopK, merge_sorted};
use super::{Metric, Neighbors, QUERY_BATCH};
use crate::dist::l2;
use crate::input::Vectors;

/// Lists over vectors stored in list order.
pub(crate) struct Lists<'a> {
    /// The members, list after list.
    pub vectors: Vectors<'a>,
    /// CSR offsets of the lists over `vectors`.
    pub offsets: &'a [u32],
    /// The reported row of every position of `vectors` (`None`: the position itself).
    pub rows: Option<&'a [u32]>,
    /// The list centroids, `lists * dim`.
    pub centroids: &'a [f64],
}

impl Lists<'_> {
    fn centroid(&self, l: usize) -> &[f64] {
        let dim = self.vectors.dim();
        &self.centroids[l * dim..(l + 1) * dim]
    }
}

/// The probed lists of every query, best first (pass 1).
pub(crate) fn coarse(
    lists: &Lists<'_>,
    queries: &Vectors<'_>,
    range: std::ops::Range<usize>,
    nprobe: usize,
    metric: Metric,
) -> Vec<Vec<Candidate>> {
    let nlist = lists.offsets.len() - 1;
    range
        .into_par_iter()
        .map(|q| {
            let qv = queries.row(q);
            let mut top = TopK::new(nprobe);
            for l in 0..nlist {
                top.push(Candidate { key: metric.key(qv, lists.centroid(l)), row: l as u32 });
            }
            top.into_sorted()
        })
        .collect()
}

/// Searches `queries` through `nprobe` lists each (see the module docs).
pub(crate) fn probe_search(
    lists: &Lists<'_>,
    queries: &Vectors<'_>,
    k: usize,
    nprobe: usize,
    metric: Metric,
    side: Option<&[AtomicU64]>,
) -> Neighbors {
    let nq = queries.len();
    let mut out: Vec<Vec<Candidate>> = Vec::with_capacity(nq);
    let mut start = 0;
    while start < nq {
        let end = (start + QUERY_BATCH).min(nq);
        let probes = coarse(lists, queries, start..end, nprobe, metric);
        let partials: Vec<Vec<Candidate>> = (0..(end - start) * nprobe)
            .into_par_iter()
            .map(|p| {
                let (qi, j) = (p / nprobe, p % nprobe);
                let qv = queries.row(start + qi);
                let l = probes[qi][j].row as usize;
                let mut top = TopK::new(k);
                for pos in lists.offsets[l] as usize..lists.offsets[l + 1] as usize {
                    let x = lists.vectors.row(pos);
                    let row = lists.rows.map_or(pos as u32, |r| r[pos]);
                    top.push(Candidate { key: metric.key(qv, x), row });
                    if let Some(side) = side {
                        let slot = &side[row as usize];
                        if f64::from_bits(slot.load(Ordering::Relaxed)).is_nan() {
                            slot.store(l2(x, lists.centroid(l)).to_bits(), Ordering::Relaxed);
                        }
                    }
                }
                top.into_sorted()
            })
            .collect();
        let merged: Vec<Vec<Candidate>> = (0..end - start)
            .into_par_iter()
            .map(|qi| {
                let parts: Vec<&[Candidate]> =
                    partials[qi * nprobe..(qi + 1) * nprobe].iter().map(Vec::as_slice).collect();
                merge_sorted(&parts, k)
            })
            .collect();
        out.extend(merged);
        start = end;
    }
    Neighbors::from_lists(k, metric, &out)
}
