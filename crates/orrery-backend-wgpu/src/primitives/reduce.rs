//! Reductions (`shaders/core/reduce.wgsl`).

use orrery_core::executor::unsupported;
use orrery_core::{DType, Element, ReduceOp, Result};

use super::{Arg, Params, blocks, count};
use crate::context::{Recorder, Scratch};
use crate::shaders::{REDUCE, REDUCE_TILE};

/// The element-type define of `reduce.wgsl`.
fn type_define(dtype: DType) -> &'static str {
    match dtype {
        DType::U32 => "T_U32",
        DType::I32 => "T_I32",
        DType::F32 => "T_F32",
        DType::U64 => "T_U64",
        DType::I64 => "T_I64",
        DType::F64 => "T_F64",
    }
}

/// The operation define of `reduce.wgsl` and `segmented.wgsl`.
pub(crate) fn op_define(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "OP_SUM",
        ReduceOp::Min => "OP_MIN",
        ReduceOp::Max => "OP_MAX",
    }
}

/// The defines `reduce.wgsl` is compiled with for `dtype` and `op` (`SUBGROUP` is added
/// by the executor): subgroup reductions (`SG_REDUCE`) only where the subgroup paths are
/// on and the result cannot depend on the order (32-bit integers).
pub(crate) fn reduce_defines(dtype: DType, op: ReduceOp, subgroups: bool) -> Vec<&'static str> {
    let mut defines = vec![type_define(dtype), op_define(op)];
    if subgroups && matches!(dtype, DType::U32 | DType::I32) {
        defines.push("SG_REDUCE");
    }
    defines
}

/// `output[0]` = reduction of `input` with `op` (the identity when it is empty).
///
/// # Errors
/// [`orrery_core::Error::Unsupported`] for f64 without `SHADER_F64`.
pub(crate) fn reduce<T: Element>(rec: &mut Recorder<'_>, input: Arg<'_>, op: ReduceOp, output: Arg<'_>) -> Result<()> {
    if T::DTYPE == DType::F64 && !rec.ctx.caps.f64 {
        return Err(unsupported(
            "wgpu",
            "f64 reduction",
            &format!("adapter {} has no SHADER_F64 (or it was disabled)", rec.ctx.caps.adapter),
        ));
    }
    let n = count((input.len / size_of::<T>() as u64) as usize, "reduce input")?;
    let defines = reduce_defines(T::DTYPE, op, rec.ctx.subgroups);
    let identity = op.identity::<T>();
    let identity = bytemuck::bytes_of(&identity);
    let tiles = n.div_ceil(REDUCE_TILE);
    let last = rec.pipeline(REDUCE, &defines, "reduce_final")?;
    if tiles == 0 {
        let params = Params::new().u32(0).u32(0).bytes(identity);
        return rec.dispatch(&last, &[input, output], &params, blocks(1));
    }
    let partials = rec.scratch(Scratch::ReducePartials, u64::from(tiles) * size_of::<T>() as u64)?;
    let first = rec.pipeline(REDUCE, &defines, "reduce_tiles")?;
    let params = Params::new().u32(n).u32(tiles).bytes(identity);
    rec.dispatch(&first, &[input, Arg::whole(&partials)], &params, blocks(tiles))?;
    let params = Params::new().u32(tiles).u32(1).bytes(identity);
    rec.dispatch(&last, &[Arg::whole(&partials).read_only(), output], &params, blocks(1))
}
