//! What the FMM knows of each node beyond the TreeView: its expansion centre (the cell's
//! geometric centre, in f64 in a normalised frame), the same centre as exact integers
//! (for the direction table), and the radius of the ball around the centre that holds
//! its particles (for the acceptance criterion).
//!
//! # Why geometric centres, exact integers and a normalised frame
//! - Geometric centres make every translation vector a difference of cell centres, i.e.
//!   an integer vector in units of half the finest cell: the set of *directions* is small
//!   and repeats across the tree, so the rotation matrices are computed once per
//!   direction ([`crate::fmm::directions`]) instead of once per pair. Centres of mass
//!   would give a better radius for a skewed cell but a fresh direction per pair.
//! - Integer centres (`2 corner + side` per axis, in half integer-cells of the key grid,
//!   from the node's key and level as [`orrery_tree_build::Geometry::cell_box`] decodes
//!   them) make two pairs with the same offset get the same direction bit for bit,
//!   whatever the bodies' precision.
//! - The frame maps the tree's box to `[0, 1]` along its longest side: a level-21 cell is
//!   then `2^-21` wide and `tau^-(2p+1)` of [`crate::fmm::expansions::MAX_ORDER`] stays
//!   below `1e-300`'s reciprocal. Potentials scale by `1 / scale`, gradients by
//!   `1 / scale^2` on the way out.
//! - The radius is the largest distance from the centre to a particle of the node (0 for
//!   an empty node): a sparse cell gets a small ball and is accepted earlier than its box
//!   would allow, and expansions converge for every particle they are evaluated at.

use orrery_core::{Error, Real, Result};
use orrery_tree_build::view::{Geometry, TreeView};
use rayon::prelude::*;

use crate::tree_bodies::TreeBodies;

/// Most integer coordinate bits per axis the FMM accepts (integer centres are `i64`
/// half-cells: `2^(bits + 1)` must fit with room for differences).
pub const MAX_COORDINATE_BITS: u32 = 60;

/// The normalised frame: `u = (x - origin) / scale`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frame {
    /// The tree box's lower corner.
    pub origin: [f64; 3],
    /// The tree box's longest side.
    pub scale: f64,
}

impl Frame {
    /// The frame of a tree's geometry.
    ///
    /// # Errors
    /// [`Error::InvalidBox`] for a box with no extent.
    pub fn of<T: Real>(geometry: &Geometry<T>) -> Result<Self> {
        let (min, max) = geometry.bbox().to_f64();
        let scale = (0..3).map(|a| max[a] - min[a]).fold(0.0, f64::max);
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(Error::InvalidBox {
                axis: orrery_core::Axis::X,
                min: min[0],
                max: max[0],
                reason: "the FMM needs a tree box with a finite, positive extent",
            });
        }
        Ok(Self { origin: min, scale })
    }

    /// `(x - origin) / scale`.
    #[inline]
    pub fn normalise(&self, x: [f64; 3]) -> [f64; 3] {
        let inv = 1.0 / self.scale;
        [0, 1, 2].map(|a| (x[a] - self.origin[a]) * inv)
    }
}

/// Per-node FMM data, indexed like the view, and the bodies in the normalised frame.
#[derive(Debug, Clone, PartialEq)]
pub struct FmmNodes {
    /// The frame.
    pub frame: Frame,
    /// Half an integer cell of the key grid per axis, in the frame.
    pub half_unit: [f64; 3],
    /// Whether the x and y half-units are equal (then directions that differ by a swap
    /// of x and y share a polar angle).
    pub square_xy: bool,
    /// Integer centre of each node: `2 corner + side` in half integer cells, per axis.
    pub grid: Vec<[i64; 3]>,
    /// Centre of each node in the frame (`grid * half_unit`).
    pub centres: Vec<[f64; 3]>,
    /// Radius of each node's particle ball about its centre, in the frame.
    pub radii: Vec<f64>,
    /// The bodies (tree order) in the frame.
    pub positions: Vec<[f64; 3]>,
}

impl FmmNodes {
    /// The node data of `view` over `bodies` (tree order).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `bodies` has the view's particles;
    /// [`Error::EmptyInput`] for a tree without particles; [`Error::InvalidArgument`] for
    /// a key grid of more than [`MAX_COORDINATE_BITS`] bits on an axis; as
    /// [`Frame::of`].
    pub fn new<T: Real>(view: &TreeView<T>, bodies: &TreeBodies<T>) -> Result<Self> {
        if bodies.len() != view.num_particles() {
            return Err(Error::LengthMismatch {
                what: "tree bodies",
                expected: view.num_particles(),
                actual: bodies.len(),
            });
        }
        if bodies.is_empty() {
            return Err(Error::EmptyInput { what: "FMM tree particles", min: 1 });
        }
        let geometry = view.geometry();
        let bits = geometry.coordinate_bits();
        if let Some(a) = (0..3).find(|&a| bits[a] > MAX_COORDINATE_BITS) {
            return Err(Error::InvalidArgument {
                what: "tree geometry",
                reason: format!(
                    "axis {a} has {} integer coordinate bits; the FMM's integer centres hold at most {MAX_COORDINATE_BITS}",
                    bits[a]
                ),
            });
        }
        let frame = Frame::of(geometry)?;
        let (min, max) = geometry.bbox().to_f64();
        let half_unit = [0, 1, 2].map(|a| (max[a] - min[a]) / frame.scale / 2f64.powi(bits[a].cast_signed() + 1));
        let levels = geometry.key_layout().levels();
        let shifts: Vec<[u32; 3]> = (0..=levels)
            .map(|level| {
                let fixed = geometry.cell_bits(level).unwrap_or(bits);
                [0, 1, 2].map(|a| bits[a] - fixed[a])
            })
            .collect();
        let (keys, node_levels) = (view.keys(), view.levels());
        let grid: Vec<[i64; 3]> = (0..view.num_nodes())
            .into_par_iter()
            .map(|n| {
                let c = decode(geometry, keys[n]);
                let s = shifts[node_levels[n] as usize];
                [0, 1, 2].map(|a| {
                    let corner = (c[a] >> s[a]) << s[a];
                    2 * corner.cast_signed() + (1i64 << s[a])
                })
            })
            .collect();
        let centres: Vec<[f64; 3]> = grid.par_iter().map(|g| [0, 1, 2].map(|a| g[a] as f64 * half_unit[a])).collect();
        let positions: Vec<[f64; 3]> =
            (0..bodies.len()).into_par_iter().map(|i| frame.normalise(bodies.position(i).map(Into::into))).collect();
        let radii = (0..view.num_nodes() as u32)
            .into_par_iter()
            .map(|n| {
                let c = centres[n as usize];
                let mut r2 = 0.0f64;
                for j in view.particles(n) {
                    let d = positions[j as usize];
                    let (dx, dy, dz) = (d[0] - c[0], d[1] - c[1], d[2] - c[2]);
                    r2 = r2.max(dx * dx + dy * dy + dz * dz);
                }
                r2.sqrt()
            })
            .collect();
        Ok(Self { frame, half_unit, square_xy: half_unit[0] == half_unit[1], grid, centres, radii, positions })
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.grid.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.grid.is_empty()
    }

    /// The integer offset `grid[to] - grid[from]`.
    #[inline]
    pub fn offset(&self, to: u32, from: u32) -> [i64; 3] {
        let (a, b) = (self.grid[to as usize], self.grid[from as usize]);
        [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
    }

    /// The shift vector `centre[to] - centre[from]` in the frame, as the integer offset
    /// times the half-unit (one rounding per component, so equal offsets give equal
    /// vectors, consistent with their direction's polar angle).
    #[inline]
    pub fn shift(&self, to: u32, from: u32) -> [f64; 3] {
        let o = self.offset(to, from);
        [0, 1, 2].map(|a| o[a] as f64 * self.half_unit[a])
    }
}

/// The integer coordinates of a key (the decode step of `Geometry::cell_box`).
fn decode<T: Real>(geometry: &Geometry<T>, key: u64) -> [u64; 3] {
    match geometry {
        Geometry::Octree { curve, .. } => curve.decode_3d_unchecked::<u64>(key).map(u64::from),
        Geometry::Binary(binary) => binary.decode_unchecked(key),
    }
}
