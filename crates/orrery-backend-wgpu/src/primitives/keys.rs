//! 64-bit 3D Morton and Hilbert keys of positions (`shaders/core/sfc.wgsl`).

use orrery_core::executor::unsupported;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{DType, Real, Result};

use super::{Arg, Params, blocks, count, per_element};
use crate::context::Recorder;
use crate::shaders::SFC;

/// The defines of `sfc.wgsl`: `F64` (its f64 entry point) where the adapter has
/// `SHADER_F64`.
pub(crate) fn sfc_defines(f64: bool) -> &'static [&'static str] {
    if f64 { &["F64"] } else { &[] }
}

/// `keys[i] = mapper.key_clamped(x[i], y[i], z[i])` for every key of the view.
///
/// # Errors
/// [`orrery_core::Error::Unsupported`] for f64 positions without `SHADER_F64`.
pub(crate) fn sfc_keys<T: Real>(
    rec: &mut Recorder<'_>,
    xyz: [Arg<'_>; 3],
    mapper: &KeyMapper<T, u64>,
    keys: Arg<'_>,
) -> Result<()> {
    let n = count((keys.len / 8) as usize, "positions")?;
    let f64 = T::DTYPE == DType::F64;
    if f64 && !rec.ctx.caps.f64 {
        return Err(unsupported(
            "wgpu",
            "SFC keys of f64 positions",
            &format!("adapter {} has no SHADER_F64 (or it was disabled)", rec.ctx.caps.adapter),
        ));
    }
    if n == 0 {
        return Ok(());
    }
    let pipeline =
        rec.pipeline(SFC, sfc_defines(rec.ctx.caps.f64), if f64 { "sfc_keys_f64" } else { "sfc_keys_f32" })?;
    let table = rec.ctx.hilbert_table()?;
    let curve = match mapper.curve() {
        Curve::Morton => 0,
        Curve::Hilbert => 1,
    };
    let min = mapper.bbox().min();
    let scale = mapper.scale();
    let mut params = Params::new().u32(n).u32(curve);
    for v in [min[0], min[1], min[2], scale[0], scale[1], scale[2]] {
        params = params.bytes(bytemuck::bytes_of(&v));
    }
    let table = Arg::whole(&table).read_only();
    rec.dispatch(&pipeline, &[xyz[0], xyz[1], xyz[2], keys, table], &params, blocks(per_element(n)))
}
