//! fill, iota, gather, scatter, indirect-launch arguments (`shaders/core/data.wgsl`).
//! `copy` is an encoder copy ([`crate::context::Recorder::copy`]).

use orrery_core::Result;

use super::{Arg, Params, blocks, count, per_element};
use crate::context::Recorder;
use crate::shaders::DATA;

/// Words per launch of `fill_words` (the size of its value array).
const FILL_WORDS: usize = 16;

/// `dst[0..n] = value` for elements of `value.len()` bytes (a positive multiple of 4).
/// Zero values use the encoder's clear, 4- and 8-byte values `fill_32` / `fill_64`,
/// others `fill_words` (one launch per 16 words of the element).
pub(crate) fn fill(rec: &mut Recorder<'_>, dst: Arg<'_>, value: &[u8]) -> Result<()> {
    let elem = value.len() as u64;
    let n = count((dst.len / elem) as usize, "elements")?;
    if n == 0 {
        return Ok(());
    }
    if value.iter().all(|&b| b == 0) {
        rec.clear(dst);
        return Ok(());
    }
    match elem {
        4 | 8 => {
            let pipeline = rec.pipeline(DATA, &[], if elem == 8 { "fill_64" } else { "fill_32" })?;
            rec.dispatch(&pipeline, &[dst], &Params::new().u32(n).bytes(value), blocks(per_element(n)))
        }
        _ => {
            let words = value.len() / 4;
            let n_words = count(n as usize * words, "fill words")?;
            let pipeline = rec.pipeline(DATA, &[], "fill_words")?;
            let value: &[u32] = &bytemuck::pod_collect_to_vec(value);
            for first in (0..words).step_by(FILL_WORDS) {
                let mut chunk = [0u32; FILL_WORDS];
                let end = (first + FILL_WORDS).min(words);
                chunk[..end - first].copy_from_slice(&value[first..end]);
                let params =
                    Params::new().u32(n_words).u32(words as u32).u32(first as u32).bytes(bytemuck::cast_slice(&chunk));
                rec.dispatch(&pipeline, &[dst], &params, blocks(per_element(n_words)))?;
            }
            Ok(())
        }
    }
}

/// `dst[i] = start + i` (wrapping).
pub(crate) fn iota(rec: &mut Recorder<'_>, dst: Arg<'_>, start: u32) -> Result<()> {
    let n = count((dst.len / 4) as usize, "elements")?;
    let pipeline = rec.pipeline(DATA, &[], "iota")?;
    rec.dispatch(&pipeline, &[dst], &Params::new().u32(n).u32(start), blocks(per_element(n)))
}

/// `output[i] = input[indices[i]]` (`scatter == false`) or `output[indices[i]] =
/// input[i]`, for elements of `elem` bytes (a positive multiple of 4); indices outside
/// the indexed view read 0 (gather) or are skipped (scatter).
pub(crate) fn gather_scatter(
    rec: &mut Recorder<'_>,
    elem: usize,
    input: Arg<'_>,
    indices: Arg<'_>,
    output: Arg<'_>,
    scatter: bool,
) -> Result<()> {
    let n = count((indices.len / 4) as usize, "gather/scatter indices")?;
    let indexed = if scatter { output.len } else { input.len } / elem as u64;
    let len = count(indexed as usize, "gather/scatter elements")?;
    let args = [input, indices, output];
    match elem {
        4 | 8 => {
            let entry = match (scatter, elem) {
                (false, 4) => "gather_32",
                (false, _) => "gather_64",
                (true, 4) => "scatter_32",
                (true, _) => "scatter_64",
            };
            let pipeline = rec.pipeline(DATA, &[], entry)?;
            rec.dispatch(&pipeline, &args, &Params::new().u32(n).u32(len), blocks(per_element(n)))
        }
        _ => {
            let words = elem / 4;
            let total = count(n as usize * words, "gather/scatter words")?;
            let pipeline = rec.pipeline(DATA, &[], if scatter { "scatter_words" } else { "gather_words" })?;
            let params = Params::new().u32(n).u32(len).u32(words as u32);
            rec.dispatch(&pipeline, &args, &params, blocks(per_element(total)))
        }
    }
}

/// `args[0..4]` = the indirect-launch words for `ceil(min(slot, bound) / items_per_block)`
/// blocks (`orrery_core::gpu::indirect_words`, computed on the device).
pub(crate) fn indirect_args(
    rec: &mut Recorder<'_>,
    slot: Arg<'_>,
    bound: u32,
    items_per_block: u32,
    args: Arg<'_>,
) -> Result<()> {
    let max = rec.ctx.limits.max_compute_workgroups_per_dimension;
    let pipeline = rec.pipeline(DATA, &[], "indirect_args")?;
    let params = Params::new().u32(bound).u32(items_per_block).u32(max);
    rec.dispatch(&pipeline, &[slot, args], &params, blocks(1))
}
