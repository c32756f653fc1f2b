//! Space-filling-curve keys: `kernels/core/sfc.cu`, bit-identical to
//! [`KeyMapper::key_clamped`](orrery_core::sfc::KeyMapper::key_clamped).
//!
//! The box minimum and the scale go to the kernel exactly as the host mapper holds them
//! (f32 or f64 by value), so the device repeats the host's quantisation operation for
//! operation.

use orrery_core::executor::check_sfc_keys;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{DType, Real, Result, ViewMutOf, ViewOf};

use super::blocks;
use crate::CudaExecutor;
use crate::kernels::SFC;
use crate::launch::Arg;

impl CudaExecutor {
    pub(crate) fn sfc_keys_impl<T: Real>(
        &self,
        x: ViewOf<'_, Self, T>,
        y: ViewOf<'_, Self, T>,
        z: ViewOf<'_, Self, T>,
        mapper: &KeyMapper<T, u64>,
        keys: ViewMutOf<'_, Self, u64>,
    ) -> Result<()> {
        let n = x.len();
        check_sfc_keys(n, y.len(), z.len(), keys.len())?;
        if n == 0 {
            return Ok(());
        }
        let double = T::DTYPE == DType::F64;
        let entry = match (mapper.curve(), double, self.policy.hilbert_levels) {
            (Curve::Morton, false, _) => "sfc_morton_f32",
            (Curve::Morton, true, _) => "sfc_morton_f64",
            (Curve::Hilbert, false, 1) => "sfc_hilbert1_f32",
            (Curve::Hilbert, true, 1) => "sfc_hilbert1_f64",
            (Curve::Hilbert, false, _) => "sfc_hilbert3_f32",
            (Curve::Hilbert, true, _) => "sfc_hilbert3_f64",
        };
        // T is f32 exactly when !double, so the f32 conversion below is exact.
        let scalar = |v: T| {
            let w: f64 = v.into();
            if double { Arg::F64(w) } else { Arg::F32(w as f32) }
        };
        let lo = mapper.bbox().min();
        let s = mapper.scale();
        let p = self.policy;
        let grid = blocks(n, p.sfc_threads * p.sfc_items).min(self.ctx.sm_count * p.sfc_blocks_per_sm).max(1);
        self.launch_entry(
            &SFC,
            entry,
            grid,
            p.sfc_threads,
            &[
                Arg::view(x),
                Arg::view(y),
                Arg::view(z),
                Arg::view_mut(&keys),
                Arg::U64(n as u64),
                scalar(lo.x),
                scalar(lo.y),
                scalar(lo.z),
                scalar(s[0]),
                scalar(s[1]),
                scalar(s[2]),
            ],
        )
    }
}
