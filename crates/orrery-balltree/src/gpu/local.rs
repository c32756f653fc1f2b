//! The local phase: one block per group of subtrees finishes them in shared memory,
//! module `balltree/local` (`kernels/balltree/local.cu`, `shaders/balltree/local.wgsl`),
//! compiled for one block shape per [`Define`] set.
//!
//! The shape is chosen from [`DeviceLimits`] ([`local_shape`]): 2048 slots and 512
//! threads per block where the device runs 512 threads per block and has the shared
//! memory of the larger shape's arrays (in the more demanding of the two kernel
//! languages), otherwise 1024 slots and 256 threads (WebGPU's default limits: 256
//! invocations, 16 KB of workgroup memory). The tree does not depend on the shape.

use orrery_core::executor::{ViewMutOf, ViewOf};
use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{Define, DeviceLimits, KernelSource, Result, View, ViewMut};

use super::build::{DeviceBallTree, GpuReal, Scratch, Uploaded, view, view_mut};
use super::kernels::pass_module;

/// The shape of the local phase's blocks: `capacity` slots per block (the size of the
/// kernel's shared arrays) and `threads` per block, `capacity / threads = 4` slots per
/// thread. The module is compiled for exactly these numbers (defines `LOCAL_CAPACITY`
/// and `LOCAL_THREADS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LocalShape {
    /// Slots per block.
    pub capacity: u32,
    /// Threads per block.
    pub threads: u32,
}

/// 2048 slots, 512 threads (the shape of every CUDA device).
pub(crate) const LARGE: LocalShape = LocalShape { capacity: 2048, threads: 512 };
/// 1024 slots, 256 threads (fits WebGPU's default limits).
pub(crate) const SMALL: LocalShape = LocalShape { capacity: 1024, threads: 256 };

impl LocalShape {
    /// Shared (workgroup) memory one block of this shape needs, in bytes: the larger of
    /// the CUDA kernel's (f64: u64 keys, slot order, global indices, split dimensions,
    /// per-warp u64 bounds: `17 * capacity + threads / 2`) and the WGSL kernel's (u32 keys,
    /// slot order, global indices, per-invocation bounds, split dimensions: `13 * capacity
    /// + 8 * threads`).
    pub(crate) const fn shared_bytes(self) -> u32 {
        let cuda = 17 * self.capacity + self.threads / 2;
        let wgsl = 13 * self.capacity + 8 * self.threads;
        if cuda > wgsl { cuda } else { wgsl }
    }

    /// Whether a device with `limits` runs blocks of this shape.
    pub(crate) fn fits(self, limits: &DeviceLimits) -> bool {
        self.threads <= limits.max_threads_per_block && self.shared_bytes() <= limits.max_shared_bytes_per_block
    }
}

/// The local-phase shape for a device: [`LARGE`] where it fits, else [`SMALL`] (a device
/// too small even for that fails at the launch with the executor's error).
pub(crate) fn local_shape(limits: &DeviceLimits) -> LocalShape {
    if LARGE.fits(limits) { LARGE } else { SMALL }
}

const LOCAL: KernelSource = pass_module!("local", LOCAL);

/// The module for [`LARGE`].
pub const LOCAL_LARGE: KernelSource = LOCAL.with_defines(&[
    Define { name: "LOCAL_CAPACITY", value: "2048u" },
    Define { name: "LOCAL_THREADS", value: "512u" },
]);

/// The module for [`SMALL`].
pub const LOCAL_SMALL: KernelSource = LOCAL.with_defines(&[
    Define { name: "LOCAL_CAPACITY", value: "1024u" },
    Define { name: "LOCAL_THREADS", value: "256u" },
]);

/// The typed launchers of one compiled shape.
macro_rules! local_kernels {
    ($($m:ident = $module:path;)*) => {$(
        mod $m {
            use super::*;
            orrery_core::kernels! {
                module = $module;
                /// Finishes every subtree of the plan's local blocks and writes the leaves.
                pub(crate) fn bt_local_f32(
                    read points: f32, read perm: u32, read nodes: u32, read blocks: u32,
                    write staged: f32, write out_idx: u32, write out_mask: u32,
                    scalar dim: u32, scalar num_blocks: u32,
                );
                /// [`bt_local_f32`] for subtrees whose points arrive in index order (Select).
                pub(crate) fn bt_local_ordered_f32(
                    read points: f32, read perm: u32, read nodes: u32, read blocks: u32,
                    write staged: f32, write out_idx: u32, write out_mask: u32,
                    scalar dim: u32, scalar num_blocks: u32,
                );
                /// [`bt_local_f32`] for f64 (CUDA only).
                pub(crate) fn bt_local_f64(
                    read points: f64, read perm: u32, read nodes: u32, read blocks: u32,
                    write staged: f64, write out_idx: u32, write out_mask: u32,
                    scalar dim: u32, scalar num_blocks: u32,
                );
            }
        }
    )*};
}

local_kernels! {
    large = LOCAL_LARGE;
    small = LOCAL_SMALL;
}

/// [`GpuReal::local`] for f32.
#[allow(clippy::too_many_arguments)] // one argument per kernel parameter
pub(crate) fn launch_f32<'a, E: GpuExecutor>(
    exec: &E,
    c: &LaunchConfig<'a, E>,
    capacity: u32,
    ordered: bool,
    points: ViewOf<'a, E, f32>,
    perm: ViewOf<'a, E, u32>,
    nodes: ViewOf<'a, E, u32>,
    blocks: ViewOf<'a, E, u32>,
    staged: ViewMutOf<'a, E, f32>,
    out_idx: ViewMutOf<'a, E, u32>,
    out_mask: ViewMutOf<'a, E, u32>,
    [dim, num_blocks]: [u32; 2],
) -> Result<()> {
    let launch = match (capacity == LARGE.capacity, ordered) {
        (true, false) => large::bt_local_f32::<E>,
        (true, true) => large::bt_local_ordered_f32::<E>,
        (false, false) => small::bt_local_f32::<E>,
        (false, true) => small::bt_local_ordered_f32::<E>,
    };
    launch(exec, c, points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks)
}

/// [`GpuReal::local`] for f64 (one entry for every strategy).
#[allow(clippy::too_many_arguments)] // one argument per kernel parameter
pub(crate) fn launch_f64<'a, E: GpuExecutor>(
    exec: &E,
    c: &LaunchConfig<'a, E>,
    capacity: u32,
    _ordered: bool,
    points: ViewOf<'a, E, f64>,
    perm: ViewOf<'a, E, u32>,
    nodes: ViewOf<'a, E, u32>,
    blocks: ViewOf<'a, E, u32>,
    staged: ViewMutOf<'a, E, f64>,
    out_idx: ViewMutOf<'a, E, u32>,
    out_mask: ViewMutOf<'a, E, u32>,
    [dim, num_blocks]: [u32; 2],
) -> Result<()> {
    if capacity == LARGE.capacity {
        large::bt_local_f64(exec, c, points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks)
    } else {
        small::bt_local_f64(exec, c, points, perm, nodes, blocks, staged, out_idx, out_mask, dim, num_blocks)
    }
}

/// The local phase of a build: one launch of [`Uploaded::local`]'s shape, one block per
/// entry of the plan's `blocks`; `ordered` when the levels were Select's (every
/// subtree's points in index order).
pub(crate) fn run_local<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    points: &E::Buffer<T>,
    out: &mut DeviceBallTree<E>,
    dim: usize,
    ordered: bool,
) -> Result<()> {
    let blocks = up.plan.num_blocks() as u32;
    T::local(
        exec,
        &LaunchConfig::blocks(blocks, up.local.threads),
        up.local.capacity,
        ordered,
        View::of(points),
        View::of(view(&s.vals)),
        View::of(&up.nodes),
        View::of(&up.blocks),
        ViewMut::of(view_mut(s.staged.get::<Option<E::Buffer<T>>>())),
        ViewMut::of(&mut out.indices),
        ViewMut::of(&mut out.mask),
        [dim as u32, blocks],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(threads: u32, shared: u32) -> DeviceLimits {
        let mut l = DeviceLimits::default();
        l.max_threads_per_block = threads;
        l.max_shared_bytes_per_block = shared;
        l
    }

    /// CUDA devices (1024 threads, 48 KB and more) get the large shape, WebGPU's default
    /// limits (256 invocations, 16 KB) the small one.
    #[test]
    fn the_shape_follows_the_limits() {
        assert_eq!(local_shape(&limits(1024, 227 * 1024)), LARGE);
        assert_eq!(local_shape(&limits(1024, 48 * 1024)), LARGE);
        assert_eq!(local_shape(&limits(256, 16 * 1024)), SMALL);
        assert_eq!(local_shape(&limits(1024, 16 * 1024)), SMALL);
        assert_eq!(local_shape(&limits(256, 227 * 1024)), SMALL);
        // The small shape is the fallback: its WGSL kernel needs 15 KB (WebGPU's default
        // is 16 KB), its CUDA kernel 17.1 KB.
        assert_eq!(13 * SMALL.capacity + 8 * SMALL.threads, 15 * 1024);
        assert!(LARGE.shared_bytes() <= 48 * 1024, "CUDA's static shared memory");
    }

    /// The module text matches the shapes (the defines reach both languages).
    #[test]
    fn defines_carry_the_shapes() {
        for (m, shape) in [(LOCAL_LARGE, LARGE), (LOCAL_SMALL, SMALL)] {
            assert!(m.cuda_options().contains(&format!("-DLOCAL_CAPACITY={}u", shape.capacity)));
            assert!(m.cuda_options().contains(&format!("-DLOCAL_THREADS={}u", shape.threads)));
            assert!(m.wgsl_with_defines().starts_with(&format!("const LOCAL_CAPACITY = {}u;", shape.capacity)));
        }
    }

    /// Both shapes on the wgpu adapter here (lavapipe in CI) give the CPU's tree, for
    /// every strategy (the shape the limits pick is covered by tests/gpu_wgpu.rs).
    #[test]
    fn both_shapes_match_the_cpu_on_wgpu() {
        use crate::gpu::{GpuBallTreeBuilder, Strategy};
        use crate::{Batches, PointCloud, build_balltree};
        use orrery_core::{Executor, GpuExecutor};
        use rand::{Rng, SeedableRng};

        let exec = match orrery_backend_wgpu::WgpuExecutor::new() {
            Ok(e) => e,
            Err(e) => {
                let required = std::env::var("ORRERY_REQUIRE_WGPU").is_ok_and(|v| v == "1");
                assert!(!required, "ORRERY_REQUIRE_WGPU=1 but no executor: {e}");
                eprintln!("skipped: {e}");
                return;
            }
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let offsets = [0u32, 1000, 1003, 1003 + 5000];
        let n = *offsets.last().unwrap() as usize;
        let points: Vec<f32> = (0..n * 3).map(|_| rng.random::<f32>()).collect();
        let batches = Batches::from_offsets(&offsets).unwrap();
        let cloud = PointCloud::new(&points, 3, batches.clone()).unwrap();
        let cpu = build_balltree(&cloud).unwrap();
        let device_points = exec.upload(&points).unwrap();
        for shape in [LARGE, SMALL] {
            if !shape.fits(&exec.limits()) {
                // Still parsed and validated (the limits apply to pipelines).
                exec.prepare(if shape == LARGE { &LOCAL_LARGE } else { &LOCAL_SMALL }).unwrap();
                eprintln!("skipped {shape:?}: beyond the adapter's limits (module validated)");
                continue;
            }
            for strategy in [Strategy::LevelSort, Strategy::Hybrid, Strategy::Select] {
                let mut builder = GpuBallTreeBuilder::<orrery_backend_wgpu::WgpuExecutor>::new(strategy);
                builder.local_override = Some(shape);
                let tree = builder.build(&exec, &device_points, 3, &batches).unwrap().download(&exec).unwrap();
                assert_eq!(tree, cpu, "{shape:?} {strategy:?}");
            }
        }
    }
}
