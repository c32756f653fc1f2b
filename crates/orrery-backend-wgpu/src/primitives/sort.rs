//! Stable LSD radix sort of (u64 key, u32 value) pairs (`shaders/core/radix_sort.wgsl`).
//!
//! One pass per 8-bit digit of the requested bit range, the last digit narrower when
//! the range is not a multiple of 8 (`13..47` runs digits of 8, 8, 8, 8 and 2 bits). Each
//! pass is count, exclusive scan of the digit-major counts, scatter. Pairs ping-pong
//! between the caller's views and scratch; after an odd number of passes they are
//! copied back. Auxiliary memory: 12 bytes per pair plus 8 bytes per 1024-pair tile per
//! digit value (grown with headroom and kept by the executor; [`scratch_bytes`] is what
//! `reserve` grows it to).

use std::ops::Range;

use orrery_core::Result;

use super::{Arg, Params, blocks, count, scan};
use crate::context::{Recorder, Scratch};
use crate::shaders::{RADIX_SORT, SCAN_TILE, SORT_DIGIT_BITS, SORT_TILE};

/// The scratch a sort of `n` pairs uses, per slot (the inner scan's partials included).
pub(crate) fn scratch_bytes(n: u32) -> [(Scratch, u64); 5] {
    let tiles = u64::from(n.div_ceil(SORT_TILE));
    let digits = 1u64 << SORT_DIGIT_BITS;
    [
        (Scratch::SortKeys, u64::from(n) * 8),
        (Scratch::SortValues, u64::from(n) * 4),
        (Scratch::SortCounts, digits * tiles * 4),
        (Scratch::SortOffsets, (digits * tiles + 1) * 4),
        (Scratch::ScanPartials, (digits * tiles).div_ceil(u64::from(SCAN_TILE)).max(1) * 4),
    ]
}

/// Sorts `(keys[i], values[i])` by key bits `bits`, stably.
pub(crate) fn sort_pairs(rec: &mut Recorder<'_>, keys: Arg<'_>, values: Arg<'_>, bits: Range<u32>) -> Result<()> {
    let n = count((keys.len / 8) as usize, "sort keys")?;
    if n <= 1 || bits.is_empty() {
        return Ok(());
    }
    let tiles = n.div_ceil(SORT_TILE);
    let radix_max = 1u32 << SORT_DIGIT_BITS.min(bits.end - bits.start);
    let alt_keys = rec.scratch(Scratch::SortKeys, u64::from(n) * 8)?;
    let alt_values = rec.scratch(Scratch::SortValues, u64::from(n) * 4)?;
    let counts = rec.scratch(Scratch::SortCounts, u64::from(radix_max) * u64::from(tiles) * 4)?;
    let offsets = rec.scratch(Scratch::SortOffsets, (u64::from(radix_max) * u64::from(tiles) + 1) * 4)?;
    let count_pipeline = rec.pipeline(RADIX_SORT, &[], "sort_count")?;
    let scatter = rec.pipeline(RADIX_SORT, &[], "sort_scatter")?;

    let alt_k = Arg { buf: &alt_keys, offset: 0, len: keys.len, writable: true };
    let alt_v = Arg { buf: &alt_values, offset: 0, len: values.len, writable: true };
    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, alt_k, alt_v);
    let mut shift = bits.start;
    let mut passes = 0u32;
    while shift < bits.end {
        let width = SORT_DIGIT_BITS.min(bits.end - shift);
        let digits = (1u64 << width) * u64::from(tiles);
        let counts_arg = Arg { buf: &counts, offset: 0, len: digits * 4, writable: true };
        let offsets_arg = Arg { buf: &offsets, offset: 0, len: (digits + 1) * 4, writable: true };
        let params = Params::new().u32(n).u32(tiles).u32(shift).u32(width);
        rec.dispatch(&count_pipeline, &[src_k.read_only(), counts_arg], &params, blocks(tiles))?;
        scan::scan(rec, counts_arg.read_only(), None, offsets_arg, false)?;
        rec.dispatch(
            &scatter,
            &[src_k.read_only(), src_v.read_only(), offsets_arg.read_only(), dst_k, dst_v],
            &params,
            blocks(tiles),
        )?;
        std::mem::swap(&mut src_k, &mut dst_k);
        std::mem::swap(&mut src_v, &mut dst_v);
        shift += width;
        passes += 1;
    }
    if passes % 2 == 1 {
        super::data::copy(rec, alt_k, keys)?;
        super::data::copy(rec, alt_v, values)?;
    }
    Ok(())
}
