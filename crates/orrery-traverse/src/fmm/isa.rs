//! The FMM's two hot passes, M2L and the leaves (L2P and P2P), compiled once per
//! instruction-set level ([`CpuIsa`], ADR 0009) and picked at run time.
//!
//! The crate is built for the target's baseline (x86-64: SSE2, two f64 lanes). A
//! [`Level`] says which copy runs; the x86-64-v3 copy of each pass's per-node function
//! (`m2l_target_v3`, `leaf_forces_v3` in [`crate::fmm::evaluate`]) is compiled with
//! AVX2, and its callees on the hot path (the translation operators, their matrix passes
//! and shifts, the P2P block, L2P) are `#[inline(always)]`, so they are compiled into it
//! with the same features. A CPU with AVX-512 runs the v3 copy (v4 not measured).
//!
//! Every level computes the same bits: the copies differ in instruction selection, not
//! in arithmetic. No sum is reassociated anywhere (the register-blocked loops keep each
//! output's sum in input order), and Rust never contracts a multiply and an add into a
//! fused multiply-add, so a wider vector performs the same IEEE operations per lane.
//! `tests/traverse/fmm.rs` checks it on every level the test machine has.

use orrery_core::{CpuIsa, Error, Result};

/// The copy of the hot passes that runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Level {
    /// The baseline build.
    Baseline,
    /// x86-64-v3 (AVX2).
    X86_64V3,
}

impl Level {
    /// The copy for `isa`: the baseline, or v3 for v3 and v4.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a level the running CPU does not support.
    pub fn of(isa: CpuIsa) -> Result<Self> {
        if !isa.is_supported() {
            return Err(Error::InvalidArgument {
                what: "CPU instruction-set level",
                reason: format!("this CPU does not support {isa}"),
            });
        }
        Ok(match isa {
            CpuIsa::Baseline => Level::Baseline,
            CpuIsa::X86_64V3 | CpuIsa::X86_64V4 => Level::X86_64V3,
        })
    }

    /// The level's name (as [`CpuIsa`] spells it).
    pub fn isa(self) -> CpuIsa {
        match self {
            Level::Baseline => CpuIsa::Baseline,
            Level::X86_64V3 => CpuIsa::X86_64V3,
        }
    }
}
