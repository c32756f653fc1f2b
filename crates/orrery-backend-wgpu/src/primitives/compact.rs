//! Stream compaction, reduce-then-scan (`shaders/core/scan.wgsl`).

use orrery_core::Result;

use super::Params;
use crate::context::{Recorder, Scratch};
use crate::shaders::{SCAN, SCAN_TILE};

/// Copies the `input[i]` with `flags[i] != 0` (i < n), in order, to the front of
/// `output` and writes their number to `count[0]`. `elem` is 4 or 8 bytes.
pub(crate) fn compact(
    rec: &mut Recorder<'_>,
    elem: usize,
    input: &wgpu::Buffer,
    flags: &wgpu::Buffer,
    n: u32,
    output: &wgpu::Buffer,
    count: &wgpu::Buffer,
) -> Result<()> {
    let tiles = n.div_ceil(SCAN_TILE);
    let partials = rec.scratch(Scratch::ScanPartials, u64::from(tiles.max(1)) * 4)?;
    let tile_params = Params::new().u32(n).u32(tiles);
    if tiles > 0 {
        let reduce = rec.pipeline(SCAN, &[], "compact_reduce")?;
        rec.dispatch(&reduce, &[flags, &partials], tile_params.as_slice(), tiles)?;
    }
    let middle = rec.pipeline(SCAN, &[], "scan_partials")?;
    rec.dispatch(&middle, &[&partials, count], Params::new().u32(tiles).u32(0).as_slice(), 1)?;
    if tiles > 0 {
        let entry = if elem == 8 { "compact_scatter_64" } else { "compact_scatter_32" };
        let scatter = rec.pipeline(SCAN, &[], entry)?;
        rec.dispatch(&scatter, &[input, flags, &partials, output], tile_params.as_slice(), tiles)?;
    }
    Ok(())
}
