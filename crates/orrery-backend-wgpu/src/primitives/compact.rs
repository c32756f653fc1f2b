//! Stream compaction, reduce-then-scan (`shaders/core/scan.wgsl`), plain or counted.

use orrery_core::Result;

use super::scan::{COUNTED, TOTAL_AT_N};
use super::{Arg, Params, blocks, count};
use crate::context::{Recorder, Scratch};
use crate::shaders::{SCAN, SCAN_TILE};

/// Copies the `input[i]` with `flags[i] != 0` (i < n, n = the bound or `min(slot,
/// bound)`), in order, to the front of `output` and writes their number to `count[0]`.
/// `elem` is a positive multiple of 4 bytes.
pub(crate) fn compact(
    rec: &mut Recorder<'_>,
    elem: usize,
    input: Arg<'_>,
    flags: Arg<'_>,
    slot: Option<Arg<'_>>,
    output: Arg<'_>,
    count_out: Arg<'_>,
) -> Result<()> {
    let bound = count((flags.len / 4) as usize, "compaction input")?;
    let tiles = bound.div_ceil(SCAN_TILE);
    let partials = rec.scratch(Scratch::ScanPartials, u64::from(tiles.max(1)) * 4)?;
    let partials = Arg::whole(&partials);
    let mode = if slot.is_some() { COUNTED } else { 0 };
    // Uncounted: the flags stand in for the slot (bound read-only, never used).
    let slot = slot.unwrap_or(flags);
    if tiles > 0 {
        let reduce = rec.pipeline(SCAN, &[], "compact_reduce")?;
        rec.dispatch(&reduce, &[flags, partials, slot], &Params::new().u32(bound).u32(tiles).u32(mode), blocks(tiles))?;
    }
    let middle = rec.pipeline(SCAN, &[], "scan_partials")?;
    debug_assert_eq!(mode & TOTAL_AT_N, 0);
    rec.dispatch(&middle, &[partials, count_out, slot], &Params::new().u32(bound).u32(mode), blocks(1))?;
    if tiles > 0 {
        let entry = match elem {
            4 => "compact_scatter_32",
            8 => "compact_scatter_64",
            _ => "compact_scatter_words",
        };
        let scatter = rec.pipeline(SCAN, &[], entry)?;
        let params = Params::new().u32(bound).u32(tiles).u32(mode).u32((elem / 4) as u32);
        rec.dispatch(&scatter, &[input, flags, partials.read_only(), output, slot], &params, blocks(tiles))?;
    }
    Ok(())
}
