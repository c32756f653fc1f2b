//! Bodies in tree order: the walks read sources and targets in the order of the sorted
//! keys, where a node's particles are one contiguous range and neighbouring targets walk
//! nearly the same tree; results are scattered back to the caller's order.

use orrery_core::{Error, ParticlesView, Real, Result};
use rayon::prelude::*;

use crate::bodies::Forces;

/// Positions and masses gathered into tree order, with the order itself.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeBodies<T> {
    /// x in tree order.
    pub x: Vec<T>,
    /// y in tree order.
    pub y: Vec<T>,
    /// z in tree order.
    pub z: Vec<T>,
    /// Masses in tree order.
    pub m: Vec<T>,
    /// The input index of each tree position (the sort's order).
    pub order: Vec<u32>,
}

impl<T: Real> TreeBodies<T> {
    /// Gathers `bodies` by `order` (tree position -> input index; the `order` of
    /// `orrery_tree_build::input::SortedKeys`, restricted to the active particles).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] for an order entry past the bodies;
    /// [`Error::InvalidArgument`] when an input index appears twice.
    pub fn gather(bodies: &ParticlesView<'_, T>, order: &[u32]) -> Result<Self> {
        let n = bodies.len();
        if let Some(k) = order.par_iter().position_first(|&i| i as usize >= n) {
            return Err(Error::IndexOutOfBounds { what: "order", position: k, index: u64::from(order[k]), len: n });
        }
        let mut seen = vec![false; n];
        for &i in order {
            if std::mem::replace(&mut seen[i as usize], true) {
                return Err(Error::InvalidArgument { what: "order", reason: format!("input index {i} appears twice") });
            }
        }
        let p = bodies.positions();
        let pick = |s: &[T]| order.par_iter().map(|&i| s[i as usize]).collect();
        Ok(Self { x: pick(p.x()), y: pick(p.y()), z: pick(p.z()), m: pick(bodies.mass()), order: order.to_vec() })
    }

    /// Bodies.
    pub fn len(&self) -> usize {
        self.m.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.m.is_empty()
    }

    /// Position of tree position `i`.
    #[inline]
    pub fn position(&self, i: usize) -> [T; 3] {
        [self.x[i], self.y[i], self.z[i]]
    }

    /// Per-target values in tree order scattered back to input order (`n` entries,
    /// `fill` where no tree position maps).
    pub fn scatter<V: Copy + Send + Sync>(&self, tree_order: &[V], n: usize, fill: V) -> Vec<V> {
        let mut out = vec![fill; n];
        for (&i, &v) in self.order.iter().zip(tree_order) {
            out[i as usize] = v;
        }
        out
    }

    /// Forces in tree order scattered back to input order (`n` targets; zero where no
    /// tree position maps).
    pub fn scatter_forces(&self, f: &Forces<T>, n: usize) -> Forces<T> {
        let z = T::zero();
        Forces {
            ax: self.scatter(&f.ax, n, z),
            ay: self.scatter(&f.ay, n, z),
            az: self.scatter(&f.az, n, z),
            pot: self.scatter(&f.pot, n, z),
        }
    }
}
