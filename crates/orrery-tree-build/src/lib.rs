//! # orrery-tree-build
//!
//! Cornerstone adaptive trees (Keller et al., "Cornerstone: Octree construction
//! algorithms for scalable particle simulations", PASC 2023): a tree is the sorted array
//! of its leaf boundaries in space-filling-curve key space ([`Leaves`]), refined and
//! merged by passes of decide, scan and scatter ([`rebalance`]) until it stops changing,
//! and updated incrementally from the previous time step's tree ([`update`]).
//!
//! - Shapes ([`Shape`]): octrees over 63-bit Morton or Hilbert keys, and binary trees
//!   over longest-side binary keys, with one machinery (the key layout carries the bits
//!   per level).
//! - Criteria ([`Criterion`]): LeafCount (Cornerstone's bucket size) and NFCount (the
//!   estimated near-field work `n_i * S_i` of a leaf and its 27-cell neighbourhood,
//!   [`nfcount`]).
//! - GPUs ([`gpu`], [`gpu_view`]): the LeafCount and NFCount builds and updates and the
//!   TreeView on CUDA and wgpu, bit-identical to the CPU.
//! - Input ([`input`]): keys of positions in a given or computed box; particles outside
//!   a given box get the removed key `key_end` and are excluded.
//! - The view ([`view`]): every node (internal and leaf) of a tree as flat `u32`-indexed
//!   arrays, built from the leaf array without a traversal: parents, children, particle
//!   ranges, boxes, level offsets, the child-centric (FMM) layout and the escape links of
//!   a stackless walk.
//!
//! ```
//! use orrery_core::{sfc::Curve, PositionsView};
//! use orrery_tree_build::{input, Criterion, Rebalance, Shape};
//!
//! let x: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.618).fract()).collect();
//! let y: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.414).fract()).collect();
//! let z: Vec<f64> = (0..1000).map(|i| (i as f64 * 0.732).fract()).collect();
//! let sorted = input::sort_particles(PositionsView::new(&x, &y, &z)?, None, Shape::Octree(Curve::Hilbert))?;
//! let (tree, run) = orrery_tree_build::build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(16)))?;
//! assert!(run.converged);
//! assert!(tree.counts().iter().all(|&c| c <= 16));
//! assert_eq!(tree.counts().iter().map(|&c| c as usize).sum::<usize>(), 1000);
//! # Ok::<(), orrery_core::Error>(())
//! ```

pub mod build;
pub mod counts;
pub mod gpu;
pub mod gpu_view;
pub mod input;
pub mod leaves;
pub mod nfcount;
pub mod rebalance;
pub mod view;

pub use build::{Convergence, Criterion, Rebalance, Tree, build, build_from, update};
pub use input::{Shape, SortedKeys};
pub use leaves::Leaves;
pub use nfcount::KeyGeometry;
pub use view::{Geometry, TreeView};
