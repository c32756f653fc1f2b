//! From positions to sorted keys: the box, the key of every particle, and its order.
//!
//! Particles outside a given box keep their slot but get the key `key_end` (the end of
//! the key range, Cornerstone's "removed" key): they sort to the end, no leaf interval
//! holds them, so they are left out of counts and views, and the active count says how
//! many remain. A box that is not given is the particles' bounding box.

use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout, KeyMapper};
use orrery_core::{Aabb, Error, PositionsView, Real, Result};
use rayon::prelude::*;

/// The shape of a tree: which keys its leaves are cells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// An octree over 63-bit 3D keys of the given curve (21 levels, 3 bits per level).
    Octree(Curve),
    /// A binary tree over 63-bit binary keys: each level halves the longest side of the
    /// box's cells ([`BinaryLayout`]).
    Binary,
}

impl Shape {
    /// The key layout of this shape.
    pub fn layout(self) -> KeyLayout {
        match self {
            Shape::Octree(_) => KeyLayout::octree::<u64>(),
            Shape::Binary => KeyLayout::binary::<u64>(),
        }
    }
}

/// Particles keyed and sorted for a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SortedKeys<T: Real> {
    /// Keys in ascending order; removed particles (outside the box) last, with `key_end`.
    pub keys: Vec<u64>,
    /// `order[s]` is the input index of the particle in sorted slot `s`; equal keys keep
    /// input order.
    pub order: Vec<u32>,
    /// Particles inside the box: `keys[..active]` are below `key_end`.
    pub active: usize,
    /// The box the keys were computed in.
    pub bbox: Aabb<T>,
    /// The key layout.
    pub layout: KeyLayout,
}

/// Rejects a box that has no extent on any axis: every particle would share one key and
/// no cell could ever separate them.
///
/// # Errors
/// [`Error::InvalidBox`] for such a box.
pub fn check_tree_box<T: Real>(bbox: &Aabb<T>, what: &'static str) -> Result<()> {
    let e = bbox.extent();
    if (0..3).all(|a| e[a] == T::ZERO) {
        let (min, max) = bbox.to_f64();
        return Err(Error::InvalidBox { axis: orrery_core::Axis::X, min: min[0], max: max[0], reason: what });
    }
    Ok(())
}

/// The box of a tree over `positions`: `bbox` when given (checked not degenerate), else
/// the particles' bounding box.
///
/// # Errors
/// [`Error::EmptyInput`] for no particles ([`PositionsView::new`] has already refused
/// NaN, infinity and more than 32-bit indices), [`Error::InvalidBox`] for a
/// degenerate box (given, or computed from particles that all coincide, one particle
/// included: pass a box then).
pub fn tree_box<T: Real>(positions: PositionsView<'_, T>, bbox: Option<Aabb<T>>) -> Result<Aabb<T>> {
    if positions.is_empty() {
        return Err(Error::EmptyInput { what: "particles", min: 1 });
    }
    check_particle_count(positions.len())?;
    if let Some(b) = bbox {
        check_tree_box(&b, "the given box has zero extent on every axis")?;
        return Ok(b);
    }
    let b = positions.bounding_box()?;
    check_tree_box(&b, "all particles coincide, so their bounding box is a point: pass a box")?;
    Ok(b)
}

/// Rejects more particles than 32-bit indices (the sort's permutation) hold.
///
/// # Errors
/// [`Error::TooManyPoints`] for `n > u32::MAX`.
pub fn check_particle_count(n: usize) -> Result<()> {
    orrery_core::particles::check_index_range(n, "particles")
}

/// The key of every particle (`key_end` outside `bbox`), in input order.
pub fn particle_keys<T: Real>(positions: PositionsView<'_, T>, bbox: &Aabb<T>, shape: Shape) -> Vec<u64> {
    let end = shape.layout().key_end::<u64>();
    let (lo, hi) = (bbox.min(), bbox.max());
    let inside = move |i: usize| {
        let q = positions.point(i);
        (0..3).all(|a| q[a] >= lo[a] && q[a] <= hi[a])
    };
    match shape {
        Shape::Octree(curve) => {
            let mapper = KeyMapper::<T, u64>::new(*bbox, curve);
            (0..positions.len())
                .into_par_iter()
                .map(|i| {
                    if inside(i) {
                        let q = positions.point(i);
                        mapper.key_clamped(q.x, q.y, q.z)
                    } else {
                        end
                    }
                })
                .collect()
        }
        Shape::Binary => {
            let binary = BinaryLayout::<T, u64>::full_depth(*bbox);
            (0..positions.len())
                .into_par_iter()
                .map(|i| {
                    if inside(i) {
                        let q = positions.point(i);
                        binary.key_clamped(q.x, q.y, q.z)
                    } else {
                        end
                    }
                })
                .collect()
        }
    }
}

/// Sorts particle keys with their input indices (ties keep input order) and counts the
/// active ones: the sorted `(keys, order, active)`.
pub fn sort_keys(keys: Vec<u64>, layout: KeyLayout) -> (Vec<u64>, Vec<u32>, usize) {
    let mut pairs: Vec<(u64, u32)> = keys.into_par_iter().enumerate().map(|(i, k)| (k, i as u32)).collect();
    // Distinct (key, index) pairs: an unstable sort gives the one stable order.
    pairs.par_sort_unstable();
    let end = layout.key_end::<u64>();
    let active = pairs.partition_point(|&(k, _)| k < end);
    let (keys, order) = pairs.into_par_iter().unzip();
    (keys, order, active)
}

/// Keys and sorts `positions` for a tree of `shape` in `bbox` (or their bounding box).
///
/// # Errors
/// As [`tree_box`].
pub fn sort_particles<T: Real>(
    positions: PositionsView<'_, T>,
    bbox: Option<Aabb<T>>,
    shape: Shape,
) -> Result<SortedKeys<T>> {
    let bbox = tree_box(positions, bbox)?;
    let layout = shape.layout();
    let (keys, order, active) = sort_keys(particle_keys(positions, &bbox, shape), layout);
    Ok(SortedKeys { keys, order, active, bbox, layout })
}
