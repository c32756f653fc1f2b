//! The two interactions of a walk, in the operation order the GPU kernels follow:
//! particle-particle (P2P) and particle-cell (M2P, monopole or quadrupole), both with
//! Plummer softening, accumulated unscaled by `G` as `[a_x, a_y, a_z, phi]`.
//!
//! With `d = x_source - x_target`, `r^2 = |d|^2 + eps^2`:
//! - P2P: `a += m d / r^3`, `phi -= m / r`; a pair with `r^2 = 0` (coincident bodies
//!   without softening) contributes nothing, as in direct summation.
//! - M2P monopole: the same with the node's mass at its centre of mass.
//! - M2P quadrupole (traceless `Q`, see [`crate::multipole`]): with `q = Q d` and
//!   `s = d . q`, `phi -= s / (2 r^5)` and `a += -q / r^5 + 5 s d / (2 r^7)`, the softened
//!   expansion of Bonsai and Ryoanji (`r^2` includes `eps^2`).
//!
//! Flops per interaction, counting `1/sqrt` as one: P2P 20 (3 sub, 5 for `r^2`, rsqrt,
//! 3 mul, 4 fma for `a` and `phi`, one mul for `m / r^3` and the `r^2 > 0` select),
//! monopole M2P the same 20, quadrupole M2P 45 (the monopole's 20 plus 15 for `Q d`,
//! 3 for `s`, 7 for the powers and factors). The benchmarks quote these counts.

use orrery_core::Real;

/// Flops counted per P2P interaction.
pub const FLOPS_P2P: u64 = 20;
/// Flops counted per monopole M2P interaction.
pub const FLOPS_M2P_MONOPOLE: u64 = 20;
/// Flops counted per quadrupole M2P interaction.
pub const FLOPS_M2P_QUADRUPOLE: u64 = 45;

/// One P2P interaction: source at `xj` with mass `mj` on the target at `xi`.
#[inline]
pub fn p2p<T: Real>(acc: &mut [T; 4], xi: [T; 3], xj: [T; 3], mj: T, eps2: T) {
    let d = [xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
    if r2 > T::zero() {
        let rinv = T::one() / r2.sqrt();
        let mr = mj * rinv;
        let mr3 = mr * rinv * rinv;
        acc[0] += mr3 * d[0];
        acc[1] += mr3 * d[1];
        acc[2] += mr3 * d[2];
        acc[3] -= mr;
    }
}

/// One M2P interaction of a node (`centre = [c, r^2]`, `mass = [M, Q_xx, Q_xy, Q_xz]`,
/// `quad = [Q_yy, Q_yz, Q_zz, _]`) on the target at `xi`; `quadrupole` adds the
/// quadrupole terms.
#[inline]
pub fn m2p<T: Real>(
    acc: &mut [T; 4],
    xi: [T; 3],
    centre: [T; 4],
    mass: [T; 4],
    quad: [T; 4],
    eps2: T,
    quadrupole: bool,
) {
    let d = [centre[0] - xi[0], centre[1] - xi[1], centre[2] - xi[2]];
    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2;
    if r2 <= T::zero() {
        return;
    }
    let rinv = T::one() / r2.sqrt();
    let rinv2 = rinv * rinv;
    let mr = mass[0] * rinv;
    let mr3 = mr * rinv2;
    acc[0] += mr3 * d[0];
    acc[1] += mr3 * d[1];
    acc[2] += mr3 * d[2];
    acc[3] -= mr;
    if quadrupole {
        let (qxx, qxy, qxz, qyy, qyz, qzz) = (mass[1], mass[2], mass[3], quad[0], quad[1], quad[2]);
        let q = [
            qxx * d[0] + qxy * d[1] + qxz * d[2],
            qxy * d[0] + qyy * d[1] + qyz * d[2],
            qxz * d[0] + qyz * d[1] + qzz * d[2],
        ];
        let s = d[0] * q[0] + d[1] * q[1] + d[2] * q[2];
        let half = T::one() / (T::one() + T::one());
        let rinv5 = rinv2 * rinv2 * rinv;
        let g = (T::one() + T::one() + half) * s * rinv5 * rinv2;
        acc[0] += g * d[0] - q[0] * rinv5;
        acc[1] += g * d[1] - q[1] * rinv5;
        acc[2] += g * d[2] - q[2] * rinv5;
        acc[3] -= half * s * rinv5;
    }
}
