//! NFCount: refine by the estimated near-field work of each leaf, for octrees and binary
//! trees.
//!
//! # The criterion
//!
//! A leaf's near-field work is the particle-particle interactions of its particles with
//! its neighbourhood, estimated as `W_i = n_i * S_i`: `n_i` is the leaf's particle count
//! and `S_i` the number of particles in the 27 same-level cells around and including the
//! leaf's cell (offsets -1, 0, +1 on each axis; cells outside the key cube are skipped, no
//! periodicity). `S_i` counts particles, not leaves, so it is the same however the
//! neighbourhood happens to be refined.
//!
//! - A leaf splits when `W_i > threshold` ([`DEFAULT_THRESHOLD`] `= 27 * 64^2`: 64
//!   particles in every cell of a full stencil), by `j` levels at once when
//!   `W_i > threshold * (4^b)^(j-1)` ([`crate::rebalance::split_op`] with growth `4^b`:
//!   one level divides `n` by `2^b` and, in a resolved density, `S` by `2^b` too), never
//!   below the key depth.
//! - The `2^b - 1` non-first leaves of a complete sibling group merge when the
//!   hypothetical parent's own work `n_p * S_p <= threshold`, `S_p` over the 27 cells
//!   around the parent at the parent's level; the first sibling keeps operation 1 and
//!   with it the parent's first key, exactly as LeafCount.
//!
//! `W` never grows from a parent to a child: the child's 27 cells at level `l` lie inside
//! the parent's 27 at level `l - 1` (on a binary tree only the split axis changes), and
//! the child's particles are some of the parent's. So the converged tree is unique (a node
//! is internal exactly when its `W` exceeds the threshold and it is above the key depth),
//! and an incremental update converges to the tree a build from scratch gives.
//!
//! # Geometry of the stencil
//!
//! The 27 cells need to know which key bits are which axis', which the layout alone does
//! not say: [`KeyGeometry`] carries the curve of an octree (Morton or Hilbert) or the
//! box-dependent split sequence of a binary tree ([`BinaryAxes`], one axis index per
//! level). A level-`l` binary cell is one of `2^cell_bits(l)[a]` cells along axis `a`;
//! an axis not yet split at level `l` has no neighbours along it.
//!
//! Morton and binary keys hold each axis' coordinate bits at fixed key bits, so a
//! neighbour's key is the cell's key with one axis' bits incremented or decremented as a
//! dilated integer (`((field | !mask) + 1) & mask`): a few integer operations, no
//! decoding. Hilbert keys decode the cell's coordinates once per stencil and encode each
//! neighbour at the cell's level (`l` state-table steps).
//!
//! # Cheap stencil counts
//!
//! The reference ([`stencil_count_reference`], as the published GPU version) spends two
//! binary searches over all `N` particle keys per cell, 54 per leaf. Here a cell
//! `[s, e)` is first located in the leaf array ([`locate_cell`]): leaves and cells are
//! nested or disjoint, so the cell either
//!
//! - is a union of whole leaves `j..k` (the leaf holding `s` starts at `s` and is not
//!   larger than the cell): its count is `starts[k] - starts[j]`, where `starts` are the
//!   leaves' first particles (the exclusive prefix sum of the counts); or
//! - lies inside one coarser leaf `j`: its particles are a sub-range of leaf `j`'s
//!   `starts[j]..starts[j + 1]`, and the two particle searches run over those only (none
//!   when that leaf is empty).
//!
//! Finding `j` searches the `L + 1` leaf keys instead of the `N` particle keys, and
//! gallops from the leaf whose stencil is counted: its neighbours are mostly near it in
//! key order, so that is a few probes in the cache lines around it rather than `log2 L`
//! over the whole array. A cell of more than one leaf gallops once more, for `k`. On
//! converged trees nearly every stencil cell is one whole leaf, so a stencil costs about
//! 26 short searches in the leaf keys and almost no particle search. Empty leaves have
//! `W = 0` and need no stencil at all.
//!
//! # Carrying values between passes
//!
//! Within one update the particles do not move, so every value depends on its cell
//! alone. [`NfState::apply`] maps each new leaf to the old leaf it came from through the
//! `offsets` of [`crate::rebalance::rebalance`]: a kept leaf keeps its count, its `W` and
//! its group value (the parent's `n_p * S_p` when it leads a complete sibling group); a
//! merged parent takes the group value that decided its merge; only split children are
//! counted (in their old leaf's particle range) and get a stencil, and only groups that
//! became complete get a parent stencil. The decision of a pass ([`NfState::decide`]) is
//! then lookups alone. [`NfState::evaluate`] computes everything from scratch; the tests
//! check that the carried values equal it after every pass.
//!
//! # Shaped for kernels
//!
//! The per-leaf steps ([`leaf_nf`], [`group_nf`], [`nf_op`], [`stencil_count`],
//! [`locate_cell`], [`cell_count`]) are plain functions over slices, next to be ported to
//! CUDA and WGSL: no recursion, no allocation, a fixed 27-cell loop, galloping loops of
//! at most 64 doublings, binary searches of the executors' halving loop
//! ([`lower_bound_one`]), and per-level loops of at most 63 levels (the binary axis
//! masks, the Hilbert state machine). The host code around them only maps them over
//! leaves and scans. The binary split sequence is a `[u8; 63]`, ready to upload as is.

use orrery_core::executor::{check_len, lower_bound_one, upper_bound_one};
use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout, hilbert};
use orrery_core::{Aabb, Error, Real, Result};
use rayon::prelude::*;

use crate::build::check_sorted_keys;
use crate::counts::leaf_starts;
use crate::input::{Shape, check_tree_box};
use crate::leaves::{Leaves, leaf_level};
use crate::rebalance::{self, sibling_group, split_op};

/// The default NFCount threshold, `27 * 64^2`: the work of a leaf of 64 particles whose
/// 27-cell stencil holds 64 particles per cell.
pub const DEFAULT_THRESHOLD: u64 = 27 * 64 * 64;

/// The group value of a leaf that does not lead a complete sibling group: no parent, so
/// nothing to merge. No real `n_p * S_p` reaches it (both factors are below `2^32`).
pub const NO_GROUP: u64 = u64::MAX;

/// The deepest binary key: 63 levels of one bit.
const BINARY_LEVELS: usize = 63;

/// Leaves per rayon task: a fresh leaf costs up to 27 cell lookups.
const CHUNK: usize = 256;

/// The box-dependent split sequence of binary keys: which axis each level halves
/// (0 = x, 1 = y, 2 = z), as [`BinaryLayout::axes`] gives it, in a `Copy` form a kernel
/// can take as is.
///
/// ```
/// use orrery_core::{sfc::BinaryLayout, Aabb, Vec3};
/// use orrery_tree_build::nfcount::BinaryAxes;
/// let bbox = Aabb::new(Vec3::zeros(), Vec3::new(4.0f64, 2.0, 1.0))?;
/// let axes = BinaryAxes::of(&BinaryLayout::<f64, u64>::full_depth(bbox));
/// assert_eq!(axes.axes()[..6], [0, 0, 1, 0, 1, 2]);
/// assert_eq!(axes.cell_bits(3), [2, 1, 0]); // 4 x 2 x 1 cells at level 3
/// # Ok::<(), orrery_core::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BinaryAxes {
    axes: [u8; BINARY_LEVELS],
    levels: u32,
}

impl BinaryAxes {
    /// The split sequence of a binary layout of 64-bit keys.
    pub fn of<T: Real>(layout: &BinaryLayout<T, u64>) -> Self {
        let mut axes = [0u8; BINARY_LEVELS];
        for (slot, &axis) in axes.iter_mut().zip(layout.axes()) {
            *slot = axis as u8;
        }
        Self { axes, levels: layout.levels() }
    }

    /// Levels of the keys (63 for the full-depth keys of [`Shape::Binary`]).
    pub const fn levels(&self) -> u32 {
        self.levels
    }

    /// The axis index halved to go from level `l` to level `l + 1`, for `l < levels()`.
    pub fn axes(&self) -> &[u8] {
        &self.axes[..self.levels as usize]
    }

    /// Coordinate bits per axis of a level-`level` cell (levels past `levels()` act as
    /// `levels()`): the level has `2^cell_bits(level)[a]` cells along axis `a`.
    pub fn cell_bits(&self, level: u32) -> [u32; 3] {
        let mut bits = [0u32; 3];
        for &axis in &self.axes[..level.min(self.levels) as usize] {
            bits[axis_index(axis)] += 1;
        }
        bits
    }

    /// The key bits of each axis among the first `level` levels: level `l`'s bit is key
    /// bit `levels - 1 - l`, and it belongs to axis `axes()[l]`.
    fn axis_masks(&self, level: u32) -> [u64; 3] {
        let mut masks = [0u64; 3];
        for l in 0..level.min(self.levels) {
            masks[axis_index(self.axes[l as usize])] |= 1u64 << (self.levels - 1 - l);
        }
        masks
    }
}

/// An axis index of a [`BinaryAxes`] (always 0, 1 or 2), as an array index.
#[inline]
fn axis_index(axis: u8) -> usize {
    usize::from(axis.min(2))
}

/// How the keys of a tree map to integer cell coordinates: what the 27-cell stencil
/// needs beyond the key layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyGeometry {
    /// Octree keys of a 3D curve, 21 levels: a level-`l` cell is one of `2^l` cells per
    /// axis.
    Octree(Curve),
    /// Binary keys of a box: the split sequence decides the cells' shape per level.
    Binary(BinaryAxes),
}

impl KeyGeometry {
    /// The geometry of the keys [`crate::input::sort_particles`] gives for `shape` in
    /// `bbox` (the box of [`crate::SortedKeys::bbox`]; octree keys ignore it).
    ///
    /// # Errors
    /// [`Error::InvalidBox`] for a box with zero extent on every axis.
    pub fn new<T: Real>(shape: Shape, bbox: &Aabb<T>) -> Result<Self> {
        check_tree_box(bbox, "an NFCount stencil needs a box with an extent")?;
        Ok(match shape {
            Shape::Octree(curve) => KeyGeometry::Octree(curve),
            Shape::Binary => KeyGeometry::Binary(BinaryAxes::of(&BinaryLayout::<T, u64>::full_depth(*bbox))),
        })
    }

    /// The key layout these keys have.
    pub const fn layout(self) -> KeyLayout {
        match self {
            KeyGeometry::Octree(_) => KeyLayout::octree::<u64>(),
            KeyGeometry::Binary(axes) => KeyLayout::binary_levels(axes.levels),
        }
    }

    /// Checks that a tree of `layout` has keys of this geometry.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (what: "NFCount geometry") when the layouts differ.
    pub fn check_layout(self, layout: KeyLayout) -> Result<()> {
        let own = self.layout();
        if own == layout {
            return Ok(());
        }
        Err(Error::InvalidArgument {
            what: "NFCount geometry",
            reason: format!(
                "the stencil geometry is for keys of {} bit(s) per level and {} levels, the tree's keys have {} and {}",
                own.bits_per_level(),
                own.levels(),
                layout.bits_per_level(),
                layout.levels()
            ),
        })
    }

    /// For keys that hold each axis' coordinate bits at fixed key bits (Morton, binary):
    /// those key bits of each axis among the first `level` levels. `None` for Hilbert
    /// keys, whose digits depend on the coordinates.
    pub(crate) fn axis_masks(self, level: u32) -> Option<[u64; 3]> {
        match self {
            KeyGeometry::Octree(Curve::Morton) => Some(morton_masks(level)),
            KeyGeometry::Octree(Curve::Hilbert) => None,
            KeyGeometry::Binary(axes) => Some(axes.axis_masks(level)),
        }
    }
}

/// Levels of 64-bit octree keys.
const fn octree_levels() -> u32 {
    KeyLayout::octree::<u64>().levels()
}

/// The key bits of x, y and z among the first `level` levels of a 63-bit Morton key
/// (bit `3k + 2` is x's, `3k + 1` y's, `3k` z's).
pub(crate) const fn morton_masks(level: u32) -> [u64; 3] {
    let level = if level > octree_levels() { octree_levels() } else { level };
    let z = 0x1249_2492_4924_9249u64 & !((1u64 << (3 * (octree_levels() - level))) - 1);
    [z << 2, z << 1, z]
}

/// The offset `(dx, dy, dz)`, each -1, 0 or 1, of stencil cell `n` in `0..27`.
#[inline]
const fn stencil_offset(n: u32) -> [i64; 3] {
    [(n / 9) as i64 - 1, (n / 3 % 3) as i64 - 1, (n % 3) as i64 - 1]
}

/// The first key of the cell at offset `d` from the cell starting at `start`, for keys
/// whose axis `a` owns the key bits `masks[a]` (a dilated integer): `+1` is
/// `((field | !mask) + 1) & mask`, the carry running through the other axes' bits, and
/// `-1` is `(field - 1) & mask`. `None` past the first or last cell of an axis (so an
/// axis without bits has no neighbours).
#[inline]
fn dilated_neighbour(start: u64, masks: [u64; 3], d: [i64; 3]) -> Option<u64> {
    let mut key = start;
    for (a, &mask) in masks.iter().enumerate() {
        let field = key & mask;
        let moved = match d[a] {
            1 if field == mask => return None,
            1 => (field | !mask).wrapping_add(1) & mask,
            -1 if field == 0 => return None,
            -1 => field.wrapping_sub(1) & mask,
            _ => field,
        };
        key = (key & !mask) | moved;
    }
    Some(key)
}

/// The first key of the level-`level` Hilbert cell at offset `d` from the cell with
/// coordinates `c` (in level-`level` cells), or `None` outside the key cube.
#[inline]
fn hilbert_neighbour(c: [u32; 3], level: u32, d: [i64; 3]) -> Option<u64> {
    let mut n = [0u32; 3];
    for a in 0..3 {
        let v = c[a].checked_add_signed(d[a] as i32)?;
        if u64::from(v) >> level != 0 {
            return None;
        }
        n[a] = v;
    }
    Some(hilbert::encode_3d_levels(n[0], n[1], n[2], level) << (3 * (octree_levels() - level)))
}

/// `sum` of `count(first, end)` over the 27 same-level cells around the level-`level`
/// cell holding `key` that lie inside the key cube. Morton and binary keys step to a
/// neighbour by dilated arithmetic on the key itself; Hilbert keys decode the cell's
/// coordinates once and encode each neighbour (`level` table steps).
#[inline]
fn sum_over_stencil(geometry: KeyGeometry, key: u64, level: u32, count: impl Fn(u64, u64) -> u32) -> u64 {
    let layout = geometry.layout();
    let level = level.min(layout.levels());
    let size = layout.cell_size_unchecked::<u64>(level);
    let start = layout.cell_start_unchecked(key, level);
    let masks = geometry.axis_masks(level);
    let coords = match masks {
        Some(_) => [0; 3],
        None => hilbert::decode_3d_levels(start >> (3 * (octree_levels() - level)), level),
    };
    let mut sum = 0u64;
    for n in 0..27 {
        let d = stencil_offset(n);
        let first = match masks {
            Some(masks) => dilated_neighbour(start, masks, d),
            None => hilbert_neighbour(coords, level, d),
        };
        if let Some(first) = first {
            sum += u64::from(count(first, first + size));
        }
    }
    sum
}

/// The particles of `particles` (sorted) with keys in `[first, end)`: two binary searches.
#[inline]
pub fn particle_count(particles: &[u64], first: u64, end: u64) -> u32 {
    lower_bound_one(particles, end).saturating_sub(lower_bound_one(particles, first))
}

/// The particles in the 27 cells around the level-`level` cell holding `key`, by two
/// binary searches over all particle keys per cell: the reference and baseline of
/// [`stencil_count`] (the published GPU version's 54 searches).
pub fn stencil_count_reference(geometry: KeyGeometry, particles: &[u64], key: u64, level: u32) -> u64 {
    sum_over_stencil(geometry, key, level, |first, end| particle_count(particles, first, end))
}

/// Where a cell lies in a leaf array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CellLocation {
    /// The cell is the union of the leaves `first..end` (boundary indices: its count is
    /// `starts[end] - starts[first]`).
    Leaves {
        /// The first leaf inside the cell.
        first: usize,
        /// One past the last leaf inside the cell.
        end: usize,
    },
    /// The cell lies inside this one leaf, which is larger (or the cell is not a cell of
    /// the leaf array's key range).
    InsideLeaf(usize),
}

/// The leaf of the boundaries `leaf_keys` (at least two) that holds `key`: the last
/// boundary `j < L` with `leaf_keys[j] <= key`, found by galloping from the leaf `near`
/// (any index works; a close one is cheaper): steps of 1, 2, 4, .. away from it until the
/// key is bracketed, then a binary search inside the bracket. About `2 log2(distance)`
/// probes instead of `log2(L)`, and the probes stay in the cache lines around `near`.
#[inline]
fn leaf_holding(leaf_keys: &[u64], key: u64, near: usize) -> usize {
    let last = leaf_keys.len() - 1;
    let near = near.min(last - 1);
    // Bracket: leaf_keys[lo] <= key < leaf_keys[hi] (hi = last counts as above the key).
    let (mut lo, mut hi) = (near, near);
    let mut step = 1usize;
    if leaf_keys[near] <= key {
        loop {
            hi = near.saturating_add(step);
            if hi >= last {
                hi = last;
                break;
            }
            if leaf_keys[hi] > key {
                break;
            }
            lo = hi;
            step = step.saturating_mul(2);
        }
    } else {
        loop {
            if step >= near {
                lo = 0;
                break;
            }
            lo = near - step;
            if leaf_keys[lo] <= key {
                break;
            }
            hi = lo;
            step = step.saturating_mul(2);
        }
    }
    lo + upper_bound_one(&leaf_keys[lo + 1..hi.max(lo + 1)], key) as usize
}

/// Locates the cell `[first, end)` in the boundaries `leaf_keys` of a leaf array, with
/// galloping searches from the leaf `near` (any index; the leaf whose stencil is being
/// counted is a good one): one for the leaf holding `first` and, when the cell holds more
/// than one leaf, one for the leaf holding `end - 1`.
///
/// Leaves and cells are nested or disjoint, so the leaf holding `first` either starts at
/// `first` and is no larger than the cell (then every leaf up to `end` is inside it) or
/// contains the cell. A `leaf_keys` of fewer than two keys gives `InsideLeaf(0)`.
#[inline]
pub fn locate_cell(leaf_keys: &[u64], first: u64, end: u64, near: usize) -> CellLocation {
    if leaf_keys.len() < 2 {
        return CellLocation::InsideLeaf(0);
    }
    let j = leaf_holding(leaf_keys, first, near);
    if leaf_keys[j] != first || leaf_keys[j + 1] > end || end <= first {
        return CellLocation::InsideLeaf(j);
    }
    if leaf_keys[j + 1] == end {
        return CellLocation::Leaves { first: j, end: j + 1 };
    }
    CellLocation::Leaves { first: j, end: leaf_holding(leaf_keys, end - 1, j + 1) + 1 }
}

/// The particles with keys in the cell `[first, end)`, from the leaf array and its leaf
/// starts (the exclusive prefix sum of the counts, `L + 1` entries) wherever the cell is
/// made of whole leaves, and by two searches inside one leaf's particles otherwise;
/// `near` as in [`locate_cell`]. Equals [`particle_count`] for every cell of the key
/// range.
#[inline]
pub fn cell_count(leaf_keys: &[u64], starts: &[u32], particles: &[u64], first: u64, end: u64, near: usize) -> u32 {
    let boundaries = leaf_keys.len().min(starts.len());
    if boundaries < 2 {
        return particle_count(particles, first, end);
    }
    match locate_cell(&leaf_keys[..boundaries], first, end, near) {
        CellLocation::Leaves { first: j, end: k } => starts[k].saturating_sub(starts[j]),
        CellLocation::InsideLeaf(j) => {
            let lo = (starts[j] as usize).min(particles.len());
            let hi = (starts[j + 1] as usize).clamp(lo, particles.len());
            particle_count(&particles[lo..hi], first, end)
        }
    }
}

/// The particles in the 27 cells around the level-`level` cell holding `key`, resolved
/// from the leaf array ([`cell_count`], galloping from the leaf `near`); equals
/// [`stencil_count_reference`].
pub fn stencil_count(
    geometry: KeyGeometry,
    leaf_keys: &[u64],
    starts: &[u32],
    particles: &[u64],
    key: u64,
    level: u32,
    near: usize,
) -> u64 {
    sum_over_stencil(geometry, key, level, |first, end| cell_count(leaf_keys, starts, particles, first, end, near))
}

/// `W_i = n_i * S_i` of leaf `i` of the leaf array `keys` with leaf starts `starts`; 0
/// for an empty leaf, with no stencil. The reference of the kernels to come.
///
/// `i < L`, and `starts` has the `L + 1` entries of this leaf array (indexing panics
/// otherwise).
#[inline]
pub fn leaf_nf(geometry: KeyGeometry, keys: &[u64], starts: &[u32], particles: &[u64], i: usize) -> u64 {
    let n = starts[i + 1].saturating_sub(starts[i]);
    if n == 0 {
        return 0;
    }
    let level = leaf_level(keys, i, geometry.layout());
    u64::from(n).saturating_mul(stencil_count(geometry, keys, starts, particles, keys[i], level, i))
}

/// The group value of leaf `i`: when it is the first leaf of a complete sibling group,
/// the work `n_p * S_p` the parent would have (its particles times those of the 27 cells
/// around it at its level; 0 for an empty parent, with no stencil), else [`NO_GROUP`].
///
/// `i < L`, and `starts` has the `L + 1` entries of this leaf array.
#[inline]
pub fn group_nf(geometry: KeyGeometry, keys: &[u64], starts: &[u32], particles: &[u64], i: usize) -> u64 {
    let layout = geometry.layout();
    let level = leaf_level(keys, i, layout);
    match sibling_group(keys, i, level, layout) {
        Some((_, 0)) => {
            let n = starts[i + layout.children() as usize].saturating_sub(starts[i]);
            if n == 0 {
                return 0;
            }
            u64::from(n).saturating_mul(stencil_count(geometry, keys, starts, particles, keys[i], level - 1, i))
        }
        _ => NO_GROUP,
    }
}

/// The growth of `W` per level a multi-level split assumes: `4^b` (64 for octrees, 4 for
/// binary trees).
pub const fn nf_growth(layout: KeyLayout) -> u64 {
    1u64 << (2 * layout.bits_per_level())
}

/// The NFCount operation of leaf `i`: 0 for a non-first sibling of a complete group
/// whose group value (`group[first]`) is at most `threshold`, else
/// [`split_op`]`(nf[i], threshold, 4^b, ..)`. Lookups only: the stencils are in `nf`
/// and `group`.
///
/// `i < L`, and `nf`, `group` have one entry per leaf.
#[inline]
pub fn nf_op(keys: &[u64], nf: &[u64], group: &[u64], i: usize, threshold: u64, layout: KeyLayout) -> u32 {
    let level = leaf_level(keys, i, layout);
    if let Some((first, slot)) = sibling_group(keys, i, level, layout)
        && slot > 0
        && group[first] <= threshold
    {
        return 0;
    }
    split_op(nf[i], threshold, nf_growth(layout), level, layout)
}

/// Rejects a zero threshold: a leaf with a particle always has `W >= 1`, so nothing
/// would stop splitting before the key depth.
///
/// # Errors
/// [`Error::InvalidArgument`] (what: "threshold") for 0.
pub fn check_threshold(threshold: u64) -> Result<()> {
    if threshold == 0 {
        return Err(Error::InvalidArgument { what: "threshold", reason: "must be at least 1".to_owned() });
    }
    Ok(())
}

/// `f(i)` for `i` in `0..n`, in parallel.
fn map_leaves<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    (0..n).into_par_iter().with_min_len(CHUNK).map(f).collect()
}

/// The exclusive prefix sum of `counts`, `counts.len() + 1` entries.
fn exclusive_scan(counts: &[u32]) -> Vec<u32> {
    let mut starts = Vec::with_capacity(counts.len() + 1);
    let mut total = 0u32;
    starts.push(0);
    for &c in counts {
        total = total.saturating_add(c);
        starts.push(total);
    }
    starts
}

/// A tree with everything NFCount decides on: per leaf its particle count, first
/// particle, `W` and group value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfState {
    geometry: KeyGeometry,
    leaves: Leaves,
    counts: Vec<u32>,
    starts: Vec<u32>,
    nf: Vec<u64>,
    group: Vec<u64>,
}

/// One applied NFCount pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NfPass {
    /// The new tree with its carried and fresh values.
    pub state: NfState,
    /// Whether any operation was not 1.
    pub changed: bool,
    /// New leaves that were counted and got a stencil: the split children.
    pub fresh_leaves: usize,
    /// Complete sibling groups whose parent stencil was evaluated: those that became
    /// complete in this pass.
    pub fresh_groups: usize,
}

/// Where a new leaf of a pass came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// Old leaf `i`, unchanged.
    Kept(usize),
    /// The parent of the complete group that old leaf `i` led.
    Merged(usize),
    /// A descendant of old leaf `i`, which split.
    Split(usize),
}

/// Whether leaf `k` is the first of a complete sibling group.
fn leads_complete_group(keys: &[u64], k: usize, layout: KeyLayout) -> bool {
    matches!(sibling_group(keys, k, leaf_level(keys, k, layout), layout), Some((_, 0)))
}

/// The origin of new leaf `k`, from the operations and their exclusive scan: the last
/// old leaf whose first descendant is at or before `k` (a merge's non-first siblings
/// have their first descendant one past it).
fn origin(ops: &[u32], offsets: &[u32], k: usize) -> Origin {
    let i = (upper_bound_one(&offsets[..ops.len()], k as u32) as usize).saturating_sub(1);
    match ops[i] {
        1 if ops.get(i + 1) == Some(&0) => Origin::Merged(i),
        1 => Origin::Kept(i),
        _ => Origin::Split(i),
    }
}

impl NfState {
    /// Evaluates every value of `leaves` from scratch for the sorted `particles`: the
    /// first pass of a build or update, and the oracle of the carried values.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for unsorted or out-of-range particle keys or a
    /// geometry of other keys than `leaves`' ([`KeyGeometry::check_layout`]).
    pub fn evaluate(leaves: Leaves, particles: &[u64], geometry: KeyGeometry) -> Result<Self> {
        check_sorted_keys(particles, leaves.layout())?;
        Self::evaluate_sorted(leaves, particles, geometry)
    }

    /// [`NfState::evaluate`] of particle keys already checked sorted.
    pub(crate) fn evaluate_sorted(leaves: Leaves, particles: &[u64], geometry: KeyGeometry) -> Result<Self> {
        geometry.check_layout(leaves.layout())?;
        let keys = leaves.keys();
        let starts = leaf_starts(keys, particles);
        let counts = starts.windows(2).map(|w| w[1].saturating_sub(w[0])).collect();
        let nf = map_leaves(leaves.len(), |i| leaf_nf(geometry, keys, &starts, particles, i));
        let group = map_leaves(leaves.len(), |i| group_nf(geometry, keys, &starts, particles, i));
        Ok(Self { geometry, leaves, counts, starts, nf, group })
    }

    /// The geometry of the stencils.
    pub fn geometry(&self) -> KeyGeometry {
        self.geometry
    }

    /// The leaf array.
    pub fn leaves(&self) -> &Leaves {
        &self.leaves
    }

    /// Particles per leaf.
    pub fn counts(&self) -> &[u32] {
        &self.counts
    }

    /// The first particle of every leaf and, last, one past the last (`L + 1` entries).
    pub fn starts(&self) -> &[u32] {
        &self.starts
    }

    /// `W_i = n_i * S_i` per leaf.
    pub fn nf(&self) -> &[u64] {
        &self.nf
    }

    /// Per leaf, the parent's `n_p * S_p` when the leaf leads a complete sibling group,
    /// else [`NO_GROUP`].
    pub fn group_nf(&self) -> &[u64] {
        &self.group
    }

    /// The leaf array, counts and `W` values.
    pub fn into_parts(self) -> (Leaves, Vec<u32>, Vec<u64>) {
        (self.leaves, self.counts, self.nf)
    }

    /// The NFCount operation of every leaf ([`nf_op`]): lookups in the values, no
    /// stencil.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero threshold.
    pub fn decide(&self, threshold: u64) -> Result<Vec<u32>> {
        check_threshold(threshold)?;
        let (keys, layout) = (self.leaves.keys(), self.leaves.layout());
        Ok(map_leaves(self.leaves.len(), |i| nf_op(keys, &self.nf, &self.group, i, threshold, layout)))
    }

    /// Applies `ops` (a decision of this state) and carries the values over: kept
    /// leaves and groups keep theirs, merged parents take their group value, and only
    /// split children and newly complete groups are evaluated, for the same sorted
    /// `particles` this state was evaluated for.
    ///
    /// # Errors
    /// As [`rebalance::rebalance`] (one valid operation per leaf).
    pub fn apply(&self, ops: &[u32], particles: &[u64]) -> Result<NfPass> {
        check_len("NFCount operations", self.leaves.len(), ops.len())?;
        let next = rebalance::rebalance(&self.leaves, ops)?;
        let (new_keys, geometry) = (next.leaves.keys(), self.geometry);
        let origins = map_leaves(next.leaves.len(), |k| origin(ops, &next.offsets, k));
        let counts = map_leaves(origins.len(), |k| self.carried_count(origins[k], new_keys, k, particles));
        let starts = exclusive_scan(&counts);
        let nf = map_leaves(origins.len(), |k| match origins[k] {
            Origin::Kept(i) => self.nf[i],
            Origin::Merged(i) if self.group[i] != NO_GROUP => self.group[i],
            Origin::Merged(_) | Origin::Split(_) => leaf_nf(geometry, new_keys, &starts, particles, k),
        });
        let carried_group = |k: usize| match origins[k] {
            Origin::Kept(i) if self.group[i] != NO_GROUP => Some(self.group[i]),
            _ => None,
        };
        let group = map_leaves(origins.len(), |k| {
            if !leads_complete_group(new_keys, k, geometry.layout()) {
                return NO_GROUP;
            }
            carried_group(k).unwrap_or_else(|| group_nf(geometry, new_keys, &starts, particles, k))
        });
        let fresh_leaves = origins.iter().filter(|o| matches!(o, Origin::Split(_))).count();
        let fresh_groups = (0..origins.len()).filter(|&k| group[k] != NO_GROUP && carried_group(k).is_none()).count();
        let state = NfState { geometry, leaves: next.leaves, counts, starts, nf, group };
        Ok(NfPass { state, changed: next.changed, fresh_leaves, fresh_groups })
    }

    /// The count of new leaf `k` (keys `new_keys`): carried for a kept leaf, the old
    /// leaves' start difference for a merged parent (a union of old leaves), two
    /// searches in the old leaf's particles for a split child.
    fn carried_count(&self, origin: Origin, new_keys: &[u64], k: usize, particles: &[u64]) -> u32 {
        match origin {
            Origin::Kept(i) => self.counts[i],
            Origin::Merged(i) => {
                cell_count(self.leaves.keys(), &self.starts, particles, new_keys[k], new_keys[k + 1], i)
            }
            Origin::Split(i) => {
                let lo = (self.starts[i] as usize).min(particles.len());
                let hi = (self.starts[i + 1] as usize).clamp(lo, particles.len());
                particle_count(&particles[lo..hi], new_keys[k], new_keys[k + 1])
            }
        }
    }
}
