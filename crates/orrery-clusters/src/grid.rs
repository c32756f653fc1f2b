//! Flat work grids over CSR clusters, and the index math that decodes them.
//!
//! Clusters of very different sizes (one of a million members beside ten thousand of
//! three) must share one launch per pass, and no work item may depend on the size of
//! the largest cluster. Both grids below number the work of *all* clusters
//! consecutively and find a work item's cluster by a binary search in a prefix sum, the
//! same math on the CPU (a rayon task per item) and on a GPU (a block per item):
//!
//! - [`ChunkGrid`]: per-member passes. Cluster `c` with `n_c` members has
//!   `ceil(n_c / chunk)` chunks; item `g` is chunk `g - P[c]` of the cluster `c` with
//!   `P[c] <= g < P[c + 1]`, `P` the exclusive prefix sum of the chunk counts. Empty
//!   clusters have no items.
//! - [`TileGrid`]: pairwise passes. Cluster `c` is cut into `T_c = ceil(n_c / tile)`
//!   row tiles and owns the `T_c^2` tile pairs `(ti, tj)`; item `g` is tile pair
//!   `l = g - Q[c]`, `ti = l / T_c`, `tj = l % T_c`, `Q` the exclusive prefix sum of
//!   `T_c^2` (in `u64`: a 1M-member cluster in tiles of 64 has 2.4e8 pairs). Passes
//!   over the upper triangle (`i < j`) skip the pairs with `ti > tj` and, on the
//!   diagonal, take `j > i` only; nothing of size `n_c^2` is ever stored.
//!
//! Reductions are deterministic: the CPU drivers of both grids fold each item (a chunk,
//! or a group of [`tile_group`] consecutive tile pairs) sequentially, then merge a
//! cluster's partials in item order. The partition into items depends only on the
//! offsets and the constants here, never on the thread count, so every result is one
//! fixed function of the input.

use std::ops::Range;

use rayon::prelude::*;

/// Members per item of the per-member passes: 4,096 rows of 1,024 `f32` dims (16 MB) is
/// several milliseconds of work, far above the cost of a rayon task, and a 1M-member
/// cluster still splits into 245 items.
pub const MEMBER_CHUNK: usize = 4096;

/// Rows per tile of the pairwise passes. Two tiles of 64 rows of 1,024 `f32` dims are
/// 512 KB, which stays in a core's L2 while the 4,096 distances of the pair are formed.
pub const PAIR_TILE: usize = 64;

/// Fewest tile pairs folded sequentially per work item of a pairwise reduction.
pub const TILE_GROUP: u64 = 16;

/// Most work items of one cluster in a pairwise reduction: a cluster of `P = T_c^2` tile
/// pairs is folded in groups of `max(TILE_GROUP, ceil(P / 4096))` consecutive pairs. A
/// 1M-member cluster (2.4e8 tile pairs) thus keeps 4,096 partials (8 MB of 256-bin
/// histograms) instead of 1.5e7 (31 GB), and still gives every thread thousands of
/// items. The group size is a function of the cluster's size only, never of the thread
/// count, so the floating-point merges stay reproducible.
pub const MAX_TILE_ITEMS: u64 = 4096;

/// Tile pairs per work item of a cluster with `pairs` tile pairs.
pub fn tile_group(pairs: u64) -> u64 {
    TILE_GROUP.max(pairs.div_ceil(MAX_TILE_ITEMS))
}

/// A decoded work item of a [`ChunkGrid`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The cluster.
    pub cluster: usize,
    /// Its rows (global row indices).
    pub rows: Range<usize>,
}

/// The flat grid of member chunks over all clusters (see the module docs).
#[derive(Debug, Clone)]
pub struct ChunkGrid<'a> {
    offsets: &'a [u32],
    chunk: usize,
    prefix: Vec<usize>,
}

impl<'a> ChunkGrid<'a> {
    /// The grid of `offsets` (validated CSR offsets, as [`crate::Clusters::offsets`])
    /// in chunks of `chunk` members.
    ///
    /// # Panics
    /// When `chunk == 0` or the offsets decrease.
    pub fn new(offsets: &'a [u32], chunk: usize) -> Self {
        assert!(chunk >= 1);
        let mut prefix = Vec::with_capacity(offsets.len());
        prefix.push(0);
        let mut total = 0usize;
        for w in offsets.windows(2) {
            total += ((w[1] - w[0]) as usize).div_ceil(chunk);
            prefix.push(total);
        }
        Self { offsets, chunk, prefix }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.prefix[self.prefix.len() - 1]
    }

    /// Whether there are no items (every cluster is empty).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The items of cluster `c`.
    ///
    /// # Panics
    /// When `c` is not a cluster.
    pub fn items_of(&self, c: usize) -> Range<usize> {
        self.prefix[c]..self.prefix[c + 1]
    }

    /// Item `g`: its cluster (by binary search in the prefix sum) and its rows.
    ///
    /// # Panics
    /// When `g >= self.len()`.
    pub fn decode(&self, g: usize) -> Chunk {
        let cluster = self.prefix.partition_point(|&p| p <= g) - 1;
        let start = self.offsets[cluster] as usize + (g - self.prefix[cluster]) * self.chunk;
        let end = (start + self.chunk).min(self.offsets[cluster + 1] as usize);
        Chunk { cluster, rows: start..end }
    }
}

/// A decoded tile pair of a [`TileGrid`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TilePair {
    /// The cluster.
    pub cluster: usize,
    /// Row tile index inside the cluster.
    pub ti: usize,
    /// Column tile index inside the cluster.
    pub tj: usize,
}

/// The flat grid of tile pairs over all clusters (see the module docs).
#[derive(Debug, Clone)]
pub struct TileGrid<'a> {
    offsets: &'a [u32],
    tile: usize,
    prefix: Vec<u64>,
}

impl<'a> TileGrid<'a> {
    /// The grid of `offsets` (validated CSR offsets, as [`crate::Clusters::offsets`])
    /// in tiles of `tile` rows.
    ///
    /// # Panics
    /// When `tile == 0` or the offsets decrease.
    pub fn new(offsets: &'a [u32], tile: usize) -> Self {
        assert!(tile >= 1);
        let mut prefix = Vec::with_capacity(offsets.len());
        prefix.push(0u64);
        let mut total = 0u64;
        for w in offsets.windows(2) {
            let t = ((w[1] - w[0]) as usize).div_ceil(tile) as u64;
            total += t * t;
            prefix.push(total);
        }
        Self { offsets, tile, prefix }
    }

    /// Number of tile pairs (the flat grid's length).
    pub fn len(&self) -> u64 {
        self.prefix[self.prefix.len() - 1]
    }

    /// Whether there are no tile pairs.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The exclusive prefix sum of `T_c^2` (`clusters + 1` entries).
    pub fn prefix(&self) -> &[u64] {
        &self.prefix
    }

    /// Row tiles of cluster `c`.
    ///
    /// # Panics
    /// When `c` is not a cluster.
    pub fn tiles_of(&self, c: usize) -> usize {
        ((self.offsets[c + 1] - self.offsets[c]) as usize).div_ceil(self.tile)
    }

    /// Tile pair `g`: the cluster with `Q[c] <= g < Q[c + 1]` (binary search), then
    /// `ti = l / T_c`, `tj = l % T_c` for `l = g - Q[c]`.
    ///
    /// # Panics
    /// When `g >= self.len()`.
    pub fn decode(&self, g: u64) -> TilePair {
        let cluster = self.prefix.partition_point(|&p| p <= g) - 1;
        let local = g - self.prefix[cluster];
        let t = self.tiles_of(cluster) as u64;
        TilePair { cluster, ti: (local / t) as usize, tj: (local % t) as usize }
    }

    /// The global rows of tile `t` of cluster `c`.
    ///
    /// # Panics
    /// When `c` is not a cluster.
    pub fn tile_rows(&self, c: usize, t: usize) -> Range<usize> {
        let start = self.offsets[c] as usize + t * self.tile;
        start..(start + self.tile).min(self.offsets[c + 1] as usize)
    }
}

/// Runs `kernel` over every item of `grid` in parallel (folding into a fresh
/// `identity()` per item) and merges each cluster's partials in item order; clusters
/// without items get `identity()`.
pub(crate) fn reduce_chunks<A, I, K, M>(grid: &ChunkGrid<'_>, identity: I, kernel: K, merge: M) -> Vec<A>
where
    A: Send + Sync,
    I: Fn() -> A + Sync,
    K: Fn(&Chunk, &mut A) + Sync,
    M: Fn(A, &A) -> A + Sync,
{
    let partials: Vec<A> = (0..grid.len())
        .into_par_iter()
        .map(|g| {
            let mut acc = identity();
            kernel(&grid.decode(g), &mut acc);
            acc
        })
        .collect();
    let clusters = grid.prefix.len() - 1;
    (0..clusters).into_par_iter().map(|c| partials[grid.items_of(c)].iter().fold(identity(), &merge)).collect()
}

/// Like [`reduce_chunks`], with `out` (one value per row, all rows) split into each
/// item's rows so the kernel can write per-member results.
pub(crate) fn reduce_chunks_write<A, T, I, K, M>(
    grid: &ChunkGrid<'_>,
    out: &mut [T],
    identity: I,
    kernel: K,
    merge: M,
) -> Vec<A>
where
    A: Send + Sync,
    T: Send,
    I: Fn() -> A + Sync,
    K: Fn(&Chunk, &mut [T], &mut A) + Sync,
    M: Fn(A, &A) -> A + Sync,
{
    let mut slices = Vec::with_capacity(grid.len());
    let mut rest = out;
    for g in 0..grid.len() {
        let chunk = grid.decode(g);
        let (head, tail) = rest.split_at_mut(chunk.rows.len());
        slices.push((chunk, head));
        rest = tail;
    }
    let partials: Vec<A> = slices
        .into_par_iter()
        .map(|(chunk, slice)| {
            let mut acc = identity();
            kernel(&chunk, slice, &mut acc);
            acc
        })
        .collect();
    let clusters = grid.prefix.len() - 1;
    (0..clusters).into_par_iter().map(|c| partials[grid.items_of(c)].iter().fold(identity(), &merge)).collect()
}

/// Runs `kernel` over every tile pair of `grid`: items are groups of [`tile_group`]
/// consecutive tile pairs of one cluster, folded sequentially in grid order; each
/// cluster's item partials are merged in order.
pub(crate) fn reduce_tiles<A, I, K, M>(grid: &TileGrid<'_>, identity: I, kernel: K, merge: M) -> Vec<A>
where
    A: Send + Sync,
    I: Fn() -> A + Sync,
    K: Fn(TilePair, &mut A) + Sync,
    M: Fn(A, &A) -> A + Sync,
{
    let clusters = grid.prefix.len() - 1;
    let mut items: Vec<Range<u64>> = Vec::new();
    let mut item_prefix = Vec::with_capacity(clusters + 1);
    item_prefix.push(0usize);
    for c in 0..clusters {
        let (start, end) = (grid.prefix[c], grid.prefix[c + 1]);
        let group = tile_group(end - start);
        let mut s = start;
        while s < end {
            let e = (s + group).min(end);
            items.push(s..e);
            s = e;
        }
        item_prefix.push(items.len());
    }
    let partials: Vec<A> = items
        .into_par_iter()
        .map(|range| {
            let mut acc = identity();
            for g in range {
                kernel(grid.decode(g), &mut acc);
            }
            acc
        })
        .collect();
    (0..clusters)
        .into_par_iter()
        .map(|c| partials[item_prefix[c]..item_prefix[c + 1]].iter().fold(identity(), &merge))
        .collect()
}

/// Calls `pair(i, j)` for every pair `i < j` of the tile pair `p` (rows are global;
/// tile pairs below the diagonal have none). `i` runs over the row tile, `j` over the
/// column tile, both ascending.
#[inline]
pub(crate) fn upper_pairs(grid: &TileGrid<'_>, p: TilePair, mut pair: impl FnMut(usize, usize)) {
    if p.ti > p.tj {
        return;
    }
    let rows = grid.tile_rows(p.cluster, p.ti);
    let cols = grid.tile_rows(p.cluster, p.tj);
    for i in rows {
        let start = if p.ti == p.tj { i + 1 } else { cols.start };
        for j in start..cols.end {
            pair(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_grid_covers_every_row_once_in_order() {
        let offsets = [0u32, 0, 5, 5, 6, 17];
        let grid = ChunkGrid::new(&offsets, 4);
        assert_eq!(grid.len(), 2 + 1 + 3);
        let rows: Vec<usize> = (0..grid.len()).flat_map(|g| grid.decode(g).rows).collect();
        assert_eq!(rows, (0..17).collect::<Vec<_>>());
        assert_eq!(grid.decode(2), Chunk { cluster: 3, rows: 5..6 });
        assert_eq!(grid.items_of(2), 2..2);
    }

    #[test]
    fn tile_grid_decodes_every_pair_of_tiles_once() {
        let offsets = [0u32, 3, 3, 10, 11];
        let grid = TileGrid::new(&offsets, 2);
        assert_eq!(grid.prefix(), &[0, 4, 4, 20, 21]);
        let mut seen = Vec::new();
        for g in 0..grid.len() {
            let p = grid.decode(g);
            seen.push((p.cluster, p.ti, p.tj));
        }
        let mut expected = Vec::new();
        for (c, t) in [(0usize, 2usize), (2, 4), (3, 1)] {
            for ti in 0..t {
                for tj in 0..t {
                    expected.push((c, ti, tj));
                }
            }
        }
        assert_eq!(seen, expected);
        let mut pairs = Vec::new();
        for g in 0..grid.len() {
            upper_pairs(&grid, grid.decode(g), |i, j| pairs.push((i, j)));
        }
        pairs.sort_unstable();
        let mut want = Vec::new();
        for (s, e) in [(0usize, 3usize), (3, 10), (10, 11)] {
            for i in s..e {
                for j in i + 1..e {
                    want.push((i, j));
                }
            }
        }
        assert_eq!(pairs, want);
    }

    #[test]
    fn large_clusters_fold_in_at_most_max_tile_items_groups() {
        assert_eq!((tile_group(1), tile_group(65_536), tile_group(65_537)), (16, 16, 17));
        assert_eq!(tile_group(15_625 * 15_625), 59_605); // a 1M-member cluster
        // 20,000 members: 313 tiles, 97,969 tile pairs in groups of 24.
        let offsets = [0u32, 3, 20_003, 20_003, 20_100];
        let grid = TileGrid::new(&offsets, PAIR_TILE);
        let counts = reduce_tiles(&grid, || (0u64, 0u64), |_, a| a.0 += 1, |a, b| (a.0 + b.0, a.1 + b.1 + 1));
        assert_eq!(counts.iter().map(|c| c.0).collect::<Vec<_>>(), [1, 313 * 313, 0, 4]);
        // The merge count (+1 per merged item) shows the number of items.
        assert_eq!(counts[1].1, 97_969u64.div_ceil(24));
    }
}
