//! The whole CPU evaluation: plan (node data, interaction lists, directions), upward
//! pass, M2L, downward pass, and the leaves (L2P and P2P).
//!
//! # Passes, and why they are shaped so
//! Every pass is a parallel loop over the nodes (or leaves) of one level or of all
//! levels, each task *pulling* what it needs and writing only its own node: no atomics,
//! no locks, and results that do not depend on the number of threads (bit-identical runs,
//! tested). A GPU version launches one kernel per level for the two sweeps and one for
//! M2L and for the leaves, with the same arrays:
//!
//! | pass | loop | reads | writes |
//! |---|---|---|---|
//! | upward | levels deepest first; nodes of a level | particles (P2M) or children's multipoles (M2M) | the node's multipole |
//! | M2L | all nodes | the node's M2L list, sources' multipoles | the node's local expansion |
//! | downward | levels from 1 down; nodes of a level | the parent's local expansion (L2L) | the node's local expansion |
//! | leaves | all non-empty leaves | the leaf's local expansion (L2P), its P2P sources | the leaf's particles' forces |
//!
//! Expansions are one flat `Vec<Complex>` per kind, `num_coefficients(p)` per node in the
//! view's node order. Nodes without particles keep zero expansions and get no list
//! entries; the downward pass skips nodes whose ancestors received no M2L (their local
//! expansion is zero), which saves the top levels. The two hot passes, M2L and the
//! leaves, are compiled per instruction-set level ([`crate::fmm::isa`]; same bits).
//!
//! # Precision
//! Expansions, translations and L2P are f64 for every `T`; P2P runs in `T` (see
//! [`crate::fmm::operators::p2p`]). The far field is rounded to `T` once per particle and
//! added to the near field.

use std::time::Instant;

use orrery_core::{CpuIsa, Error, Real, Result};
use orrery_tree_build::view::{NONE, TreeView};
use rayon::prelude::*;

use crate::bodies::{Forces, Gravity};
use crate::fmm::directions::{DirectionMarks, Directions};
use crate::fmm::expansions::{Complex, Order, Tables};
use crate::fmm::isa::Level;
use crate::fmm::lists::{self, InteractionLists, check_theta};
use crate::fmm::nodes::FmmNodes;
use crate::fmm::operators::{P2P_LANES, P2pBlock, Rotation, Scratch, Sources, l2l, l2p, m2l_truncated, m2m, p2m};
use crate::tree_bodies::TreeBodies;
use crate::walk::walk_eps2;

/// How translations get their rotation matrices ([`crate::fmm::operators::Rotation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rotations {
    /// The common directions (reduced keys within
    /// [`crate::fmm::directions::TABLE_KEY_BOUND`]) from a table of their own matrices,
    /// one matrix pass per rotation; the rare others through the quarter turn. The CPU
    /// default: M2L 0.73 s against 1.10 s at p = 8 (ADR 0019).
    Table,
    /// The quarter-turn matrices only: two matrix passes per rotation, no table (what a
    /// GPU kernel with `J` in shared memory does).
    QuarterTurn,
}

/// FMM settings: the expansion order, the acceptance parameter and the force law.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fmm<T: Real> {
    /// Expansion order `p` ([`crate::fmm::expansions::MIN_ORDER`]`..=`[`crate::fmm::expansions::MAX_ORDER`]).
    pub order: u32,
    /// Acceptance parameter `theta` in `(0, 1)`: M2L when `r_T + r_S < theta d`
    /// ([`crate::fmm::lists`]). Smaller is more accurate and costs more M2L and P2P.
    pub theta: f64,
    /// Newton's constant and the softening. Plummer softening applies to the near field
    /// (P2P) only: the far field is the unsoftened 1/r, which differs from the softened
    /// law by a relative `~ 1.5 eps^2 / d^2` at distance `d`.
    pub gravity: Gravity<T>,
    /// The rotation matrices of the translations.
    pub rotations: Rotations,
    /// Error-controlled M2L orders: a pair with `rho = (r_T + r_S) / d` well inside the
    /// criterion translates at the lowest order `q <= p` with `rho^q <= theta^p` (the
    /// worst accepted pair's bound at order `p`), at O(q^3) (after Dehnen 2014). Off (the
    /// default): every pair at order `p`. Measured on 3,000 clustered bodies, p = 10,
    /// theta 0.6: 0.53 of the M2L flops, acceleration p99 1.09e-4 against 4.93e-5 (about
    /// 0.7 of an order lost: a third of the M2L work saved at equal accuracy). With
    /// `max(r_T, r_S)` instead of the sum, p99 was 40x worse: typical pairs are far below
    /// the bound, and the rule put them all at it.
    pub per_pair_order: bool,
}

/// What [`Fmm::plan`] prepares for an evaluation of one tree.
#[derive(Debug, Clone)]
pub struct FmmPlan {
    /// The order's constants.
    pub tables: Tables,
    /// Centres, radii and normalised bodies.
    pub nodes: FmmNodes,
    /// The M2L and P2P lists.
    pub lists: InteractionLists,
    /// The common directions and their rotations ([`Rotations::Table`] only).
    pub directions: Option<Directions>,
    /// Direction of each M2L entry (parallel to `lists.m2l_sources`; [`NONE`]: the
    /// quarter turn; empty without a direction table).
    pub m2l_directions: Vec<u32>,
    /// Direction of each node's offset from its parent ([`NONE`] for the root or the
    /// quarter turn; empty without a direction table).
    pub parent_directions: Vec<u32>,
    /// Whether each node's local expansion can be non-zero (it or an ancestor has M2L
    /// entries).
    pub has_local: Vec<bool>,
    /// The order of each M2L entry ([`Fmm::per_pair_order`]; empty: all at `p`).
    pub m2l_orders: Vec<u8>,
}

/// Seconds per phase of one evaluation (wall clock; for benchmarks, never asserted).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FmmTimings {
    /// Node data, lists and directions.
    pub plan: f64,
    /// P2M and M2M.
    pub upward: f64,
    /// M2L.
    pub m2l: f64,
    /// L2L.
    pub downward: f64,
    /// L2P and P2P.
    pub leaves: f64,
}

impl FmmTimings {
    /// The sum of the phases.
    pub fn total(&self) -> f64 {
        self.plan + self.upward + self.m2l + self.downward + self.leaves
    }
}

/// Work counts of one evaluation.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FmmStats {
    /// M2L translations.
    pub m2l: u64,
    /// P2P leaf pairs.
    pub p2p_pairs: u64,
    /// P2P particle interactions (self pairs excluded).
    pub p2p_interactions: u64,
    /// Distinct translation directions (rotation table entries).
    pub directions: u64,
    /// Bytes of rotation matrices.
    pub rotation_bytes: u64,
    /// The instruction-set level the hot passes ran at ([`crate::fmm::isa`]).
    pub isa: CpuIsa,
    /// Seconds per phase.
    pub timings: FmmTimings,
}

impl<T: Real> Fmm<T> {
    /// Order `p`, acceptance `theta`, the law `gravity`, [`Rotations::Table`].
    pub fn new(order: u32, theta: f64, gravity: Gravity<T>) -> Self {
        Self { order, theta, gravity, rotations: Rotations::Table, per_pair_order: false }
    }

    /// Checks the settings; returns the validated order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an order out of range (`what = "expansion order"`)
    /// or a `theta` outside `(0, 1)`; [`Error::NonFiniteValue`] for a non-finite theta;
    /// errors of [`walk_eps2`] (a bad `G` or softening, [`crate::Softening::Clamped`]).
    pub fn check(&self) -> Result<Order> {
        let order = Order::new(self.order)?;
        check_theta(self.theta)?;
        walk_eps2(&self.gravity)?;
        Ok(order)
    }

    /// Node data, interaction lists and directions of `view` over `bodies` (tree order).
    ///
    /// # Errors
    /// As [`Fmm::check`], [`FmmNodes::new`] (length mismatch, no particles) and
    /// [`lists::build`].
    pub fn plan(&self, view: &TreeView<T>, bodies: &TreeBodies<T>) -> Result<FmmPlan> {
        let order = self.check()?;
        let nodes = FmmNodes::new(view, bodies)?;
        let lists = lists::build(view, &nodes, self.theta)?;
        let n = view.num_nodes() as u32;
        let parents = view.parents();
        let mut has_local = vec![false; n as usize];
        for t in 0..n {
            let parent = parents[t as usize];
            has_local[t as usize] = !lists.m2l(t).is_empty() || (parent != NONE && has_local[parent as usize]);
        }
        let tables = Tables::new(order);
        let m2l_orders =
            if self.per_pair_order { pair_orders(&nodes, &lists, order.get(), self.theta) } else { Vec::new() };
        if self.rotations == Rotations::QuarterTurn {
            return Ok(FmmPlan {
                tables,
                nodes,
                lists,
                directions: None,
                m2l_directions: Vec::new(),
                parent_directions: Vec::new(),
                has_local,
                m2l_orders,
            });
        }
        let marks = DirectionMarks::new(nodes.square_xy);
        (0..n).into_par_iter().for_each(|t| {
            let parent = parents[t as usize];
            if parent != NONE {
                marks.mark(nodes.offset(t, parent));
            }
            for &s in lists.m2l(t) {
                marks.mark(nodes.offset(t, s));
            }
        });
        let directions = marks.finish(nodes.half_unit, order);
        let m2l_directions: Vec<u32> = (0..n)
            .into_par_iter()
            .flat_map_iter(|t| {
                let (nodes, directions) = (&nodes, &directions);
                lists.m2l(t).iter().map(move |&s| directions.index(nodes.offset(t, s)))
            })
            .collect();
        let parent_directions = (0..n)
            .into_par_iter()
            .map(|t| match parents[t as usize] {
                NONE => NONE,
                parent => directions.index(nodes.offset(t, parent)),
            })
            .collect();
        Ok(FmmPlan {
            tables,
            nodes,
            lists,
            directions: Some(directions),
            m2l_directions,
            parent_directions,
            has_local,
            m2l_orders,
        })
    }

    /// Forces on every body of `bodies` (tree order), with `plan` made by [`Fmm::plan`]
    /// for the same view, bodies and settings.
    ///
    /// # Errors
    /// As [`Fmm::check`]; [`Error::LengthMismatch`] for a plan or bodies of another tree,
    /// [`Error::InvalidArgument`] for a plan of another order or rotations, or an
    /// `ORRERY_MAX_CPU_ISA` that names no level.
    pub fn evaluate(
        &self,
        view: &TreeView<T>,
        bodies: &TreeBodies<T>,
        plan: &FmmPlan,
    ) -> Result<(Forces<T>, FmmStats)> {
        self.evaluate_at(view, bodies, plan, CpuIsa::active()?)
    }

    /// [`Fmm::evaluate`] with the hot passes at instruction-set level `isa` (every level
    /// gives the same bits; [`crate::fmm::isa`]).
    ///
    /// # Errors
    /// As [`Fmm::evaluate`]; [`Error::InvalidArgument`] for a level this CPU lacks.
    pub fn evaluate_at(
        &self,
        view: &TreeView<T>,
        bodies: &TreeBodies<T>,
        plan: &FmmPlan,
        isa: CpuIsa,
    ) -> Result<(Forces<T>, FmmStats)> {
        let order = self.check()?;
        if plan.tables.order() != order {
            return Err(Error::InvalidArgument {
                what: "FMM plan",
                reason: format!("the plan is for order {}, the settings ask for {}", plan.tables.p(), order.get()),
            });
        }
        if plan.directions.is_some() != (self.rotations == Rotations::Table) {
            return Err(Error::InvalidArgument {
                what: "FMM plan",
                reason: format!("the plan was made for other rotations than {:?}", self.rotations),
            });
        }
        if plan.nodes.len() != view.num_nodes() || bodies.len() != view.num_particles() {
            return Err(Error::LengthMismatch {
                what: "FMM plan nodes",
                expected: view.num_nodes(),
                actual: plan.nodes.len(),
            });
        }
        let eps2 = walk_eps2(&self.gravity)?;
        let level = Level::of(isa)?;
        let mut timings = FmmTimings::default();
        let clock = Instant::now();
        let multipoles = upward(plan, view, bodies);
        timings.upward = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        let mut locals = m2l_pass(plan, &multipoles, level);
        timings.m2l = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        downward(plan, view, &mut locals);
        timings.downward = clock.elapsed().as_secs_f64();
        let clock = Instant::now();
        let forces = leaves(plan, view, bodies, &locals, eps2, self.gravity.g, level);
        timings.leaves = clock.elapsed().as_secs_f64();
        let stats = FmmStats {
            m2l: plan.lists.num_m2l() as u64,
            p2p_pairs: plan.lists.num_p2p() as u64,
            p2p_interactions: plan.lists.p2p_interactions(view),
            directions: plan.directions.as_ref().map_or(0, |d| d.len() as u64),
            rotation_bytes: plan.directions.as_ref().map_or(0, |d| d.table.bytes() as u64),
            isa: level.isa(),
            timings,
        };
        Ok((forces, stats))
    }

    /// [`Fmm::plan`] then [`Fmm::evaluate`]: forces in tree order and the work done.
    ///
    /// # Errors
    /// As both.
    pub fn run(&self, view: &TreeView<T>, bodies: &TreeBodies<T>) -> Result<(Forces<T>, FmmStats)> {
        let clock = Instant::now();
        let plan = self.plan(view, bodies)?;
        let planned = clock.elapsed().as_secs_f64();
        let (forces, mut stats) = self.evaluate(view, bodies, &plan)?;
        stats.timings.plan = planned;
        Ok((forces, stats))
    }
}

impl FmmPlan {
    /// The rotation of a direction index (of `m2l_directions` or `parent_directions`).
    #[inline]
    fn rotation(&self, direction: Option<&u32>) -> Rotation<'_> {
        match (&self.directions, direction) {
            (Some(d), Some(&i)) if i != NONE => Rotation::Direct(d.table.get(i as usize)),
            _ => Rotation::Quarter(self.tables.quarter_turn()),
        }
    }

    /// The rotation of node `node`'s offset from its parent.
    #[inline]
    fn parent_rotation(&self, node: u32) -> Rotation<'_> {
        self.rotation(self.parent_directions.get(node as usize))
    }

    /// The rotation of M2L entry `entry`.
    #[inline]
    fn m2l_rotation(&self, entry: usize) -> Rotation<'_> {
        self.rotation(self.m2l_directions.get(entry))
    }
}

/// The order of every M2L entry (see [`Fmm::per_pair_order`]): the lowest `q` in `1..=p`
/// with `rho^q <= theta^p`, `rho = (r_T + r_S) / |c_T - c_S|` (`rho < theta` for an
/// accepted pair).
fn pair_orders(nodes: &FmmNodes, lists: &InteractionLists, p: u32, theta: f64) -> Vec<u8> {
    let target = f64::from(p) * theta.ln();
    (0..nodes.len() as u32)
        .into_par_iter()
        .flat_map_iter(|t| {
            lists.m2l(t).iter().map(move |&s| {
                let d = nodes.shift(t, s);
                let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                let rho = (nodes.radii[t as usize] + nodes.radii[s as usize]) / dist;
                let q = if rho > 0.0 { (target / rho.ln()).ceil() } else { 1.0 };
                q.clamp(1.0, f64::from(p)) as u8
            })
        })
        .collect()
}

/// The multipoles of every node (P2M at leaves, M2M upwards), `num_coefficients(p)` per
/// node in node order.
pub fn upward<T: Real>(plan: &FmmPlan, view: &TreeView<T>, bodies: &TreeBodies<T>) -> Vec<Complex> {
    let tab = &plan.tables;
    let nc = tab.coefficients();
    let nodes = &plan.nodes;
    let mut multipoles = vec![Complex::ZERO; view.num_nodes() * nc];
    for level in (0..=view.depth()).rev() {
        let range = view.level_range(level).expect("levels 0..=depth exist");
        let (head, deeper) = multipoles.split_at_mut(range.end as usize * nc);
        let this = &mut head[range.start as usize * nc..];
        let deeper: &[Complex] = deeper;
        this.par_chunks_mut(nc).enumerate().for_each_init(Scratch::new, |w, (k, out)| {
            let node = range.start + k as u32;
            if view.particle_counts()[node as usize] == 0 {
                return;
            }
            match view.children(node) {
                None => {
                    let c = nodes.centres[node as usize];
                    for j in view.particles(node) {
                        let x = nodes.positions[j as usize];
                        let d = [x[0] - c[0], x[1] - c[1], x[2] - c[2]];
                        p2m(tab, d, bodies.m[j as usize].into(), out, &mut w.a);
                    }
                }
                Some(children) => {
                    for child in children {
                        if view.particle_counts()[child as usize] == 0 {
                            continue;
                        }
                        let at = (child - range.end) as usize * nc;
                        let rot = plan.parent_rotation(child);
                        m2m(tab, rot, nodes.shift(child, node), &deeper[at..at + nc], out, w);
                    }
                }
            }
        });
    }
    multipoles
}

/// The M2L sums of every node: the local expansions before the downward pass, with the
/// pass compiled for `level`.
pub fn m2l_pass(plan: &FmmPlan, multipoles: &[Complex], level: Level) -> Vec<Complex> {
    let nc = plan.tables.coefficients();
    let mut locals = vec![Complex::ZERO; plan.nodes.len() * nc];
    locals.par_chunks_mut(nc).enumerate().for_each_init(Scratch::new, |w, (t, out)| match level {
        Level::Baseline => m2l_target(plan, t as u32, multipoles, out, w),
        Level::X86_64V3 => {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `Level::X86_64V3` exists only where the CPU supports x86-64-v3.
            unsafe {
                m2l_target_v3(plan, t as u32, multipoles, out, w);
            }
            #[cfg(not(target_arch = "x86_64"))]
            m2l_target(plan, t as u32, multipoles, out, w);
        }
    });
    locals
}

/// The M2L sum of target node `t` into `out`.
#[allow(clippy::inline_always, reason = "inlined into each level's copy (crate::fmm::isa)")]
#[inline(always)]
fn m2l_target(plan: &FmmPlan, t: u32, multipoles: &[Complex], out: &mut [Complex], w: &mut Scratch) {
    let tab = &plan.tables;
    let nc = tab.coefficients();
    let first = plan.lists.m2l_offsets[t as usize] as usize;
    for (k, &s) in plan.lists.m2l(t).iter().enumerate() {
        let rot = plan.m2l_rotation(first + k);
        let at = s as usize * nc;
        let q = plan.m2l_orders.get(first + k).map_or(tab.p(), |&q| u32::from(q));
        m2l_truncated(tab, q, rot, plan.nodes.shift(t, s), &multipoles[at..at + nc], out, w);
    }
}

/// [`m2l_target`] compiled for x86-64-v3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn m2l_target_v3(plan: &FmmPlan, t: u32, multipoles: &[Complex], out: &mut [Complex], w: &mut Scratch) {
    m2l_target(plan, t, multipoles, out, w);
}

/// Adds each parent's local expansion to its children's (L2L), level by level from the
/// root down.
pub fn downward<T: Real>(plan: &FmmPlan, view: &TreeView<T>, locals: &mut [Complex]) {
    let tab = &plan.tables;
    let nc = tab.coefficients();
    for level in 1..=view.depth() {
        let range = view.level_range(level).expect("levels 0..=depth exist");
        let (upper, rest) = locals.split_at_mut(range.start as usize * nc);
        let upper: &[Complex] = upper;
        let this = &mut rest[..range.len() * nc];
        this.par_chunks_mut(nc).enumerate().for_each_init(Scratch::new, |w, (k, out)| {
            let node = range.start + k as u32;
            let parent = view.parents()[node as usize];
            if !plan.has_local[parent as usize] || view.particle_counts()[node as usize] == 0 {
                return;
            }
            let rot = plan.parent_rotation(node);
            let at = parent as usize * nc;
            l2l(tab, rot, plan.nodes.shift(node, parent), &upper[at..at + nc], out, w);
        });
    }
}

/// The particle runs of P2P sources `sources` into `runs`: the leaves' ranges sorted by
/// first particle and merged where they touch (source leaves are mostly neighbours on the
/// curve, so a list of ~27 leaves becomes a few long runs, and the P2P kernel reloads its
/// targets less often). The sum order is the runs' order: fixed by the tree.
fn source_runs<T: Real>(view: &TreeView<T>, sources: &[u32], runs: &mut Vec<(usize, usize)>) {
    runs.clear();
    runs.extend(sources.iter().map(|&s| {
        let r = view.particles(s);
        (r.start as usize, r.end as usize)
    }));
    runs.sort_unstable();
    let mut merged = 0;
    for k in 0..runs.len() {
        if merged > 0 && runs[merged - 1].1 == runs[k].0 {
            runs[merged - 1].1 = runs[k].1;
        } else {
            runs[merged] = runs[k];
            merged += 1;
        }
    }
    runs.truncate(merged);
}

/// What the leaves pass reads, shared by every leaf.
struct LeafInputs<'a, T: Real> {
    plan: &'a FmmPlan,
    view: &'a TreeView<T>,
    bodies: &'a TreeBodies<T>,
    locals: &'a [Complex],
    eps2: T,
    g: T,
    /// `G / scale^2` and `-G / scale`: the far field's factors in the frame.
    far: (f64, f64),
}

/// Forces on every body (tree order): L2P of each leaf's local expansion plus P2P over
/// its list, `G` and the frame's scale applied, with the pass compiled for `level`.
pub fn leaves<T: Real>(
    plan: &FmmPlan,
    view: &TreeView<T>,
    bodies: &TreeBodies<T>,
    locals: &[Complex],
    eps2: T,
    g: T,
    level: Level,
) -> Forces<T> {
    let nodes = &plan.nodes;
    let mut out = vec![[T::zero(); 4]; bodies.len()];
    // One output slice per leaf: leaves in leaf order tile the particles.
    let mut slices = Vec::with_capacity(view.num_leaves());
    let mut rest: &mut [[T; 4]] = &mut out;
    for &leaf in view.leaf_nodes() {
        let (mine, tail) = rest.split_at_mut(view.particle_counts()[leaf as usize] as usize);
        if !mine.is_empty() {
            slices.push((leaf, mine));
        }
        rest = tail;
    }
    let gf: f64 = g.into();
    let far = (gf / (nodes.frame.scale * nodes.frame.scale), -gf / nodes.frame.scale);
    let inputs = LeafInputs { plan, view, bodies, locals, eps2, g, far };
    slices.into_par_iter().for_each_init(
        || (Scratch::new(), Vec::new()),
        |(w, runs), (leaf, mine)| match level {
            Level::Baseline => leaf_forces(&inputs, leaf, mine, w, runs),
            Level::X86_64V3 => {
                #[cfg(target_arch = "x86_64")]
                // SAFETY: a `Level::X86_64V3` exists only where the CPU supports x86-64-v3.
                unsafe {
                    leaf_forces_v3(&inputs, leaf, mine, w, runs);
                }
                #[cfg(not(target_arch = "x86_64"))]
                leaf_forces(&inputs, leaf, mine, w, runs);
            }
        },
    );
    let mut forces = Forces::zeros(bodies.len());
    for (i, f) in out.into_iter().enumerate() {
        forces.ax[i] = f[0];
        forces.ay[i] = f[1];
        forces.az[i] = f[2];
        forces.pot[i] = f[3];
    }
    forces
}

/// The forces on the particles of `leaf` into `mine`.
#[allow(clippy::inline_always, reason = "inlined into each level's copy (crate::fmm::isa)")]
#[inline(always)]
fn leaf_forces<T: Real>(
    inputs: &LeafInputs<'_, T>,
    leaf: u32,
    mine: &mut [[T; 4]],
    w: &mut Scratch,
    runs: &mut Vec<(usize, usize)>,
) {
    let LeafInputs { plan, view, bodies, locals, eps2, g, far: (far_acc, far_pot) } = *inputs;
    let tab = &plan.tables;
    let nc = tab.coefficients();
    let nodes = &plan.nodes;
    let all = Sources { x: &bodies.x, y: &bodies.y, z: &bodies.z, m: &bodies.m };
    let first = view.particles(leaf).start as usize;
    let local = &locals[leaf as usize * nc..(leaf as usize + 1) * nc];
    let far = plan.has_local[leaf as usize];
    let c = nodes.centres[leaf as usize];
    source_runs(view, plan.lists.p2p(leaf), runs);
    for b in (0..mine.len()).step_by(P2P_LANES) {
        let len = P2P_LANES.min(mine.len() - b);
        let at = first + b;
        let mut block = P2pBlock::new(&bodies.x[at..at + len], &bodies.y[at..at + len], &bodies.z[at..at + len]);
        for &(begin, end) in runs.iter() {
            let src = all.range(begin..end);
            if (begin..end).contains(&at) {
                block.add_excluding(src, eps2, at - begin);
            } else {
                block.add(src, eps2);
            }
        }
        for l in 0..len {
            let near = block.lane(l);
            let i = at + l;
            let mut f = [g * near[0], g * near[1], g * near[2], g * near[3]];
            if far {
                let x = nodes.positions[i];
                let e = l2p(tab, local, [x[0] - c[0], x[1] - c[1], x[2] - c[2]], &mut w.a);
                f[0] += <T as Real>::from_f64(far_acc * e[1]);
                f[1] += <T as Real>::from_f64(far_acc * e[2]);
                f[2] += <T as Real>::from_f64(far_acc * e[3]);
                f[3] += <T as Real>::from_f64(far_pot * e[0]);
            }
            mine[b + l] = f;
        }
    }
}

/// [`leaf_forces`] compiled for x86-64-v3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
fn leaf_forces_v3<T: Real>(
    inputs: &LeafInputs<'_, T>,
    leaf: u32,
    mine: &mut [[T; 4]],
    w: &mut Scratch,
    runs: &mut Vec<(usize, usize)>,
) {
    leaf_forces(inputs, leaf, mine, w, runs);
}
