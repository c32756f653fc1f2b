//! The five statistics families and exact k-NN on GPUs: one orchestration for every
//! [`GpuExecutor`](orrery_core::GpuExecutor) (CUDA and wgpu), checked against the CPU
//! reference of this crate, which stays the oracle.
//!
//! - [`centroid`]: every field of [`crate::CentroidStats`] in three passes over the members
//!   with no atomics, on CUDA and wgpu (f32 arithmetic with compensated sums; equal to the
//!   CPU's f64 within a relative 1e-4, see the module).
//! - [`knn`]: exact k-NN ([`crate::exact_search`]'s result: the same rows *and* the same
//!   `f64` scores, bit for bit) on CUDA: the exact `k`-th key of a strided sample bounds
//!   every query's answer, an f32 register-blocked GEMM over the whole database keeps the
//!   rows inside that bound plus a proven error band, and they are rescored in `f64` in the
//!   CPU's order ([`Strategy`]; the first design, per-split top lists, stays as the
//!   baseline). wgpu: [`orrery_core::Error::Unsupported`] (WGSL has no f64 for the
//!   rescoring).
//! - [`substructure`]: two-means (seeds at the first and last member, exactly three Lloyd
//!   iterations) and the silhouette's row-tile pass, on CUDA and wgpu (f32, compensated
//!   sums; labels equal the CPU's away from f32 near-ties).
//! - [`pairwise`]: sigma from a 256-bin histogram of all pair distances, the
//!   Gaussian-potential family at that sigma, and the diversity family's two tiled passes,
//!   on CUDA and wgpu (f32; histograms may differ from the CPU's by pairs within rounding
//!   of a bin edge, sigma by up to one bin width).
//! - [`ivf`]: the inverted file ([`crate::IvfIndex`]: k-means++ seeding, Lloyd
//!   iterations, `nprobe` lists per query) trained and searched on CUDA, with the CPU's
//!   centroids, lists and neighbours bit for bit.
//! - [`lattice`]: the lattice search over the user's clusters and its fused measurement of
//!   member-to-centroid distances ([`crate::LatticeIndex`]), bit for bit, on CUDA.
//! - [`cluster_statistics`]: all five families in one call.
//!
//! | family | CUDA | wgpu | precision against the CPU |
//! |---|---|---|---|
//! | centroid | yes | yes | relative 1e-4 with absolute floors |
//! | sub-structure | yes | yes | labels equal away from near-ties; relative 1e-4 |
//! | scale | yes | yes | histogram up to pairs at an edge; sigma within one bin width |
//! | potential | yes | yes | relative 1e-4 at the GPU's sigma |
//! | diversity | yes | yes | moments relative 1e-4; histogram up to pairs at an edge |
//! | exact k-NN | yes | `Unsupported` (f64) | rows and f64 scores bit for bit |
//! | inverted file | yes | `Unsupported` (f64) | centroids, lists, rows and scores bit for bit |
//! | lattice, fused | yes | `Unsupported` (f64) | centroids, rows, scores, side buffer and its sums bit for bit |
//!
//! On wgpu a pairwise pass refuses a cluster of more than 4,194,240 members
//! ([`orrery_core::Error::TooManyPoints`]: WGSL tile-pair indices are `u32`); CUDA takes
//! any size.
//!
//! ```no_run
//! # fn demo<E: orrery_core::GpuExecutor>(exec: &E) -> orrery_core::Result<()> {
//! use orrery_clusters::{CentroidParams, Clusters, Metric, Vectors, gpu};
//!
//! let data = [0.0f32, 0.0, 2.0, 0.0, 10.0, 10.0];
//! let clusters = Clusters::new(&data, 2, &[0, 2, 3])?;
//! let stats = gpu::centroid_stats(exec, &clusters, &CentroidParams::default())?; // upload, run, download
//! assert_eq!(stats.cohesion[0], 1.0);
//!
//! let queries = Vectors::new(&[0.9, 0.1], 2)?;
//! let nn = gpu::exact_search(exec, &clusters.vectors(), &queries, 2, Metric::L2)?; // CUDA
//! assert_eq!(nn.rows_of(0), &[1, 0]);
//! # Ok(())
//! # }
//! ```
//!
//! For device-resident data and repeated runs without allocations, upload once
//! ([`DeviceVectors`], [`DeviceClusters`]) and keep a [`GpuCentroidStats`] or a
//! [`GpuExactSearch`]: they hold the launch plan, the scratch and the outputs.
//!
//! # Kernel modules
//! | module | CUDA | WGSL | host |
//! |---|---|---|---|
//! | `clusters/centroid` | `kernels/clusters/centroid.cu` (after `common.cuh`) | `shaders/clusters/centroid.wgsl` | [`centroid`] |
//! | `clusters/knn` | `kernels/clusters/knn.cu` | none (f64 rescoring) | [`knn`] |
//! | `clusters/probe` | `kernels/clusters/probe.cu` | none (f64 keys) | [`ivf`], [`lattice`] (engine `gpu/probe.rs`) |
//! | `clusters/substructure` | `kernels/clusters/substructure.cu` (after `common.cuh`, `pairs.cuh`) | `shaders/clusters/substructure.wgsl` | [`substructure`] |
//! | `clusters/pairwise` | `kernels/clusters/pairwise.cu` (after `common.cuh`, `pairs.cuh`) | `shaders/clusters/pairwise.wgsl` | [`pairwise`] |
//!
//! Entry points have the same name and arguments in both languages (buffers first, then
//! scalars; see [`orrery_core::gpu`]), declared once with [`orrery_core::kernels!`] and
//! checked against both at first use. Each kernel file's header states its launch shape,
//! buffers, invariants and cost model.

pub mod centroid;
mod device;
pub mod ivf;
pub mod knn;
pub mod lattice;
pub mod pairwise;
mod plan;
mod probe;
mod sources;
mod statistics;
pub mod substructure;

pub use centroid::{GpuCentroidStats, centroid_stats};
pub use device::{DeviceClusters, DeviceVectors};
pub use ivf::{GpuIvfIndex, ivf_build};
pub use knn::{GpuExactSearch, PendingSearch, Strategy, exact_search};
pub use lattice::GpuLatticeIndex;
#[cfg(feature = "cuda")]
pub use orrery_backend_cuda::CudaExecutor;
#[cfg(feature = "wgpu")]
pub use orrery_backend_wgpu::WgpuExecutor;
pub use pairwise::{GpuDiversityStats, GpuPotentialStats, GpuScaleStats};
pub use probe::{ProbeEngine, ProbeTimes};
pub use sources::{CENTROID, KERNEL_ENTRIES, KERNEL_MODULES, KNN, PAIRWISE, PROBE, SUBSTRUCTURE};
pub use statistics::cluster_statistics;
pub use substructure::GpuSubstructureStats;
