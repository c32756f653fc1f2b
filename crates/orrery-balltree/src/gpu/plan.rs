//! The shape of a GPU build: which nodes each launch works on, computed once on the host
//! from the batch sizes alone (no coordinates) and uploaded once per batch layout.
//!
//! The build runs in two phases (see [`super`]):
//!
//! - **Global levels** `k = 0 .. K`: one sort of all points per level. Batch `b` splits
//!   its nodes at levels `k < k_b` and is *frozen* at `k >= k_b`: its depth-`k_b` nodes
//!   ride along as segments whose points only have to stay inside them. Level `k`'s
//!   *segments* are, batch after batch, the depth-`min(k, k_b)` nodes; they partition the
//!   positions `0..n` into runs in position order. `seg_starts` holds each segment's
//!   first position, `seg_active` whether it splits at this level.
//! - **Local phase**: every depth-`k_b` node of every batch is a subtree of `2^h_b`
//!   slots (`h_b = L_b + 1 - k_b`, at most `log2(local_slots)`), finished by one block:
//!   `nodes` lists `(first position, points, first slot)` per subtree, grouped by `h`,
//!   and `blocks` lists `(first node, nodes, h, base)` per block, each block holding at
//!   most `capacity / 2^h` subtrees of the same height; `base` is the running sum of the
//!   blocks' slots (`nodes << h`), where the block stages its coordinates.
//!
//! `k_b = max(0, L_b + 1 - log2(local_slots))`: with `local_slots = 2` the global phase
//! splits every internal node and the local phase only writes leaves (the baseline).
//!
//! The Select strategy's global levels select each node's median by radix-selection
//! rounds over the key (coordinate code, point index); the rounds depend only on the code
//! width and on `n`, so the plan holds them too ([`Plan::select_rounds`]).
//!
//! Node starts follow the recursion of [`crate::child_sizes`]: a node `[s, e)` has
//! children `[s, s + (e - s) / 2)` and `[s + (e - s) / 2, e)`. Host cost: one pass over
//! the segments of every level, `O(sum_k segments_k)` (about `2n` for the baseline, a few
//! per local block for the hybrid).

use orrery_core::Result;

use super::kernels::SELECT_BINS;
use crate::input::Batches;
use crate::layout::TreeLayout;

/// Blocks the local phase aims for: with fewer, subtrees are spread over more blocks
/// (fewer per block) so that small problems still fill the GPU (2 blocks on each of the
/// H200's 132 multiprocessors).
const TARGET_LOCAL_BLOCKS: usize = 264;

/// The segments of one global level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LevelShape {
    /// Offset of the level's entries in `seg_starts` / `seg_active`.
    pub offset: u32,
    /// Number of segments.
    pub segments: u32,
    /// Bits that hold a segment id (`0` for one segment).
    pub node_bits: u32,
}

/// The host-side plan of a build; see the [module docs](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The slot layout of the tree.
    pub layout: TreeLayout,
    /// The global levels, in order.
    pub levels: Vec<LevelShape>,
    /// First position of every segment, level after level.
    pub seg_starts: Vec<u32>,
    /// 1 where the segment splits at its level, 0 where it is frozen.
    pub seg_active: Vec<u32>,
    /// `(first position, points, first slot)` of every local subtree.
    pub nodes: Vec<u32>,
    /// `(first node, nodes, h, base)` of every local block.
    pub blocks: Vec<u32>,
    /// Slots of all local blocks together (the sum of `nodes << h`).
    pub staged_slots: usize,
    /// The most segments of any level.
    pub max_segments: usize,
    /// The rounds of the radix selection for 32-bit (f32) and 64-bit (f64) coordinate
    /// codes; see [`Plan::select_rounds`].
    select_rounds: [Vec<[u32; 3]>; 2],
}

/// Starts of the children of the nodes with `starts` (the last one ending at `end`).
fn children(starts: &[u32], end: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(starts.len() * 2);
    for (j, &s) in starts.iter().enumerate() {
        let e = starts.get(j + 1).copied().unwrap_or(end);
        out.push(s);
        out.push(s + (e - s) / 2);
    }
    out
}

/// Bits needed for ids `0..count`.
fn bits_for(count: usize) -> u32 {
    if count <= 1 { 0 } else { usize::BITS - (count - 1).leading_zeros() }
}

/// The rounds of the radix selection, most significant digit first: `(part, shift,
/// width)` with part 0 the coordinate code (`code_bits` wide) and part 1 the point index
/// (`index_bits` wide).
fn select_rounds(code_bits: u32, index_bits: u32) -> Vec<[u32; 3]> {
    let digit = SELECT_BINS.trailing_zeros();
    let mut rounds = Vec::new();
    for (part, bits) in [(0, code_bits), (1, index_bits)] {
        let mut left = bits;
        while left > 0 {
            let width = left.min(digit);
            left -= width;
            rounds.push([part, left, width]);
        }
    }
    rounds
}

impl Plan {
    /// The plan for `batches` with local subtrees of at most `local_slots` slots and local
    /// blocks of `capacity` slots (both powers of two, `2 <= local_slots <= capacity`).
    ///
    /// # Errors
    /// As [`TreeLayout::new`].
    pub fn new(batches: &Batches, local_slots: u32, capacity: u32) -> Result<Self> {
        debug_assert!(local_slots.is_power_of_two() && capacity.is_power_of_two());
        debug_assert!((2..=capacity).contains(&local_slots));
        let layout = TreeLayout::new(batches)?;
        let offsets = batches.offsets();
        let slot_offsets = layout.slot_offsets();
        let depths = layout.depths();
        let local_log = local_slots.trailing_zeros();
        let stops: Vec<u32> = depths.iter().map(|&l| (l + 1).saturating_sub(local_log)).collect();
        let global_levels = stops.iter().copied().max().unwrap_or(0);

        let mut current: Vec<Vec<u32>> = offsets[..offsets.len() - 1].iter().map(|&o| vec![o]).collect();
        let (mut levels, mut seg_starts, mut seg_active) = (Vec::new(), Vec::new(), Vec::new());
        let mut max_segments = 0;
        for k in 0..global_levels {
            let offset = seg_starts.len();
            for (b, starts) in current.iter().enumerate() {
                seg_starts.extend_from_slice(starts);
                seg_active.resize(seg_starts.len(), u32::from(k < stops[b]));
            }
            let segments = seg_starts.len() - offset;
            max_segments = max_segments.max(segments);
            levels.push(LevelShape { offset: offset as u32, segments: segments as u32, node_bits: bits_for(segments) });
            for (b, starts) in current.iter_mut().enumerate() {
                if k < stops[b] {
                    *starts = children(starts, offsets[b + 1]);
                }
            }
        }

        // Local subtrees, grouped by height.
        let cap_log = capacity.trailing_zeros();
        let mut by_height: Vec<Vec<[u32; 3]>> = vec![Vec::new(); cap_log as usize + 1];
        for (b, starts) in current.iter().enumerate() {
            let h = depths[b] + 1 - stops[b];
            for (j, &s) in starts.iter().enumerate() {
                let e = starts.get(j + 1).copied().unwrap_or(offsets[b + 1]);
                by_height[h as usize].push([s, e - s, slot_offsets[b] + ((j as u32) << h)]);
            }
        }
        let total_nodes: usize = by_height.iter().map(Vec::len).sum();
        let (mut nodes, mut blocks) = (Vec::with_capacity(total_nodes * 3), Vec::new());
        let mut staged_slots = 0usize;
        for (h, list) in by_height.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            // Subtrees per block: as many as fit, fewer while the phase has too few blocks.
            let mut per = (capacity >> h).max(1) as usize;
            while per > 1 && total_nodes.div_ceil(per) < TARGET_LOCAL_BLOCKS {
                per /= 2;
            }
            for chunk in list.chunks(per) {
                blocks.extend_from_slice(&[
                    (nodes.len() / 3) as u32,
                    chunk.len() as u32,
                    h as u32,
                    staged_slots as u32,
                ]);
                staged_slots += chunk.len() << h;
                for node in chunk {
                    nodes.extend_from_slice(node);
                }
            }
        }
        let n = batches.num_points();
        let index_bits = usize::BITS - (n.max(2) - 1).leading_zeros();
        let select_rounds = [select_rounds(32, index_bits), select_rounds(64, index_bits)];
        Ok(Self { layout, levels, seg_starts, seg_active, nodes, blocks, staged_slots, max_segments, select_rounds })
    }

    /// Number of local blocks.
    pub fn num_blocks(&self) -> usize {
        self.blocks.len() / 4
    }

    /// The rounds of the radix selection (`(part, shift, width)`, as [`select_rounds`]) for
    /// coordinate codes of `code_words` 32-bit words (1 for f32, 2 for f64) and the point
    /// indices of this plan's `n` points.
    pub fn select_rounds(&self, code_words: usize) -> &[[u32; 3]] {
        &self.select_rounds[code_words - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(offsets: &[u32], local: u32, cap: u32) -> Plan {
        Plan::new(&Batches::from_offsets(offsets).unwrap(), local, cap).unwrap()
    }

    #[test]
    fn baseline_splits_every_internal_node_and_leaves_leaves_to_the_local_phase() {
        // Batches of 5 (L = 2) and 2 (L = 0) points.
        let p = plan(&[0, 5, 7], 2, 8);
        assert_eq!(p.levels.len(), 2);
        // Level 0: root of batch 0 (active), batch 1 frozen.
        assert_eq!(&p.seg_starts[..2], &[0, 5]);
        assert_eq!(&p.seg_active[..2], &[1, 0]);
        // Level 1: the two depth-1 nodes of batch 0 (2 | 3), batch 1 frozen.
        assert_eq!(&p.seg_starts[2..], &[0, 2, 5]);
        assert_eq!(&p.seg_active[2..], &[1, 1, 0]);
        assert_eq!(p.levels[1], LevelShape { offset: 2, segments: 3, node_bits: 2 });
        // Leaves: batch 0's depth-2 nodes [0,1) [1,2) [2,3) [3,5) at slots 0, 2, 4, 6;
        // batch 1's root at slot 8. All h = 1.
        assert_eq!(p.nodes, vec![0, 1, 0, 1, 1, 2, 2, 1, 4, 3, 2, 6, 5, 2, 8]);
        assert!(p.blocks.chunks(4).all(|b| b[2] == 1));
        assert_eq!(p.blocks.chunks(4).map(|b| b[1]).sum::<u32>(), 5);
        assert_eq!(p.staged_slots, 10);
    }

    #[test]
    fn hybrid_stops_where_subtrees_fit_a_block() {
        // One batch of 100 points: L = 6, 128 slots; local subtrees of 32 slots: k = 2.
        let p = plan(&[0, 100], 32, 64);
        assert_eq!(p.levels.len(), 2);
        assert_eq!(p.seg_starts, vec![0, 0, 50]);
        assert_eq!(p.nodes, vec![0, 25, 0, 25, 25, 32, 50, 25, 64, 75, 25, 96]);
        // Four subtrees of h = 5; too few to fill the GPU, so one per block.
        assert_eq!(p.blocks, vec![0, 1, 5, 0, 1, 1, 5, 32, 2, 1, 5, 64, 3, 1, 5, 96]);
    }

    #[test]
    fn small_batches_need_no_global_level() {
        let p = plan(&[0, 1, 3, 20], 2048, 2048);
        assert!(p.levels.is_empty() && p.seg_starts.is_empty());
        // Heights 1 (n = 1 and n = 2) and 5 (n = 17: L = 4, 32 slots).
        assert_eq!(p.nodes, vec![0, 1, 0, 1, 2, 2, 3, 17, 4]);
        assert_eq!(p.blocks, vec![0, 1, 1, 0, 1, 1, 1, 2, 2, 1, 5, 4]);
    }

    #[test]
    fn select_rounds_cover_code_then_index_bits_from_the_top() {
        assert_eq!(select_rounds(32, 20), vec![[0, 21, 11], [0, 10, 11], [0, 0, 10], [1, 9, 11], [1, 0, 9]]);
        let rounds = select_rounds(64, 1);
        assert_eq!(rounds.len(), 7);
        assert_eq!(rounds.iter().filter(|r| r[0] == 0).map(|r| r[2]).sum::<u32>(), 64);
        assert_eq!(rounds.last(), Some(&[1, 0, 1]));
    }

    #[test]
    fn plans_hold_the_select_rounds_of_both_code_widths() {
        // 5097 points: 13 index bits; n = 1 still gets one index bit (n.max(2)).
        let p = plan(&[0, 1000, 5097], 1024, 1024);
        assert_eq!(p.select_rounds(1), select_rounds(32, 13).as_slice());
        assert_eq!(p.select_rounds(2), select_rounds(64, 13).as_slice());
        assert_eq!(plan(&[0, 1], 2, 8).select_rounds(1), select_rounds(32, 1).as_slice());
    }

    #[test]
    fn local_subtrees_cover_every_point_and_slot_once() {
        let offsets = [0u32, 1, 2, 3, 7, 100, 1000, 1001, 5097];
        for local in [2u32, 4, 64, 1024] {
            let p = plan(&offsets, local, 1024);
            let mut points = vec![0u32; 5097];
            let mut slots = vec![0u32; p.layout.num_slots()];
            let mut base = 0;
            for b in p.blocks.chunks(4) {
                let h = b[2];
                assert!(b[1] << h <= 1024);
                assert_eq!(b[3], base);
                base += b[1] << h;
                for node in p.nodes[b[0] as usize * 3..(b[0] + b[1]) as usize * 3].chunks(3) {
                    assert!(node[1] >= 1 && node[1] <= 1 << h && node[1] > (1 << h) / 4);
                    (node[0]..node[0] + node[1]).for_each(|i| points[i as usize] += 1);
                    (node[2]..node[2] + (1 << h)).for_each(|s| slots[s as usize] += 1);
                }
            }
            assert!(points.iter().all(|&c| c == 1), "local {local}");
            assert_eq!(base as usize, p.staged_slots);
            assert!(slots.iter().all(|&c| c == 1), "local {local}");
        }
    }
}
