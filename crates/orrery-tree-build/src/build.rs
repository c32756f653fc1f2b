//! The CPU build: passes of decide, scan and scatter until the tree stops changing.
//!
//! A build from scratch starts at the root; an incremental update starts at the previous
//! step's tree. Both run the same loop with a cap on passes, and report how many passes
//! they used and whether the last one found nothing to change. The converged tree is a
//! function of the keys and the criterion alone (every internal node is over the
//! criterion, every leaf within it or at the key resolution), so a converged update
//! equals a converged build from scratch: tested in `tests/tree`.

use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Result};

use rayon::prelude::*;

use crate::counts::{carry_starts, counts_of_starts, leaf_starts};
use crate::leaves::Leaves;
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
}

impl Criterion {
    /// LeafCount with `bucket`.
    pub const fn leaf_count(bucket: u32) -> Self {
        Self::LeafCount { bucket }
    }

    pub(crate) fn check(self) -> Result<()> {
        match self {
            Criterion::LeafCount { bucket } => check_bucket(bucket),
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

    fn check(self) -> Result<()> {
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

/// A tree with the particle count of every leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    leaves: Leaves,
    counts: Vec<u32>,
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
/// [`Error::InvalidArgument`] for a bad criterion, a zero pass cap or unsorted keys;
/// [`Error::TooManyPoints`] beyond 32-bit indices.
pub fn build(keys: &[u64], layout: KeyLayout, options: &Rebalance) -> Result<(Tree, Convergence)> {
    let mut tree = Tree { leaves: Leaves::root(layout), counts: Vec::new() };
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
    let mut leaves = tree.leaves.clone();
    // The keys change between calls, so the first counts search every boundary; within
    // the call they are carried over (counts::carry_starts).
    let mut starts = leaf_starts(leaves.keys(), keys);
    let mut counts = counts_of_starts(&starts);
    for pass in 1..=options.max_passes {
        let ops = match options.criterion {
            Criterion::LeafCount { bucket } => leaf_count_ops(&leaves, &counts, bucket)?,
        };
        if ops.par_iter().all(|&op| op == 1) {
            *tree = Tree { leaves, counts };
            return Ok(Convergence { passes: pass, converged: true });
        }
        let next = pass::rebalance_decided(&leaves, &ops)?;
        starts = carry_starts(&starts, &ops, &next.offsets, next.leaves.keys(), keys);
        counts = counts_of_starts(&starts);
        leaves = next.leaves;
    }
    *tree = Tree { leaves, counts };
    Ok(Convergence { passes: options.max_passes, converged: false })
}
