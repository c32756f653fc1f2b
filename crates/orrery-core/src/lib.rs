//! # orrery-core
//!
//! The ground every orrery crate stands on:
//!
//! - [`Vec3`], [`Aabb`] and particle sets in structure-of-arrays form, owned
//!   ([`ParticleSet`]) or borrowed without a copy ([`ParticlesView`], [`PositionsView`]);
//! - space-filling-curve keys ([`sfc`]): Morton and Hilbert, 2D and 3D, 32- and 64-bit,
//!   the binary longest-side key, and the key-range helpers of Cornerstone trees;
//! - the [`Executor`] trait with the data-parallel primitives every algorithm is written
//!   in, and [`CpuExecutor`], the rayon executor that is both the embedded default and
//!   the reference the GPU executors are tested against;
//! - [`Error`], the typed error of every orrery library.
//!
//! ```
//! use orrery_core::{sfc::{Curve, KeyMapper}, Aabb, CpuExecutor, Executor, PositionsView};
//!
//! let (x, y, z) = (vec![0.1f32, 0.9, 0.5], vec![0.2f32, 0.8, 0.5], vec![0.3f32, 0.7, 0.5]);
//! let points = PositionsView::new(&x, &y, &z)?;
//! let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0)?, Curve::Hilbert);
//! let exec = CpuExecutor::new();
//! let (bx, by, bz) = (exec.upload(points.x())?, exec.upload(points.y())?, exec.upload(points.z())?);
//! let mut keys = exec.alloc::<u64>(points.len())?;
//! exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys)?;
//! let mut order = exec.alloc::<u32>(points.len())?;
//! exec.iota(&mut order, 0)?;
//! exec.sort_pairs(&mut keys, &mut order, 0..63)?;
//! assert_eq!(exec.download(&order)?.len(), 3);
//! # Ok::<(), orrery_core::Error>(())
//! ```

pub mod cpu;
pub mod element;
pub mod error;
pub mod executor;
pub mod geometry;
pub mod gpu;
pub mod particles;
pub mod recording;
pub mod sfc;
pub mod skip;
pub mod view;

pub use cpu::{CpuExecutor, CpuIsa, DEFAULT_SPIN};
pub use element::{DType, Element, Real, Storage};
pub use error::{Axis, Error, Result};
pub use executor::{
    DeviceBuffer, DeviceCount, DeviceLimits, Executor, ExecutorKind, Order, ReduceOp, Reserve, ScanKind, ViewMutOf,
    ViewOf,
};
pub use geometry::{Aabb, Vec3};
pub use gpu::{Define, GpuExecutor, Grid, KernelArg, KernelSource, Launch, LaunchConfig, Scalar};
pub use particles::{MAX_POINTS, ParticleSet, ParticlesView, PositionsView};
pub use view::{Slice, View, ViewMut};
