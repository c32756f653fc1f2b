//! M2M, M2L and L2L in O(p^3): rotate the expansion so that the shift vector lies on the
//! +z axis, shift along z (where only equal orders `m` couple), rotate back.
//!
//! With `t` of polar angle `beta` and azimuth `alpha`, `P(alpha) = diag(e^(i m alpha))`,
//! `S = diag(s_n^m)` and `e` the rotation of [`crate::fmm::expansions::rotation`]:
//!
//! | | into the rotated frame | back |
//! |---|---|---|
//! | multipole | `M' = S^-1 e S P(alpha) M` | `M = P(-alpha) S^-1 e^T S M'` |
//! | local | `L' = S e S^-1 P(-alpha) L` | `L = P(alpha) S e^T S^-1 L'` |
//!
//! and along `t = tau z`, where `Y_k^l(t) = delta_l0 tau^k / k!` and
//! `T_n^m(t) = delta_m0 n! / tau^(n+1)`:
//!
//! - M2M (`t` = child centre - parent centre): `M'_n^m = sum_(k=0)^(n-m) tau^k / k! M_(n-k)^m`;
//! - M2L (`t` = target centre - source centre): `L'_k^l = (-1)^(k+l) sum_(n=l)^p
//!   conj(M_n^l) (n+k)! / tau^(n+k+1)` for `k <= p`: every source degree into every
//!   target degree (the "full" truncation `n, k <= p` of classic spherical-harmonic FMMs,
//!   error `~ (r_s / tau)^(p+1) + (r_t / tau)^(p+1)`, against `((r_s + r_t) / tau)^(p+1)`
//!   of the total-degree truncation `n + k <= p` natural to Cartesian Taylor series: ADR
//!   0019 measures both; the shift costs 4x more terms, the rotations the same);
//! - L2L (`t` = child centre - parent centre): `L'_j^m = sum_(k=j)^p L_k^m tau^(k-j) / (k-j)!`.
//!
//! Each function folds the scalings `S` into the phase pass and the shift, so a
//! translation is: one phase-and-scale pass (O(p^2)), [`rotate`], the shift (O(p^3) with
//! a small constant), [`rotate_back`], one phase-and-scale pass that adds into the
//! destination. Each is checked against its O(p^4) convolution twin in
//! [`super::reference`].

use super::Scratch;
use crate::fmm::expansions::rotation::{rotate, rotate_back};
use crate::fmm::expansions::{Complex, Tables, index};

/// `tau = |t|` and the phases `e^(i m alpha)`, `m = 0..=p`, of `t`'s azimuth (1 on the z
/// axis).
#[inline]
fn frame(t: [f64; 3], p: u32, phase: &mut [Complex]) -> f64 {
    let rho2 = t[0] * t[0] + t[1] * t[1];
    let tau = (rho2 + t[2] * t[2]).sqrt();
    let unit = if rho2 > 0.0 {
        let inv = 1.0 / rho2.sqrt();
        Complex::new(t[0] * inv, t[1] * inv)
    } else {
        Complex::ONE
    };
    phase[0] = Complex::ONE;
    for m in 1..=p as usize {
        phase[m] = phase[m - 1] * unit;
    }
    tau
}

/// `(-1)^k`.
#[inline]
fn sign(k: u32) -> f64 {
    if k.is_multiple_of(2) { 1.0 } else { -1.0 }
}

/// Adds the multipole `child`, about a centre at `t` from the parent's centre, to the
/// parent's multipole `parent`. `rot` is the rotation run of `t`'s polar angle.
pub fn m2m(tab: &Tables, rot: &[f64], t: [f64; 3], child: &[Complex], parent: &mut [Complex], w: &mut Scratch) {
    let p = tab.p();
    let tau = frame(t, p, &mut w.phase);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            w.a[i] = (child[i] * w.phase[m as usize]).scale(tab.s[i]);
        }
    }
    rotate(rot, p, &w.a, &mut w.b);
    // powers[k] = tau^k / k!.
    let mut power = 1.0;
    for k in 0..=p as usize {
        w.powers[k] = power * tab.inv_factorial[k];
        power *= tau;
    }
    for i in 0..tab.coefficients() {
        w.b[i] = w.b[i].scale(tab.inv_s[i]);
    }
    for n in 0..=p {
        for m in 0..=n {
            let mut acc = Complex::ZERO;
            for k in 0..=n - m {
                acc += w.b[index(n - k, m)].scale(w.powers[k as usize]);
            }
            w.a[index(n, m)] = acc.scale(tab.s[index(n, m)]);
        }
    }
    rotate_back(rot, p, &w.a, &mut w.b);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            parent[i] += (w.b[i] * w.phase[m as usize].conj()).scale(tab.inv_s[i]);
        }
    }
}

/// Adds the far field of the multipole `source` to the local expansion `target`, whose
/// centre is at `t` from the source's centre. `rot` is the rotation run of `t`'s polar
/// angle.
pub fn m2l(tab: &Tables, rot: &[f64], t: [f64; 3], source: &[Complex], target: &mut [Complex], w: &mut Scratch) {
    let p = tab.p();
    let tau = frame(t, p, &mut w.phase);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            w.a[i] = (source[i] * w.phase[m as usize]).scale(tab.s[i]);
        }
    }
    rotate(rot, p, &w.a, &mut w.b);
    // b_n^l = conj(B'_n^l) / s_n^l; powers[j] = j! / tau^(j+1).
    for i in 0..tab.coefficients() {
        w.b[i] = w.b[i].conj().scale(tab.inv_s[i]);
    }
    let inv_tau = 1.0 / tau;
    let mut power = inv_tau;
    for j in 0..=2 * p as usize {
        w.powers[j] = tab.factorial[j] * power;
        power *= inv_tau;
    }
    for k in 0..=p {
        for l in 0..=k {
            let i = index(k, l);
            let mut acc = Complex::ZERO;
            for n in l..=p {
                acc += w.b[index(n, l)].scale(w.powers[(n + k) as usize]);
            }
            w.a[i] = acc.scale(sign(k + l) * tab.inv_s[i]);
        }
    }
    rotate_back(rot, p, &w.a, &mut w.b);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            target[i] += (w.b[i] * w.phase[m as usize]).scale(tab.s[i]);
        }
    }
}

/// Adds the local expansion `parent`, shifted to a centre at `t` from the parent's
/// centre, to `child`. `rot` is the rotation run of `t`'s polar angle.
pub fn l2l(tab: &Tables, rot: &[f64], t: [f64; 3], parent: &[Complex], child: &mut [Complex], w: &mut Scratch) {
    let p = tab.p();
    let tau = frame(t, p, &mut w.phase);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            w.a[i] = (parent[i] * w.phase[m as usize].conj()).scale(tab.inv_s[i]);
        }
    }
    rotate(rot, p, &w.a, &mut w.b);
    let mut power = 1.0;
    for k in 0..=p as usize {
        w.powers[k] = power * tab.inv_factorial[k];
        power *= tau;
    }
    for i in 0..tab.coefficients() {
        w.b[i] = w.b[i].scale(tab.s[i]);
    }
    for j in 0..=p {
        for m in 0..=j {
            let mut acc = Complex::ZERO;
            for k in j..=p {
                acc += w.b[index(k, m)].scale(w.powers[(k - j) as usize]);
            }
            w.a[index(j, m)] = acc.scale(tab.inv_s[index(j, m)]);
        }
    }
    rotate_back(rot, p, &w.a, &mut w.b);
    for n in 0..=p {
        for m in 0..=n {
            let i = index(n, m);
            child[i] += (w.b[i] * w.phase[m as usize]).scale(tab.s[i]);
        }
    }
}
