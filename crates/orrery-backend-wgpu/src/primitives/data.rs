//! copy, fill, iota, gather, scatter (`shaders/core/data.wgsl`).

use orrery_core::Result;

use super::{Params, per_element};
use crate::context::Recorder;
use crate::shaders::DATA;

/// Entry name by element size.
fn sized(elem: usize, e32: &'static str, e64: &'static str) -> &'static str {
    if elem == 8 { e64 } else { e32 }
}

/// `buf[0..n] = value` for elements of `value.len()` (4 or 8) bytes. Zero values use
/// the encoder's clear, others `fill_32` / `fill_64`.
pub(crate) fn fill(rec: &mut Recorder<'_>, buf: &wgpu::Buffer, n: u32, value: &[u8]) -> Result<()> {
    let elem = value.len();
    if n == 0 {
        return Ok(());
    }
    if value.iter().all(|&b| b == 0) {
        rec.clear(buf, u64::from(n) * elem as u64);
        return Ok(());
    }
    let pipeline = rec.pipeline(DATA, &[], sized(elem, "fill_32", "fill_64"))?;
    let params = Params::new().u32(n).bytes(value, elem);
    rec.dispatch(&pipeline, &[buf], params.as_slice(), per_element(n))
}

/// `buf[i] = start + i` (wrapping).
pub(crate) fn iota(rec: &mut Recorder<'_>, buf: &wgpu::Buffer, n: u32, start: u32) -> Result<()> {
    let pipeline = rec.pipeline(DATA, &[], "iota")?;
    rec.dispatch(&pipeline, &[buf], Params::new().u32(n).u32(start).as_slice(), per_element(n))
}

/// `output[i] = input[indices[i]]` for `i < n`.
pub(crate) fn gather(
    rec: &mut Recorder<'_>,
    elem: usize,
    input: &wgpu::Buffer,
    indices: &wgpu::Buffer,
    output: &wgpu::Buffer,
    n: u32,
) -> Result<()> {
    let pipeline = rec.pipeline(DATA, &[], sized(elem, "gather_32", "gather_64"))?;
    rec.dispatch(&pipeline, &[input, indices, output], Params::new().u32(n).as_slice(), per_element(n))
}

/// `output[indices[i]] = input[i]` for `i < n`.
pub(crate) fn scatter(
    rec: &mut Recorder<'_>,
    elem: usize,
    input: &wgpu::Buffer,
    indices: &wgpu::Buffer,
    output: &wgpu::Buffer,
    n: u32,
) -> Result<()> {
    let pipeline = rec.pipeline(DATA, &[], sized(elem, "scatter_32", "scatter_64"))?;
    rec.dispatch(&pipeline, &[input, indices, output], Params::new().u32(n).as_slice(), per_element(n))
}
