//! [`GpuExecutor`] for [`WgpuExecutor`]: launching the WGSL half of a [`KernelSource`].
//!
//! The binding convention is orrery-core's ([`orrery_core::gpu`]): buffer `i` is
//! `@group(0) @binding(i)`, the scalars are one uniform struct at binding `buffers`,
//! `override WORKGROUP_SIZE: u32;` is set to [`Launch::threads`], and grids of more than
//! `max_compute_workgroups_per_dimension` (65535 on most adapters) blocks are spread over
//! a 2D dispatch, so kernels compute `wid.x + wid.y * num_workgroups.x` and return past
//! their block count.
//!
//! What this executor adds:
//! - The WGSL is preprocessed ([`crate::preprocess`]): `//#if SUBGROUP` selects the
//!   subgroup path when the device runs subgroups, and `//#include core/common` or
//!   `core/wg_scan` splice the core snippets (`linear_block`, u64 helpers, a workgroup
//!   scan with both paths).
//! - Scalars are placed at the offsets naga reflects for the struct's members, so
//!   alignment padding (a `vec2<u32>` after a `u32`) needs no care from the caller, and
//!   a count or width mismatch is an [`Error::InvalidArgument`] instead of garbage.
//! - Bindings the entry point does not use are skipped; a binding it uses but that was
//!   not passed is an error before anything reaches the device.
//! - Workgroup memory is zero-initialised as WGSL promises (the core primitives, which
//!   never read it before writing, skip that).

use orrery_core::gpu::{GpuExecutor, KernelArg, KernelSource, Launch, Scalar};
use orrery_core::{Element, Error, Result};

use crate::buffer::{WgpuBuffer, WgpuRawBuffer};
use crate::executor::WgpuExecutor;
use crate::pipeline_cache::BindingKind;

/// The bytes of one scalar and their width.
fn scalar_bytes(s: Scalar) -> ([u8; 8], usize) {
    let mut b = [0u8; 8];
    match s {
        Scalar::U32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
        Scalar::I32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
        Scalar::F32(v) => b[..4].copy_from_slice(&v.to_le_bytes()),
        Scalar::U64(v) => return (v.to_le_bytes(), 8),
        Scalar::F64(v) => return (v.to_le_bytes(), 8),
    }
    (b, 4)
}

/// Packs scalars at the reflected member offsets of the kernel's parameter struct.
fn pack_scalars(label: &str, scalars: &[Scalar], members: &[(u32, u32)], size: u64) -> Result<Vec<u8>> {
    if scalars.len() != members.len() {
        return Err(Error::InvalidArgument {
            what: "kernel scalars",
            reason: format!("{label} takes {} scalar(s), {} were given", members.len(), scalars.len()),
        });
    }
    let mut out = vec![0u8; size as usize];
    for (i, (&s, &(offset, width))) in scalars.iter().zip(members).enumerate() {
        let (bytes, len) = scalar_bytes(s);
        if len != width as usize {
            return Err(Error::InvalidArgument {
                what: "kernel scalars",
                reason: format!("{label}: scalar {i} is {s:?} ({len} bytes) but the kernel's field is {width} bytes"),
            });
        }
        out[offset as usize..offset as usize + len].copy_from_slice(&bytes[..len]);
    }
    Ok(out)
}

impl GpuExecutor for WgpuExecutor {
    type RawBuffer = WgpuRawBuffer;

    fn raw<T: Element>(buf: &WgpuBuffer<T>) -> &WgpuRawBuffer {
        &buf.raw
    }

    fn prepare(&self, source: &KernelSource) -> Result<()> {
        self.ctx.prepare_module(source.name, source.wgsl)
    }

    fn launch(&self, source: &KernelSource, entry: &str, launch: Launch, args: &[KernelArg<'_, Self>]) -> Result<()> {
        let max_threads = self.ctx.limits.max_compute_invocations_per_workgroup;
        if launch.threads == 0 || launch.threads > max_threads {
            return Err(Error::InvalidArgument {
                what: "launch threads",
                reason: format!("{} threads per block; the device allows 1..={max_threads}", launch.threads),
            });
        }
        let mut buffers = Vec::new();
        let mut scalars = Vec::new();
        for (i, arg) in args.iter().enumerate() {
            match arg {
                KernelArg::Buffer(b) if scalars.is_empty() => buffers.push(&b.buffer),
                KernelArg::Buffer(_) => {
                    return Err(Error::InvalidArgument {
                        what: "kernel arguments",
                        reason: format!("argument {i} is a buffer after a scalar: buffers come first"),
                    });
                }
                KernelArg::Scalar(s) => scalars.push(*s),
            }
        }
        let pipeline = self.ctx.pipeline(source.name, source.wgsl, &[], entry, launch.threads, false)?;
        let params_binding = buffers.len() as u32;
        let params = match pipeline.bindings.bindings.iter().find(|(b, _)| *b == params_binding) {
            Some((_, BindingKind::Uniform { size, members })) => {
                pack_scalars(&pipeline.label, &scalars, members, *size)?
            }
            _ if scalars.is_empty() => Vec::new(),
            _ => {
                return Err(Error::InvalidArgument {
                    what: "kernel scalars",
                    reason: format!(
                        "{} has no uniform at binding {params_binding} but {} scalar(s) were given",
                        pipeline.label,
                        scalars.len()
                    ),
                });
            }
        };
        self.ctx.recorder().dispatch(&pipeline, &buffers, &params, launch.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_land_at_reflected_offsets() {
        // struct { a: u32, b: vec2<u32>, c: f32 }: offsets 0, 8, 16; size 24.
        let members = [(0, 4), (8, 8), (16, 4)];
        let out =
            pack_scalars("k", &[Scalar::U32(7), Scalar::U64(0x1_0000_0002), Scalar::F32(1.0)], &members, 24).unwrap();
        assert_eq!(out.len(), 24);
        assert_eq!(&out[0..4], &7u32.to_le_bytes());
        assert_eq!(&out[8..16], &0x1_0000_0002u64.to_le_bytes());
        assert_eq!(&out[16..20], &1.0f32.to_le_bytes());
    }

    #[test]
    fn scalar_count_and_width_mismatches_are_errors() {
        let members = [(0, 4), (8, 8)];
        assert!(pack_scalars("k", &[Scalar::U32(1)], &members, 16).is_err());
        assert!(pack_scalars("k", &[Scalar::U32(1), Scalar::U32(2)], &members, 16).is_err());
    }
}
