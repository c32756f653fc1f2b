//! M2M, M2L and L2L in O(p^3): rotate the expansion so that the shift vector lies on the
//! +z axis, shift along z (where only equal orders `m` couple), rotate back.
//!
//! With `t` of polar angle `beta` and azimuth `alpha`, `P(alpha) = diag(e^(i m alpha))`,
//! `S = diag(s_n^m)` and `e = e(beta)` the rotation of
//! [`crate::fmm::expansions::rotation`]:
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
//! # Two ways to rotate ([`Rotation`])
//! - `Direct`: the blocks of `e(beta)` itself, one entry of a per-direction table
//!   ([`crate::fmm::directions`]): one [`axpy`] per rotation.
//! - `Quarter`: any `beta` from the one table of the quarter turn `J = e(pi/2)`, through
//!   `R_y(-beta) = R_z(pi/2) R_y(pi/2) R_z(-beta) R_y(-pi/2) R_z(-pi/2)`, i.e.
//!   `e(beta) = Z(pi/2) J^T Z(-beta) J Z(-pi/2)` with `Z(g) = diag(e^(i m g))`: two axpys
//!   and a phase pass per rotation, no table (a GPU keeps `J` in shared memory).
//!
//! # Data flow
//! Work is on split real and imaginary arrays (structure of arrays) in a [`Scratch`]:
//! load (phases and scalings), rotate (degree-major), transpose into the order-major
//! layout where each shift couples the degrees of one order, shift, transpose back,
//! rotate back, add into the destination. Every diagonal factor of the rotations (the
//! `(-1)^m`, `w_m`, `i^m` of [`axpy`]'s two forms and of the quarter turn) is folded into
//! the per-order phases of the load, transpose and store passes, so a rotation is only
//! its matrix passes. Matrix passes and shifts are register-blocked (four outputs in
//! registers while the inputs run past) and never reassociate a sum, so results do not
//! depend on the vector width. Each operator is checked against its O(p^4) convolution
//! twin in [`super::reference`].

#![allow(
    clippy::inline_always,
    reason = "hot-path callees of the per-level copies of crate::fmm::isa: inlined, they are compiled with that level's features"
)]

use super::Scratch;
use crate::fmm::expansions::rotation::axpy;
use crate::fmm::expansions::{Complex, Tables, index, num_coefficients, order_start};

/// Which rotation matrices a translation uses (see the [module documentation](self)).
#[derive(Debug, Clone, Copy)]
pub enum Rotation<'a> {
    /// The blocks of the shift's own polar angle.
    Direct(&'a [f64]),
    /// The blocks of the quarter turn ([`Tables::quarter_turn`]), for any shift.
    Quarter(&'a [f64]),
}

/// `tau = |t|`, the phases `e^(i m alpha)` of `t`'s azimuth (1 on the z axis) and
/// `(cos beta, sin beta)` of its polar angle.
#[inline(always)]
fn frame(t: [f64; 3], p: u32, phase: &mut [Complex]) -> (f64, Complex) {
    let rho2 = t[0] * t[0] + t[1] * t[1];
    let rho = rho2.sqrt();
    let tau = (rho2 + t[2] * t[2]).sqrt();
    let unit = if rho2 > 0.0 {
        let inv = 1.0 / rho;
        Complex::new(t[0] * inv, t[1] * inv)
    } else {
        Complex::ONE
    };
    phase[0] = Complex::ONE;
    for m in 1..=p as usize {
        phase[m] = phase[m - 1] * unit;
    }
    (tau, Complex::new(t[2] / tau, rho / tau))
}

/// `i^m`.
#[inline(always)]
fn i_pow(m: u32) -> Complex {
    match m % 4 {
        0 => Complex::new(1.0, 0.0),
        1 => Complex::new(0.0, 1.0),
        2 => Complex::new(-1.0, 0.0),
        _ => Complex::new(0.0, -1.0),
    }
}

/// `(-1)^k`.
#[inline(always)]
fn sign(k: u32) -> f64 {
    if k.is_multiple_of(2) { 1.0 } else { -1.0 }
}

/// `w_m`: 2 for `m = 0`, else 1.
#[inline(always)]
fn weight(m: u32) -> f64 {
    if m == 0 { 2.0 } else { 1.0 }
}

/// The per-order factors of one translation: `load`, `to_shift`, `from_shift` and `store`
/// multiply coefficient `(n, m)` by entry `m` (each already holds the rotation's
/// diagonal factors and the translation's azimuth phases), and the quarter turn's middle
/// phases of the forward and backward rotations.
#[inline(always)]
fn prepare(p: u32, rot: Rotation<'_>, cs: Complex, load_conj: bool, store_conj: bool, w: &mut Scratch) {
    let mut mid = Complex::ONE;
    let u = Complex::new(-cs.re, cs.im);
    for m in 0..=p {
        let k = m as usize;
        let (f_in, f_out, b_in, b_out) = match rot {
            // E x = w (-1)^m axpy((-1)^m x / w); E^T x = w axpy(x / w).
            Rotation::Direct(_) => {
                let s = sign(m);
                let real = |v: f64| Complex::new(v, 0.0);
                (real(s / weight(m)), real(s * weight(m)), real(1.0 / weight(m)), real(weight(m)))
            }
            // e(+-beta) x = i^m w axpy(J, e^(i m (pi -+ beta)) axpy(J, i^m / w x)).
            Rotation::Quarter(_) => {
                let i = i_pow(m);
                (i.scale(1.0 / weight(m)), i.scale(weight(m)), i.scale(1.0 / weight(m)), i.scale(weight(m)))
            }
        };
        let ph = w.phase[k];
        w.load[k] = f_in * if load_conj { ph.conj() } else { ph };
        w.to_shift[k] = f_out;
        w.from_shift[k] = b_in;
        w.store[k] = b_out * if store_conj { ph.conj() } else { ph };
        w.mid[k] = mid;
        mid = mid * u;
    }
}

/// `y <- e(beta) x` (or `e(beta)^T x` with `back`) between the diagonal factors that
/// [`prepare`] folded elsewhere: the matrix passes of [`axpy`], and for the quarter turn
/// the middle phases, for degrees `0..=q` (`nc` their coefficients). Reads `(w.xr, w.xi)`,
/// leaves the result in `(w.yr, w.yi)`.
#[inline(always)]
fn rotate(p: u32, q: u32, nc: usize, rot: Rotation<'_>, back: bool, w: &mut Scratch) {
    match rot {
        Rotation::Direct(e) => axpy(e, p, q, &w.xr, &w.xi, &mut w.yr, &mut w.yi),
        Rotation::Quarter(j) => {
            axpy(j, p, q, &w.xr, &w.xi, &mut w.yr, &mut w.yi);
            for n in 0..=q {
                for m in 0..=n {
                    let i = index(n, m);
                    let f = if back { w.mid[m as usize].conj() } else { w.mid[m as usize] };
                    let v = Complex::new(w.yr[i], w.yi[i]) * f;
                    (w.yr[i], w.yi[i]) = (v.re, v.im);
                }
            }
            axpy(j, p, q, &w.yr, &w.yi, &mut w.xr, &mut w.xi);
            w.yr[..nc].copy_from_slice(&w.xr[..nc]);
            w.yi[..nc].copy_from_slice(&w.xi[..nc]);
        }
    }
}

/// `(w.xr, w.xi)[i] = (src[i] * w.load[m]) * f[i]`.
#[inline(always)]
fn load(tab: &Tables, nc: usize, src: &[Complex], f: &[f64], w: &mut Scratch) {
    for i in 0..nc {
        let v = (src[i] * w.load[tab.order_of[i] as usize]).scale(f[i]);
        (w.xr[i], w.xi[i]) = (v.re, v.im);
    }
}

/// Order-major `(w.or, w.oi)` from the degree-major `(w.yr, w.yi)` times
/// `w.to_shift[m]`, conjugated when `conj`, times `f[i]`.
#[inline(always)]
fn to_order_major(tab: &Tables, nc: usize, f: &[f64], conj: bool, w: &mut Scratch) {
    let im = if conj { -1.0 } else { 1.0 };
    for (i, (&fi, (&o, &m))) in f[..nc].iter().zip(tab.order_major.iter().zip(&tab.order_of)).enumerate() {
        let v = Complex::new(w.yr[i], w.yi[i]) * w.to_shift[m as usize];
        w.or[o] = v.re * fi;
        w.oi[o] = v.im * fi * im;
    }
}

/// Degree-major `(w.xr, w.xi)` from the order-major `(w.cr, w.ci)` times `f(i)` times
/// `w.from_shift[m]`.
#[inline(always)]
fn from_order_major(tab: &Tables, nc: usize, f: impl Fn(usize) -> f64, w: &mut Scratch) {
    for i in 0..nc {
        let o = tab.order_major[i];
        let v = Complex::new(w.cr[o], w.ci[o]).scale(f(i)) * w.from_shift[tab.order_of[i] as usize];
        (w.xr[i], w.xi[i]) = (v.re, v.im);
    }
}

/// `dst[i] += (y[i] * w.store[m]) * f[i]`.
#[inline(always)]
fn store(tab: &Tables, nc: usize, dst: &mut [Complex], f: &[f64], w: &Scratch) {
    for i in 0..nc {
        dst[i] += (Complex::new(w.yr[i], w.yi[i]) * w.store[tab.order_of[i] as usize]).scale(f[i]);
    }
}

/// The shift of one order: `c[q] = sum_j in[j] coef(j, q)` for `q, j < len`, read four
/// outputs `q0..q0 + 4` at a time: `coef(j, q0 + k) = table[first(j, q0) + k]` (`table`
/// padded so that four entries exist past any valid lane; lanes past `len` are
/// discarded), over the inputs `inputs(q0)` (the others contribute zero).
#[allow(clippy::inline_always)]
#[inline(always)]
fn shift_order(
    len: usize,
    input: (&[f64], &[f64]),
    out: (&mut [f64], &mut [f64]),
    table: &[f64],
    first: impl Fn(usize, usize) -> usize,
    inputs: impl Fn(usize) -> std::ops::Range<usize>,
) {
    let (ir, ii) = input;
    let (cr, ci) = out;
    let mut q0 = 0;
    while q0 < len {
        let (mut ar, mut ai) = ([0.0f64; 4], [0.0f64; 4]);
        for j in inputs(q0) {
            let (vr, vi) = (ir[j], ii[j]);
            let b = first(j, q0);
            let f = &table[b..b + 4];
            for k in 0..4 {
                ar[k] += f[k] * vr;
                ai[k] += f[k] * vi;
            }
        }
        // Element by element: a copy of a run of variable length is a call to memmove
        // (7.8% of an evaluation at p = 8 when it was one).
        let take = (len - q0).min(4);
        for ((r, i), (&a, &b)) in cr[q0..q0 + take].iter_mut().zip(&mut ci[q0..q0 + take]).zip(ar.iter().zip(&ai)) {
            *r = a;
            *i = b;
        }
        q0 += 4;
    }
}

/// Every order's shift: [`shift_order`] over the runs of the order-major arrays of `w`
/// (order-`p` layout, degrees up to `q`), with the padded `w.powers`.
#[allow(clippy::inline_always)]
#[inline(always)]
fn shift_orders(
    p: u32,
    q: u32,
    w: &mut Scratch,
    first: impl Fn(u32, usize, usize) -> usize,
    inputs: impl Fn(usize, usize) -> std::ops::Range<usize>,
) {
    // Degrees m..=q of order m are the first q - m + 1 entries of its run.
    let Scratch { or, oi, cr, ci, powers, .. } = w;
    for m in 0..=q {
        let (start, len) = (order_start(p, m), (q - m + 1) as usize);
        let input = (&or[start..start + len], &oi[start..start + len]);
        let out = (&mut cr[start..start + len], &mut ci[start..start + len]);
        shift_order(len, input, out, &powers[..], |j, q0| first(m, j, q0), |q0| inputs(len, q0));
    }
}

/// Adds the multipole `child`, about a centre at `t` from the parent's centre, to the
/// parent's multipole `parent`.
#[inline(always)]
pub fn m2m(tab: &Tables, rot: Rotation<'_>, t: [f64; 3], child: &[Complex], parent: &mut [Complex], w: &mut Scratch) {
    let (p, nc) = (tab.p(), tab.coefficients());
    let (tau, cs) = frame(t, p, &mut w.phase);
    prepare(p, rot, cs, false, true, w);
    load(tab, nc, child, &tab.s, w);
    rotate(p, p, nc, rot, false, w);
    to_order_major(tab, nc, &tab.inv_s, false, w);
    // powers[3 + k] = tau^k / k! (three leading zeros): out_q = sum_(j <= q) g_(q-j) in_j.
    let mut power = 1.0;
    w.powers[..3].fill(0.0);
    for k in 0..=p as usize {
        w.powers[3 + k] = power * tab.inv_factorial[k];
        power *= tau;
    }
    w.powers[p as usize + 4..p as usize + 8].fill(0.0);
    shift_orders(p, p, w, |_, j, q0| q0 + 3 - j, |len, q0| 0..len.min(q0 + 4));
    from_order_major(tab, nc, |i| tab.s[i], w);
    rotate(p, p, nc, rot, true, w);
    store(tab, nc, parent, &tab.inv_s, w);
}

/// Adds the far field of the multipole `source` to the local expansion `target`, whose
/// centre is at `t` from the source's centre.
#[inline(always)]
pub fn m2l(tab: &Tables, rot: Rotation<'_>, t: [f64; 3], source: &[Complex], target: &mut [Complex], w: &mut Scratch) {
    m2l_truncated(tab, tab.p(), rot, t, source, target, w);
}

/// [`m2l`] at order `q <= p`: the source's degrees `0..=q` into the target's degrees
/// `0..=q` (the others of `target` are left alone), at O(q^3). For a pair well inside
/// the acceptance criterion (the per-pair orders of [`crate::fmm::Fmm::per_pair_order`]).
///
/// # Panics
/// For `q > p`.
#[inline(always)]
pub fn m2l_truncated(
    tab: &Tables,
    q: u32,
    rot: Rotation<'_>,
    t: [f64; 3],
    source: &[Complex],
    target: &mut [Complex],
    w: &mut Scratch,
) {
    let p = tab.p();
    assert!(q <= p, "an M2L of order {q} from expansions of order {p}");
    let nc = num_coefficients(q);
    let (tau, cs) = frame(t, q, &mut w.phase);
    prepare(q, rot, cs, false, false, w);
    load(tab, nc, source, &tab.s, w);
    rotate(p, q, nc, rot, false, w);
    // b_n^l = conj(B'_n^l) / s_n^l; powers[j] = j! / tau^(j+1), zero-padded.
    to_order_major(tab, nc, &tab.inv_s, true, w);
    let inv_tau = 1.0 / tau;
    let mut power = inv_tau;
    for j in 0..=2 * q as usize {
        w.powers[j] = tab.factorial[j] * power;
        power *= inv_tau;
    }
    w.powers[2 * q as usize + 1..2 * q as usize + 5].fill(0.0);
    // Per order l: c_q = sum_j b_j powers[2l + j + q] (n = l + j, k = l + q).
    shift_orders(p, q, w, |l, j, q0| 2 * l as usize + j + q0, |len, _| 0..len);
    from_order_major(tab, nc, |i| sign(tab.degree_of[i] + tab.order_of[i]) * tab.inv_s[i], w);
    rotate(p, q, nc, rot, true, w);
    store(tab, nc, target, &tab.s, w);
}

/// Adds the local expansion `parent`, shifted to a centre at `t` from the parent's
/// centre, to `child`.
#[inline(always)]
pub fn l2l(tab: &Tables, rot: Rotation<'_>, t: [f64; 3], parent: &[Complex], child: &mut [Complex], w: &mut Scratch) {
    let (p, nc) = (tab.p(), tab.coefficients());
    let (tau, cs) = frame(t, p, &mut w.phase);
    prepare(p, rot, cs, true, false, w);
    load(tab, nc, parent, &tab.inv_s, w);
    rotate(p, p, nc, rot, false, w);
    to_order_major(tab, nc, &tab.s, false, w);
    // powers[u] = g_(p-u) for u <= p, zero for u in p+1..p+4: out_q = sum_(k >= q)
    // g_(k-q) in_k, with g_(k - q0 - kk) = powers[p - (k - q0) + kk].
    let pu = p as usize;
    let mut power = 1.0;
    for k in 0..=pu {
        w.powers[pu - k] = power * tab.inv_factorial[k];
        power *= tau;
    }
    w.powers[pu + 1..pu + 5].fill(0.0);
    shift_orders(p, p, w, |_, k, q0| pu + q0 - k, |len, q0| q0..len);
    from_order_major(tab, nc, |i| tab.inv_s[i], w);
    rotate(p, p, nc, rot, true, w);
    store(tab, nc, child, &tab.s, w);
}
