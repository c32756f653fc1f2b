//! The FMM on GPUs (issue 14; ADR 0020): the evaluation of [`crate::fmm`] on a tree and
//! its interaction lists, pass for pass, for every [`GpuExecutor`].
//!
//! ```no_run
//! # fn demo<E: orrery_core::GpuExecutor>(exec: &E, set: &orrery_core::ParticleSet<f32>) -> orrery_core::Result<()> {
//! use orrery_traverse::Gravity;
//! use orrery_traverse::fmm::{Fmm, FmmSolver};
//! use orrery_traverse::gpu::fmm::GpuFmm;
//!
//! let solver = FmmSolver::new(Fmm::new(8, 0.5, Gravity::plummer(0.0f32)));
//! let (mut fmm, prepared) = GpuFmm::prepare(exec, &solver, &set.view()?)?; // tree and lists on the host
//! let bodies = GpuFmm::upload_bodies(exec, &prepared.bodies)?; // [x, y, z, m] per body, tree order
//! fmm.evaluate(exec, &bodies)?; // every pass, no host read
//! let forces = fmm.download_forces(exec)?; // tree order; prepared.bodies.scatter_forces(..) for input order
//! # Ok(())
//! # }
//! ```
//!
//! # What runs where
//! - The tree, the node data and the interaction lists are built on the host
//!   ([`crate::fmm::Fmm::plan`]: the CPU lists code) and uploaded once per tree
//!   ([`DeviceFmmPlan`]). The lists' GPU port (the per-level target-centric traversal of
//!   [`crate::fmm::lists`]) is not written yet.
//! - On the device, module `traverse/fmm` (`kernels/traverse/fmm.cu`, f64, **CUDA
//!   only**): `fmm_p2m` (every leaf, one launch), `fmm_m2m` (one launch per level, deepest
//!   first), `fmm_m2l` (every node, one launch), `fmm_l2l` (one launch per level from 1
//!   down), `fmm_l2p` (every particle, one launch); module `traverse/fmm_p2p` (f32, CUDA
//!   and WGSL twins): `fmm_p2p` (every non-empty leaf, one launch; the leaf's targets in
//!   a block, its sources through shared memory). `2 depth + 3` launches in all, none per
//!   node, no host read: [`GpuFmm::record`] captures them once, and a replay reruns the
//!   whole evaluation (for the same tree and plan; new positions in the same tree order
//!   are new inputs to the same recording).
//! - wgpu: WGSL has no f64 arithmetic without `SHADER_F64`, and the expansions need f64
//!   (orders up to 16, errors down to 1e-10: out of f32's reach), so the expansion
//!   passes return [`orrery_core::Error::Unsupported`] there; the near field
//!   ([`GpuFmm::near_field`]) runs on wgpu. An f32 expansion path would be accurate to
//!   ~1e-6 at best and is not written.
//!
//! # Translations
//! Rotation-based O(p^3), every pass of [`crate::fmm::operators::translate`] in its order
//! of terms. The block and warp shapes rotate through the quarter turn `J` only (the CPU's
//! [`crate::fmm::Rotations::QuarterTurn`]; `J` in shared memory); the direction-table
//! shape rotates as the plan does (the CPU's [`crate::fmm::Rotations::Table`]: the
//! direction's own blocks for the common directions). The CPU's table and quarter-turn
//! rotations agree to 1e-11 (tested on the CPU), so a GPU run is compared with either.
//! Three launch shapes ([`TranslationShape`]), the same operations in the same order
//! (the expansions are the CPU's bits in each):
//! - [`TranslationShape::WarpPerNode`]: one warp per target node, up to
//!   eight nodes per block (`fmm_m2m_warp`, `fmm_m2l_warp`, `fmm_l2l_warp`); the lanes over
//!   the coefficients (`i = lane + 32 k`), nine `__syncwarp` barriers per translation, `J`
//!   and the per-order constants shared by the block, a slice of shared memory per warp.
//! - [`TranslationShape::WarpDirections`] (the default): the warp shape with the plan's rotations (one
//!   matrix pass per rotation where the plan has the direction's blocks) and fused passes,
//!   five `__syncwarp` per direct translation (`fmm_m2m_dir`, `fmm_m2l_dir`,
//!   `fmm_l2l_dir`).
//! - [`TranslationShape::BlockPerNode`] (the first version, kept as the baseline): one
//!   block of 128 threads per node, two coefficients each (`nc(16) = 153`), ten
//!   `__syncthreads` barriers per translation (`fmm_m2m`, `fmm_m2l`, `fmm_l2l`).
//!
//! # L2P without a harmonics array
//! [`crate::fmm::operators::l2p`] sums, with `Y = Y(d)`,
//! `phi = sum_k [L_k^0 Y_k^0 + 2 sum_(l>=1) Re(L_k^l conj Y_k^l)]`,
//! `d_z phi = sum_(k>=1) [L_k^0 Y_(k-1)^0 + 2 sum_(1<=l<k) Re(L_k^l conj Y_(k-1)^l)]`,
//! `G = sum_(k>=1) [sum_(l<=k-2) L_k^l conj Y_(k-1)^(l+1) - sum_(1<=j<=k) conj(L_k^j) Y_(k-1)^(j-1)]`.
//! Regrouped by the harmonic each term reads, `Y_n^m` meets `L_n^m` (phi), `L_(n+1)^m`
//! (z), `L_(n+1)^(m-1)` (for `m >= 1`) and `L_(n+1)^(m+1)` (G), so the kernel runs the
//! recurrences column by column with two harmonics in registers (no O(p^2) array per
//! thread). Same terms, other order.
//!
//! # Tolerances (against the CPU, f32 bodies; the tests state them)
//! - Expansions (multipoles, locals): f64, the CPU's operations in its order except FMA
//!   contraction (NVRTC's default) and the L2P regrouping: ~1e-16 relative per operation;
//!   the rotations are orthogonal, the shifts sums of same-sign terms for the low degrees.
//!   The tests allow 1e-11 of each degree's largest coefficient (a node's M2L sum cancels
//!   by up to ~1e3 in its higher degrees, which costs three of the ~15 digits).
//! - Forces: the near field is f32 with `rsqrt.approx` (CUDA) or `inverseSqrt` (WGSL, 2
//!   ULP), summed in the CPU's order of sources: per term below 4e-7 relative, plus f32
//!   sums over ~1e3 sources (random-walk ~3e-6 of `S_i = sum_j m_j / r_ij^2`); the far
//!   field is the f64 L2P rounded once to f32 as on the CPU. The tests allow
//!   `2e-5 S_i + 4e-7 |a_i|` per body for the accelerations and the same with
//!   `sum_j m_j / r_ij` for the potentials.

mod kernels;
mod plan;

pub use kernels::{
    FMM, FMM_ENTRIES, FMM_P2P, FMM_P2P_ENTRIES, LAUNCH_SHARED_LIMIT, MAX_ORDER, WARP_NODES, shared_bytes,
    warp_shared_bytes, warps_per_block,
};
pub use plan::{DeviceFmmPlan, pack_tables};

use std::time::Duration;

use orrery_core::executor::{ViewOf, unsupported};
use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{Error, ExecutorKind, ParticlesView, Result, View};
use orrery_tree_build::view::TreeView;

use self::kernels::{
    L2P_THREADS, P2P_THREADS, SLOTS, THREADS, WARP, fmm_l2l, fmm_l2l_dir, fmm_l2l_warp, fmm_l2p, fmm_m2l, fmm_m2l_dir,
    fmm_m2l_warp, fmm_m2m, fmm_m2m_dir, fmm_m2m_warp, fmm_p2m, fmm_p2p,
};
use crate::bodies::Forces;
use crate::fmm::evaluate::{Fmm, FmmPlan};
use crate::fmm::expansions::{Complex, num_coefficients};
use crate::fmm::solver::{FmmPrepared, FmmSolver};
use crate::tree_bodies::TreeBodies;
use crate::walk::walk_eps2;

/// Every module of the FMM (for ahead-of-time compile checks).
pub const KERNEL_MODULES: [orrery_core::KernelSource; 2] = [FMM, FMM_P2P];

/// How the translation passes (M2M, M2L, L2L) are laid out on the device. Both shapes
/// perform the same f64 operations in the same order for every coefficient, so the
/// expansions are the same bits (the CPU's) either way; they differ in parallelism only.
/// Both handle every order up to [`MAX_ORDER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TranslationShape {
    /// One block of 128 threads per target node, ten block barriers per translation, two
    /// threads computing the pair's factors (`fmm_m2m`, `fmm_m2l`, `fmm_l2l`): the first
    /// version, kept as the baseline the warp shape is measured against.
    BlockPerNode,
    /// One warp per target node and up to [`WARP_NODES`] nodes per block (as many as fit
    /// [`LAUNCH_SHARED_LIMIT`]: eight up to p = 11, two at p = 16), nine warp barriers per
    /// translation, the pair's factors computed by the warp's lanes
    /// (`fmm_m2m_warp`, `fmm_m2l_warp`, `fmm_l2l_warp`).
    WarpPerNode,
    /// The warp shape (its launch and shared memory) with each translation rotated as the
    /// plan's [`crate::fmm::Rotations`] rotates it: with [`crate::fmm::Rotations::Table`],
    /// one matrix pass of the direction's own blocks (read from the uploaded table) per
    /// rotation for the common directions and the quarter turn for the others; with
    /// [`crate::fmm::Rotations::QuarterTurn`], the quarter turn everywhere. Passes that
    /// read only their own lane's values are fused into the pass before them: five warp
    /// barriers per direct translation, seven per quarter-turn one
    /// (`fmm_m2m_dir`, `fmm_m2l_dir`, `fmm_l2l_dir`). The CPU's bits in either mode. The
    /// default: on the H200 (1M uniform, p = 8, table plan) M2L takes 39.7 ms against 69.7
    /// (warp per node) and 91.9 (block per node); docs/performance/fmm.md.
    #[default]
    WarpDirections,
}

impl TranslationShape {
    /// Every shape, the baseline first.
    pub const ALL: [TranslationShape; 3] =
        [TranslationShape::BlockPerNode, TranslationShape::WarpPerNode, TranslationShape::WarpDirections];

    /// A short name for reports and benchmark rows: `"block per node"`, `"warp per node"`,
    /// `"warp per node, direction tables"`.
    pub fn name(self) -> &'static str {
        match self {
            TranslationShape::BlockPerNode => "block per node",
            TranslationShape::WarpPerNode => "warp per node",
            TranslationShape::WarpDirections => "warp per node, direction tables",
        }
    }

    /// Whether the shape rotates as the plan does (direction tables where the plan has
    /// them); the others always rotate through the quarter turn.
    pub fn follows_plan_rotations(self) -> bool {
        self == TranslationShape::WarpDirections
    }
}

/// Device time per phase of one [`GpuFmm::evaluate_timed`] (device events; for
/// benchmarks, never asserted).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GpuFmmTimings {
    /// P2M and M2M.
    pub upward: Duration,
    /// M2L.
    pub m2l: Duration,
    /// L2L.
    pub downward: Duration,
    /// P2P.
    pub p2p: Duration,
    /// L2P.
    pub l2p: Duration,
}

impl GpuFmmTimings {
    /// The sum of the phases.
    pub fn total(&self) -> Duration {
        self.upward + self.m2l + self.downward + self.p2p + self.l2p
    }
}

/// The FMM evaluation of one tree on a device: the uploaded plan, the expansions and
/// the tree-order results, kept between evaluations (nothing is allocated by an
/// evaluation, so it can be recorded).
pub struct GpuFmm<E: GpuExecutor> {
    fmm: Fmm<f32>,
    shape: TranslationShape,
    plan: DeviceFmmPlan<E>,
    multipoles: E::Buffer<[f64; 2]>,
    locals: E::Buffer<[f64; 2]>,
    acc: E::Buffer<[f32; 4]>,
}

/// The far field needs f64 kernels: CUDA with f64 arithmetic.
fn check_far_field<E: GpuExecutor>(exec: &E) -> Result<()> {
    if exec.kind() != ExecutorKind::Cuda || !exec.limits().f64 {
        return Err(unsupported(
            &exec.name(),
            "the FMM's expansion passes",
            "they are f64 kernels, which only the CUDA module has (WGSL has no f64 arithmetic); \
             the near field (GpuFmm::near_field) runs on every executor",
        ));
    }
    Ok(())
}

impl<E: GpuExecutor> GpuFmm<E> {
    /// The evaluation of `plan` (made by [`Fmm::plan`] with `fmm` for `view`) on `exec`,
    /// with the default [`TranslationShape`].
    ///
    /// # Errors
    /// As [`Fmm::check`] (an order out of range, a bad theta or softening);
    /// [`Error::InvalidArgument`] for a plan of another order; as [`DeviceFmmPlan::new`].
    pub fn new(exec: &E, fmm: &Fmm<f32>, view: &TreeView<f32>, plan: &FmmPlan) -> Result<Self> {
        let order = fmm.check()?;
        if plan.tables.order() != order {
            return Err(Error::InvalidArgument {
                what: "FMM plan",
                reason: format!("the plan is for order {}, the settings ask for {}", plan.tables.p(), order.get()),
            });
        }
        let nc = order.coefficients();
        if nc > (THREADS * SLOTS) as usize {
            return Err(Error::InvalidArgument {
                what: "expansion order",
                reason: format!("p = {}: {nc} coefficients exceed the kernels' {}", order.get(), THREADS * SLOTS),
            });
        }
        let plan = DeviceFmmPlan::new(exec, view, plan)?;
        let nodes = plan.nodes();
        Ok(Self {
            fmm: *fmm,
            shape: TranslationShape::default(),
            multipoles: exec.alloc(nodes * nc)?,
            locals: exec.alloc(nodes * nc)?,
            acc: exec.alloc(plan.particles().max(1))?,
            plan,
        })
    }

    /// The solver's tree and plan for `bodies` on the host, and the evaluation of it on
    /// `exec`. Returns the tree (view and bodies in tree order) too.
    ///
    /// # Errors
    /// As [`FmmSolver::prepare`] (empty input, bad values, bad settings), [`Fmm::plan`]
    /// and [`GpuFmm::new`].
    pub fn prepare(
        exec: &E,
        solver: &FmmSolver<f32>,
        bodies: &ParticlesView<'_, f32>,
    ) -> Result<(Self, FmmPrepared<f32>)> {
        let prepared = solver.prepare(bodies)?;
        let plan = solver.fmm.plan(&prepared.view, &prepared.bodies)?;
        let gpu = Self::new(exec, &solver.fmm, &prepared.view, &plan)?;
        Ok((gpu, prepared))
    }

    /// `[x, y, z, m]` per body of `bodies` (tree order), the layout every pass reads.
    ///
    /// # Errors
    /// Allocation failures.
    pub fn upload_bodies(exec: &E, bodies: &TreeBodies<f32>) -> Result<E::Buffer<f32>> {
        let packed: Vec<f32> =
            (0..bodies.len()).flat_map(|i| [bodies.x[i], bodies.y[i], bodies.z[i], bodies.m[i]]).collect();
        exec.upload(&packed)
    }

    /// The same evaluation with the translations in `shape`.
    #[must_use]
    pub fn with_shape(mut self, shape: TranslationShape) -> Self {
        self.shape = shape;
        self
    }

    /// Runs the following translations in `shape` (a recording keeps the shape it was
    /// recorded with).
    pub fn set_shape(&mut self, shape: TranslationShape) {
        self.shape = shape;
    }

    /// The shape of the translations.
    pub fn shape(&self) -> TranslationShape {
        self.shape
    }

    /// The uploaded plan.
    pub fn plan(&self) -> &DeviceFmmPlan<E> {
        &self.plan
    }

    /// The settings.
    pub fn settings(&self) -> &Fmm<f32> {
        &self.fmm
    }

    fn check_bodies<'a>(&self, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<ViewOf<'a, E, f32>> {
        let bodies = bodies.into();
        let expected = 4 * self.plan.particles();
        if bodies.len() != expected {
            return Err(Error::LengthMismatch {
                what: "FMM tree bodies (4 floats per body)",
                expected,
                actual: bodies.len(),
            });
        }
        Ok(bodies)
    }

    /// At most the device's grid limit, at least 1.
    fn blocks(exec: &E, items: u32) -> u32 {
        let max = u32::try_from(exec.limits().max_blocks).unwrap_or(u32::MAX).max(1);
        items.clamp(1, max)
    }

    /// A translation launch of `items` nodes in the evaluation's shape.
    ///
    /// # Errors
    /// [`Error::Unsupported`] when not one warp's shared memory fits the device's limit
    /// (the warp shape).
    fn translation_config(&self, exec: &E, items: u32) -> Result<LaunchConfig<'static, E>> {
        let p = self.plan.p;
        match self.shape {
            TranslationShape::BlockPerNode => {
                Ok(LaunchConfig::blocks(Self::blocks(exec, items), THREADS).with_shared_bytes(shared_bytes(p)))
            }
            TranslationShape::WarpPerNode | TranslationShape::WarpDirections => {
                let limit = exec.limits().max_shared_bytes_per_block.min(LAUNCH_SHARED_LIMIT);
                let warps = warps_per_block(p, limit).ok_or_else(|| {
                    unsupported(
                        &exec.name(),
                        "the FMM's warp-per-node translations",
                        &format!(
                            "one warp needs {} bytes of shared memory at p = {p}, the device allows {limit}",
                            warp_shared_bytes(p, 1)
                        ),
                    )
                })?;
                Ok(LaunchConfig::blocks(Self::blocks(exec, items.div_ceil(warps)), WARP * warps)
                    .with_shared_bytes(warp_shared_bytes(p, warps)))
            }
        }
    }

    /// Enqueues P2M (every leaf) and M2M (level by level, deepest first): the multipoles
    /// of every node ([`crate::fmm::evaluate::upward`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] off CUDA, or in the warp shape where the device's shared
    /// memory does not hold one warp's slice ([`warps_per_block`]);
    /// [`Error::LengthMismatch`] unless `bodies` holds `4 n` floats; launch failures.
    pub fn upward<'a>(&mut self, exec: &E, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<()> {
        check_far_field(exec)?;
        let bodies = self.check_bodies(bodies)?;
        let pl = &self.plan;
        let [ox, oy, oz] = pl.origin;
        let config = LaunchConfig::blocks(Self::blocks(exec, pl.leaves_count), THREADS);
        fmm_p2m(
            exec,
            &config,
            bodies,
            &pl.leaves,
            &pl.begins,
            &pl.counts,
            &pl.centres,
            &pl.tables,
            &mut self.multipoles,
            pl.leaves_count,
            pl.p,
            ox,
            oy,
            oz,
            pl.inv_scale,
        )?;
        let [hx, hy, hz] = pl.half_unit;
        for &(first, count) in pl.levels.iter().rev() {
            let config = self.translation_config(exec, count)?;
            let pl = &self.plan;
            let mp = &mut self.multipoles;
            match self.shape {
                TranslationShape::BlockPerNode => fmm_m2m(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.first_children,
                    &pl.counts,
                    &pl.tables,
                    mp,
                    first,
                    count,
                    pl.children,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
                TranslationShape::WarpPerNode => fmm_m2m_warp(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.first_children,
                    &pl.counts,
                    &pl.tables,
                    mp,
                    first,
                    count,
                    pl.children,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
                TranslationShape::WarpDirections => fmm_m2m_dir(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.first_children,
                    &pl.counts,
                    &pl.parent_directions,
                    &pl.tables,
                    &pl.directions,
                    mp,
                    first,
                    count,
                    pl.children,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
            }?;
        }
        Ok(())
    }

    /// Enqueues M2L over every node's list: the local expansions before the downward
    /// pass ([`crate::fmm::evaluate::m2l_pass`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] off CUDA, or in the warp shape where the device's shared
    /// memory does not hold one warp's slice ([`warps_per_block`]); launch failures.
    pub fn m2l(&mut self, exec: &E) -> Result<()> {
        check_far_field(exec)?;
        let config = self.translation_config(exec, self.plan.nodes)?;
        let pl = &self.plan;
        let [hx, hy, hz] = pl.half_unit;
        match self.shape {
            TranslationShape::BlockPerNode => fmm_m2l(
                exec,
                &config,
                &pl.grid,
                &pl.m2l_offsets,
                &pl.m2l_sources,
                &pl.tables,
                &self.multipoles,
                &mut self.locals,
                pl.nodes,
                pl.p,
                hx,
                hy,
                hz,
            ),
            TranslationShape::WarpPerNode => fmm_m2l_warp(
                exec,
                &config,
                &pl.grid,
                &pl.m2l_offsets,
                &pl.m2l_sources,
                &pl.tables,
                &self.multipoles,
                &mut self.locals,
                pl.nodes,
                pl.p,
                hx,
                hy,
                hz,
            ),
            TranslationShape::WarpDirections => fmm_m2l_dir(
                exec,
                &config,
                &pl.grid,
                &pl.m2l_offsets,
                &pl.m2l_sources,
                &pl.m2l_directions,
                &pl.tables,
                &pl.directions,
                &self.multipoles,
                &mut self.locals,
                pl.nodes,
                pl.p,
                hx,
                hy,
                hz,
            ),
        }
    }

    /// Enqueues L2L level by level from level 1 down ([`crate::fmm::evaluate::downward`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] off CUDA, or in the warp shape where the device's shared
    /// memory does not hold one warp's slice ([`warps_per_block`]); launch failures.
    pub fn downward(&mut self, exec: &E) -> Result<()> {
        check_far_field(exec)?;
        let [hx, hy, hz] = self.plan.half_unit;
        for &(first, count) in self.plan.levels.iter().skip(1) {
            let config = self.translation_config(exec, count)?;
            let pl = &self.plan;
            let locals = &mut self.locals;
            match self.shape {
                TranslationShape::BlockPerNode => fmm_l2l(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.parents,
                    &pl.counts,
                    &pl.has_local,
                    &pl.tables,
                    locals,
                    first,
                    count,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
                TranslationShape::WarpPerNode => fmm_l2l_warp(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.parents,
                    &pl.counts,
                    &pl.has_local,
                    &pl.tables,
                    locals,
                    first,
                    count,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
                TranslationShape::WarpDirections => fmm_l2l_dir(
                    exec,
                    &config,
                    &pl.grid,
                    &pl.parents,
                    &pl.counts,
                    &pl.has_local,
                    &pl.parent_directions,
                    &pl.tables,
                    &pl.directions,
                    locals,
                    first,
                    count,
                    pl.p,
                    hx,
                    hy,
                    hz,
                ),
            }?;
        }
        Ok(())
    }

    /// Enqueues P2P: the near field `G (a, phi)` of every body into the tree-order
    /// results (overwriting them). Runs on every GPU executor.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `bodies` holds `4 n` floats; errors of
    /// [`walk_eps2`]; launch failures.
    pub fn near_field<'a>(&mut self, exec: &E, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<()> {
        let bodies = self.check_bodies(bodies)?;
        let eps2 = walk_eps2(&self.fmm.gravity)?;
        let pl = &self.plan;
        let config = LaunchConfig::blocks(Self::blocks(exec, pl.occupied_count), P2P_THREADS);
        fmm_p2p(
            exec,
            &config,
            bodies,
            &pl.occupied,
            &pl.begins,
            &pl.counts,
            &pl.p2p_offsets,
            &pl.p2p_sources,
            &mut self.acc,
            pl.occupied_count,
            self.fmm.gravity.g,
            eps2,
        )
    }

    /// Enqueues L2P: the far field of every body's leaf, added to the results (after
    /// [`GpuFmm::near_field`]).
    ///
    /// # Errors
    /// [`Error::Unsupported`] off CUDA; [`Error::LengthMismatch`] unless `bodies` holds
    /// `4 n` floats; launch failures.
    pub fn far_field<'a>(&mut self, exec: &E, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<()> {
        check_far_field(exec)?;
        let bodies = self.check_bodies(bodies)?;
        let pl = &self.plan;
        let g = f64::from(self.fmm.gravity.g);
        let (far_acc, far_pot) = (g / (pl.scale * pl.scale), -g / pl.scale);
        let [ox, oy, oz] = pl.origin;
        let config = LaunchConfig::per_item(pl.particles(), L2P_THREADS);
        fmm_l2p(
            exec,
            &config,
            bodies,
            &pl.particle_nodes,
            &pl.has_local,
            &pl.centres,
            &pl.tables,
            &self.locals,
            &mut self.acc,
            pl.particles,
            pl.p,
            ox,
            oy,
            oz,
            pl.inv_scale,
            far_acc,
            far_pot,
        )
    }

    /// Enqueues the whole evaluation: upward, M2L, downward, P2P, L2P. Nothing is read
    /// back and nothing allocated.
    ///
    /// # Errors
    /// As the passes.
    pub fn evaluate<'a>(&mut self, exec: &E, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<()> {
        let bodies = bodies.into();
        self.upward(exec, bodies)?;
        self.m2l(exec)?;
        self.downward(exec)?;
        self.near_field(exec, bodies)?;
        self.far_field(exec, bodies)
    }

    /// [`GpuFmm::evaluate`] with device events around each phase (synchronises at the
    /// end to read them).
    ///
    /// # Errors
    /// As [`GpuFmm::evaluate`]; timing failures.
    pub fn evaluate_timed<'a>(&mut self, exec: &E, bodies: impl Into<ViewOf<'a, E, f32>>) -> Result<GpuFmmTimings> {
        let bodies = bodies.into();
        let m0 = exec.mark()?;
        self.upward(exec, bodies)?;
        let m1 = exec.mark()?;
        self.m2l(exec)?;
        let m2 = exec.mark()?;
        self.downward(exec)?;
        let m3 = exec.mark()?;
        self.near_field(exec, bodies)?;
        let m4 = exec.mark()?;
        self.far_field(exec, bodies)?;
        let m5 = exec.mark()?;
        exec.synchronize()?;
        Ok(GpuFmmTimings {
            upward: exec.elapsed(&m0, &m1)?,
            m2l: exec.elapsed(&m1, &m2)?,
            downward: exec.elapsed(&m2, &m3)?,
            p2p: exec.elapsed(&m3, &m4)?,
            l2p: exec.elapsed(&m4, &m5)?,
        })
    }

    /// Records [`GpuFmm::evaluate`] of `bodies` once; [`orrery_core::Executor::replay`]
    /// then reruns the whole evaluation (reading whatever `bodies` holds then).
    ///
    /// # Errors
    /// As [`GpuFmm::evaluate`]; [`Error::Recording`] where the executor cannot record.
    pub fn record(&mut self, exec: &E, bodies: &E::Buffer<f32>) -> Result<E::Recording> {
        let view = View::of(bodies);
        exec.record(&mut || self.evaluate(exec, view))
    }

    /// The multipoles of every node (`nc(p)` per node, node order), waiting for the
    /// device.
    ///
    /// # Errors
    /// Device failures.
    pub fn download_multipoles(&self, exec: &E) -> Result<Vec<Complex>> {
        download_expansions(exec, &self.multipoles)
    }

    /// The local expansions of every node.
    ///
    /// # Errors
    /// Device failures.
    pub fn download_locals(&self, exec: &E) -> Result<Vec<Complex>> {
        download_expansions(exec, &self.locals)
    }

    /// The tree-order results `[a_x, a_y, a_z, pot]` per body.
    pub fn acc(&self) -> &E::Buffer<[f32; 4]> {
        &self.acc
    }

    /// The forces in tree order (what [`Fmm::evaluate`] returns), waiting for the
    /// device.
    ///
    /// # Errors
    /// Device failures.
    pub fn download_forces(&self, exec: &E) -> Result<Forces<f32>> {
        let n = self.plan.particles();
        let mut acc = vec![[0f32; 4]; n];
        exec.read(&self.acc, 0, &mut acc)?;
        let mut forces = Forces::zeros(n);
        for (i, a) in acc.iter().enumerate() {
            (forces.ax[i], forces.ay[i], forces.az[i], forces.pot[i]) = (a[0], a[1], a[2], a[3]);
        }
        Ok(forces)
    }
}

fn download_expansions<E: GpuExecutor>(exec: &E, buf: &E::Buffer<[f64; 2]>) -> Result<Vec<Complex>> {
    Ok(exec.download(buf)?.into_iter().map(|[re, im]| Complex::new(re, im)).collect())
}

/// Coefficients per node at order `p` (the expansions' stride on the device).
pub fn coefficients(p: u32) -> usize {
    num_coefficients(p)
}
