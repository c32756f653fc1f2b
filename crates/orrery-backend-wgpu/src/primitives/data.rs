//! copy, fill, iota, gather, scatter, indirect-launch arguments (`shaders/core/data.wgsl`).

use std::sync::Arc;

use orrery_core::Result;

use super::{Arg, Params, blocks, count, per_element};
use crate::context::Recorder;
use crate::shaders::DATA;

/// How a copy runs: which kernel of `core/data`, or the encoder's
/// `copy_buffer_to_buffer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CopyPath {
    /// `copy_128`: one `vec4<u32>` per invocation (offsets and length multiples of 16).
    Vec4,
    /// `copy_32`: one `u32` per invocation (offsets and length multiples of 4).
    Word,
    /// `copy_buffer_to_buffer`, for what a dispatch cannot do (see [`copy_path`]).
    Encoder,
}

/// The path of a copy of `len` bytes from byte `src_offset` of one allocation to byte
/// `dst_offset` of another (`same_allocation`: of the same one); `storage`: both
/// allocations may be bound as storage.
///
/// The kernels are 1.8x (`copy_32`) and 5x (`copy_128`) as fast as
/// `copy_buffer_to_buffer` on the H200's Vulkan driver (1 GiB: 0.926 and 0.504 ms
/// against 2.526 ms, `examples/wgpu_probe.rs`). `copy_128` binds `vec4<u32>` arrays, so
/// a view must start at a 16-byte multiple for its element offset (the `off_*` field,
/// in vec4 units, after binding at the device's storage alignment) to be whole; the
/// length must be one too. The encoder copies what is not 4-byte aligned (never, for
/// GPU buffers: element sizes are multiples of 4, `check_gpu_storage`; wgpu's copy then
/// refuses it too), copies within one allocation (a dispatch may not bind one buffer as
/// both read-only and read-write storage), buffers that are not storage buffers, and
/// counts past `u32::MAX` units.
pub(crate) fn copy_path(src_offset: u64, dst_offset: u64, len: u64, same_allocation: bool, storage: bool) -> CopyPath {
    let aligned =
        |unit: u64| src_offset.is_multiple_of(unit) && dst_offset.is_multiple_of(unit) && len.is_multiple_of(unit);
    let fits = |unit: u64| u32::try_from(len / unit).is_ok();
    if same_allocation || !storage {
        CopyPath::Encoder
    } else if aligned(16) && fits(16) {
        CopyPath::Vec4
    } else if aligned(4) && fits(4) {
        CopyPath::Word
    } else {
        CopyPath::Encoder
    }
}

/// `dst[0..src.len] = src` (bytes; a no-op for 0 bytes), through `copy_128` or `copy_32`
/// where [`copy_path`] allows, else the encoder's copy.
///
/// # Errors
/// [`orrery_core::Error::LengthMismatch`] when `dst` is shorter than `src`; pipeline
/// compilation.
pub(crate) fn copy(rec: &mut Recorder<'_>, src: Arg<'_>, dst: Arg<'_>) -> Result<()> {
    orrery_core::executor::check_range("copy destination", dst.len as usize, 0, src.len as usize)?;
    if src.len == 0 {
        return Ok(());
    }
    let dst = dst.with_len(src.len);
    let same = Arc::ptr_eq(src.buf, dst.buf);
    let storage =
        src.buf.usage().contains(wgpu::BufferUsages::STORAGE) && dst.buf.usage().contains(wgpu::BufferUsages::STORAGE);
    let (entry, unit) = match copy_path(src.offset, dst.offset, src.len, same, storage) {
        CopyPath::Vec4 => ("copy_128", 16),
        CopyPath::Word => ("copy_32", 4),
        CopyPath::Encoder => return rec.copy_buffer(src, dst),
    };
    let n = count((src.len / unit) as usize, "copy units")?;
    let pipeline = rec.pipeline(DATA, &[], entry)?;
    rec.dispatch(&pipeline, &[src.read_only(), dst], &Params::new().u32(n), blocks(per_element(n)))
}

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

#[cfg(test)]
mod tests {
    use super::{CopyPath, copy_path};

    #[test]
    fn copies_take_vec4_words_only_when_offsets_and_length_allow() {
        assert_eq!(copy_path(0, 0, 16, false, true), CopyPath::Vec4);
        assert_eq!(copy_path(16, 4096, 1 << 30, false, true), CopyPath::Vec4);
        // One offset or the length off the 16-byte grid: words.
        assert_eq!(copy_path(4, 0, 16, false, true), CopyPath::Word);
        assert_eq!(copy_path(0, 8, 16, false, true), CopyPath::Word);
        assert_eq!(copy_path(0, 0, 12, false, true), CopyPath::Word);
        assert_eq!(copy_path(12, 20, 4, false, true), CopyPath::Word);
        // Not 4-byte aligned, one allocation, not storage: the encoder.
        assert_eq!(copy_path(2, 0, 16, false, true), CopyPath::Encoder);
        assert_eq!(copy_path(0, 0, 6, false, true), CopyPath::Encoder);
        assert_eq!(copy_path(0, 64, 16, true, true), CopyPath::Encoder);
        assert_eq!(copy_path(0, 0, 16, false, false), CopyPath::Encoder);
        // Counts past u32::MAX units.
        assert_eq!(copy_path(0, 0, 16 << 32, false, true), CopyPath::Encoder);
        assert_eq!(copy_path(0, 0, (1 << 34) + 4, false, true), CopyPath::Encoder);
        assert_eq!(copy_path(0, 0, 1 << 34, false, true), CopyPath::Vec4);
    }
}
