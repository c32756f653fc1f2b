//! The CPU section of `orrery info`: rayon's threads and the instruction-set level of
//! orrery's CPU kernels (ADR 0009).

use orrery_core::cpu::MAX_CPU_ISA_ENV;
use orrery_core::{CpuExecutor, CpuIsa};

/// The section's lines.
pub fn lines() -> Vec<String> {
    let threads = CpuExecutor::new().threads();
    let detected = CpuIsa::detected();
    let isa = match CpuIsa::cap_from_env() {
        Ok(None) => format!("instruction set: {detected} (detected)"),
        Ok(Some(cap)) => {
            let active = CpuIsa::capped(detected, Some(cap));
            format!("instruction set: {active} (detected {detected}, capped by {MAX_CPU_ISA_ENV}={cap})")
        }
        Err(e) => format!("instruction set: detected {detected}, but {e}"),
    };
    let ball_tree = match CpuIsa::active() {
        Ok(isa) => format!("ball-tree build level: {}", orrery_balltree::cpu::build_level(isa)),
        Err(_) => "ball-tree build level: unknown (see above)".to_owned(),
    };
    vec![format!("threads: {threads} (rayon)"), isa, ball_tree]
}
