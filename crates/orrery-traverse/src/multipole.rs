//! Multipoles over a TreeView, from the leaves up, one pass per level: mass, centre of
//! mass, traceless quadrupole and extent of every node.
//!
//! # Definitions
//! For the particles `j` of a node (masses `m_j`, positions `x_j`):
//! - mass `M = sum m_j`; centre of mass `c = g + (sum m_j (x_j - g)) / M`, accumulated
//!   relative to the cell's geometric centre `g` (the sums of small offsets keep f32
//!   accurate deep in the tree);
//! - second moments about `c`: `T_ab = sum m_j d_a d_b` with `d = x_j - c`, and the
//!   traceless quadrupole `Q_ab = 3 T_ab - delta_ab (T_xx + T_yy + T_zz)` (stored as
//!   `[xx, xy, xz, yy, yz, zz]`), so that the far potential is
//!   `phi = -G (M / r + Q(d, d) / (2 r^5))`;
//! - extent: the distance from `c` to the node's farthest particle.
//!
//! A node without particles has `M = 0`, `c = g`, `Q = 0`, extent 0; walks skip it.
//!
//! # Order of operations
//! A leaf sums its particles in tree order; an internal node sums its children in child
//! order, moving their second moments to its centre of mass (parallel-axis theorem:
//! `T += T_child + M_child s_a s_b` with `s = c_child - c`). The levels run deepest first,
//! the nodes of a level in parallel. Every step is one rounded IEEE operation in a fixed
//! order (no fused multiply-add), which is what lets a GPU kernel written with
//! correctly rounded intrinsics reproduce these values bit for bit.

use orrery_core::{Error, Real, Result};
use orrery_tree_build::view::TreeView;
use rayon::prelude::*;

use crate::tree_bodies::TreeBodies;

/// Which terms of the expansion a walk evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expansion {
    /// Mass at the centre of mass.
    Monopole,
    /// Monopole plus the traceless quadrupole (the dipole vanishes about the centre of
    /// mass).
    Quadrupole,
}

/// The multipoles of every node of a view, indexed like the view (level order).
#[derive(Debug, Clone, PartialEq)]
pub struct Multipoles<T> {
    /// Mass `M`.
    pub mass: Vec<T>,
    /// Centre of mass `c`.
    pub com: Vec<[T; 3]>,
    /// Traceless quadrupole `[xx, xy, xz, yy, yz, zz]` about `c`.
    pub quad: Vec<[T; 6]>,
    /// Distance from `c` to the farthest particle.
    pub extent: Vec<T>,
}

/// Mass, offset sum and second moments of one node while the pass runs.
#[derive(Clone, Copy)]
struct Moments<T> {
    mass: T,
    com: [T; 3],
    second: [T; 6],
}

impl<T: Real> Multipoles<T> {
    /// The multipoles of `view` over `bodies` (in the view's particle order: the tree
    /// order of [`TreeBodies`]).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] unless `bodies` has exactly the view's particles.
    pub fn compute(view: &TreeView<T>, bodies: &TreeBodies<T>) -> Result<Self> {
        if bodies.len() != view.num_particles() {
            return Err(Error::LengthMismatch {
                what: "tree bodies",
                expected: view.num_particles(),
                actual: bodies.len(),
            });
        }
        let n = view.num_nodes();
        let zero = Moments { mass: T::zero(), com: [T::zero(); 3], second: [T::zero(); 6] };
        let mut moments = vec![zero; n];
        let depth = view.depth();
        for level in (0..=depth).rev() {
            let range = view.level_range(level).expect("levels 0..=depth exist");
            let (done, rest) = moments.split_at_mut(range.end as usize);
            let (_, this_level) = done.split_at_mut(range.start as usize);
            let deeper: &[Moments<T>] = rest;
            let offset = range.end as usize;
            this_level.par_iter_mut().enumerate().for_each(|(k, out)| {
                let node = range.start + k as u32;
                *out = match view.children(node) {
                    None => leaf_moments(view, bodies, node),
                    Some(children) => {
                        let kids = &deeper[children.start as usize - offset..children.end as usize - offset];
                        internal_moments(view.centres()[node as usize], kids)
                    }
                };
            });
        }
        let extent = (0..n as u32)
            .into_par_iter()
            .map(|node| extent_of(view, bodies, moments[node as usize].com, node))
            .collect();
        Ok(Self {
            mass: moments.iter().map(|m| m.mass).collect(),
            com: moments.iter().map(|m| m.com).collect(),
            quad: moments.iter().map(|m| traceless(m.second)).collect(),
            extent,
        })
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }
}

fn leaf_moments<T: Real>(view: &TreeView<T>, b: &TreeBodies<T>, node: u32) -> Moments<T> {
    let g = view.centres()[node as usize];
    let range = view.particles(node);
    let (mut mass, mut s) = (T::zero(), [T::zero(); 3]);
    for j in range.clone() {
        let j = j as usize;
        let m = b.m[j];
        mass += m;
        s[0] += m * (b.x[j] - g[0]);
        s[1] += m * (b.y[j] - g[1]);
        s[2] += m * (b.z[j] - g[2]);
    }
    if mass == T::zero() {
        return Moments { mass, com: g, second: [T::zero(); 6] };
    }
    let com = [g[0] + s[0] / mass, g[1] + s[1] / mass, g[2] + s[2] / mass];
    let mut second = [T::zero(); 6];
    for j in range {
        let j = j as usize;
        let d = [b.x[j] - com[0], b.y[j] - com[1], b.z[j] - com[2]];
        add_second(&mut second, b.m[j], d);
    }
    Moments { mass, com, second }
}

fn internal_moments<T: Real>(g: [T; 3], kids: &[Moments<T>]) -> Moments<T> {
    let (mut mass, mut s) = (T::zero(), [T::zero(); 3]);
    for k in kids {
        mass += k.mass;
        s[0] += k.mass * (k.com[0] - g[0]);
        s[1] += k.mass * (k.com[1] - g[1]);
        s[2] += k.mass * (k.com[2] - g[2]);
    }
    if mass == T::zero() {
        return Moments { mass, com: g, second: [T::zero(); 6] };
    }
    let com = [g[0] + s[0] / mass, g[1] + s[1] / mass, g[2] + s[2] / mass];
    let mut second = [T::zero(); 6];
    for k in kids {
        for (acc, v) in second.iter_mut().zip(k.second) {
            *acc += v;
        }
        let d = [k.com[0] - com[0], k.com[1] - com[1], k.com[2] - com[2]];
        add_second(&mut second, k.mass, d);
    }
    Moments { mass, com, second }
}

/// `T_ab += (m d_a) d_b` for the six pairs, in `[xx, xy, xz, yy, yz, zz]` order.
#[inline]
fn add_second<T: Real>(t: &mut [T; 6], m: T, d: [T; 3]) {
    let md = [m * d[0], m * d[1], m * d[2]];
    t[0] += md[0] * d[0];
    t[1] += md[0] * d[1];
    t[2] += md[0] * d[2];
    t[3] += md[1] * d[1];
    t[4] += md[1] * d[2];
    t[5] += md[2] * d[2];
}

/// `Q = 3 T - trace(T) I`.
#[inline]
fn traceless<T: Real>(t: [T; 6]) -> [T; 6] {
    let three = T::one() + T::one() + T::one();
    let trace = t[0] + t[3] + t[5];
    [three * t[0] - trace, three * t[1], three * t[2], three * t[3] - trace, three * t[4], three * t[5] - trace]
}

fn extent_of<T: Real>(view: &TreeView<T>, b: &TreeBodies<T>, com: [T; 3], node: u32) -> T {
    let mut far = T::zero();
    for j in view.particles(node) {
        let j = j as usize;
        far = far.max(crate::mac::distance2([b.x[j], b.y[j], b.z[j]], com));
    }
    far.sqrt()
}
