//! The CPU build: passes of decide, scan and scatter until the tree stops changing.
//!
//! A build from scratch starts at the root; an incremental update starts at the previous
//! step's tree. Both run the same loop with a cap on passes, and report how many passes
//! they used and whether the last one found nothing to change. The converged tree is a
//! function of the keys and the criterion alone (every internal node is over the
//! criterion, every leaf within it or at the key resolution), so a converged update
//! equals a converged build from scratch: tested in `tests/tree`.
//!
//! LeafCount searches every leaf boundary once per call and then carries the counts
//! (kept leaves keep theirs, split leaves search their own particle range).
//! NFCount evaluates its stencils once per update and then carries the values of
//! unchanged leaves from pass to pass ([`NfState::apply`]): only split children and newly
//! complete sibling groups are evaluated again.

use orrery_core::sfc::KeyLayout;
use orrery_core::{Aabb, Error, Real, Result};

use rayon::prelude::*;

use crate::counts::{carry_starts, counts_of_starts, leaf_starts};
use crate::input::Shape;
use crate::leaves::Leaves;
use crate::nfcount::{DEFAULT_THRESHOLD, KeyGeometry, NfState, check_threshold};
use crate::rebalance::{self as pass, check_bucket, leaf_count_ops};

/// What decides whether a leaf splits or a sibling group merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Criterion {
    /// Cornerstone's particle count: at most `bucket` particles per leaf.
    LeafCount {
        /// Most particles a leaf may hold (at least 1).
        bucket: u32,
    },
    /// Estimated near-field work ([`crate::nfcount`]): at most `threshold` particle pairs
    /// `n_i * S_i` per leaf, `S_i` the particles in the 27 same-level cells around it.
    NfCount {
        /// Most work a leaf may carry (at least 1; [`DEFAULT_THRESHOLD`] by default).
        threshold: u64,
        /// How the tree's keys map to cells: the curve, or the binary split sequence.
        geometry: KeyGeometry,
    },
}

impl Criterion {
    /// LeafCount with `bucket`.
    pub const fn leaf_count(bucket: u32) -> Self {
        Self::LeafCount { bucket }
    }

    /// NFCount with [`DEFAULT_THRESHOLD`] for keys of `shape` in `bbox` (the box the keys
    /// were computed in, [`crate::SortedKeys::bbox`]: binary keys split it by its shape).
    ///
    /// ```
    /// use orrery_core::PositionsView;
    /// use orrery_tree_build::{input, Criterion, Rebalance, Shape};
    ///
    /// let x: Vec<f64> = (0..4000).map(|i| (i as f64 * 0.618).fract()).collect();
    /// let y: Vec<f64> = (0..4000).map(|i| (i as f64 * 0.414).fract()).collect();
    /// let z: Vec<f64> = (0..4000).map(|i| 0.1 * (i as f64 * 0.732).fract()).collect();
    /// let sorted = input::sort_particles(PositionsView::new(&x, &y, &z)?, None, Shape::Binary)?;
    /// let threshold = 27 * 16 * 16;
    /// let criterion = Criterion::nf_count(Shape::Binary, &sorted.bbox)?.with_threshold(threshold);
    /// let (tree, run) = orrery_tree_build::build(&sorted.keys, sorted.layout, &Rebalance::new(criterion))?;
    /// assert!(run.converged);
    /// assert!(tree.nf().unwrap().iter().all(|&w| w <= threshold));
    /// # Ok::<(), orrery_core::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidBox`] for a box with zero extent on every axis.
    pub fn nf_count<T: Real>(shape: Shape, bbox: &Aabb<T>) -> Result<Self> {
        Ok(Self::NfCount { threshold: DEFAULT_THRESHOLD, geometry: KeyGeometry::new(shape, bbox)? })
    }

    /// NFCount with another threshold (checked when a build or update runs); a
    /// LeafCount criterion, whose bound is its bucket, is returned unchanged.
    #[must_use]
    pub const fn with_threshold(self, threshold: u64) -> Self {
        match self {
            Self::NfCount { geometry, .. } => Self::NfCount { threshold, geometry },
            other @ Self::LeafCount { .. } => other,
        }
    }

    pub(crate) fn check(self) -> Result<()> {
        match self {
            Criterion::LeafCount { bucket } => check_bucket(bucket),
            Criterion::NfCount { threshold, .. } => check_threshold(threshold),
        }
    }
}

/// How a build or update runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rebalance {
    /// The refinement criterion.
    pub criterion: Criterion,
    /// Most passes to run (at least 1); a build that reaches it unconverged says so.
    pub max_passes: u32,
}

impl Rebalance {
    /// A generous default cap: from the root, each pass descends up to four octree
    /// levels, so 21 levels need at most 6 splitting passes plus one to confirm.
    pub const DEFAULT_MAX_PASSES: u32 = 32;

    /// `criterion` with [`Rebalance::DEFAULT_MAX_PASSES`].
    pub const fn new(criterion: Criterion) -> Self {
        Self { criterion, max_passes: Self::DEFAULT_MAX_PASSES }
    }

    /// The same criterion with another pass cap.
    #[must_use]
    pub const fn with_max_passes(self, max_passes: u32) -> Self {
        Self { max_passes, ..self }
    }

    pub(crate) fn check(self) -> Result<()> {
        self.criterion.check()?;
        if self.max_passes == 0 {
            return Err(Error::InvalidArgument { what: "max_passes", reason: "must be at least 1".to_owned() });
        }
        Ok(())
    }
}

/// How a build or update ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Convergence {
    /// Passes run, the last (confirming) one included: an update of a tree that is
    /// already converged takes 1.
    pub passes: u32,
    /// Whether the last pass changed nothing.
    pub converged: bool,
}

/// A tree with the particle count of every leaf and, when NFCount built it, the
/// near-field work of every leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    leaves: Leaves,
    counts: Vec<u32>,
    nf: Option<Vec<u64>>,
}

impl Tree {
    /// The leaf array.
    pub fn leaves(&self) -> &Leaves {
        &self.leaves
    }

    /// Particles per leaf.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// `W_i = n_i * S_i` per leaf ([`crate::nfcount`]) when the last build or update used
    /// NFCount, else `None`.
    pub fn nf(&self) -> Option<&[u64]> {
        self.nf.as_deref()
    }

    /// The first sorted particle of every leaf, then the particle count (`L + 1`
    /// entries): the prefix sum of the counts, as the leaves tile the key range in order
    /// (what [`crate::counts::leaf_starts`] finds by searching the keys).
    pub fn leaf_starts(&self) -> Vec<u32> {
        std::iter::once(0)
            .chain(self.counts.iter().scan(0u32, |acc, &c| {
                *acc += c;
                Some(*acc)
            }))
            .collect()
    }

    /// Leaves holding no particle.
    pub fn empty_leaves(&self) -> usize {
        self.counts.iter().filter(|&&c| c == 0).count()
    }
}

/// Checks that particle keys are sorted and within the key range (the removed-particle
/// key `key_end` included).
///
/// # Errors
/// [`Error::InvalidArgument`] naming the first unsorted position or out-of-range key.
pub fn check_sorted_keys(keys: &[u64], layout: KeyLayout) -> Result<()> {
    let end = layout.key_end::<u64>();
    if let Some(i) = keys.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::InvalidArgument {
            what: "particle keys",
            reason: format!("not sorted: keys[{i}] = {} > keys[{}] = {}", keys[i], i + 1, keys[i + 1]),
        });
    }
    if let Some(&last) = keys.last()
        && last > end
    {
        return Err(Error::InvalidArgument {
            what: "particle keys",
            reason: format!("key {last} is past the key range {end} of a {}-bit layout", layout.key_bits()),
        });
    }
    orrery_core::particles::check_index_range(keys.len(), "particle keys")
}

/// Builds the tree of the sorted particle `keys` from the root.
///
/// # Errors
/// [`Error::InvalidArgument`] for a bad criterion (a zero bucket or threshold, an NFCount
/// geometry of other keys than `layout`), a zero pass cap or unsorted keys;
/// [`Error::TooManyPoints`] beyond 32-bit indices.
pub fn build(keys: &[u64], layout: KeyLayout, options: &Rebalance) -> Result<(Tree, Convergence)> {
    build_from(Leaves::root(layout), keys, options)
}

/// Builds the tree of the sorted particle `keys` starting from the leaf array `start`
/// (a previous step's leaves, kept by a caller or restored from a snapshot): the same
/// passes as [`update`], for a caller that holds leaves rather than a [`Tree`].
///
/// # Errors
/// As [`build`].
pub fn build_from(start: Leaves, keys: &[u64], options: &Rebalance) -> Result<(Tree, Convergence)> {
    let mut tree = Tree { leaves: start, counts: Vec::new(), nf: None };
    let convergence = update(&mut tree, keys, options)?;
    Ok((tree, convergence))
}

/// Updates `tree` to the sorted particle `keys`, starting from its current leaves.
///
/// # Errors
/// As [`build`]. On error the tree is unchanged.
pub fn update(tree: &mut Tree, keys: &[u64], options: &Rebalance) -> Result<Convergence> {
    options.check()?;
    let layout = tree.leaves.layout();
    check_sorted_keys(keys, layout)?;
    let start = tree.leaves.clone();
    let (next, convergence) = match options.criterion {
        Criterion::LeafCount { bucket } => converge_leaf_count(start, keys, bucket, options.max_passes)?,
        Criterion::NfCount { threshold, geometry } => {
            converge_nf_count(start, keys, threshold, geometry, options.max_passes)?
        }
    };
    *tree = next;
    Ok(convergence)
}

/// Runs `pass` from `state` until it reports no change (`None`) or `max_passes` passes
/// ran: the loop every criterion shares.
fn converge<S>(
    mut state: S,
    max_passes: u32,
    mut pass: impl FnMut(&S) -> Result<Option<S>>,
) -> Result<(S, Convergence)> {
    for n in 1..=max_passes {
        match pass(&state)? {
            None => return Ok((state, Convergence { passes: n, converged: true })),
            Some(next) => state = next,
        }
    }
    Ok((state, Convergence { passes: max_passes, converged: false }))
}

/// LeafCount passes: decide from the counts, rebalance, carry the counts over. The keys
/// changed since the last call, so the first counts search every boundary; within the
/// call a kept leaf keeps its first particle and a split leaf searches only its own range
/// ([`carry_starts`]).
fn converge_leaf_count(leaves: Leaves, keys: &[u64], bucket: u32, max_passes: u32) -> Result<(Tree, Convergence)> {
    let starts = leaf_starts(leaves.keys(), keys);
    let counts = counts_of_starts(&starts);
    let ((leaves, _, counts), convergence) =
        converge((leaves, starts, counts), max_passes, |(leaves, starts, counts)| {
            let ops = leaf_count_ops(leaves, counts, bucket)?;
            if ops.par_iter().all(|&op| op == 1) {
                return Ok(None);
            }
            let next = pass::rebalance_decided(leaves, &ops)?;
            let starts = carry_starts(starts, &ops, &next.offsets, next.leaves.keys(), keys);
            let counts = counts_of_starts(&starts);
            Ok(Some((next.leaves, starts, counts)))
        })?;
    Ok((Tree { leaves, counts, nf: None }, convergence))
}

/// NFCount passes: one full evaluation, then decide by lookups and carry the values of
/// unchanged leaves over ([`NfState::apply`]).
fn converge_nf_count(
    leaves: Leaves,
    keys: &[u64],
    threshold: u64,
    geometry: KeyGeometry,
    max_passes: u32,
) -> Result<(Tree, Convergence)> {
    let state = NfState::evaluate_sorted(leaves, keys, geometry)?;
    let (state, convergence) = converge(state, max_passes, |state| {
        let ops = state.decide(threshold)?;
        if ops.iter().all(|&op| op == 1) {
            return Ok(None);
        }
        Ok(Some(state.apply(&ops, keys)?.state))
    })?;
    let (leaves, counts, nf) = state.into_parts();
    Ok((Tree { leaves, counts, nf: Some(nf) }, convergence))
}
