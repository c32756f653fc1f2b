//! Stable LSD radix sort of (u64 key, u32 value) pairs (`shaders/core/radix_sort.wgsl`).
//!
//! One pass per 8-bit digit of the requested bit range, the last digit narrower when
//! the range is not a multiple of 8 (`13..47` runs digits of 8, 8, 8, 8 and 2 bits). Each
//! pass is count, exclusive scan of the digit-major counts, scatter. Pairs ping-pong
//! between the caller's buffers and scratch; after an odd number of passes they are
//! copied back. Auxiliary memory: 12 bytes per pair plus 8 bytes per 1024-pair tile per
//! digit value (grown with headroom and kept by the executor).

use std::ops::Range;

use orrery_core::Result;

use super::{Params, scan};
use crate::context::{Recorder, Scratch};
use crate::shaders::{RADIX_SORT, SORT_DIGIT_BITS, SORT_TILE};

/// Sorts `(keys[i], values[i])`, `i < n`, by key bits `bits`, stably.
pub(crate) fn sort_pairs(
    rec: &mut Recorder<'_>,
    keys: &wgpu::Buffer,
    values: &wgpu::Buffer,
    n: u32,
    bits: Range<u32>,
) -> Result<()> {
    if n <= 1 || bits.is_empty() {
        return Ok(());
    }
    let tiles = n.div_ceil(SORT_TILE);
    let radix_max = 1u32 << SORT_DIGIT_BITS.min(bits.end - bits.start);
    let alt_keys = rec.scratch(Scratch::SortKeys, u64::from(n) * 8)?;
    let alt_values = rec.scratch(Scratch::SortValues, u64::from(n) * 4)?;
    let counts = rec.scratch(Scratch::SortCounts, u64::from(radix_max) * u64::from(tiles) * 4)?;
    let offsets = rec.scratch(Scratch::SortOffsets, (u64::from(radix_max) * u64::from(tiles) + 1) * 4)?;
    let count = rec.pipeline(RADIX_SORT, &[], "sort_count")?;
    let scatter = rec.pipeline(RADIX_SORT, &[], "sort_scatter")?;

    let (mut src_k, mut src_v, mut dst_k, mut dst_v) = (keys, values, &alt_keys, &alt_values);
    let mut shift = bits.start;
    let mut passes = 0u32;
    while shift < bits.end {
        let width = SORT_DIGIT_BITS.min(bits.end - shift);
        let params = Params::new().u32(n).u32(tiles).u32(shift).u32(width);
        rec.dispatch(&count, &[src_k, &counts], params.as_slice(), tiles)?;
        scan::exclusive_scan(rec, &counts, (1u32 << width) * tiles, &offsets)?;
        rec.dispatch(&scatter, &[src_k, src_v, &offsets, dst_k, dst_v], params.as_slice(), tiles)?;
        std::mem::swap(&mut src_k, &mut dst_k);
        std::mem::swap(&mut src_v, &mut dst_v);
        shift += width;
        passes += 1;
    }
    if passes % 2 == 1 {
        rec.copy(&alt_keys, 0, keys, 0, u64::from(n) * 8);
        rec.copy(&alt_values, 0, values, 0, u64::from(n) * 4);
    }
    Ok(())
}
