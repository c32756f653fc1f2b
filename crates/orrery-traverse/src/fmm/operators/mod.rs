//! The six FMM operators and the references they are tested against.
//!
//! | operator | what | cost | file |
//! |---|---|---|---|
//! | P2M | charges into a node's multipole | O(p^2) per charge | [`particle`] |
//! | M2M | a child's multipole shifted to its parent | O(p^3) | [`translate`] |
//! | M2L | a well-separated source's multipole into a target's local expansion | O(p^3) | [`translate`] |
//! | L2L | a parent's local expansion shifted to a child | O(p^3) | [`translate`] |
//! | L2P | a leaf's local expansion at its particles (potential and gradient) | O(p^2) per particle | [`particle`] |
//! | P2P | direct sum between neighbouring leaves | O(n m) | [`p2p`] |
//!
//! and, for tests and the cost comparison of ADR 0019: P2L and M2P ([`particle`]), and the
//! O(p^4) convolution forms of the three translations ([`mod@reference`]).
//!
//! # Shape
//! Each operator is a plain function of slices: one source expansion, one shift vector,
//! one rotation ([`Rotation`]: a direction's table entry or the quarter turn) and one
//! destination it *adds* to. That is the unit a GPU thread (or warp) will own, and the CPU evaluation
//! ([`crate::fmm::evaluate`]) calls them over flat arrays of nodes, level by level and
//! list by list. No operator allocates: the temporaries live in a caller's [`Scratch`],
//! one per rayon task.
//!
//! Shift vectors are in the normalised frame of [`crate::fmm::nodes::Frame`]; results
//! are the 1/r potential `phi = sum q / |x - y|` and its gradient; the caller applies `G`
//! and the frame's scale.

pub mod p2p;
pub mod particle;
pub mod reference;
pub mod translate;

pub use p2p::{P2P_LANES, P2pBlock, Sources};
pub use particle::{l2p, m2p, p2l, p2m};
pub use translate::{Rotation, l2l, m2l, m2l_truncated, m2m};

use super::expansions::{Complex, MAX_COEFFICIENTS, MAX_ORDER};

/// Temporaries of the operators: harmonics, expansions split into real and imaginary
/// parts in the degree-major and order-major layouts, the per-order factors of a
/// translation and the powers of its shift. About 16 KiB; create one per task and reuse
/// it (the operators write every entry they read, so it is never cleared).
#[derive(Debug, Clone)]
pub struct Scratch {
    /// Harmonics of the particle operators.
    pub(crate) a: [Complex; MAX_COEFFICIENTS],
    /// Split real and imaginary parts: degree-major (`x`, `y`) and order-major (`o`, `c`).
    pub(crate) xr: [f64; MAX_COEFFICIENTS],
    pub(crate) xi: [f64; MAX_COEFFICIENTS],
    pub(crate) yr: [f64; MAX_COEFFICIENTS],
    pub(crate) yi: [f64; MAX_COEFFICIENTS],
    pub(crate) or: [f64; MAX_COEFFICIENTS],
    pub(crate) oi: [f64; MAX_COEFFICIENTS],
    pub(crate) cr: [f64; MAX_COEFFICIENTS],
    pub(crate) ci: [f64; MAX_COEFFICIENTS],
    /// `e^(i m alpha)` and the per-order factors of the passes of a translation.
    pub(crate) phase: [Complex; MAX_ORDER as usize + 2],
    pub(crate) load: [Complex; MAX_ORDER as usize + 2],
    pub(crate) to_shift: [Complex; MAX_ORDER as usize + 2],
    pub(crate) from_shift: [Complex; MAX_ORDER as usize + 2],
    pub(crate) store: [Complex; MAX_ORDER as usize + 2],
    pub(crate) mid: [Complex; MAX_ORDER as usize + 2],
    /// Powers of the shift, zero-padded for the four-wide shift blocks.
    pub(crate) powers: [f64; POWERS],
}

/// Length of [`Scratch`]'s powers: `2p + 1` of M2L plus four of padding.
const POWERS: usize = 2 * MAX_ORDER as usize + 8;

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Scratch {
    /// Fresh temporaries.
    pub fn new() -> Self {
        let zero = [0.0; MAX_COEFFICIENTS];
        let phases = [Complex::ZERO; MAX_ORDER as usize + 2];
        Self {
            a: [Complex::ZERO; MAX_COEFFICIENTS],
            xr: zero,
            xi: zero,
            yr: zero,
            yi: zero,
            or: zero,
            oi: zero,
            cr: zero,
            ci: zero,
            phase: phases,
            load: phases,
            to_shift: phases,
            from_shift: phases,
            store: phases,
            mid: phases,
            powers: [0.0; POWERS],
        }
    }
}

/// Floating-point operations of one rotation-based M2L at order `p` through a table
/// entry, as counted for ADR 0019: two rotations of `sum (n+1)^2 + sum n^2`
/// multiply-adds (2 flops each), the z-axis shift of `sum_(j=1)^(p+1) j^2`
/// real-times-complex multiply-adds (4 flops each), and the four diagonal passes (load,
/// two transposes, store: 34 flops per coefficient). The quarter turn adds two matrix
/// passes and two phase passes (6 flops per coefficient).
pub fn translation_flops(p: u32) -> u64 {
    let p = u64::from(p);
    let rotation = 2 * ((p + 1) * (p + 2) * (2 * p + 3) / 6 + p * (p + 1) * (2 * p + 1) / 6);
    let coefficients = (p + 1) * (p + 2) / 2;
    let shift = 4 * ((p + 1) * (p + 2) * (2 * p + 3) / 6);
    2 * rotation + shift + 34 * coefficients
}

/// Floating-point operations of the O(p^4) convolution M2L of [`reference::m2l`]
/// (complex multiply-add, 8 flops, per `(n, m)`, `(k, l)` term, `n, k <= p`, over the
/// stored `l >= 0`), plus the irregular harmonics of degree `2p` (about 12 flops each).
pub fn convolution_m2l_flops(p: u32) -> u64 {
    let p = u64::from(p);
    let targets = (p + 1) * (p + 2) / 2;
    let sources = (p + 1) * (p + 1);
    8 * targets * sources + 12 * (2 * p + 1) * (2 * p + 2) / 2
}
