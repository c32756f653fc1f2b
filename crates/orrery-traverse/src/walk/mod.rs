//! Barnes-Hut tree walks on the CPU: per target and per target group.
//!
//! Both walks are stackless: node data ([`WalkNodes`]) carry each node's first child
//! and escape (the next node in preorder after its subtree), so a walk is a loop over one
//! node index that moves to the first child when it opens an internal node and to the
//! escape otherwise. Targets are the bodies in tree order ([`TreeBodies`]), rayon spreads
//! them over the cores in that order (neighbours walk nearly the same nodes, which keeps
//! the caches warm), and the results come back in tree order with the interaction counts
//! of every target.
//!
//! - [`walk_targets`]: each target applies the opening test of [`crate::mac`] to its own
//!   position. The GPU's independent and coherent walks visit exactly these nodes in this
//!   order for every target: their per-target counts equal these.
//! - [`walk_groups`]: consecutive targets in tree order form groups; a group opens a
//!   node when the nearest point of its bounding box would (so the decision holds for
//!   each of its targets), and every target of the group evaluates the group's one list
//!   of cells (in walk order), then the particles of its opened leaves (in walk order).
//!   More interactions per target than its own walk, never fewer accepted cells too
//!   close: at least as accurate.

mod interaction;
mod nodes;

pub use interaction::{FLOPS_M2P_MONOPOLE, FLOPS_M2P_QUADRUPOLE, FLOPS_P2P, m2p, p2p};
pub use nodes::WalkNodes;

use orrery_core::{Error, Real, Result};
use orrery_tree_build::view::NONE;
use rayon::prelude::*;

use crate::bodies::{Forces, Gravity, Softening};
use crate::mac::{box_distance2, distance2};
use crate::multipole::Expansion;
use crate::tree_bodies::TreeBodies;

/// Interactions evaluated per target, in the targets' order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Interactions {
    /// Particle-particle interactions (source bodies, the target itself excluded).
    pub particle_particle: Vec<u32>,
    /// Particle-cell interactions (accepted nodes).
    pub particle_cell: Vec<u32>,
}

impl Interactions {
    /// Sum of the particle-particle counts.
    pub fn total_particle_particle(&self) -> u64 {
        self.particle_particle.iter().map(|&c| u64::from(c)).sum()
    }

    /// Sum of the particle-cell counts.
    pub fn total_particle_cell(&self) -> u64 {
        self.particle_cell.iter().map(|&c| u64::from(c)).sum()
    }
}

/// `eps^2` of a walk's force law: walks evaluate Plummer softening only.
///
/// # Errors
/// As [`Gravity::check`]; [`Error::InvalidArgument`] for [`Softening::Clamped`].
pub fn walk_eps2<T: Real>(gravity: &Gravity<T>) -> Result<T> {
    gravity.check()?;
    match gravity.softening {
        Softening::Plummer(eps) => Ok(eps * eps),
        Softening::Clamped(_) => Err(Error::InvalidArgument {
            what: "softening",
            reason: "the walks evaluate Plummer softening; Softening::Clamped is for direct-summation references"
                .into(),
        }),
    }
}

fn check_inputs<T: Real>(nodes: &WalkNodes<T>, bodies: &TreeBodies<T>) -> Result<()> {
    if bodies.is_empty() {
        return Err(Error::EmptyInput { what: "tree bodies", min: 1 });
    }
    nodes.check(bodies.len())
}

fn finish<T: Real>(results: Vec<([T; 4], u32, u32)>, g: T) -> (Forces<T>, Interactions) {
    let mut f = Forces::zeros(results.len());
    let mut counts = Interactions { particle_particle: vec![0; results.len()], particle_cell: vec![0; results.len()] };
    for (i, (acc, pp, pc)) in results.into_iter().enumerate() {
        f.ax[i] = g * acc[0];
        f.ay[i] = g * acc[1];
        f.az[i] = g * acc[2];
        f.pot[i] = g * acc[3];
        counts.particle_particle[i] = pp;
        counts.particle_cell[i] = pc;
    }
    (f, counts)
}

/// The stackless walk itself: from the root, skips nodes without particles, opens a
/// node when `opens(centre)` holds (descending into an internal node, handing a leaf to
/// `leaf`), and hands every other node to `accepted`; both callbacks get `state` and see
/// nodes in walk order. Every walk of this module (and each GPU kernel) is this loop.
#[inline]
fn visit<T: Real, S>(
    nodes: &WalkNodes<T>,
    state: &mut S,
    opens: impl Fn([T; 4]) -> bool,
    accepted: impl Fn(&mut S, usize, [T; 4]),
    leaf: impl Fn(&mut S, usize),
) {
    let mut node = 0u32;
    while node != NONE {
        let k = node as usize;
        let [first, escape, _, count] = nodes.links[k];
        if count == 0 {
            node = escape;
            continue;
        }
        let c = nodes.centres[k];
        if opens(c) {
            if first != NONE {
                node = first;
                continue;
            }
            leaf(state, k);
        } else {
            accepted(state, k, c);
        }
        node = escape;
    }
}

/// The walk of one target (tree position `i`): accumulated `[a, phi]` (unscaled by `G`)
/// and its particle-particle and particle-cell counts.
fn walk_one<T: Real>(
    nodes: &WalkNodes<T>,
    b: &TreeBodies<T>,
    i: usize,
    eps2: T,
    quadrupole: bool,
) -> ([T; 4], u32, u32) {
    let xi = b.position(i);
    let mut state = ([T::zero(); 4], 0u32, 0u32);
    visit(
        nodes,
        &mut state,
        |c| distance2([c[0], c[1], c[2]], xi) < c[3],
        |(acc, _, pc), k, c| {
            m2p(acc, xi, c, nodes.masses[k], nodes.quads[k], eps2, quadrupole);
            *pc += 1;
        },
        |(acc, pp, _), k| {
            let [_, _, begin, count] = nodes.links[k];
            for j in begin as usize..(begin + count) as usize {
                if j != i {
                    p2p(acc, xi, b.position(j), b.m[j], eps2);
                    *pp += 1;
                }
            }
        },
    );
    state
}

/// The per-target walk of every body (see the [module documentation](self)): forces and
/// counts in tree order.
///
/// # Errors
/// [`Error::EmptyInput`] without bodies; as [`WalkNodes::check`] and [`walk_eps2`].
pub fn walk_targets<T: Real>(
    nodes: &WalkNodes<T>,
    bodies: &TreeBodies<T>,
    gravity: &Gravity<T>,
    expansion: Expansion,
) -> Result<(Forces<T>, Interactions)> {
    check_inputs(nodes, bodies)?;
    let eps2 = walk_eps2(gravity)?;
    let quadrupole = expansion == Expansion::Quadrupole;
    let results = (0..bodies.len())
        .into_par_iter()
        .with_min_len(64)
        .map(|i| walk_one(nodes, bodies, i, eps2, quadrupole))
        .collect();
    Ok(finish(results, gravity.g))
}

/// The lists of one group: accepted cells and opened leaves, in walk order.
fn group_lists<T: Real>(nodes: &WalkNodes<T>, centre: [T; 3], half: [T; 3]) -> (Vec<u32>, Vec<u32>) {
    let mut lists = (Vec::new(), Vec::new());
    visit(
        nodes,
        &mut lists,
        |c| box_distance2([c[0], c[1], c[2]], centre, half) < c[3],
        |(cells, _), k, _| cells.push(k as u32),
        |(_, leaves), k| leaves.push(k as u32),
    );
    lists
}

/// The bounding box of tree positions `range` as centre `(lo + hi) / 2` and
/// half-extents `(hi - lo) / 2`.
pub fn group_box<T: Real>(b: &TreeBodies<T>, range: std::ops::Range<usize>) -> ([T; 3], [T; 3]) {
    let (mut lo, mut hi) = (b.position(range.start), b.position(range.start));
    for i in range {
        let p = b.position(i);
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let half = T::one() / (T::one() + T::one());
    let centre = [(lo[0] + hi[0]) * half, (lo[1] + hi[1]) * half, (lo[2] + hi[2]) * half];
    let extent = [(hi[0] - lo[0]) * half, (hi[1] - lo[1]) * half, (hi[2] - lo[2]) * half];
    (centre, extent)
}

/// The group walk (see the [module documentation](self)): groups of `group_size`
/// consecutive targets in tree order (the last one may be smaller); forces and counts in
/// tree order (every target of a group has the group's cell count; its particle count
/// is the group's, minus one for itself).
///
/// # Errors
/// [`Error::InvalidArgument`] for `group_size` 0; as [`walk_targets`].
pub fn walk_groups<T: Real>(
    nodes: &WalkNodes<T>,
    bodies: &TreeBodies<T>,
    gravity: &Gravity<T>,
    expansion: Expansion,
    group_size: usize,
) -> Result<(Forces<T>, Interactions)> {
    if group_size == 0 {
        return Err(Error::InvalidArgument { what: "group size", reason: "a group holds at least one target".into() });
    }
    check_inputs(nodes, bodies)?;
    let eps2 = walk_eps2(gravity)?;
    let quadrupole = expansion == Expansion::Quadrupole;
    let n = bodies.len();
    let results: Vec<Vec<([T; 4], u32, u32)>> = (0..n.div_ceil(group_size))
        .into_par_iter()
        .map(|g| {
            let range = g * group_size..((g + 1) * group_size).min(n);
            let (centre, half) = group_box(bodies, range.clone());
            let (cells, leaves) = group_lists(nodes, centre, half);
            range
                .map(|i| {
                    let xi = bodies.position(i);
                    let mut acc = [T::zero(); 4];
                    for &c in &cells {
                        let k = c as usize;
                        m2p(&mut acc, xi, nodes.centres[k], nodes.masses[k], nodes.quads[k], eps2, quadrupole);
                    }
                    let mut pp = 0u32;
                    for &l in &leaves {
                        let [_, _, begin, count] = nodes.links[l as usize];
                        for j in begin as usize..(begin + count) as usize {
                            if j != i {
                                p2p(&mut acc, xi, bodies.position(j), bodies.m[j], eps2);
                                pp += 1;
                            }
                        }
                    }
                    (acc, pp, cells.len() as u32)
                })
                .collect()
        })
        .collect();
    Ok(finish(results.into_iter().flatten().collect(), gravity.g))
}

/// The nodes a per-target walk interacts with for the target at tree position `i`, in
/// walk order: accepted nodes (`true`, one particle-cell interaction each) and opened
/// leaves (`false`, whose particles it sums); for tests and for explaining a walk.
pub fn walk_trace<T: Real>(nodes: &WalkNodes<T>, bodies: &TreeBodies<T>, i: usize) -> Vec<(u32, bool)> {
    let xi = bodies.position(i);
    let mut trace = Vec::new();
    visit(
        nodes,
        &mut trace,
        |c| distance2([c[0], c[1], c[2]], xi) < c[3],
        |t, k, _| t.push((k as u32, true)),
        |t, k| t.push((k as u32, false)),
    );
    trace
}

/// Nodes a per-target walk visits for the target at tree position `i`: every node whose
/// links it loads (opened, accepted, and nodes without particles it skips), the loop
/// iterations of [`walk_targets`] and of the GPU's independent walk for that target.
pub fn node_visits<T: Real>(nodes: &WalkNodes<T>, bodies: &TreeBodies<T>, i: usize) -> u32 {
    visits(nodes, |c| distance2([c[0], c[1], c[2]], bodies.position(i)) < c[3])
}

/// Nodes the group walk visits for the group of tree positions `range` (the loop
/// iterations of [`walk_groups`] for that group and of the GPU's group walks).
pub fn group_node_visits<T: Real>(nodes: &WalkNodes<T>, bodies: &TreeBodies<T>, range: std::ops::Range<usize>) -> u32 {
    let (centre, half) = group_box(bodies, range);
    visits(nodes, |c| box_distance2([c[0], c[1], c[2]], centre, half) < c[3])
}

fn visits<T: Real>(nodes: &WalkNodes<T>, opens: impl Fn([T; 4]) -> bool) -> u32 {
    let (mut node, mut visited) = (0u32, 0u32);
    while node != NONE {
        visited += 1;
        let [first, escape, _, count] = nodes.links[node as usize];
        let open = count != 0 && opens(nodes.centres[node as usize]);
        node = if open && first != NONE { first } else { escape };
    }
    visited
}
