//! The three translations as the O(p^4) convolutions the addition theorems give
//! directly (see [`crate::fmm::expansions`]), over every order `-n <= m <= n`:
//!
//! - M2M (`t` = child - parent): `M'_n^m = sum_(k, l) conj(Y_k^l(t)) M_(n-k)^(m-l)`;
//! - M2L (`t` = target - source): `L_k^l = (-1)^k sum_(n <= p, m) M_n^m T_(n+k)^(m+l)(t)`;
//! - L2L (`t` = child - parent): `L'_j^s = sum_(k >= j, l) L_k^l conj(Y_(k-j)^(l-s)(t))`.
//!
//! The references of the rotation-based operators of [`super::translate`] (equal within
//! rounding: tested) and the "convolution" column of ADR 0019's cost comparison. Same
//! signatures and scratch; only M2L allocates (harmonics of degree `2p`).

use super::Scratch;
use crate::fmm::expansions::{Complex, Tables, coefficient};

/// The stored coefficient of a full-range `(n, m)` of harmonics held in `w`.
#[inline]
fn harmonic(w: &[Complex], n: i64, m: i64) -> Complex {
    if n < 0 {
        return Complex::ZERO;
    }
    coefficient(w, n as u32, m as i32)
}

/// [`super::m2m`] by convolution.
pub fn m2m(tab: &Tables, t: [f64; 3], child: &[Complex], parent: &mut [Complex], w: &mut Scratch) {
    let p = i64::from(tab.p());
    tab.regular(t, tab.p(), &mut w.a);
    let mut out = 0;
    for n in 0..=p {
        for m in 0..=n {
            let mut acc = Complex::ZERO;
            for k in 0..=n {
                for l in -k..=k {
                    let y = harmonic(&w.a, k, l).conj();
                    acc += y * harmonic(child, n - k, m - l);
                }
            }
            parent[out] += acc;
            out += 1;
        }
    }
}

/// [`super::m2l`] by convolution. Allocates the irregular harmonics of degree `2p`
/// (more than a [`Scratch`] holds).
pub fn m2l(tab: &Tables, t: [f64; 3], source: &[Complex], target: &mut [Complex], _w: &mut Scratch) {
    let p = i64::from(tab.p());
    let mut harmonics = vec![Complex::ZERO; crate::fmm::expansions::num_coefficients(2 * tab.p())];
    tab.irregular(t, 2 * tab.p(), &mut harmonics);
    let mut out = 0;
    for k in 0..=p {
        for l in 0..=k {
            let mut acc = Complex::ZERO;
            for n in 0..=p {
                for m in -n..=n {
                    acc += harmonic(source, n, m) * harmonic(&harmonics, n + k, m + l);
                }
            }
            target[out] += if k % 2 == 0 { acc } else { -acc };
            out += 1;
        }
    }
}

/// [`super::l2l`] by convolution.
pub fn l2l(tab: &Tables, t: [f64; 3], parent: &[Complex], child: &mut [Complex], w: &mut Scratch) {
    let p = i64::from(tab.p());
    tab.regular(t, tab.p(), &mut w.a);
    let mut out = 0;
    for j in 0..=p {
        for s in 0..=j {
            let mut acc = Complex::ZERO;
            for k in j..=p {
                for l in -k..=k {
                    acc += harmonic(parent, k, l) * harmonic(&w.a, k - j, l - s).conj();
                }
            }
            child[out] += acc;
            out += 1;
        }
    }
}
