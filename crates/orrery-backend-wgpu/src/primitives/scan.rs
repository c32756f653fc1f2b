//! Prefix sums of u32, reduce-then-scan (`shaders/core/scan.wgsl`): exclusive in CSR
//! form, inclusive, plain or counted (the length read on the device).

use orrery_core::Result;

use super::{Arg, Params, blocks, count};
use crate::context::{Recorder, Scratch};
use crate::shaders::{SCAN, SCAN_TILE};

/// Mode bits of `scan.wgsl`.
pub(crate) const COUNTED: u32 = 1;
/// Inclusive downsweep.
pub(crate) const INCLUSIVE: u32 = 2;
/// The total goes to `total_out[n]` (else `total_out[0]`).
pub(crate) const TOTAL_AT_N: u32 = 4;
/// No total.
pub(crate) const NO_TOTAL: u32 = 8;

/// The scan of `input` (`bound` elements, or `min(slot, bound)` when `slot` is a count)
/// into `output`: exclusive in CSR form with the total at `output[n]`, or inclusive.
/// Three launches (one when `bound = 0`, which writes `output[0] = 0` for an exclusive
/// scan). The launches are sized for `bound` and return past the live tiles.
pub(crate) fn scan(
    rec: &mut Recorder<'_>,
    input: Arg<'_>,
    slot: Option<Arg<'_>>,
    output: Arg<'_>,
    inclusive: bool,
) -> Result<()> {
    let bound = count((input.len / 4) as usize, "scan input")?;
    let tiles = bound.div_ceil(SCAN_TILE);
    if inclusive && bound == 0 {
        return Ok(());
    }
    let partials = rec.scratch(Scratch::ScanPartials, u64::from(tiles.max(1)) * 4)?;
    let partials = Arg::whole(&partials);
    let dummy = rec.ctx.dummy.clone();
    let counted = slot.is_some();
    // Uncounted: the input stands in for the slot (bound read-only, never used).
    let slot = slot.unwrap_or(input);
    let mode = if counted { COUNTED } else { 0 };
    let tile_params = Params::new().u32(bound).u32(tiles).u32(mode);
    if tiles > 0 {
        let reduce = rec.pipeline(SCAN, &[], "scan_reduce")?;
        rec.dispatch(&reduce, &[input, partials, slot], &tile_params, blocks(tiles))?;
    }
    let middle = rec.pipeline(SCAN, &[], "scan_partials")?;
    let (total, total_mode) = if inclusive { (Arg::whole(&dummy), NO_TOTAL) } else { (output, TOTAL_AT_N) };
    rec.dispatch(&middle, &[partials, total, slot], &Params::new().u32(bound).u32(mode | total_mode), blocks(1))?;
    if tiles > 0 {
        let down = rec.pipeline(SCAN, &[], "scan_downsweep")?;
        let mode = mode | if inclusive { INCLUSIVE } else { 0 };
        let params = Params::new().u32(bound).u32(tiles).u32(mode);
        rec.dispatch(&down, &[input, partials.read_only(), output, slot], &params, blocks(tiles))?;
    }
    Ok(())
}
