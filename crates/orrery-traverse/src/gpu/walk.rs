//! The Barnes-Hut walks on a GPU: [`GpuWalk::Independent`] (one thread per target, the
//! baseline), [`GpuWalk::Coherent`] (one node index per warp or subgroup, bit-identical
//! to the independent walk) and [`GpuWalk::Group`] (32 consecutive targets share one
//! opening decision), over packed walk nodes and tree-order bodies; and the scatter of
//! tree-order results back to input order.
//!
//! Kernels: `kernels/traverse/walk.cu` and `shaders/traverse/walk.wgsl` (their headers
//! explain the shapes). Every walk reads the same arrays as the CPU's
//! [`crate::walk::WalkNodes`] and opens exactly the nodes the CPU opens (the opening test
//! is correctly rounded in the CPU's order), so per-target interaction counts equal the
//! CPU's [`crate::walk::walk_targets`] (independent, coherent) and
//! [`crate::walk::walk_groups`] with groups of [`GROUP_SIZE`] (group).

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{Error, KernelSource, Result, ViewOf};

use crate::bodies::{Forces, Gravity};
use crate::multipole::Expansion;
use crate::walk::{Interactions, walk_eps2};

/// Threads per block of the walks (`BH_THREADS` / `THREADS` in the sources).
pub const THREADS: u32 = 256;
/// Targets per group of [`GpuWalk::Group`]: one warp (CUDA) or one workgroup slice.
pub const GROUP_SIZE: usize = 32;

/// The module `traverse/walk`.
pub const WALK: KernelSource =
    KernelSource::new("traverse/walk", orrery_kernels::traverse::WALK, orrery_shaders::traverse::WALK);

mod k {
    orrery_core::kernels! {
        module = super::WALK;
        /// One thread per target.
        pub(super) fn bh_walk_independent(
            read bodies: f32, read centres: f32, read masses: f32, read quads: f32, read links: u32,
            write acc: [f32; 4], write counts: [u32; 2],
            scalar n: u32, scalar quadrupole: u32, scalar eps2: f32, scalar g: f32,
        );
        /// One node index per warp, advanced by agreement.
        pub(super) fn bh_walk_coherent(
            read bodies: f32, read centres: f32, read masses: f32, read quads: f32, read links: u32,
            write acc: [f32; 4], write counts: [u32; 2],
            scalar n: u32, scalar quadrupole: u32, scalar eps2: f32, scalar g: f32,
        );
        /// One opening decision per group of 32 targets.
        pub(super) fn bh_walk_group(
            read bodies: f32, read centres: f32, read masses: f32, read quads: f32, read links: u32,
            write acc: [f32; 4], write counts: [u32; 2],
            scalar n: u32, scalar quadrupole: u32, scalar eps2: f32, scalar g: f32,
        );
        /// One opening decision per group of 64 targets (two per lane in CUDA).
        pub(super) fn bh_walk_group2(
            read bodies: f32, read centres: f32, read masses: f32, read quads: f32, read links: u32,
            write acc: [f32; 4], write counts: [u32; 2],
            scalar n: u32, scalar quadrupole: u32, scalar eps2: f32, scalar g: f32,
        );
        /// Tree-order forces to input order.
        pub(super) fn bh_scatter_forces(
            read acc: [f32; 4], read order: u32, write ax: f32, write ay: f32, write az: f32, write pot: f32, scalar n: u32,
        );
        /// Tree-order counts to input order.
        pub(super) fn bh_scatter_counts(read counts: [u32; 2], read order: u32, write pp: u32, write pc: u32, scalar n: u32);
    }
}

/// Every entry point of [`WALK`] (the NVRTC compile test looks for each).
pub const ENTRIES: [&str; 6] = [
    "bh_walk_independent",
    "bh_walk_coherent",
    "bh_walk_group",
    "bh_walk_group2",
    "bh_scatter_forces",
    "bh_scatter_counts",
];

/// Which GPU walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuWalk {
    /// One thread per target, its own node index.
    Independent,
    /// One node index per warp (subgroup), advanced by agreement.
    Coherent,
    /// Groups of [`GROUP_SIZE`] consecutive targets share one opening decision.
    Group,
    /// Groups of `2 * GROUP_SIZE` targets (two per lane in CUDA): fewer node visits per
    /// interaction, more interactions per target.
    Group64,
}

impl GpuWalk {
    /// Every walk.
    pub const ALL: [GpuWalk; 4] = [GpuWalk::Independent, GpuWalk::Coherent, GpuWalk::Group, GpuWalk::Group64];

    /// The targets per group of a group walk (the CPU reference is
    /// [`crate::walk::walk_groups`] with this size), `None` for the per-target walks.
    pub fn group_size(self) -> Option<usize> {
        match self {
            GpuWalk::Independent | GpuWalk::Coherent => None,
            GpuWalk::Group => Some(GROUP_SIZE),
            GpuWalk::Group64 => Some(2 * GROUP_SIZE),
        }
    }
}

/// The device arrays a walk reads (views into caller-owned buffers): bodies in tree
/// order `[x, y, z, m]` per body and the four packed node arrays of
/// [`crate::walk::WalkNodes`].
pub struct WalkInput<'a, E: GpuExecutor> {
    /// `[x, y, z, m]` per target (`4 * targets` floats).
    pub bodies: ViewOf<'a, E, f32>,
    /// Centre of mass and `r^2` per node (`4 * nodes` floats).
    pub centres: ViewOf<'a, E, f32>,
    /// `M, Q_xx, Q_xy, Q_xz` per node.
    pub masses: ViewOf<'a, E, f32>,
    /// `Q_yy, Q_yz, Q_zz, 0` per node.
    pub quads: ViewOf<'a, E, f32>,
    /// First child, escape, first particle, count per node (`4 * nodes` words).
    pub links: ViewOf<'a, E, u32>,
}

/// Tree-order results of a walk: `[G a, G phi]` and `[particle-particle,
/// particle-cell]` per target.
pub struct WalkOutput<E: GpuExecutor> {
    /// `[G a, G phi]` per target.
    pub acc: E::Buffer<[f32; 4]>,
    /// `[particle-particle, particle-cell]` per target.
    pub counts: E::Buffer<[u32; 2]>,
    targets: usize,
}

impl<E: GpuExecutor> WalkOutput<E> {
    /// Room for `targets` targets.
    ///
    /// # Errors
    /// Device allocation failures.
    pub fn new(exec: &E, targets: usize) -> Result<Self> {
        Ok(Self { acc: exec.alloc(targets.max(1))?, counts: exec.alloc(targets.max(1))?, targets })
    }

    /// Sets the target count, growing the buffers with 25% headroom when needed.
    ///
    /// # Errors
    /// Device allocation failures.
    pub fn ensure(&mut self, exec: &E, targets: usize) -> Result<()> {
        use orrery_core::DeviceBuffer as _;
        if self.acc.len() < targets {
            let grown = targets + targets / 4;
            self.acc = exec.alloc(grown)?;
            self.counts = exec.alloc(grown)?;
        }
        self.targets = targets;
        Ok(())
    }

    /// Targets.
    pub fn targets(&self) -> usize {
        self.targets
    }

    /// The results in tree order.
    ///
    /// # Errors
    /// Device failures.
    pub fn download(&self, exec: &E) -> Result<(Forces<f32>, Interactions)> {
        let n = self.targets;
        let mut acc = vec![[0f32; 4]; n];
        let mut counts = vec![[0u32; 2]; n];
        exec.read(&self.acc, 0, &mut acc)?;
        exec.read(&self.counts, 0, &mut counts)?;
        let pick = |k: usize| acc.iter().map(|a| a[k]).collect();
        let forces = Forces { ax: pick(0), ay: pick(1), az: pick(2), pot: pick(3) };
        let interactions = Interactions {
            particle_particle: counts.iter().map(|c| c[0]).collect(),
            particle_cell: counts.iter().map(|c| c[1]).collect(),
        };
        Ok((forces, interactions))
    }
}

/// Runs `walk` for every body of `input` (`targets` bodies) into `out`.
///
/// # Errors
/// [`Error::EmptyInput`] for no targets or nodes; [`Error::LengthMismatch`] for arrays of
/// other lengths (four values per body and per node in every array);
/// as [`walk_eps2`]; device failures.
pub fn run_walk<E: GpuExecutor>(
    exec: &E,
    walk: GpuWalk,
    input: &WalkInput<'_, E>,
    targets: usize,
    gravity: &Gravity<f32>,
    expansion: Expansion,
    out: &mut WalkOutput<E>,
) -> Result<()> {
    if targets == 0 {
        return Err(Error::EmptyInput { what: "walk targets", min: 1 });
    }
    let eps2 = walk_eps2(gravity)?;
    orrery_core::executor::check_len("walk bodies", 4 * targets, input.bodies.len())?;
    let words = input.links.len();
    if words == 0 {
        return Err(Error::EmptyInput { what: "walk nodes", min: 1 });
    }
    if words % 4 != 0 {
        return Err(Error::LengthMismatch { what: "walk links", expected: words.next_multiple_of(4), actual: words });
    }
    let nodes = words;
    for (what, v) in
        [("walk centres", input.centres.len()), ("walk masses", input.masses.len()), ("walk quads", input.quads.len())]
    {
        orrery_core::executor::check_len(what, nodes, v)?;
    }
    orrery_core::particles::check_index_range(targets, "walk targets")?;
    out.ensure(exec, targets)?;
    let n = targets as u32;
    let quadrupole = u32::from(expansion == Expansion::Quadrupole);
    let config = LaunchConfig::per_item(targets.next_multiple_of(32), THREADS);
    let i = input;
    let (acc, counts) = (&mut out.acc, &mut out.counts);
    match walk {
        GpuWalk::Independent => k::bh_walk_independent(
            exec, &config, i.bodies, i.centres, i.masses, i.quads, i.links, acc, counts, n, quadrupole, eps2, gravity.g,
        ),
        GpuWalk::Coherent => k::bh_walk_coherent(
            exec, &config, i.bodies, i.centres, i.masses, i.quads, i.links, acc, counts, n, quadrupole, eps2, gravity.g,
        ),
        GpuWalk::Group => k::bh_walk_group(
            exec, &config, i.bodies, i.centres, i.masses, i.quads, i.links, acc, counts, n, quadrupole, eps2, gravity.g,
        ),
        GpuWalk::Group64 => {
            // CUDA runs a warp per 64 targets (two per lane), WGSL an invocation per target.
            let threads = if exec.kind() == orrery_core::ExecutorKind::Cuda {
                targets.div_ceil(64) * 32
            } else {
                targets.next_multiple_of(64)
            };
            let config = LaunchConfig::per_item(threads, THREADS);
            k::bh_walk_group2(
                exec, &config, i.bodies, i.centres, i.masses, i.quads, i.links, acc, counts, n, quadrupole, eps2,
                gravity.g,
            )
        }
    }
}

/// Input-order results of a walk: accelerations, potentials and counts per body.
pub struct ScatteredOutput<E: GpuExecutor> {
    /// `G a_x` per body.
    pub ax: E::Buffer<f32>,
    /// `G a_y` per body.
    pub ay: E::Buffer<f32>,
    /// `G a_z` per body.
    pub az: E::Buffer<f32>,
    /// `G phi` per body.
    pub pot: E::Buffer<f32>,
    /// Particle-particle interactions per body.
    pub particle_particle: E::Buffer<u32>,
    /// Particle-cell interactions per body.
    pub particle_cell: E::Buffer<u32>,
}

impl<E: GpuExecutor> ScatteredOutput<E> {
    /// Buffers for `n` bodies.
    ///
    /// # Errors
    /// Device allocation failures.
    pub fn new(exec: &E, n: usize) -> Result<Self> {
        let n = n.max(1);
        Ok(Self {
            ax: exec.alloc(n)?,
            ay: exec.alloc(n)?,
            az: exec.alloc(n)?,
            pot: exec.alloc(n)?,
            particle_particle: exec.alloc(n)?,
            particle_cell: exec.alloc(n)?,
        })
    }

    /// The first `n` bodies' results.
    ///
    /// # Errors
    /// Device failures.
    pub fn download(&self, exec: &E, n: usize) -> Result<(Forces<f32>, Interactions)> {
        let f = |b: &E::Buffer<f32>| -> Result<Vec<f32>> {
            let mut v = vec![0f32; n];
            exec.read(b, 0, &mut v)?;
            Ok(v)
        };
        let u = |b: &E::Buffer<u32>| -> Result<Vec<u32>> {
            let mut v = vec![0u32; n];
            exec.read(b, 0, &mut v)?;
            Ok(v)
        };
        Ok((
            Forces { ax: f(&self.ax)?, ay: f(&self.ay)?, az: f(&self.az)?, pot: f(&self.pot)? },
            Interactions { particle_particle: u(&self.particle_particle)?, particle_cell: u(&self.particle_cell)? },
        ))
    }
}

/// Scatters the tree-order results of `walked` to input order: body `order[k]` gets
/// target `k`'s results.
///
/// # Errors
/// [`Error::LengthMismatch`] unless `order` has the walk's target count and `out` room
/// for the bodies; device failures.
pub fn scatter<'a, E: GpuExecutor>(
    exec: &E,
    walked: &WalkOutput<E>,
    order: impl Into<ViewOf<'a, E, u32>>,
    out: &mut ScatteredOutput<E>,
) -> Result<()> {
    use orrery_core::DeviceBuffer as _;
    let order = order.into();
    let n = walked.targets;
    orrery_core::executor::check_len("order", n, order.len())?;
    if out.ax.len() < n {
        return Err(Error::LengthMismatch { what: "scattered output", expected: n, actual: out.ax.len() });
    }
    let config = LaunchConfig::per_item(n, THREADS);
    let o = out;
    k::bh_scatter_forces(exec, &config, &walked.acc, order, &mut o.ax, &mut o.ay, &mut o.az, &mut o.pot, n as u32)?;
    k::bh_scatter_counts(exec, &config, &walked.counts, order, &mut o.particle_particle, &mut o.particle_cell, n as u32)
}
