//! Rotations of expansions about the y axis: the per-degree matrices behind the O(p^3)
//! "point and shoot" translations (rotate the translation vector onto the z axis,
//! translate along z, rotate back; White & Head-Gordon 1996, Dehnen 2014).
//!
//! # What is stored
//! For a polar angle `beta` and each degree `n`, the rotation acts on the stored
//! coefficients `0 <= m <= n` of an expansion with `X^(-m) = (-1)^m conj(X^m)` (in the
//! Racah normalisation `s_n^m X_n^m`, `s_n^m = sqrt((n + m)! (n - m)!)`) as two real
//! matrices, one on the real parts and one on the imaginary parts:
//!
//! - `E+_n[a][b] = e_(a, b) + (-1)^b e_(a, -b)` for `b >= 1`, `E+_n[a][0] = e_(a, 0)`,
//!   `(n + 1)^2` entries, `0 <= a, b <= n`;
//! - `E-_n[a][b] = e_(a, b) - (-1)^b e_(a, -b)`, `n^2` entries, `1 <= a, b <= n` (the
//!   imaginary part of `m = 0` is zero and stays zero);
//!
//! where `e_(m, m') = d^n_(m', m)(beta)` is the transposed Wigner small-d matrix
//! (Wikipedia's convention). With `W` the map `Y_n(Q y) = W Y_n(y)` for the rotation `Q =
//! R_y(-beta)`, `W = S^-1 e S`. The inverse rotation is `e^T`, applied through the same
//! blocks ([`rotate_back`]; `e` is orthogonal).
//!
//! One direction's blocks, `E+_0 .. E+_p` then `E-_1 .. E-_p`, are one contiguous run of
//! [`stride`]`(p)` f64 (p = 8: 489, 3.9 KiB; p = 12: 1469, 11.5 KiB): a
//! [`RotationTable`] holds one run per distinct direction of an evaluation, and an M2L
//! pair names its run by index (a GPU reads the same flat table).
//!
//! # How the matrices are computed
//! Risbo's (1996, J. Geodesy 70, 383) recursion from `d^(j - 1/2)` to `d^j` in half-integer
//! steps, four terms per entry: orthogonal to 5e-15 up to degree 20 (the explicit
//! factorial sum loses 1e-12 by degree 16 to cancellation). O(p^3) per direction, once
//! per direction.

#![allow(
    clippy::inline_always,
    reason = "hot-path callees of the per-level copies of crate::fmm::isa: inlined, they are compiled with that level's features"
)]

use rayon::prelude::*;

use super::{Complex, Order, index};

/// First entry of `E+_n` in a direction's run: `n (n + 1) (2n + 1) / 6`.
#[inline]
const fn plus_offset(n: u32) -> usize {
    let n = n as usize;
    n * (n + 1) * (2 * n + 1) / 6
}

/// First entry of `E-_n` (`n >= 1`) after the `E+` blocks: `(n - 1) n (2n - 1) / 6`.
#[inline]
const fn minus_offset(n: u32) -> usize {
    let n = n as usize;
    (n - 1) * n * (2 * n - 1) / 6
}

/// f64 per direction at order `p`: `sum (n + 1)^2 + sum n^2`.
#[inline]
pub const fn stride(p: u32) -> usize {
    plus_offset(p + 1) + minus_offset(p + 1)
}

/// The blocks of polar angle `beta` at order `p` (see the [module documentation](self)),
/// written into `out` (`stride(p)` entries).
///
/// # Panics
/// When `out` is shorter than `stride(p)`.
pub fn matrices_into(beta: f64, p: u32, out: &mut [f64]) {
    let dim = 2 * p as usize + 1;
    let (c, s) = ((0.5 * beta).cos(), (0.5 * beta).sin());
    let roots: Vec<f64> = (0..=dim).map(|i| (i as f64).sqrt()).collect();
    let mut d = vec![0.0f64; dim * dim];
    let mut next = vec![0.0f64; dim * dim];
    d[0] = 1.0;
    let minus_base = plus_offset(p + 1);
    out[0] = 1.0;
    for twoj in 1..dim {
        let inv = 1.0 / twoj as f64;
        for i in 0..=twoj {
            next[i * dim..=i * dim + twoj].fill(0.0);
        }
        for i in 0..twoj {
            for k in 0..twoj {
                let t = d[i * dim + k] * inv;
                let (ct, st) = (c * t, s * t);
                next[i * dim + k] += roots[twoj - i] * roots[twoj - k] * ct;
                next[(i + 1) * dim + k] -= roots[i + 1] * roots[twoj - k] * st;
                next[i * dim + k + 1] += roots[twoj - i] * roots[k + 1] * st;
                next[(i + 1) * dim + k + 1] += roots[i + 1] * roots[k + 1] * ct;
            }
        }
        std::mem::swap(&mut d, &mut next);
        if twoj % 2 == 1 {
            continue;
        }
        // d[i][k] = d^n_(i - n, k - n)(beta).
        let n = (twoj / 2) as u32;
        let nu = n as usize;
        let ni = i64::from(n);
        let at = |mp: i64, m: i64| d[(mp + ni) as usize * dim + (m + ni) as usize];
        let plus = &mut out[plus_offset(n)..plus_offset(n) + (nu + 1) * (nu + 1)];
        for (a, ai) in (0..=nu).zip(0..=ni) {
            for (b, bi) in (0..=nu).zip(0..=ni) {
                // e_(a, b) = d_(b, a).
                plus[a * (nu + 1) + b] = if b == 0 {
                    at(0, ai)
                } else {
                    let sign = if b % 2 == 0 { 1.0 } else { -1.0 };
                    at(bi, ai) + sign * at(-bi, ai)
                };
            }
        }
        let minus = &mut out[minus_base + minus_offset(n)..minus_base + minus_offset(n) + nu * nu];
        for (a, ai) in (1..=nu).zip(1..=ni) {
            for (b, bi) in (1..=nu).zip(1..=ni) {
                let sign = if b % 2 == 0 { 1.0 } else { -1.0 };
                minus[(a - 1) * nu + b - 1] = at(bi, ai) - sign * at(-bi, ai);
            }
        }
    }
}

/// `out_n = E_n x_n` for every degree `n <= p`: the rotation by `R_y(-beta)` of an
/// expansion in the Racah normalisation.
#[inline]
pub fn rotate(rot: &[f64], p: u32, x: &[Complex], out: &mut [Complex]) {
    let minus_base = plus_offset(p + 1);
    for n in 0..=p {
        let nu = n as usize;
        let base = index(n, 0);
        let xs = &x[base..=base + nu];
        let plus = &rot[plus_offset(n)..plus_offset(n) + (nu + 1) * (nu + 1)];
        for (a, row) in plus.chunks_exact(nu + 1).enumerate() {
            let mut re = 0.0;
            for (e, v) in row.iter().zip(xs) {
                re += e * v.re;
            }
            out[base + a].re = re;
        }
        out[base].im = 0.0;
        if n == 0 {
            continue;
        }
        let minus = &rot[minus_base + minus_offset(n)..minus_base + minus_offset(n) + nu * nu];
        for (a, row) in minus.chunks_exact(nu).enumerate() {
            let mut im = 0.0;
            for (e, v) in row.iter().zip(&xs[1..]) {
                im += e * v.im;
            }
            out[base + a + 1].im = im;
        }
    }
}

/// `out_n = E_n^T x_n` for every degree `n <= p`: the inverse rotation (through the same
/// blocks; the real part's `m = 0` entry is weighted so that the transposed `E+` is the
/// transposed `e`).
#[inline]
pub fn rotate_back(rot: &[f64], p: u32, x: &[Complex], out: &mut [Complex]) {
    let minus_base = plus_offset(p + 1);
    for n in 0..=p {
        let nu = n as usize;
        let base = index(n, 0);
        let outs = &mut out[base..=base + nu];
        for o in outs.iter_mut() {
            *o = Complex::ZERO;
        }
        let plus = &rot[plus_offset(n)..plus_offset(n) + (nu + 1) * (nu + 1)];
        for (b, row) in plus.chunks_exact(nu + 1).enumerate() {
            let v = if b == 0 { 0.5 * x[base].re } else { x[base + b].re };
            for (o, e) in outs.iter_mut().zip(row) {
                o.re += e * v;
            }
        }
        outs[0].re *= 2.0;
        if n == 0 {
            continue;
        }
        let minus = &rot[minus_base + minus_offset(n)..minus_base + minus_offset(n) + nu * nu];
        for (b, row) in minus.chunks_exact(nu).enumerate() {
            let v = x[base + b + 1].im;
            for (o, e) in outs[1..].iter_mut().zip(row) {
                o.im += e * v;
            }
        }
    }
}

/// The rotation kernel both directions share, on split real and imaginary parts:
/// `yr_n[a] = sum_b E+_n[b][a] xr_n[b]` and `yi_n[a] = sum_(b>=1) E-_n[b][a] xi_n[b]`
/// (`yi_n[0] = 0`). With the diagonal factors `w_m` (2 for `m = 0`, else 1) and
/// `(-1)^m` around it, it is either rotation:
///
/// - `E^T x` ([`rotate_back`]) `= w (axpy(x / w))`;
/// - `E x` ([`rotate`]) `= w (-1)^m axpy((-1)^m x / w)`, because the Wigner symmetry
///   `d_(m', m) = (-1)^(m - m') d_(m, m')` makes `E+ = W Sigma E+^T Sigma W^-1` and
///   `E- = Sigma E-^T Sigma`.
///
/// Register-blocked: four outputs stay in registers while the whole input runs past them
/// (rows are contiguous in the output index), so no sum is reassociated and no output is
/// stored and reloaded per input (an axpy per row was latency-bound on store-to-load
/// forwarding: 2.2 cycles per multiply-add at p = 8).
///
/// `p` is the order of the blocks `rot`; degrees `0..=degrees` (`degrees <= p`) are
/// rotated, the others left alone.
#[inline(always)]
pub fn axpy(rot: &[f64], p: u32, degrees: u32, xr: &[f64], xi: &[f64], yr: &mut [f64], yi: &mut [f64]) {
    let minus_base = plus_offset(p + 1);
    for n in 0..=degrees {
        let nu = n as usize;
        let base = index(n, 0);
        let plus = &rot[plus_offset(n)..plus_offset(n) + (nu + 1) * (nu + 1)];
        block_matvec(plus, nu + 1, &xr[base..=base + nu], &mut yr[base..=base + nu]);
        yi[base] = 0.0;
        if n == 0 {
            continue;
        }
        let minus = &rot[minus_base + minus_offset(n)..minus_base + minus_offset(n) + nu * nu];
        block_matvec(minus, nu, &xi[base + 1..=base + nu], &mut yi[base + 1..=base + nu]);
    }
}

/// `out[a] = sum_b m[b * len + a] x[b]` for a `len x len` row-major `m`, four outputs at
/// a time in registers, then the last one to three.
#[inline(always)]
fn block_matvec(m: &[f64], len: usize, x: &[f64], out: &mut [f64]) {
    let mut a0 = 0;
    while a0 + 4 <= len {
        block_columns::<4>(m, len, x, a0, out);
        a0 += 4;
    }
    // Fixed widths: a remainder loop of variable width kept its sums in memory (masked
    // AVX2 stores and reloads per input: the v3 copy was no faster than the baseline).
    match len - a0 {
        1 => block_columns::<1>(m, len, x, a0, out),
        2 => block_columns::<2>(m, len, x, a0, out),
        3 => block_columns::<3>(m, len, x, a0, out),
        _ => {}
    }
}

/// Outputs `a0..a0 + W` of [`block_matvec`], summed in registers.
#[inline(always)]
fn block_columns<const W: usize>(m: &[f64], len: usize, x: &[f64], a0: usize, out: &mut [f64]) {
    let mut acc = [0.0f64; W];
    for (row, &v) in m.chunks_exact(len).zip(x) {
        let r: &[f64; W] = row[a0..a0 + W].try_into().expect("W entries");
        for k in 0..W {
            acc[k] += r[k] * v;
        }
    }
    out[a0..a0 + W].copy_from_slice(&acc);
}

/// The rotation blocks of a list of polar angles: one run of [`stride`]`(p)` f64 per
/// angle, in the angles' order.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationTable {
    order: Order,
    betas: Vec<f64>,
    data: Vec<f64>,
}

impl RotationTable {
    /// The blocks of every angle of `betas` (radians, in `[0, pi]`), computed in
    /// parallel.
    pub fn new(order: Order, betas: Vec<f64>) -> Self {
        let p = order.get();
        let w = stride(p);
        let mut data = vec![0.0; w * betas.len()];
        if !betas.is_empty() {
            data.par_chunks_mut(w).zip(&betas).for_each(|(out, &beta)| matrices_into(beta, p, out));
        }
        Self { order, betas, data }
    }

    /// The order.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Directions.
    pub fn len(&self) -> usize {
        self.betas.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.betas.is_empty()
    }

    /// The polar angle of direction `i`.
    pub fn beta(&self, i: usize) -> f64 {
        self.betas[i]
    }

    /// The blocks of direction `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[f64] {
        let w = stride(self.order.get());
        &self.data[i * w..(i + 1) * w]
    }

    /// Every direction's blocks, one run of [`stride`]`(p)` after another (what a GPU
    /// reads).
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// Bytes of matrix data.
    pub fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<f64>()
    }
}
