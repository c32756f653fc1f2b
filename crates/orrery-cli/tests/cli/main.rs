//! The `orrery` binary, run as a user runs it (assert_cmd): one test binary, one module
//! per subcommand or concern. Every run that computes uses `--executor cpu` (CI has no
//! GPU, and its wgpu adapter is lavapipe), except the test of `auto` itself.

mod args;
mod bad_input;
mod balltree;
mod common;
mod info;
mod simulate;
mod snapshot_input;
mod tree;
