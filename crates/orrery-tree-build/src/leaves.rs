//! The Cornerstone leaf array: a whole tree as the sorted boundaries of its leaves.
//!
//! A tree over keys of a [`KeyLayout`] (3 bits per level for octrees, 1 for binary trees)
//! is the array `K = [k0, k1, .., kL]` with `k0 = 0`, `kL = layout.key_end()`, strictly
//! increasing, and every interval `[K[i], K[i + 1])` a cell: a power of `2^b` keys long
//! and aligned to its length. Leaf `i` owns that interval; the internal nodes follow from
//! the boundaries alone (see [`crate::view`]). Nothing else is stored, which is why a
//! rebalance pass is three data-parallel steps over `L` elements (decide, scan, scatter)
//! and why the same array is bit-identical on every executor.

use orrery_core::sfc::KeyLayout;
use orrery_core::{Error, Result};

/// The leaf boundaries of one tree and the key layout they are cells of.
///
/// ```
/// use orrery_core::sfc::KeyLayout;
/// use orrery_tree_build::Leaves;
/// let layout = KeyLayout::octree::<u64>();
/// let root = Leaves::root(layout);
/// assert_eq!(root.keys(), &[0, 1 << 63]);
/// // Eight children of the root, given as raw parts, are validated:
/// let eighth = 1u64 << 60;
/// let keys: Vec<u64> = (0..=8).map(|i| i * eighth).collect();
/// assert_eq!(Leaves::from_keys(keys, layout)?.len(), 8);
/// assert!(Leaves::from_keys(vec![0, 3, 1 << 63], layout).is_err()); // 3 is not a cell
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leaves {
    keys: Vec<u64>,
    layout: KeyLayout,
}

impl Leaves {
    /// The one-leaf tree: `[0, key_end]`.
    pub fn root(layout: KeyLayout) -> Self {
        Self { keys: vec![0, layout.key_end::<u64>()], layout }
    }

    /// A tree from its raw boundaries, validated.
    ///
    /// # Errors
    /// [`Error::InvalidTree`] naming the first boundary that breaks the Cornerstone
    /// invariants (fewer than two keys, `k0 != 0`, `kL != key_end`, an interval that is
    /// not an aligned power-of-`2^b` cell); [`Error::TooManyPoints`] for more leaves than
    /// 32-bit indices hold.
    pub fn from_keys(keys: Vec<u64>, layout: KeyLayout) -> Result<Self> {
        check_leaf_array(&keys, layout)?;
        Ok(Self { keys, layout })
    }

    /// A tree from boundaries this crate produced (a rebalance of a valid tree by valid
    /// operations); checked in debug builds only.
    pub(crate) fn from_checked(keys: Vec<u64>, layout: KeyLayout) -> Self {
        debug_assert!(check_leaf_array(&keys, layout).is_ok());
        Self { keys, layout }
    }

    /// The boundaries `K[0..=L]`.
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// The boundaries, by value.
    pub fn into_keys(self) -> Vec<u64> {
        self.keys
    }

    /// The key layout the leaves are cells of.
    pub fn layout(&self) -> KeyLayout {
        self.layout
    }

    /// The number of leaves `L`.
    pub fn len(&self) -> usize {
        self.keys.len() - 1
    }

    /// Always false: a tree has at least its root leaf.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The level of leaf `i` (0 for the root).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] for `i >= len()`.
    pub fn level(&self, i: usize) -> Result<u32> {
        if i >= self.len() {
            return Err(Error::IndexOutOfBounds { what: "leaf", position: 0, index: i as u64, len: self.len() });
        }
        Ok(leaf_level(&self.keys, i, self.layout))
    }

    /// The deepest leaf level.
    pub fn depth(&self) -> u32 {
        (0..self.len()).map(|i| leaf_level(&self.keys, i, self.layout)).max().unwrap_or(0)
    }
}

/// The level of leaf `i` of a valid leaf array: `levels - log2(size) / b`.
#[inline]
pub(crate) fn leaf_level(keys: &[u64], i: usize, layout: KeyLayout) -> u32 {
    let size = keys[i + 1] - keys[i];
    layout.levels() - size.trailing_zeros() / layout.bits_per_level()
}

/// Checks the Cornerstone invariants of a raw leaf array.
///
/// # Errors
/// As [`Leaves::from_keys`].
pub fn check_leaf_array(keys: &[u64], layout: KeyLayout) -> Result<()> {
    let invalid = |index: usize, reason: String| Error::InvalidTree { index, reason };
    if keys.len() < 2 {
        return Err(invalid(0, format!("a leaf array needs at least 2 keys (the root's bounds), got {}", keys.len())));
    }
    if keys.len() - 1 > u32::MAX as usize {
        return Err(Error::TooManyPoints { count: keys.len() - 1, max: u32::MAX as usize, what: "leaves" });
    }
    if keys[0] != 0 {
        return Err(invalid(0, format!("the first key must be 0, got {}", keys[0])));
    }
    let end = layout.key_end::<u64>();
    let last = keys.len() - 1;
    if keys[last] != end {
        return Err(invalid(last, format!("the last key must be the key range {end}, got {}", keys[last])));
    }
    if let Some(i) = (0..last).find(|&i| layout.level_of_range(keys[i], keys[i + 1]).is_none()) {
        return Err(invalid(
            i,
            format!(
                "[{}, {}) is not a cell (sorted, a power of {} keys long and aligned to it)",
                keys[i],
                keys[i + 1],
                1u64 << layout.bits_per_level()
            ),
        ));
    }
    Ok(())
}
