//! orrery-core's integration tests, one binary with a module per area (one binary per
//! crate instead of one per file saves link time and CI disk). Run one area with a filter
//! on the module path, e.g. `cargo test -p orrery-core --test core sfc_hilbert::`.

mod cpu_keep_warm;
mod cpu_primitives;
mod input_validation;
mod sfc_binary;
mod sfc_cell;
mod sfc_hilbert;
mod sfc_mapping;
mod sfc_morton;
