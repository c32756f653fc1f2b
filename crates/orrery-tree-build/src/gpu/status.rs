//! The device status block of a run: [`WORDS`] `u32` words that every pass kernel reads
//! and the tiny kernels `tb_begin` / `tb_finish` update, so the passes of an update run
//! back to back with no host read; the host reads the block once at the end
//! ([`orrery_core::Executor::read_async`]).
//!
//! | word | meaning |
//! |---|---|
//! | [`LEAF_COUNT`] | leaves `L` of the current tree |
//! | [`SCAN_COUNT`] | the live count of the next scan of operations (`L` while running, 0 once done: a finished pass's scan returns at once) |
//! | [`CHANGED`] | set by the decide when an operation is not 1 |
//! | [`STATE`] | [`RUN`], [`COUNT_ONLY`] (the run's budget is spent: one more count of the final tree) or [`DONE`] |
//! | [`PASSES`] | passes run, the confirming one included |
//! | [`CONVERGED`] | 1 when the last pass changed nothing |
//! | [`OVERFLOW`] | 1 when a proposal did not fit the leaf capacity (nothing was written) |
//! | [`NEEDED`] | the leaves that proposal needs |
//! | [`CURRENT`] | which of the two leaf buffers holds the current tree |
//! | [`ACTIVE`] | particles inside the box (`lower_bound(keys, key_end)`, written by the sort phase) |
//! | [`RUN_BASE`] | [`PASSES`] when the run began: a run spends its own budget of slots |
//!
//! The kernels' copies are in `kernels/tree/common.cuh` and `shaders/tree/common.wgsl`
//! (checked by a test).

use crate::build::Convergence;

/// Words of the status block.
pub const WORDS: usize = 16;
/// Leaves of the current tree.
pub const LEAF_COUNT: usize = 0;
/// Live count of the next scan of operations.
pub const SCAN_COUNT: usize = 1;
/// The decide's change flag.
#[cfg_attr(not(test), allow(dead_code))] // set and read by the kernels only
pub const CHANGED: usize = 2;
/// The run's state.
pub const STATE: usize = 3;
/// Passes run.
pub const PASSES: usize = 4;
/// Whether the run converged.
pub const CONVERGED: usize = 5;
/// Whether a proposal overflowed the capacity.
pub const OVERFLOW: usize = 6;
/// Leaves the overflowing proposal needs.
pub const NEEDED: usize = 7;
/// The leaf buffer holding the current tree (0 or 1).
pub const CURRENT: usize = 8;
/// Particles inside the box.
pub const ACTIVE: usize = 9;
/// Passes done when the run began (its budget counts from there).
#[cfg_attr(not(test), allow(dead_code))] // set and read by the kernels only
pub const RUN_BASE: usize = 10;

/// State: passes run.
pub const RUN: u32 = 0;
/// State: the budget is spent; the next count is the final tree's, then done.
#[cfg_attr(not(test), allow(dead_code))] // set and read by the kernels only
pub const COUNT_ONLY: u32 = 1;
/// State: every later kernel returns at once.
pub const DONE: u32 = 2;

/// `tb_begin` mode: an update of the current tree (passes from 0).
pub(crate) const BEGIN_UPDATE: u32 = 0;
/// `tb_begin` mode: resume after growth (passes kept).
pub(crate) const BEGIN_RESUME: u32 = 1;
/// `tb_begin` mode: a build from the root leaf.
pub(crate) const BEGIN_BUILD: u32 = 2;

/// The host's copy of a status block, as read after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Status {
    pub leaf_count: u32,
    pub state: u32,
    pub passes: u32,
    pub converged: bool,
    pub overflow: bool,
    pub needed: u32,
    pub current: u32,
    pub active: u32,
}

impl Status {
    /// The block's words, parsed.
    pub fn from_words(w: &[u32]) -> Self {
        Self {
            leaf_count: w[LEAF_COUNT],
            state: w[STATE],
            passes: w[PASSES],
            converged: w[CONVERGED] != 0,
            overflow: w[OVERFLOW] != 0,
            needed: w[NEEDED],
            current: w[CURRENT] & 1,
            active: w[ACTIVE],
        }
    }

    /// The run's report.
    pub fn convergence(&self) -> Convergence {
        Convergence { passes: self.passes, converged: self.converged }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::MODULES;

    #[test]
    fn the_kernels_use_this_layout() {
        let words = [
            ("LEAF_COUNT", LEAF_COUNT),
            ("SCAN_COUNT", SCAN_COUNT),
            ("CHANGED", CHANGED),
            ("STATE", STATE),
            ("PASSES", PASSES),
            ("CONVERGED", CONVERGED),
            ("OVERFLOW", OVERFLOW),
            ("NEEDED", NEEDED),
            ("CURRENT", CURRENT),
            ("ACTIVE", ACTIVE),
            ("RUN_BASE", RUN_BASE),
            ("STATUS_WORDS", WORDS),
        ];
        let states = [("RUN", RUN), ("COUNT_ONLY", COUNT_ONLY), ("DONE", DONE)];
        let modes = [("BEGIN_UPDATE", BEGIN_UPDATE), ("BEGIN_RESUME", BEGIN_RESUME), ("BEGIN_BUILD", BEGIN_BUILD)];
        for m in MODULES {
            for (name, value) in words {
                assert!(m.cuda.contains(&format!("#define TB_{name} {value}\n")), "{} {name}", m.name);
                let wgsl = if name == "STATUS_WORDS" { name.to_owned() } else { format!("ST_{name}") };
                assert!(m.wgsl.contains(&format!("const {wgsl}: u32 = {value}u;")), "{} {name}", m.name);
            }
            for (name, value) in states.into_iter().chain(modes) {
                assert!(m.cuda.contains(&format!("#define TB_{name} {value}u")), "{} {name}", m.name);
                assert!(m.wgsl.contains(&format!("const {name}: u32 = {value}u;")), "{} {name}", m.name);
            }
        }
    }
}
