//! Segmented (CSR) scan, reduction and top-k (`shaders/core/segmented.wgsl`), and the
//! argument helpers the search and histogram primitives share with them.
//!
//! Arguments are checked exactly as the CPU reference (`orrery_core`'s
//! `cpu/segmented.rs`) checks them, in the same order and with the same error variants;
//! offsets on the device are never read on the host (the kernels clamp them with
//! `segment_bounds`' rule).

use orrery_core::executor::unsupported;
use orrery_core::{DType, Element, Order, ReduceOp, Result, ScanKind, ViewMutOf, ViewOf};

use super::reduce::op_define;
use super::{Params, arg, arg_mut, count, per_element};
use crate::context::DispatchGrid;
use crate::executor::WgpuExecutor;
use crate::shaders::SEGMENTED;

/// The element-type defines of `search.wgsl` and `segmented.wgsl` (`W64` marks the
/// 8-byte types, read as `vec2<u32>`).
pub(super) fn type_defines<T: Element>() -> &'static [&'static str] {
    dtype_defines(T::DTYPE)
}

/// [`type_defines`] by element type.
pub(crate) fn dtype_defines(dtype: DType) -> &'static [&'static str] {
    match dtype {
        DType::U32 => &["T_U32"],
        DType::I32 => &["T_I32"],
        DType::F32 => &["T_F32"],
        DType::U64 => &["T_U64", "W64"],
        DType::I64 => &["T_I64", "W64"],
        DType::F64 => &["T_F64", "W64"],
    }
}

/// The defines of `segmented.wgsl`'s `segmented_reduce` for `dtype` and `op`.
pub(crate) fn segmented_reduce_defines(dtype: DType, op: ReduceOp) -> Vec<&'static str> {
    let mut defines = dtype_defines(dtype).to_vec();
    defines.push(op_define(op));
    defines
}

// The executor hands its views over by value (the signatures the trait methods call).
#[allow(clippy::needless_pass_by_value)]
impl WgpuExecutor {
    /// [`orrery_core::Executor::segmented_scan`]: `scan_orphans` zeroes the elements of
    /// no segment, `scan_segments` (one workgroup per segment) scans the others.
    pub(crate) fn segmented_scan_impl(
        &self,
        input: ViewOf<'_, Self, u32>,
        offsets: ViewOf<'_, Self, u32>,
        kind: ScanKind,
        output: ViewMutOf<'_, Self, u32>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_segmented_scan(input.len(), offsets.len(), output.len())?;
        let n = count(input.len(), "segmented scan input")?;
        let segments = count(segments, "segments")?;
        if n == 0 {
            return Ok(());
        }
        let inclusive = u32::from(kind == ScanKind::Inclusive);
        let params = Params::new().u32(segments).u32(n).u32(inclusive);
        let args = [arg(&input), arg(&offsets), arg_mut(&output)];
        let mut rec = self.ctx.recorder();
        let orphans = rec.pipeline(SEGMENTED, &["T_U32"], "scan_orphans")?;
        rec.dispatch(&orphans, &args, &params, DispatchGrid::Blocks(per_element(n)))?;
        let scan = rec.pipeline(SEGMENTED, &["T_U32"], "scan_segments")?;
        rec.dispatch(&scan, &args, &params, DispatchGrid::Blocks(segments))
    }

    /// [`orrery_core::Executor::segmented_reduce`]: one workgroup per segment.
    ///
    /// # Errors
    /// As the CPU's, then [`Error::Unsupported`] for f64 sums without `SHADER_F64` (f64
    /// Min/Max compare the words and run everywhere).
    pub(crate) fn segmented_reduce_impl<T: Element>(
        &self,
        input: ViewOf<'_, Self, T>,
        offsets: ViewOf<'_, Self, u32>,
        op: ReduceOp,
        output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_segmented_reduce(input.len(), offsets.len(), output.len())?;
        if T::DTYPE == DType::F64 && op == ReduceOp::Sum && !self.ctx.caps.f64 {
            return Err(unsupported(
                &orrery_core::Executor::name(self),
                "f64 segmented sum",
                &format!("adapter {} has no SHADER_F64 (or it was disabled)", self.ctx.caps.adapter),
            ));
        }
        let n = count(input.len(), "segmented reduction input")?;
        let segments = count(segments, "segments")?;
        if segments == 0 {
            return Ok(());
        }
        let defines = segmented_reduce_defines(T::DTYPE, op);
        let identity = op.identity::<T>();
        let identity = bytemuck::bytes_of(&identity);
        let params = Params::new().u32(segments).u32(n).bytes(identity);
        let mut rec = self.ctx.recorder();
        let pipeline = rec.pipeline(SEGMENTED, &defines, "segmented_reduce")?;
        rec.dispatch(
            &pipeline,
            &[arg(&input), arg(&offsets), arg_mut(&output)],
            &params,
            DispatchGrid::Blocks(segments),
        )
    }

    /// [`orrery_core::Executor::segmented_top_k`]: one workgroup per segment (radix
    /// select, then a bitonic sort of the winners in workgroup memory). Every element
    /// type: keys are compared by order key, computed from the raw words.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn segmented_top_k_impl<T: Element>(
        &self,
        keys: ViewOf<'_, Self, T>,
        offsets: ViewOf<'_, Self, u32>,
        k: u32,
        order: Order,
        indices: ViewMutOf<'_, Self, u32>,
        top_keys: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        let segments = orrery_core::executor::check_top_k(keys.len(), offsets.len(), k, indices.len(), top_keys.len())?;
        let n = count(keys.len(), "top-k keys")?;
        count(segments * k as usize, "top-k slots")?;
        let segments = count(segments, "segments")?;
        if segments == 0 {
            return Ok(());
        }
        let pad = match order {
            Order::Smallest => T::HIGHEST,
            Order::Largest => T::LOWEST,
        };
        let pad = bytemuck::bytes_of(&pad);
        let largest = u32::from(order == Order::Largest);
        let params = Params::new().u32(segments).u32(n).u32(k).u32(largest).bytes(pad);
        let mut rec = self.ctx.recorder();
        let pipeline = rec.pipeline(SEGMENTED, type_defines::<T>(), "segmented_top_k")?;
        rec.dispatch(
            &pipeline,
            &[arg(&keys), arg(&offsets), arg_mut(&indices), arg_mut(&top_keys)],
            &params,
            DispatchGrid::Blocks(segments),
        )
    }
}
