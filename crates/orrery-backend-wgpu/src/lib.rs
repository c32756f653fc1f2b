//! # orrery-backend-wgpu
//!
//! [`WgpuExecutor`]: orrery's [`orrery_core::Executor`] on wgpu (Vulkan, Metal, DX12,
//! OpenGL), with the data-parallel primitives in WGSL (`shaders/core/*.wgsl`) and
//! [`orrery_core::GpuExecutor`] so that algorithm crates launch their own WGSL kernels
//! through the same orchestration as on CUDA.
//!
//! ```no_run
//! use orrery_core::{sfc::{Curve, KeyMapper}, Aabb, Executor};
//! use orrery_backend_wgpu::WgpuExecutor;
//!
//! let exec = WgpuExecutor::new()?;
//! let (x, y, z) = (vec![0.1f32, 0.9, 0.5], vec![0.2f32, 0.8, 0.5], vec![0.3f32, 0.7, 0.5]);
//! let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0)?, Curve::Hilbert);
//! let (bx, by, bz) = (exec.upload(&x)?, exec.upload(&y)?, exec.upload(&z)?);
//! let mut keys = exec.alloc::<u64>(3)?;
//! exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys)?;
//! let mut order = exec.alloc::<u32>(3)?;
//! exec.iota(&mut order, 0)?;
//! exec.sort_pairs(&mut keys, &mut order, 0..63)?;
//! println!("{:?}", exec.download(&order)?);
//! # Ok::<(), orrery_core::Error>(())
//! ```
//!
//! # What runs where
//!
//! | primitive          | shader                 | launches | notes                                   |
//! |--------------------|------------------------|----------|-----------------------------------------|
//! | `copy`             | (encoder copy)         | 0        |                                         |
//! | `fill`             | `data.wgsl` / clear    | 1        | 4, 8 bytes; other sizes word by word    |
//! | `iota`, `gather`, `scatter` | `data.wgsl`   | 1        | 4, 8 bytes; other sizes word by word    |
//! | `exclusive_scan`, `inclusive_scan`, `exclusive_scan_counted` | `scan.wgsl` | 3 | reduce-then-scan |
//! | `compact`, `compact_counted` | `scan.wgsl`  | 3        | reduce-then-scan                        |
//! | `reduce`           | `reduce.wgsl`          | 2        | fixed order; f64 needs `SHADER_F64`     |
//! | `sort_pairs`       | `radix_sort.wgsl`, `scan.wgsl` | 5 per 8-bit digit | stable LSD, reduce-then-scan |
//! | `sfc_keys`         | `sfc.wgsl`             | 1        | f64 positions need `SHADER_F64`         |
//!
//! Every primitive has a subgroup path and a shared-memory path, chosen when its
//! pipeline is built: subgroups are used when the adapter has [`wgpu::Features::SUBGROUP`],
//! the options allow them, and a start-up probe confirms that subgroups are full and
//! ordered as the kernels assume ([`Capabilities::subgroup_size`]). No kernel assumes a
//! subgroup size. Reduce-then-scan is used instead of decoupled look-back because WebGPU
//! promises no forward progress between workgroups.
//!
//! 64-bit integers have no WGSL type without extensions: u64 and i64 buffers are read
//! as `vec2<u32>`, low word first (their little-endian bytes), and the kernels do 64-bit
//! arithmetic on word pairs.
//!
//! # Checking shaders without a device
//! [`offline`] lists every WGSL variant the executor may compile (core modules with each
//! set of defines their primitives use, and any [`orrery_core::KernelSource`], with and
//! without subgroups) and validates one as the executor does, with naga and no adapter;
//! `cargo xtask kernels` runs it over the workspace.
//!
//! # Selecting the adapter
//! See [`WgpuOptions`] and the environment variables `ORRERY_WGPU_ADAPTER`,
//! `ORRERY_WGPU_BACKEND`, `ORRERY_WGPU_SUBGROUPS`.
//!
//! Every primitive takes views at any element offset: the executor binds the aligned
//! offset below a view and passes the rest in the kernel's `off_*` fields (see
//! [`orrery_core::gpu`] and `shaders/core/*.wgsl`).
//!
//! # Synchronisation
//! Work is batched into one command encoder and submitted at `read`, `download`,
//! `read_async`, `synchronize`, `write` and `mark` (or when a batch is full); no
//! primitive waits for the device. Results of primitives (totals, counts, reductions)
//! stay on the device; `read_async` + `wait` read a status block without waiting for
//! later work. `fork` returns a handle on the same queue (wgpu has one), so `signal` and
//! `wait_for` are no-ops. `record` captures a sequence as commands with prebuilt bind
//! groups and `replay` submits them as one command buffer (see `record.rs`).

mod adapter;
mod buffer;
mod context;
mod executor;
mod launch;
pub mod offline;
mod pipeline_cache;
pub mod preprocess;
mod primitives;
mod record;
mod shaders;
mod timing;

pub use adapter::{Capabilities, WgpuOptions, parse_backend};
pub use buffer::{WgpuBuffer, WgpuRawBuffer};
pub use executor::{WgpuExecutor, WgpuPending};
pub use record::WgpuRecording;
pub use timing::WgpuMarker;
pub use wgpu;
