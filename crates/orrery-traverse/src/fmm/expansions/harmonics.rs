//! The solid harmonics `Y_n^m` (regular) and `T_n^m` (irregular) of the
//! [normalisation of `expansions`](super), `0 <= m <= n <= degree`, by the standard
//! recurrences in `m` (diagonal) and `n` (columns), O(degree^2) per point and no division
//! in the loops (reciprocals come from [`Tables`]).
//!
//! - Regular: `Y_0^0 = 1`, `Y_m^m = -xi / (2m) Y_(m-1)^(m-1)`, `Y_(m+1)^m = z Y_m^m`,
//!   `Y_n^m = ((2n - 1) z Y_(n-1)^m - r^2 Y_(n-2)^m) / ((n - m)(n + m))`.
//! - Irregular: `T_0^0 = 1 / r`, `T_m^m = -(2m - 1) xi / r^2 T_(m-1)^(m-1)`,
//!   `T_(m+1)^m = (2m + 1) z / r^2 T_m^m`,
//!   `T_n^m = ((2n - 1) z T_(n-1)^m - ((n - 1)^2 - m^2) T_(n-2)^m) / r^2`.
//!
//! (`xi = x + i y`; the minus signs are the Condon-Shortley phase.) These are the
//! per-particle loops of P2M, L2P and the tests' references; on a GPU they are one thread's
//! work per particle.

#![allow(
    clippy::inline_always,
    reason = "hot-path callees of the per-level copies of crate::fmm::isa: inlined, they are compiled with that level's features"
)]

use super::{Complex, Tables, index};

impl Tables {
    /// `Y_n^m(d)` for `0 <= m <= n <= degree` into `out[index(n, m)]`.
    ///
    /// # Panics
    /// When `degree > p + 1` or `out` is shorter than `num_coefficients(degree)`.
    #[inline(always)]
    pub fn regular(&self, d: [f64; 3], degree: u32, out: &mut [Complex]) {
        let [x, y, z] = d;
        let r2 = x * x + y * y + z * z;
        let xi = Complex::new(x, y);
        out[0] = Complex::ONE;
        let mut diag = Complex::ONE;
        for m in 0..=degree {
            if m > 0 {
                diag = (xi * diag).scale(-0.5 / f64::from(m));
                out[index(m, m)] = diag;
            }
            if m < degree {
                out[index(m + 1, m)] = diag.scale(z);
            }
            for n in m + 2..=degree {
                let a = out[index(n - 1, m)].scale(f64::from(2 * n - 1) * z);
                let b = out[index(n - 2, m)].scale(r2);
                out[index(n, m)] = (a - b).scale(self.inv_nm[index(n, m)]);
            }
        }
    }

    /// `T_n^m(d)` for `0 <= m <= n <= degree` into `out[index(n, m)]`; `d` must not be
    /// zero.
    ///
    /// # Panics
    /// When `out` is shorter than `num_coefficients(degree)`.
    #[inline]
    pub fn irregular(&self, d: [f64; 3], degree: u32, out: &mut [Complex]) {
        let [x, y, z] = d;
        let r2 = x * x + y * y + z * z;
        let inv_r2 = 1.0 / r2;
        let xi = Complex::new(x * inv_r2, y * inv_r2);
        let zr = z * inv_r2;
        let mut diag = Complex::new(inv_r2.sqrt(), 0.0);
        out[0] = diag;
        for m in 0..=degree {
            if m > 0 {
                diag = (xi * diag).scale(-f64::from(2 * m - 1));
                out[index(m, m)] = diag;
            }
            if m < degree {
                out[index(m + 1, m)] = diag.scale(f64::from(2 * m + 1) * zr);
            }
            for n in m + 2..=degree {
                let a = out[index(n - 1, m)].scale(f64::from(2 * n - 1) * zr);
                let c = f64::from((n - 1) * (n - 1) - m * m);
                let b = out[index(n - 2, m)].scale(c * inv_r2);
                out[index(n, m)] = a - b;
            }
        }
    }
}
