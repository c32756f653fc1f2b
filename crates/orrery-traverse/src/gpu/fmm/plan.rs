//! [`DeviceFmmPlan`]: what the FMM passes read, uploaded once per tree from the host
//! [`FmmPlan`] and [`TreeView`] (the host builds the interaction lists: the lists' GPU
//! port is not written yet).

use orrery_core::gpu::GpuExecutor;
use orrery_core::{Error, Result, Storage};
use orrery_tree_build::view::{NONE, TreeView};

use super::kernels::MAX_ORDER;
use crate::fmm::evaluate::FmmPlan;
use crate::fmm::expansions::Tables;

/// The plan of one tree in device memory: node data, the tree's links, the CSR lists
/// (each P2P list sorted by first particle, the CPU's summation order) and the order's
/// tables, plus the host-side level ranges the per-level launches are sized from.
pub struct DeviceFmmPlan<E: GpuExecutor> {
    /// The expansion order.
    pub(crate) p: u32,
    /// Nodes.
    pub(crate) nodes: u32,
    /// Particles.
    pub(crate) particles: u32,
    /// Children per internal node.
    pub(crate) children: u32,
    /// `(first node, nodes)` of each level, root first.
    pub(crate) levels: Vec<(u32, u32)>,
    /// Every leaf, and their number.
    pub(crate) leaves: E::Buffer<u32>,
    pub(crate) leaves_count: u32,
    /// The leaves with particles, and their number.
    pub(crate) occupied: E::Buffer<u32>,
    pub(crate) occupied_count: u32,
    pub(crate) tables: E::Buffer<f64>,
    pub(crate) grid: E::Buffer<i64>,
    pub(crate) centres: E::Buffer<f64>,
    pub(crate) begins: E::Buffer<u32>,
    pub(crate) counts: E::Buffer<u32>,
    pub(crate) first_children: E::Buffer<u32>,
    pub(crate) parents: E::Buffer<u32>,
    pub(crate) has_local: E::Buffer<u32>,
    pub(crate) particle_nodes: E::Buffer<u32>,
    pub(crate) m2l_offsets: E::Buffer<u32>,
    pub(crate) m2l_sources: E::Buffer<u32>,
    pub(crate) p2p_offsets: E::Buffer<u32>,
    pub(crate) p2p_sources: E::Buffer<u32>,
    /// The rotation blocks of the plan's directions ([`crate::fmm::Rotations::Table`]:
    /// `rotation::stride(p)` f64 per direction, the CPU's table; one pad without one).
    pub(crate) directions: E::Buffer<f64>,
    /// Direction of each M2L entry and of each node's offset from its parent (`NONE`: the
    /// quarter turn; all `NONE` for a plan without directions).
    pub(crate) m2l_directions: E::Buffer<u32>,
    pub(crate) parent_directions: E::Buffer<u32>,
    /// Distinct directions of the table (for reports).
    pub(crate) direction_count: u32,
    /// The frame: lower corner and `1 / scale`.
    pub(crate) origin: [f64; 3],
    pub(crate) inv_scale: f64,
    /// `scale` (the far field's factors need it).
    pub(crate) scale: f64,
    /// Half an integer cell per axis, in the frame.
    pub(crate) half_unit: [f64; 3],
    /// M2L entries and P2P leaf pairs (for reports).
    pub(crate) m2l_pairs: u64,
    pub(crate) p2p_pairs: u64,
}

/// The tables of `tables` in the layout of `fmm.cu` (`fmm_tables_*`): `s`, `1 / s`
/// (degrees to `p + 1`), `j!`, `1 / j!` (`j <= 2p + 2`), `1 / ((n - m)(n + m))`
/// (degrees to `p + 1`), then the quarter turn's blocks.
pub fn pack_tables(tables: &Tables) -> Vec<f64> {
    let mut out = Vec::new();
    out.extend_from_slice(&tables.s);
    out.extend_from_slice(&tables.inv_s);
    out.extend_from_slice(&tables.factorial);
    out.extend_from_slice(&tables.inv_factorial);
    out.extend_from_slice(&tables.inv_nm);
    out.extend_from_slice(tables.quarter_turn());
    out
}

/// The plan's rotation table and the direction of every M2L entry and parent offset, as
/// the direction-table kernels read them (`NONE` everywhere without a table: every
/// translation through the quarter turn, as the CPU's [`crate::fmm::Rotations::QuarterTurn`]).
///
/// # Errors
/// [`Error::LengthMismatch`] for direction arrays of another list or tree.
fn direction_arrays(plan: &FmmPlan, nodes: usize) -> Result<(&[f64], Vec<u32>, Vec<u32>)> {
    let entries = plan.lists.m2l_sources.len();
    let Some(directions) = &plan.directions else {
        return Ok((&[], vec![NONE; entries], vec![NONE; nodes]));
    };
    if plan.m2l_directions.len() != entries {
        return Err(Error::LengthMismatch {
            what: "FMM plan M2L directions",
            expected: entries,
            actual: plan.m2l_directions.len(),
        });
    }
    if plan.parent_directions.len() != nodes {
        return Err(Error::LengthMismatch {
            what: "FMM plan parent directions",
            expected: nodes,
            actual: plan.parent_directions.len(),
        });
    }
    Ok((directions.table.data(), plan.m2l_directions.clone(), plan.parent_directions.clone()))
}

/// `data`, or one `pad` element for an empty slice (GPU buffers are never empty).
fn upload<E: GpuExecutor, T: Storage>(exec: &E, data: &[T], pad: T) -> Result<E::Buffer<T>> {
    if data.is_empty() { exec.upload(&[pad]) } else { exec.upload(data) }
}

impl<E: GpuExecutor> DeviceFmmPlan<E> {
    /// Uploads `plan` (made by [`crate::fmm::Fmm::plan`] for `view`).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for a plan of another tree; [`Error::InvalidArgument`]
    /// for an order above the kernels' [`MAX_ORDER`]; allocation failures.
    pub fn new(exec: &E, view: &TreeView<f32>, plan: &FmmPlan) -> Result<Self> {
        let n = view.num_nodes();
        if plan.nodes.len() != n || plan.has_local.len() != n || plan.lists.m2l_offsets.len() != n + 1 {
            return Err(Error::LengthMismatch { what: "FMM plan nodes", expected: n, actual: plan.nodes.len() });
        }
        let p = plan.tables.p();
        if p > MAX_ORDER {
            return Err(Error::InvalidArgument {
                what: "expansion order",
                reason: format!("p = {p}: the GPU kernels handle orders up to {MAX_ORDER}"),
            });
        }
        let nodes = &plan.nodes;
        let grid: Vec<i64> = nodes.grid.iter().flatten().copied().collect();
        let centres: Vec<f64> = nodes.centres.iter().flatten().copied().collect();
        let has_local: Vec<u32> = plan.has_local.iter().map(|&b| u32::from(b)).collect();
        let mut particle_nodes = vec![0u32; view.num_particles()];
        let mut occupied = Vec::new();
        for &leaf in view.leaf_nodes() {
            let range = view.particles(leaf);
            if !range.is_empty() {
                occupied.push(leaf);
            }
            particle_nodes[range.start as usize..range.end as usize].fill(leaf);
        }
        // Each P2P list by first particle: the CPU sums its merged runs in that order.
        let lists = &plan.lists;
        let mut p2p_sources = lists.p2p_sources.clone();
        for t in 0..n {
            let (a, b) = (lists.p2p_offsets[t] as usize, lists.p2p_offsets[t + 1] as usize);
            p2p_sources[a..b].sort_unstable_by_key(|&s| view.particle_begins()[s as usize]);
        }
        let levels =
            (0..=view.depth()).filter_map(|l| view.level_range(l)).map(|r| (r.start, r.end - r.start)).collect();
        let frame = nodes.frame;
        let (directions, m2l_directions, parent_directions) = direction_arrays(plan, n)?;
        Ok(Self {
            p,
            nodes: n as u32,
            particles: view.num_particles() as u32,
            children: view.layout().children(),
            levels,
            leaves: upload(exec, view.leaf_nodes(), 0)?,
            leaves_count: view.leaf_nodes().len() as u32,
            occupied_count: occupied.len() as u32,
            occupied: upload(exec, &occupied, 0)?,
            tables: upload(exec, &pack_tables(&plan.tables), 0.0)?,
            grid: upload(exec, &grid, 0)?,
            centres: upload(exec, &centres, 0.0)?,
            begins: upload(exec, view.particle_begins(), 0)?,
            counts: upload(exec, view.particle_counts(), 0)?,
            first_children: upload(exec, view.first_children(), NONE)?,
            parents: upload(exec, view.parents(), NONE)?,
            has_local: upload(exec, &has_local, 0)?,
            particle_nodes: upload(exec, &particle_nodes, 0)?,
            m2l_offsets: upload(exec, &lists.m2l_offsets, 0)?,
            m2l_sources: upload(exec, &lists.m2l_sources, 0)?,
            p2p_offsets: upload(exec, &lists.p2p_offsets, 0)?,
            p2p_sources: upload(exec, &p2p_sources, 0)?,
            direction_count: plan.directions.as_ref().map_or(0, |d| d.len() as u32),
            directions: upload(exec, directions, 0.0)?,
            m2l_directions: upload(exec, &m2l_directions, NONE)?,
            parent_directions: upload(exec, &parent_directions, NONE)?,
            origin: frame.origin,
            inv_scale: 1.0 / frame.scale,
            scale: frame.scale,
            half_unit: nodes.half_unit,
            m2l_pairs: lists.num_m2l() as u64,
            p2p_pairs: lists.num_p2p() as u64,
        })
    }

    /// The expansion order.
    pub fn order(&self) -> u32 {
        self.p
    }

    /// Nodes of the tree.
    pub fn nodes(&self) -> usize {
        self.nodes as usize
    }

    /// Particles of the tree.
    pub fn particles(&self) -> usize {
        self.particles as usize
    }

    /// M2L translations of one evaluation.
    pub fn m2l_pairs(&self) -> u64 {
        self.m2l_pairs
    }

    /// P2P leaf pairs of one evaluation.
    pub fn p2p_pairs(&self) -> u64 {
        self.p2p_pairs
    }

    /// Distinct directions of the rotation table (0 for a plan without one).
    pub fn directions(&self) -> u32 {
        self.direction_count
    }
}
