//! Interaction lists on the adaptive tree: which node pairs interact by M2L and which
//! leaf pairs by P2P, from a dual tree traversal (Dehnen 2002, Appel 1985) with a
//! multipole acceptance criterion.
//!
//! # The traversal
//! For an ordered pair (target `T`, source `S`), starting from (root, root):
//! 1. an empty `T` or `S` has nothing to do;
//! 2. `T = S`: a leaf is P2P with itself; an internal node becomes every pair of its
//!    children (`t`, `s`);
//! 3. `(r_T + r_S) < theta |c_T - c_S|` (radii and centres of [`crate::fmm::nodes`]):
//!    M2L from `S` into `T`;
//! 4. two leaves: P2P from `S` into `T`;
//! 5. otherwise split `T` (into its children against `S`) when `S` is a leaf or `T` is
//!    internal with `r_T >= r_S`, else split `S`.
//!
//! Every step partitions the pair's particle pairs among the pairs it makes, so every
//! target-source particle pair (the self pair aside) ends in exactly one M2L or P2P
//! entry: the near and the far field cover the whole sum once ([`check_coverage`] proves
//! it on a given tree). Criterion 3 with `theta < 1` keeps the two particle balls
//! disjoint, so every expansion converges where it is evaluated, and an ancestor is never
//! accepted for its descendant (their balls intersect).
//!
//! # Target-centric and level by level
//! Steps 2 and 5 split either side, but each decision depends only on the pair, so the
//! traversal can run per target node: a node receives the sources its parent deferred
//! ("split the target"), resolves them against itself (splitting sources on a local
//! stack), and defers what it cannot resolve to its children. Nodes of a level are
//! independent: one parallel pass per level, root first, each node writing its own M2L
//! list, P2P list (leaves) and deferred list (internal nodes; read by all its children).
//! The lists come out grouped by target in node order (CSR, no sort), which is the layout
//! both the CPU evaluation and a GPU kernel read: one target per task (thread, warp),
//! its sources contiguous.

use orrery_core::{Error, Real, Result};
use orrery_tree_build::view::{NONE, TreeView};
use rayon::prelude::*;

use crate::fmm::nodes::FmmNodes;

/// The interaction lists of a tree, CSR by target node (every array indexed by node, in
/// the view's level order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InteractionLists {
    /// `m2l_sources[m2l_offsets[t]..m2l_offsets[t + 1]]` are the nodes whose multipoles
    /// are translated into node `t`'s local expansion (`N + 1` offsets).
    pub m2l_offsets: Vec<u32>,
    /// M2L source nodes.
    pub m2l_sources: Vec<u32>,
    /// `p2p_sources[p2p_offsets[t]..p2p_offsets[t + 1]]` are the leaves whose particles
    /// act directly on the particles of leaf `t` (empty for internal nodes; `t` itself
    /// among them for a non-empty leaf).
    pub p2p_offsets: Vec<u32>,
    /// P2P source leaves.
    pub p2p_sources: Vec<u32>,
}

impl InteractionLists {
    /// The M2L sources of node `t`.
    #[inline]
    pub fn m2l(&self, t: u32) -> &[u32] {
        let t = t as usize;
        &self.m2l_sources[self.m2l_offsets[t] as usize..self.m2l_offsets[t + 1] as usize]
    }

    /// The P2P source leaves of leaf `t`.
    #[inline]
    pub fn p2p(&self, t: u32) -> &[u32] {
        let t = t as usize;
        &self.p2p_sources[self.p2p_offsets[t] as usize..self.p2p_offsets[t + 1] as usize]
    }

    /// M2L pairs.
    pub fn num_m2l(&self) -> usize {
        self.m2l_sources.len()
    }

    /// P2P leaf pairs.
    pub fn num_p2p(&self) -> usize {
        self.p2p_sources.len()
    }

    /// Particle-particle interactions of the P2P lists (the self pairs excluded).
    pub fn p2p_interactions<T: Real>(&self, view: &TreeView<T>) -> u64 {
        (0..view.num_nodes() as u32)
            .into_par_iter()
            .map(|t| {
                let n = u64::from(view.particle_counts()[t as usize]);
                self.p2p(t).iter().map(|&s| n * u64::from(view.particle_counts()[s as usize])).sum::<u64>()
                    - if view.is_leaf(t) { n } else { 0 }
            })
            .sum()
    }
}

/// Checks an acceptance parameter: finite and in `(0, 1)`.
///
/// # Errors
/// [`Error::NonFiniteValue`] or [`Error::InvalidArgument`] (`what = "theta"`).
pub fn check_theta(theta: f64) -> Result<()> {
    if !theta.is_finite() {
        return Err(Error::NonFiniteValue { what: "theta", index: 0, value: theta });
    }
    if !(theta > 0.0 && theta < 1.0) {
        return Err(Error::InvalidArgument {
            what: "theta",
            reason: format!(
                "the FMM acceptance parameter must lie in (0, 1) (so that accepted balls are disjoint), got {theta}"
            ),
        });
    }
    Ok(())
}

/// What one target node produces.
#[derive(Default)]
struct NodeOut {
    m2l: Vec<u32>,
    p2p: Vec<u32>,
    down: Vec<u32>,
}

/// The traversal's per-target step (see the [module documentation](self)): resolves the
/// sources `input` against `t`.
fn visit<T: Real>(
    view: &TreeView<T>,
    nodes: &FmmNodes,
    theta2: f64,
    t: u32,
    input: &[u32],
    stack: &mut Vec<u32>,
) -> NodeOut {
    let mut out = NodeOut::default();
    let counts = view.particle_counts();
    if counts[t as usize] == 0 {
        return out;
    }
    let t_leaf = view.is_leaf(t);
    let (ct, rt) = (nodes.centres[t as usize], nodes.radii[t as usize]);
    stack.clear();
    stack.extend(input.iter().rev());
    while let Some(s) = stack.pop() {
        if counts[s as usize] == 0 {
            continue;
        }
        if s == t {
            match view.children(t) {
                None => out.p2p.push(t),
                Some(children) => out.down.extend(children),
            }
            continue;
        }
        let (cs, rs) = (nodes.centres[s as usize], nodes.radii[s as usize]);
        let (dx, dy, dz) = (ct[0] - cs[0], ct[1] - cs[1], ct[2] - cs[2]);
        let sum = rt + rs;
        if sum * sum < theta2 * (dx * dx + dy * dy + dz * dz) {
            out.m2l.push(s);
            continue;
        }
        let s_leaf = view.is_leaf(s);
        if t_leaf && s_leaf {
            out.p2p.push(s);
        } else if s_leaf || (!t_leaf && rt >= rs) {
            out.down.push(s);
        } else {
            let children = view.children(s).expect("an internal node has children");
            stack.extend(children.rev());
        }
    }
    out
}

/// The interaction lists of `view` with acceptance parameter `theta` (see the
/// [module documentation](self)).
///
/// # Errors
/// As [`check_theta`]; [`Error::LengthMismatch`] when `nodes` is not `view`'s.
pub fn build<T: Real>(view: &TreeView<T>, nodes: &FmmNodes, theta: f64) -> Result<InteractionLists> {
    check_theta(theta)?;
    if nodes.len() != view.num_nodes() {
        return Err(Error::LengthMismatch { what: "FMM nodes", expected: view.num_nodes(), actual: nodes.len() });
    }
    let theta2 = theta * theta;
    let n = view.num_nodes();
    let mut lists = InteractionLists {
        m2l_offsets: Vec::with_capacity(n + 1),
        m2l_sources: Vec::new(),
        p2p_offsets: Vec::with_capacity(n + 1),
        p2p_sources: Vec::new(),
    };
    lists.m2l_offsets.push(0);
    lists.p2p_offsets.push(0);
    // The deferred lists of the previous level, CSR by node of that level.
    let (mut down_first, mut down_offsets, mut down) = (0u32, vec![0u32, 1], vec![0u32]);
    for level in 0..=view.depth() {
        let range = view.level_range(level).expect("levels 0..=depth exist");
        let outs: Vec<NodeOut> = range
            .clone()
            .into_par_iter()
            .map_init(Vec::new, |stack, t| {
                let input: &[u32] = if level == 0 {
                    &down
                } else {
                    let parent = view.parents()[t as usize];
                    debug_assert_ne!(parent, NONE);
                    let k = (parent - down_first) as usize;
                    &down[down_offsets[k] as usize..down_offsets[k + 1] as usize]
                };
                visit(view, nodes, theta2, t, input, stack)
            })
            .collect();
        let mut next_offsets = Vec::with_capacity(outs.len() + 1);
        next_offsets.push(0u32);
        let mut next = Vec::with_capacity(outs.iter().map(|o| o.down.len()).sum());
        for o in &outs {
            lists.m2l_sources.extend_from_slice(&o.m2l);
            lists.m2l_offsets.push(to_u32(lists.m2l_sources.len())?);
            lists.p2p_sources.extend_from_slice(&o.p2p);
            lists.p2p_offsets.push(to_u32(lists.p2p_sources.len())?);
            next.extend_from_slice(&o.down);
            next_offsets.push(to_u32(next.len())?);
        }
        (down_first, down_offsets, down) = (range.start, next_offsets, next);
    }
    Ok(lists)
}

fn to_u32(len: usize) -> Result<u32> {
    u32::try_from(len).map_err(|_| Error::TooManyPoints {
        count: len,
        max: u32::MAX as usize,
        what: "interaction list entries",
    })
}

/// Proves that `lists` account for every target-source particle pair of `view` exactly
/// once: for every non-empty leaf, the particle ranges of its P2P sources and of the M2L
/// sources of the leaf and all its ancestors tile `0..N` with neither gap nor overlap (so
/// each of its particles sees every other particle once, by the near or the far field,
/// and itself once through its own leaf's P2P, where the kernel skips it).
///
/// # Errors
/// [`Error::InvalidTree`] naming the lowest failing leaf node and the first gap or
/// overlap; [`Error::LengthMismatch`] for lists of another tree.
pub fn check_coverage<T: Real>(view: &TreeView<T>, lists: &InteractionLists) -> Result<()> {
    let n = view.num_nodes();
    if lists.m2l_offsets.len() != n + 1 || lists.p2p_offsets.len() != n + 1 {
        return Err(Error::LengthMismatch {
            what: "interaction list offsets",
            expected: n + 1,
            actual: lists.m2l_offsets.len().min(lists.p2p_offsets.len()),
        });
    }
    let total = view.num_particles() as u32;
    let failure = view.leaf_nodes().par_iter().filter_map(|&leaf| {
        if view.particle_counts()[leaf as usize] == 0 {
            return None;
        }
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        let mut push = |s: u32| {
            let r = view.particles(s);
            if !r.is_empty() {
                ranges.push((r.start, r.end));
            }
        };
        lists.p2p(leaf).iter().for_each(|&s| push(s));
        let mut a = leaf;
        while a != NONE {
            lists.m2l(a).iter().for_each(|&s| push(s));
            a = view.parents()[a as usize];
        }
        ranges.sort_unstable();
        let mut at = 0u32;
        for (begin, end) in ranges {
            if begin != at {
                let what = if begin < at { "overlap" } else { "gap" };
                return Some((leaf, format!("source particles {at}..{begin} or {begin}..{at}: {what}")));
            }
            at = end;
        }
        (at != total).then(|| (leaf, format!("source particles {at}..{total} are not covered")))
    });
    match failure.min_by_key(|(leaf, _)| *leaf) {
        None => Ok(()),
        Some((leaf, reason)) => Err(Error::InvalidTree {
            index: leaf as usize,
            reason: format!("interaction lists of leaf node {leaf}: {reason}"),
        }),
    }
}
