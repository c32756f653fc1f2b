//! Key-range arithmetic of Cornerstone trees: which key intervals are cells, at which
//! level, and how cells nest.
//!
//! A tree over `levels`-level keys with `d` bits per level (3 for octrees, 2 for
//! quadtrees, 1 for binary trees) names a level-`l` cell by its first key, a multiple of
//! its size `2^(d * (levels - l))`; the cell is the key interval `[start, start + size)`.
//! Octree, quadtree and binary keys differ only in `d`, so one [`KeyLayout`] value
//! carries `d` and the level count and every helper is written once. The layout is a
//! runtime value rather than a type parameter: tree code over several layouts stays one
//! generic function, and the handful of shifts it costs is noise next to memory traffic.
//!
//! Arithmetic is done in `u64` whatever the key type: every layout has at most 63 key
//! bits, so the one-past-the-end key `1 << (d * levels)` never overflows. Each helper
//! has a checked form (levels in `0..=levels`, keys below the end key) and, where it
//! sits in hot loops, an `_unchecked` form that clamps instead of failing.

use super::{SfcKey, validate};
use crate::error::{Error, Result};

/// The digit structure of tree keys: `bits_per_level` bits per level, `levels` levels,
/// the coarsest level in the most significant digit.
///
/// ```
/// use orrery_core::sfc::KeyLayout;
/// let octree = KeyLayout::octree::<u64>();
/// assert_eq!(octree.key_end::<u64>(), 1 << 63);
/// assert_eq!(octree.cell_size::<u64>(20)?, 8);
/// assert_eq!(octree.cell_start(0o1234u64, 19)?, 0o1200);
/// assert_eq!(octree.level_of_range(0o1200u64, 0o1300), Some(19));
/// assert_eq!(octree.child_slot(0o1234u64, 19)?, 2); // the digit of level 19
/// assert_eq!(octree.common_level(0o1234u64, 0o1277), 19);
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyLayout {
    bits_per_level: u32,
    levels: u32,
}

impl KeyLayout {
    /// 3D octree keys of type `K`: 3 bits per level, [`SfcKey::LEVELS_3D`] levels.
    pub const fn octree<K: SfcKey>() -> Self {
        Self { bits_per_level: 3, levels: K::LEVELS_3D }
    }

    /// 2D quadtree keys of type `K`: 2 bits per level, [`SfcKey::LEVELS_2D`] levels.
    pub const fn quadtree<K: SfcKey>() -> Self {
        Self { bits_per_level: 2, levels: K::LEVELS_2D }
    }

    /// Binary-tree keys of type `K`: 1 bit per level, [`SfcKey::LEVELS_BINARY`] levels.
    pub const fn binary<K: SfcKey>() -> Self {
        Self { bits_per_level: 1, levels: K::LEVELS_BINARY }
    }

    /// Binary-tree keys of `levels` levels (at most 63; larger values are capped), as
    /// made by a [`super::BinaryLayout`] of that depth.
    pub const fn binary_levels(levels: u32) -> Self {
        let levels = if levels > 63 { 63 } else { levels };
        Self { bits_per_level: 1, levels }
    }

    /// Any layout with `bits_per_level >= 1` and at most 63 key bits in all.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `bits_per_level` is 0 or
    /// `bits_per_level * levels > 63`.
    pub fn new(bits_per_level: u32, levels: u32) -> Result<Self> {
        match bits_per_level.checked_mul(levels) {
            Some(bits) if bits_per_level >= 1 && bits <= 63 => Ok(Self { bits_per_level, levels }),
            _ => Err(Error::InvalidArgument {
                what: "key layout",
                reason: format!(
                    "{bits_per_level} bit(s) per level times {levels} level(s) must be \
                     between 1 and 63 bits per level and at most 63 bits in all"
                ),
            }),
        }
    }

    /// Bits per level (3 octree, 2 quadtree, 1 binary).
    pub const fn bits_per_level(&self) -> u32 {
        self.bits_per_level
    }

    /// The deepest level.
    pub const fn levels(&self) -> u32 {
        self.levels
    }

    /// Children per cell: `2^bits_per_level`.
    pub const fn children(&self) -> u32 {
        1 << self.bits_per_level
    }

    /// Bits a key uses: `bits_per_level * levels` (at most 63).
    pub const fn key_bits(&self) -> u32 {
        self.bits_per_level * self.levels
    }

    /// The one-past-the-end key `1 << key_bits()`: the end of the root cell.
    pub fn key_end<K: SfcKey>(&self) -> K {
        K::from_u64(self.end())
    }

    fn end(self) -> u64 {
        1u64 << self.key_bits()
    }

    /// `log2` of the size of a level-`level` cell, for `level <= levels` (larger levels
    /// give 0).
    #[inline]
    fn size_log2(self, level: u32) -> u32 {
        self.bits_per_level * self.levels.saturating_sub(level)
    }

    /// The name of these keys in errors.
    const fn name(self) -> &'static str {
        match self.bits_per_level {
            3 => "octree",
            2 => "quadtree",
            1 => "binary",
            _ => "tree",
        }
    }

    fn check_level(self, level: u32) -> Result<()> {
        let what = match self.bits_per_level {
            3 => "an octree key",
            2 => "a quadtree key",
            1 => "a binary key",
            _ => "a tree key",
        };
        validate::level(level, self.levels, what)
    }

    fn check_key<K: SfcKey>(self, key: K) -> Result<()> {
        validate::key(key.to_u64(), self.key_bits(), K::BITS, self.name())
    }

    /// Number of keys in a level-`level` cell: `1 << (bits_per_level * (levels - level))`.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for `level > levels`.
    pub fn cell_size<K: SfcKey>(&self, level: u32) -> Result<K> {
        self.check_level(level)?;
        Ok(self.cell_size_unchecked(level))
    }

    /// [`KeyLayout::cell_size`] for `level <= levels`; larger levels give 1.
    #[inline]
    pub fn cell_size_unchecked<K: SfcKey>(&self, level: u32) -> K {
        K::from_u64(1u64 << self.size_log2(level))
    }

    /// The first key of the level-`level` cell that contains `key`.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for `level > levels`, [`Error::KeyOutOfRange`] for
    /// `key >= key_end()`.
    pub fn cell_start<K: SfcKey>(&self, key: K, level: u32) -> Result<K> {
        self.check_level(level)?;
        self.check_key(key)?;
        Ok(self.cell_start_unchecked(key, level))
    }

    /// [`KeyLayout::cell_start`] for valid arguments; levels beyond `levels` act as
    /// `levels`.
    #[inline]
    pub fn cell_start_unchecked<K: SfcKey>(&self, key: K, level: u32) -> K {
        K::from_u64(key.to_u64() & !((1u64 << self.size_log2(level)) - 1))
    }

    /// The level of the cell `[start, end)`, or `None` when that interval is not a cell
    /// (empty, not a power-of-`children()` long, not aligned to its length, or past
    /// `key_end()`).
    pub fn level_of_range<K: SfcKey>(&self, start: K, end: K) -> Option<u32> {
        let (start, end) = (start.to_u64(), end.to_u64());
        if end <= start || end > self.end() {
            return None;
        }
        let size = end - start;
        let size_log2 = size.trailing_zeros();
        let aligned = size.is_power_of_two() && start & (size - 1) == 0;
        (aligned && size_log2 % self.bits_per_level == 0).then(|| self.levels - size_log2 / self.bits_per_level)
    }

    /// Whether `[start, end)` is a cell of some level.
    pub fn is_cell<K: SfcKey>(&self, start: K, end: K) -> bool {
        self.level_of_range(start, end).is_some()
    }

    /// The first key of the parent (level `level - 1`) of the level-`level` cell that
    /// contains `key`.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for `level == 0` (the root has no parent) or
    /// `level > levels`, [`Error::KeyOutOfRange`] for `key >= key_end()`.
    pub fn parent_start<K: SfcKey>(&self, key: K, level: u32) -> Result<K> {
        self.check_level(level)?;
        if level == 0 {
            return Err(Error::LevelOutOfRange {
                level,
                max: self.levels,
                what: "parent of a tree cell (the root has none; levels 1..=max)",
            });
        }
        self.cell_start(key, level - 1)
    }

    /// [`KeyLayout::parent_start`] for valid arguments; level 0 acts as level 1.
    #[inline]
    pub fn parent_start_unchecked<K: SfcKey>(&self, key: K, level: u32) -> K {
        self.cell_start_unchecked(key, level.max(1) - 1)
    }

    /// The child slot of the level-`level` cell containing `key` in its parent: the
    /// key's digit of level `level`, in `0..children()`. Level 0 (the root, no parent)
    /// gives 0 for every valid key.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for `level > levels`, [`Error::KeyOutOfRange`] for
    /// `key >= key_end()`.
    pub fn child_slot<K: SfcKey>(&self, key: K, level: u32) -> Result<u32> {
        self.check_level(level)?;
        self.check_key(key)?;
        Ok(self.child_slot_unchecked(key, level))
    }

    /// [`KeyLayout::child_slot`] for valid arguments; levels beyond `levels` act as
    /// `levels`.
    #[inline]
    pub fn child_slot_unchecked<K: SfcKey>(&self, key: K, level: u32) -> u32 {
        let digit_mask = (1u64 << self.bits_per_level) - 1;
        ((key.to_u64() >> self.size_log2(level)) & digit_mask) as u32
    }

    /// The level of the smallest cell that contains both keys (their lowest common
    /// ancestor): the number of leading digits they share, `levels` when `a == b`.
    /// Bits above `key_bits()` count as one more leading digit, so an invalid key
    /// shares level 0 only with keys that differ from it there.
    pub fn common_level<K: SfcKey>(&self, a: K, b: K) -> u32 {
        let diff = a.to_u64() ^ b.to_u64();
        if diff == 0 {
            return self.levels;
        }
        // Bits above the highest differing one are shared.
        let shared_bits = self.key_bits().saturating_sub(diff.ilog2() + 1);
        shared_bits / self.bits_per_level
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_have_the_documented_sizes() {
        assert_eq!(KeyLayout::octree::<u32>().key_end::<u32>(), 1 << 30);
        assert_eq!(KeyLayout::octree::<u64>().key_end::<u64>(), 1 << 63);
        assert_eq!(KeyLayout::quadtree::<u32>().key_end::<u32>(), 1 << 30);
        assert_eq!(KeyLayout::quadtree::<u64>().key_end::<u64>(), 1 << 62);
        assert_eq!(KeyLayout::binary::<u32>().key_end::<u32>(), 1 << 31);
        assert_eq!(KeyLayout::binary::<u64>().key_end::<u64>(), 1 << 63);
        assert_eq!(KeyLayout::octree::<u64>().children(), 8);
    }

    #[test]
    fn root_is_the_whole_key_range() {
        let l = KeyLayout::octree::<u32>();
        assert_eq!(l.level_of_range(0u32, 1 << 30), Some(0));
        assert_eq!(l.cell_size::<u32>(0), Ok(1 << 30));
        assert_eq!(l.level_of_range(0u32, 1), Some(10));
        assert_eq!(l.level_of_range(0u32, 2), None);
        assert_eq!(l.level_of_range(8u32, 16), Some(9));
        assert_eq!(l.level_of_range(4u32, 12), None);
        assert_eq!(l.level_of_range(8u32, 8), None);
        assert_eq!(l.level_of_range(1u32 << 30, (1 << 30) + 1), None);
    }

    #[test]
    fn common_level_counts_shared_leading_digits() {
        let l = KeyLayout::octree::<u64>();
        assert_eq!(l.common_level(0u64, 0), 21);
        assert_eq!(l.common_level(0u64, 1), 20);
        assert_eq!(l.common_level(0u64, 8), 19);
        assert_eq!(l.common_level(0u64, 1 << 62), 0);
        assert_eq!(l.common_level(0u64, 1 << 60), 0);
        assert_eq!(l.common_level(0u64, 1 << 59), 1);
        assert_eq!(l.common_level(0u64, 1 << 63), 0);
    }

    #[test]
    fn new_rejects_layouts_wider_than_63_bits() {
        assert!(KeyLayout::new(3, 21).is_ok());
        assert!(matches!(KeyLayout::new(3, 22), Err(Error::InvalidArgument { what: "key layout", .. })));
        assert!(matches!(KeyLayout::new(0, 5), Err(Error::InvalidArgument { .. })));
        assert!(matches!(KeyLayout::new(u32::MAX, 2), Err(Error::InvalidArgument { .. })));
    }
}
