//! P2P: the near field between a target leaf and one source leaf, summed directly in the
//! bodies' precision `T`.
//!
//! A block of up to [`P2P_LANES`] consecutive targets (tree order) runs over a source
//! range (structure of arrays), one source at a time against every lane, written
//! lane-innermost with selects so that LLVM vectorises across targets (the form of
//! [`crate::direct`]'s kernel). When the source leaf is the target leaf the masked form
//! skips each target's own index. Pair rule, as [`crate::walk::p2p`]: with `d = x_j -
//! x_i` and `s = |d|^2 + eps^2`, `a += m d / s^(3/2)`, `phi -= m / s^(1/2)`; a pair with
//! `s = 0` contributes nothing. Accumulation is in `T`: for f32, a leaf's near field of
//! ~1e3 sources loses ~1e-6 relative at worst, below the far field's error at every
//! order the f32 path is meant for (ADR 0019).

#![allow(
    clippy::inline_always,
    reason = "hot-path callees of the per-level copies of crate::fmm::isa: inlined, they are compiled with that level's features"
)]

use orrery_core::Real;

/// Targets per P2P block (SIMD lanes across targets).
pub const P2P_LANES: usize = 8;

/// A source range: positions and masses, equal lengths.
#[derive(Debug, Clone, Copy)]
pub struct Sources<'a, T> {
    /// x.
    pub x: &'a [T],
    /// y.
    pub y: &'a [T],
    /// z.
    pub z: &'a [T],
    /// Masses.
    pub m: &'a [T],
}

impl<'a, T> Sources<'a, T> {
    /// The sub-range `range` of `self`.
    #[inline(always)]
    #[must_use]
    pub fn range(&self, range: std::ops::Range<usize>) -> Sources<'a, T> {
        Sources { x: &self.x[range.clone()], y: &self.y[range.clone()], z: &self.z[range.clone()], m: &self.m[range] }
    }
}

/// Up to [`P2P_LANES`] targets and their sums `[a_x, a_y, a_z, phi]` (unscaled by `G`).
#[derive(Debug, Clone)]
pub struct P2pBlock<T> {
    px: [T; P2P_LANES],
    py: [T; P2P_LANES],
    pz: [T; P2P_LANES],
    ax: [T; P2P_LANES],
    ay: [T; P2P_LANES],
    az: [T; P2P_LANES],
    phi: [T; P2P_LANES],
    len: usize,
}

impl<T: Real> P2pBlock<T> {
    /// The targets `x[i], y[i], z[i]` (1 to [`P2P_LANES`] of them; lanes past the last
    /// repeat it and are never read), sums at zero.
    ///
    /// # Panics
    /// For no targets or more than [`P2P_LANES`].
    #[inline(always)]
    pub fn new(x: &[T], y: &[T], z: &[T]) -> Self {
        let len = x.len();
        assert!((1..=P2P_LANES).contains(&len), "a P2P block holds 1 to {P2P_LANES} targets");
        let pick = |v: &[T]| std::array::from_fn(|l| v[l.min(len - 1)]);
        let zero = [T::zero(); P2P_LANES];
        Self { px: pick(x), py: pick(y), pz: pick(z), ax: zero, ay: zero, az: zero, phi: zero, len }
    }

    /// Targets in the block.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the block is empty (never: a block holds at least one target).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds every source of `src`.
    #[inline(always)]
    pub fn add(&mut self, src: Sources<'_, T>, eps2: T) {
        self.sum::<false>(src, eps2, 0);
    }

    /// Adds every source of `src` except, for lane `l`, source `own + l` (the targets are
    /// the sources `own..own + len` of `src`).
    #[inline(always)]
    pub fn add_excluding(&mut self, src: Sources<'_, T>, eps2: T, own: usize) {
        self.sum::<true>(src, eps2, own);
    }

    /// Lane `l`'s sums `[a_x, a_y, a_z, phi]`.
    #[inline(always)]
    pub fn lane(&self, l: usize) -> [T; 4] {
        [self.ax[l], self.ay[l], self.az[l], self.phi[l]]
    }

    // Forced inline for the same reason as direct.rs's tile loop: out of line, the
    // instantiations lose the lane arrays' registers.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn sum<const MASKED: bool>(&mut self, src: Sources<'_, T>, eps2: T, own: usize) {
        let zero = T::zero();
        let one = T::one();
        let (px, py, pz) = (self.px, self.py, self.pz);
        let (mut ax, mut ay, mut az, mut phi) = (self.ax, self.ay, self.az, self.phi);
        for (j, (((&sx, &sy), &sz), &sm)) in src.x.iter().zip(src.y).zip(src.z).zip(src.m).enumerate() {
            for l in 0..P2P_LANES {
                let dx = sx - px[l];
                let dy = sy - py[l];
                let dz = sz - pz[l];
                let s = dx * dx + dy * dy + dz * dz + eps2;
                let keep = s > zero && (!MASKED || j != own + l);
                let inv = if keep { one / s.sqrt() } else { zero };
                let minv = sm * inv;
                let w = minv * inv * inv;
                ax[l] += dx * w;
                ay[l] += dy * w;
                az[l] += dz * w;
                phi[l] -= minv;
            }
        }
        (self.ax, self.ay, self.az, self.phi) = (ax, ay, az, phi);
    }
}
