//! The library behind the `orrery` binary: its subcommands and the pieces they share.
//!
//! - [`executor`]: `--executor auto|cpu|cuda|wgpu`, the choice of executor with a
//!   one-line reason, and the dispatch of generic code onto it;
//! - [`input`]: points from `.npy` files or seeded models;
//! - [`output`]: `--output DIR` / `--force` and `.npy` writing;
//! - [`timing`]: time per phase, synchronised on the executor;
//! - [`simulate`], [`info`], [`tree`], [`balltree`]: the subcommands.

pub mod balltree;
pub mod executor;
pub mod info;
pub mod input;
pub mod output;
pub mod simulate;
pub mod timing;
pub mod tree;
