//! The operators between particles and expansions: P2M and L2P (the FMM's), and P2L and
//! M2P (tests and references). Each handles one particle; O(p^2).
//!
//! With `phi(x) = sum q / |x - y|`, the expansions of
//! [`crate::fmm::expansions`] and the derivative identities listed there:
//!
//! - P2M: `M_n^m += q conj(Y_n^m(y - c))`; P2L: `L_n^m += q T_n^m(y - z)`.
//! - L2P at `d = x - z`: `phi = sum L_k^l conj(Y_k^l(d))`, `d phi / dz = sum L_k^l
//!   conj(Y_(k-1)^l(d))` and `G = (d/dx - i d/dy) phi = sum_k [sum_(l=0)^(k-2) L_k^l
//!   conj(Y_(k-1)^(l+1)) - sum_(j=1)^k conj(L_k^j) Y_(k-1)^(j-1)]`, so `d phi / dx = Re G`,
//!   `d phi / dy = -Im G`.
//! - M2P at `d = x - c`: `phi = sum M_n^m T_n^m(d)`, `d phi / dz = -sum M_n^m
//!   T_(n+1)^m(d)` and `G = -sum_n [sum_(m=1)^n M_n^m T_(n+1)^(m-1) - sum_(j=0)^n
//!   conj(M_n^j T_(n+1)^(j+1))]`.
//!
//! Sums over `-n <= m <= n` use `X^(-m) = (-1)^m conj(X^m)`: `sum_m A^m B^m = A^0 B^0 + 2
//! Re sum_(m>0) A^m B^m` for two such sequences. Results are `[phi, d phi/dx, d phi/dy,
//! d phi/dz]`.

#![allow(
    clippy::inline_always,
    reason = "hot-path callees of the per-level copies of crate::fmm::isa: inlined, they are compiled with that level's features"
)]

use crate::fmm::expansions::{Complex, Tables, index};

/// Adds the charge `q` at offset `d = y - c` from the centre to the multipole `m`; `w`
/// is scratch of at least `num_coefficients(p)` entries.
#[inline]
pub fn p2m(tab: &Tables, d: [f64; 3], q: f64, multipole: &mut [Complex], w: &mut [Complex]) {
    let p = tab.p();
    tab.regular(d, p, w);
    for (m, y) in multipole[..tab.coefficients()].iter_mut().zip(w.iter()) {
        *m += y.conj().scale(q);
    }
}

/// Adds the charge `q` at offset `d = y - z` from the centre (outside the expansion's
/// ball) to the local expansion `local`; `w` as in [`p2m`].
#[inline]
pub fn p2l(tab: &Tables, d: [f64; 3], q: f64, local: &mut [Complex], w: &mut [Complex]) {
    let p = tab.p();
    tab.irregular(d, p, w);
    for (l, t) in local[..tab.coefficients()].iter_mut().zip(w.iter()) {
        *l += t.scale(q);
    }
}

/// `Re(a conj(b))`.
#[inline(always)]
fn re_conj(a: Complex, b: Complex) -> f64 {
    a.re * b.re + a.im * b.im
}

/// `Re(a b)`.
#[inline(always)]
fn re_mul(a: Complex, b: Complex) -> f64 {
    a.re * b.re - a.im * b.im
}

/// The local expansion `local` at offset `d = x - z`: `[phi, grad phi]`; `w` as in
/// [`p2m`].
#[inline(always)]
pub fn l2p(tab: &Tables, local: &[Complex], d: [f64; 3], w: &mut [Complex]) -> [f64; 4] {
    let p = tab.p();
    tab.regular(d, p, w);
    let (mut phi, mut gz) = (0.0, 0.0);
    let mut g = Complex::ZERO;
    for k in 0..=p {
        let row = index(k, 0);
        let mut s = 0.0;
        for l in 1..=k {
            s += re_conj(local[row + l as usize], w[row + l as usize]);
        }
        phi += local[row].re * w[row].re + 2.0 * s;
        if k == 0 {
            continue;
        }
        let below = index(k - 1, 0);
        let mut s = 0.0;
        for l in 1..k {
            s += re_conj(local[row + l as usize], w[below + l as usize]);
        }
        gz += local[row].re * w[below].re + 2.0 * s;
        for l in 0..k - 1 {
            g += local[row + l as usize] * w[below + l as usize + 1].conj();
        }
        for j in 1..=k {
            g = g - local[row + j as usize].conj() * w[below + j as usize - 1];
        }
    }
    [phi, g.re, -g.im, gz]
}

/// The multipole `multipole` at offset `d = x - c` (outside its ball): `[phi, grad phi]`;
/// `w` is scratch of at least `num_coefficients(p + 1)` entries.
#[inline]
pub fn m2p(tab: &Tables, multipole: &[Complex], d: [f64; 3], w: &mut [Complex]) -> [f64; 4] {
    let p = tab.p();
    tab.irregular(d, p + 1, w);
    let (mut phi, mut gz) = (0.0, 0.0);
    let mut g = Complex::ZERO;
    for n in 0..=p {
        let row = index(n, 0);
        let above = index(n + 1, 0);
        let (mut s, mut sz) = (0.0, 0.0);
        for m in 1..=n as usize {
            s += re_mul(multipole[row + m], w[row + m]);
            sz += re_mul(multipole[row + m], w[above + m]);
        }
        phi += multipole[row].re * w[row].re + 2.0 * s;
        gz -= multipole[row].re * w[above].re + 2.0 * sz;
        for m in 1..=n as usize {
            g = g - multipole[row + m] * w[above + m - 1];
        }
        for j in 0..=n as usize {
            g += (multipole[row + j] * w[above + j + 1]).conj();
        }
    }
    [phi, g.re, -g.im, gz]
}
