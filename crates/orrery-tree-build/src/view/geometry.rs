//! The real-space box of every tree cell, by one rule that GPU kernels repeat bit for bit.
//!
//! A cell is a key interval; its box comes from the integer coordinates of its first key,
//! never from a walk down the tree, so every node's box is one independent per-node
//! computation. The rule lives in [`Geometry::cell_box`] (and its table-driven twin
//! [`BoxRule`], which the construction uses); nothing else computes boxes.

use orrery_core::sfc::{BinaryLayout, Curve, KeyLayout, SfcKey};
use orrery_core::{Aabb, Error, Real, Result};

use crate::input::Shape;

/// Where the keys of a tree came from: the box and the key map that made them. It turns a
/// cell (first key and level) into a box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Geometry<T: Real> {
    /// 63-bit 3D keys of `curve` in `bbox`, as [`orrery_core::sfc::KeyMapper`]`<T, u64>`
    /// makes them: 21 levels, `2^21` integer cells per axis, every cell the same
    /// fraction of the box on every axis.
    Octree {
        /// The curve of the keys.
        curve: Curve,
        /// The box the keys were computed in.
        bbox: Aabb<T>,
    },
    /// Binary keys of this layout (longest side halved first), as
    /// [`BinaryLayout::key_clamped`] makes them: cells are rectangular wherever the box
    /// is.
    Binary(BinaryLayout<T, u64>),
}

/// A cell's box as centre and half-extent per axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellBox<T: Real> {
    /// The centre `[x, y, z]`.
    pub centre: [T; 3],
    /// Half the side on each axis.
    pub half: [T; 3],
}

impl<T: Real> CellBox<T> {
    /// The lower corner `centre - half` (rounded; not the `lo` of the rule, which is not
    /// stored).
    pub fn lo(&self) -> [T; 3] {
        [0, 1, 2].map(|a| self.centre[a] - self.half[a])
    }

    /// The upper corner `centre + half` (rounded).
    pub fn hi(&self) -> [T; 3] {
        [0, 1, 2].map(|a| self.centre[a] + self.half[a])
    }
}

impl<T: Real> Geometry<T> {
    /// The geometry of keys made by [`crate::input::particle_keys`] for `shape` in `bbox`
    /// (a full-depth [`BinaryLayout`] for binary trees).
    pub fn new(shape: Shape, bbox: Aabb<T>) -> Self {
        match shape {
            Shape::Octree(curve) => Self::Octree { curve, bbox },
            Shape::Binary => Self::Binary(BinaryLayout::full_depth(bbox)),
        }
    }

    /// The box.
    pub fn bbox(&self) -> &Aabb<T> {
        match self {
            Self::Octree { bbox, .. } => bbox,
            Self::Binary(binary) => binary.bbox(),
        }
    }

    /// The key layout these keys have: [`KeyLayout::octree`] of `u64`, or the binary
    /// layout's [`BinaryLayout::key_layout`].
    pub fn key_layout(&self) -> KeyLayout {
        match self {
            Self::Octree { .. } => KeyLayout::octree::<u64>(),
            Self::Binary(binary) => binary.key_layout(),
        }
    }

    /// Integer coordinate bits per axis: 21 on every axis for octrees,
    /// [`BinaryLayout::bits_per_axis`] for binary trees.
    pub fn coordinate_bits(&self) -> [u32; 3] {
        match self {
            Self::Octree { .. } => [u64::LEVELS_3D; 3],
            Self::Binary(binary) => binary.bits_per_axis(),
        }
    }

    /// Coordinate bits per axis fixed by a level-`level` cell: `[level; 3]` for octrees,
    /// [`BinaryLayout::cell_bits`] for binary trees. The cell spans `2^(coordinate_bits
    /// - cell_bits)` integer cells on each axis.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for a level below the layout's depth.
    pub fn cell_bits(&self, level: u32) -> Result<[u32; 3]> {
        match self {
            Self::Octree { .. } => {
                if level > u64::LEVELS_3D {
                    return Err(Error::LevelOutOfRange { level, max: u64::LEVELS_3D, what: "an octree key" });
                }
                Ok([level; 3])
            }
            Self::Binary(binary) => binary.cell_bits(level),
        }
    }

    /// The side of one integer cell per axis: `unit[a] = extent[a] / T(2^coordinate_bits[a])`
    /// (`extent = bbox.max() - bbox.min()` in `T`; one correctly rounded division by a
    /// power of two, exact unless the quotient is subnormal; 0 for a zero extent). GPU
    /// kernels take these values from the host.
    pub fn unit(&self) -> [T; 3] {
        let extent = self.bbox().extent();
        let bits = self.coordinate_bits();
        [0, 1, 2].map(|a| extent[a] / pow2::<T>(bits[a]))
    }

    /// Checks that these keys are the keys of `layout`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`what = "geometry"`) when the layouts differ: an octree
    /// geometry for a binary (or quadtree) leaf array, a binary geometry for an octree, or
    /// a binary layout of another depth.
    pub fn check_fits(&self, layout: KeyLayout) -> Result<()> {
        let own = self.key_layout();
        if own == layout {
            return Ok(());
        }
        let kind = match self {
            Self::Octree { .. } => "an octree geometry",
            Self::Binary(_) => "a binary geometry",
        };
        Err(Error::InvalidArgument {
            what: "geometry",
            reason: format!(
                "{kind} makes keys of {} bit(s) per level and {} levels, but the leaves have {} and {}",
                own.bits_per_level(),
                own.levels(),
                layout.bits_per_level(),
                layout.levels()
            ),
        })
    }

    /// The box of the level-`level` cell whose first key is `key`.
    ///
    /// The rule, per axis `a`, every operation in `T`, correctly rounded, and no fused
    /// multiply-add (Rust never contracts; in CUDA write `__dmul_rn`/`__dadd_rn`, or
    /// `__fmul_rn`/`__fadd_rn` for f32):
    ///
    /// 1. `c = decode(key)`: [`Curve::decode_3d_unchecked`] for octrees,
    ///    [`BinaryLayout::decode_unchecked`] for binary trees;
    /// 2. `s = coordinate_bits[a] - cell_bits(level)[a]` and `corner = (c[a] >> s) << s`
    ///    (a Hilbert cell's first key decodes to whichever corner the curve enters by,
    ///    so the low bits are cleared; on Morton and binary keys they are already 0);
    /// 3. `side = T(2^s) * unit[a]` (exact: a power of two times [`Geometry::unit`]),
    ///    `half = side * T(0.5)`;
    /// 4. `lo = min[a] + T(corner) * unit[a]`, where `T(corner)` converts the `u64` to
    ///    f64 and then to `T`, each round-to-nearest-even (exact for octrees and for
    ///    binary axes of up to 53 bits; `__ull2double_rn`, then `__double2float_rn`
    ///    for f32);
    /// 5. `centre = lo + half`.
    ///
    /// For a box whose extents are powers of two times `2^bits` units (e.g.
    /// `[-1, 1]^3`) every step is exact, so children tile their parent exactly.
    ///
    /// # Errors
    /// [`Error::LevelOutOfRange`] for a level below the layout's depth,
    /// [`Error::InvalidTree`] (index 0) when `key` is not the first key of a
    /// level-`level` cell.
    pub fn cell_box(&self, key: u64, level: u32) -> Result<CellBox<T>> {
        let layout = self.key_layout();
        self.cell_bits(level)?;
        let end = layout.key_end::<u64>();
        let size = layout.cell_size_unchecked::<u64>(level);
        if key >= end || key & (size - 1) != 0 {
            return Err(Error::InvalidTree {
                index: 0,
                reason: format!("key {key:#x} is not the first key of a level-{level} cell"),
            });
        }
        Ok(BoxRule::new(self).cell_box(key, level))
    }
}

/// `2^bits` as a `T` (exact: a power of two up to `2^63`).
pub(crate) fn pow2<T: Real>(bits: u32) -> T {
    <T as Real>::from_f64((1u64 << bits) as f64)
}

/// [`Geometry::cell_box`] with its per-level table computed once: the form every node of
/// a view (and every GPU thread) evaluates. Valid `(key, level)` pairs only.
#[derive(Debug, Clone)]
pub(crate) struct BoxRule<T: Real> {
    geometry: Geometry<T>,
    min: [T; 3],
    unit: [T; 3],
    /// `side_log2[level][a] = coordinate_bits[a] - cell_bits(level)[a]`.
    side_log2: Vec<[u32; 3]>,
}

impl<T: Real> BoxRule<T> {
    pub(crate) fn new(geometry: &Geometry<T>) -> Self {
        let bits = geometry.coordinate_bits();
        let levels = geometry.key_layout().levels();
        let side_log2 = (0..=levels)
            .map(|level| {
                let fixed = geometry.cell_bits(level).unwrap_or(bits);
                [0, 1, 2].map(|a| bits[a] - fixed[a])
            })
            .collect();
        let m = geometry.bbox().min();
        Self { geometry: *geometry, min: [m.x, m.y, m.z], unit: geometry.unit(), side_log2 }
    }

    /// The box of a valid cell.
    #[inline]
    pub(crate) fn cell_box(&self, key: u64, level: u32) -> CellBox<T> {
        let c: [u64; 3] = match &self.geometry {
            Geometry::Octree { curve, .. } => curve.decode_3d_unchecked::<u64>(key).map(u64::from),
            Geometry::Binary(binary) => binary.decode_unchecked(key),
        };
        let s = self.side_log2[level as usize];
        let half_factor = <T as Real>::from_f64(0.5);
        let mut centre = [T::ZERO; 3];
        let mut half = [T::ZERO; 3];
        for a in 0..3 {
            let corner = (c[a] >> s[a]) << s[a];
            let side = pow2::<T>(s[a]) * self.unit[a];
            half[a] = side * half_factor;
            let lo = self.min[a] + <T as Real>::from_f64(corner as f64) * self.unit[a];
            centre[a] = lo + half[a];
        }
        CellBox { centre, half }
    }
}
