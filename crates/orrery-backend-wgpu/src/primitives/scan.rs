//! Exclusive scan in CSR form, reduce-then-scan (`shaders/core/scan.wgsl`).

use orrery_core::Result;

use super::Params;
use crate::context::{Recorder, Scratch};
use crate::shaders::{SCAN, SCAN_TILE};

/// `output[0..=n]` = exclusive scan of `input[0..n]`, total at `output[n]`.
/// Three launches (one for `n = 0`, which writes `output[0] = 0`).
pub(crate) fn exclusive_scan(
    rec: &mut Recorder<'_>,
    input: &wgpu::Buffer,
    n: u32,
    output: &wgpu::Buffer,
) -> Result<()> {
    let tiles = n.div_ceil(SCAN_TILE);
    let partials = rec.scratch(Scratch::ScanPartials, u64::from(tiles.max(1)) * 4)?;
    let tile_params = Params::new().u32(n).u32(tiles);
    if tiles > 0 {
        let reduce = rec.pipeline(SCAN, &[], "scan_reduce")?;
        rec.dispatch(&reduce, &[input, &partials], tile_params.as_slice(), tiles)?;
    }
    let middle = rec.pipeline(SCAN, &[], "scan_partials")?;
    rec.dispatch(&middle, &[&partials, output], Params::new().u32(tiles).u32(n).as_slice(), 1)?;
    if tiles > 0 {
        let down = rec.pipeline(SCAN, &[], "scan_downsweep")?;
        rec.dispatch(&down, &[input, &partials, output], tile_params.as_slice(), tiles)?;
    }
    Ok(())
}
