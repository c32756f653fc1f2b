//! [`WalkNodes`]: what a walk reads per node, packed as the GPU kernels read it.

use orrery_core::{Error, Real, Result};
use orrery_tree_build::view::TreeView;
use rayon::prelude::*;

use crate::mac::Opening;
use crate::multipole::Multipoles;

/// The node data of a walk, indexed like the view (level order: children contiguous,
/// so a group walk expands a node's children as one range), packed four values per
/// entry so that one GPU load fetches each group of fields:
///
/// | array | entry |
/// |---|---|
/// | `centres` | centre of mass `x, y, z` and the squared critical radius `r^2` |
/// | `masses` | mass `M`, quadrupole `Q_xx, Q_xy, Q_xz` |
/// | `quads` | quadrupole `Q_yy, Q_yz, Q_zz`, then 0 |
/// | `links` | first child ([`orrery_tree_build::view::NONE`] for a leaf), escape (next node in preorder after the subtree, `NONE` at the end), first particle, particle count |
///
/// A walk opens node `n` for a target at `x` when `|x - c|^2 < r^2` (the test of
/// [`crate::mac`]) and skips nodes without particles. The arrays are public so that GPU
/// results can be downloaded into this form and walked on the CPU (the exact
/// interaction-count comparisons); [`WalkNodes::new`] is the CPU construction.
#[derive(Debug, Clone, PartialEq)]
pub struct WalkNodes<T> {
    /// `[c_x, c_y, c_z, r^2]` per node.
    pub centres: Vec<[T; 4]>,
    /// `[M, Q_xx, Q_xy, Q_xz]` per node.
    pub masses: Vec<[T; 4]>,
    /// `[Q_yy, Q_yz, Q_zz, 0]` per node.
    pub quads: Vec<[T; 4]>,
    /// `[first child, escape, first particle, particle count]` per node.
    pub links: Vec<[u32; 4]>,
}

impl<T: Real> WalkNodes<T> {
    /// The walk data of `view` with its `multipoles` for the criterion `opening`.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for multipoles of another node count; as
    /// [`Opening::check`].
    pub fn new(view: &TreeView<T>, multipoles: &Multipoles<T>, opening: &Opening<T>) -> Result<Self> {
        opening.check()?;
        let n = view.num_nodes();
        if multipoles.len() != n {
            return Err(Error::LengthMismatch { what: "multipoles", expected: n, actual: multipoles.len() });
        }
        let mp = multipoles;
        let centres = (0..n)
            .into_par_iter()
            .map(|i| {
                let c = mp.com[i];
                let r2 = opening.critical_radius2(c, view.centres()[i], view.half_extents()[i]);
                [c[0], c[1], c[2], r2]
            })
            .collect();
        let masses = (0..n).map(|i| [mp.mass[i], mp.quad[i][0], mp.quad[i][1], mp.quad[i][2]]).collect();
        let quads = (0..n).map(|i| [mp.quad[i][3], mp.quad[i][4], mp.quad[i][5], T::zero()]).collect();
        let links = (0..n)
            .map(|i| {
                [view.first_children()[i], view.escapes()[i], view.particle_begins()[i], view.particle_counts()[i]]
            })
            .collect();
        Ok(Self { centres, masses, quads, links })
    }

    /// Nodes.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// Checks that the arrays have one length, that the particle ranges stay inside
    /// `particles`, and that the links form a preorder: following "first child, else
    /// escape" from the root visits every node exactly once, and every escape points
    /// forward in that order. Then every walk moves forward and ends, so a walk over
    /// data made elsewhere (a GPU download) cannot index out of bounds or loop.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] or [`Error::InvalidTree`] naming the first bad node.
    pub fn check(&self, particles: usize) -> Result<()> {
        let none = orrery_tree_build::view::NONE;
        let n = self.len();
        for (what, len) in [("centres", self.centres.len()), ("masses", self.masses.len()), ("quads", self.quads.len())]
        {
            if len != n {
                return Err(Error::LengthMismatch { what, expected: n, actual: len });
            }
        }
        let bad = |index: usize, reason: String| Err(Error::InvalidTree { index, reason });
        if let Some(i) = self.links.iter().position(|l| u64::from(l[2]) + u64::from(l[3]) > particles as u64) {
            return bad(i, format!("particle range {:?} ends past the {particles} particles", &self.links[i][2..]));
        }
        let mut position = vec![none; n];
        let (mut node, mut visited) = (if n == 0 { none } else { 0 }, 0u32);
        while node != none {
            let k = node as usize;
            if k >= n || position[k] != none {
                return bad(k.min(n), format!("the preorder reaches node {node} twice or past the {n} nodes"));
            }
            position[k] = visited;
            visited += 1;
            let [first, escape, ..] = self.links[k];
            node = if first == none { escape } else { first };
        }
        if visited as usize != n {
            return bad(0, format!("the preorder from the root visits {visited} of {n} nodes"));
        }
        for (i, l) in self.links.iter().enumerate() {
            let forward = |v: u32| v == none || (v as usize) < n && position[v as usize] > position[i];
            if !forward(l[1]) || (l[0] != none && position[l[0] as usize] != position[i] + 1) {
                return bad(i, format!("links {:?} do not point forward in the preorder", &l[..2]));
            }
        }
        Ok(())
    }
}
