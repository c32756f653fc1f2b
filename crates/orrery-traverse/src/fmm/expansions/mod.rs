//! Expansions of the 1/r potential in complex solid harmonics: the order, the coefficient
//! layout, the harmonics themselves ([`harmonics`]) and the rotations behind the O(p^3)
//! translations ([`rotation`]). ADR 0019 says why these and not Cartesian Taylor series.
//!
//! # Normalisation (Dehnen 2014, "A fast multipole method for stellar dynamics")
//! For `x = (x, y, z)`, `r = |x|`, `xi = x + i y` and the associated Legendre functions
//! `P_n^m` *with* the Condon-Shortley phase, the regular and irregular solid harmonics are
//!
//! - `Y_n^m(x) = r^n P_n^m(cos theta) e^(i m phi) / (n + m)!` (a polynomial of degree `n`),
//! - `T_n^m(x) = (n - m)! P_n^m(cos theta) e^(i m phi) / r^(n + 1)`,
//!
//! with `X_n^(-m) = (-1)^m conj(X_n^m)` for both. In this normalisation every identity
//! the operators use is free of coefficients (each one is checked by a test):
//!
//! - `1 / |x - y| = sum_{n, m} conj(Y_n^m(y)) T_n^m(x)` for `|y| < |x|`;
//! - `Y_n^m(a + b) = sum_{k, l} Y_k^l(a) Y_(n-k)^(m-l)(b)` (finite);
//! - `T_n^m(x - y) = sum_{k, l} conj(Y_k^l(y)) T_(n+k)^(m+l)(x)` for `|y| < |x|`;
//! - `d/dz Y_n^m = Y_(n-1)^m`, `(d/dx + i d/dy) Y_n^m = Y_(n-1)^(m+1)`,
//!   `(d/dx - i d/dy) Y_n^m = -Y_(n-1)^(m-1)`; `d/dz T_n^m = -T_(n+1)^m`,
//!   `(d/dx + i d/dy) T_n^m = T_(n+1)^(m+1)`, `(d/dx - i d/dy) T_n^m = -T_(n+1)^(m-1)`.
//!
//! # Expansions and their layout
//! - A multipole about `c` of charges `q_j` at `y_j`: `M_n^m = sum_j q_j conj(Y_n^m(y_j - c))`,
//!   so that `phi(x) = sum_{n, m} M_n^m T_n^m(x - c)` outside the charges' ball.
//! - A local expansion about `z`: `phi(x) = sum_{n, m} L_n^m conj(Y_n^m(x - z))`.
//! - Order `p` keeps `n <= p`. Real charges make `X_n^(-m) = (-1)^m conj(X_n^m)`, so only
//!   `0 <= m <= n` is stored: `(p + 1)(p + 2) / 2` complex numbers per expansion, the
//!   coefficient `(n, m)` at [`index`]`(n, m) = n (n + 1) / 2 + m` (by degree, then order:
//!   one contiguous run per degree, which is what the per-degree rotations read).
//!   `X_n^0` is real.
//!
//! Everything here is f64, whatever the bodies' precision: expansions are O(p^2) numbers
//! per node, cheap next to the near field, and the accuracy targets of p up to 12 (errors
//! down to 1e-10) are out of f32's reach. The coordinates the expansions see are
//! normalised to the tree's box ([`crate::fmm::nodes::Frame`]), which keeps `r^n` and
//! `r^-(n+1)` inside f64's range at every tree depth up to [`MAX_ORDER`].

mod complex;
pub mod harmonics;
pub mod rotation;

pub use complex::Complex;

use orrery_core::{Error, Result};

/// The lowest order an FMM evaluation accepts (the dipole term of the local expansion:
/// the lowest order with a far-field force).
pub const MIN_ORDER: u32 = 1;

/// The highest order: the tables, scratch arrays and the range checks of normalised
/// coordinates are sized for it. 16 keeps `(2p)!` and `tau^-(2p+1)` of the deepest cells
/// well inside f64 and the rotation matrices orthogonal to 5e-15 (tested).
pub const MAX_ORDER: u32 = 16;

/// Coefficients of an order-`p` expansion: `(p + 1)(p + 2) / 2`.
#[inline]
pub const fn num_coefficients(p: u32) -> usize {
    let p = p as usize;
    (p + 1) * (p + 2) / 2
}

/// Coefficients of the largest expansion any operator handles, order [`MAX_ORDER`] + 1
/// (the gradient of a multipole reads the irregular harmonics one degree up).
pub const MAX_COEFFICIENTS: usize = num_coefficients(MAX_ORDER + 1);

/// Position of coefficient `(n, m)`, `0 <= m <= n`: `n (n + 1) / 2 + m`.
#[inline]
pub const fn index(n: u32, m: u32) -> usize {
    let n = n as usize;
    n * (n + 1) / 2 + m as usize
}

/// A validated expansion order `p` in [`MIN_ORDER`]`..=`[`MAX_ORDER`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Order(u32);

impl Order {
    /// Order `p`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`what = "expansion order"`) outside
    /// [`MIN_ORDER`]`..=`[`MAX_ORDER`].
    pub fn new(p: u32) -> Result<Self> {
        if (MIN_ORDER..=MAX_ORDER).contains(&p) {
            Ok(Self(p))
        } else {
            Err(Error::InvalidArgument {
                what: "expansion order",
                reason: format!("p = {p} is outside the supported orders {MIN_ORDER}..={MAX_ORDER}"),
            })
        }
    }

    /// `p`.
    #[inline]
    pub const fn get(self) -> u32 {
        self.0
    }

    /// Coefficients per expansion, [`num_coefficients`]`(p)`.
    #[inline]
    pub const fn coefficients(self) -> usize {
        num_coefficients(self.0)
    }
}

/// The per-order constants every operator reads: scale factors between this
/// normalisation and the Racah one of the rotations, factorials, and the reciprocals the
/// harmonics' recurrences multiply by (no division in any per-particle or per-pair loop).
/// Built once per evaluation; small (a few KiB).
#[derive(Debug, Clone, PartialEq)]
pub struct Tables {
    order: Order,
    /// `s_n^m = sqrt((n + m)! (n - m)!)` by [`index`], degrees up to `p + 1`.
    pub(crate) s: Vec<f64>,
    /// `1 / s_n^m`.
    pub(crate) inv_s: Vec<f64>,
    /// `j!` for `j = 0..=2p + 1`.
    pub(crate) factorial: Vec<f64>,
    /// `1 / j!`.
    pub(crate) inv_factorial: Vec<f64>,
    /// `1 / ((n - m)(n + m))` by [`index`] for `n >= m + 2` (the regular recurrence), 0
    /// elsewhere; degrees up to `p + 1`.
    pub(crate) inv_nm: Vec<f64>,
    /// Position of coefficient [`index`]`(n, m)` in the order-major layout of the z-axis
    /// shifts (all degrees of order 0, then of order 1, ...; order `m` starts at
    /// [`Tables::order_start`]`(m)`), degrees up to `p`.
    pub(crate) order_major: Vec<usize>,
    /// The rotation blocks of `beta = pi / 2` (the quarter turn `J` of
    /// [`crate::fmm::operators::Rotation::Quarter`]).
    pub(crate) quarter: Vec<f64>,
    /// The order `m` of each coefficient [`index`]`(n, m)`, degrees up to `p`.
    pub(crate) order_of: Vec<u32>,
    /// The degree `n` of each coefficient, degrees up to `p`.
    pub(crate) degree_of: Vec<u32>,
}

impl Tables {
    /// The tables of `order`.
    pub fn new(order: Order) -> Self {
        let p = order.get();
        let len = num_coefficients(p + 1);
        let top = 2 * p as usize + 2;
        let mut factorial = vec![1.0f64; top + 1];
        for j in 1..=top {
            factorial[j] = factorial[j - 1] * j as f64;
        }
        let mut s = vec![0.0; len];
        let mut inv_nm = vec![0.0; len];
        for n in 0..=p + 1 {
            for m in 0..=n {
                s[index(n, m)] = (factorial[(n + m) as usize] * factorial[(n - m) as usize]).sqrt();
                if n >= m + 2 {
                    inv_nm[index(n, m)] = 1.0 / f64::from((n - m) * (n + m));
                }
            }
        }
        let mut order_major = vec![0; num_coefficients(p)];
        for n in 0..=p {
            for m in 0..=n {
                order_major[index(n, m)] = order_start(p, m) + (n - m) as usize;
            }
        }
        let (mut order_of, mut degree_of) = (vec![0; num_coefficients(p)], vec![0; num_coefficients(p)]);
        for n in 0..=p {
            for m in 0..=n {
                (order_of[index(n, m)], degree_of[index(n, m)]) = (m, n);
            }
        }
        let mut quarter = vec![0.0; rotation::stride(p)];
        rotation::matrices_into(std::f64::consts::FRAC_PI_2, p, &mut quarter);
        Self {
            order,
            order_major,
            quarter,
            order_of,
            degree_of,
            inv_s: s.iter().map(|v| 1.0 / v).collect(),
            s,
            inv_factorial: factorial.iter().map(|v| 1.0 / v).collect(),
            factorial,
            inv_nm,
        }
    }

    /// The order.
    #[inline]
    pub fn order(&self) -> Order {
        self.order
    }

    /// `p`.
    #[inline]
    pub fn p(&self) -> u32 {
        self.order.get()
    }

    /// Coefficients per expansion.
    #[inline]
    pub fn coefficients(&self) -> usize {
        self.order.coefficients()
    }

    /// The rotation blocks of the quarter turn `beta = pi / 2`.
    pub fn quarter_turn(&self) -> &[f64] {
        &self.quarter
    }
}

/// First position of order `m` in the order-major layout of order `p`:
/// `sum_(l < m) (p + 1 - l)`.
#[inline]
pub(crate) const fn order_start(p: u32, m: u32) -> usize {
    let (p, m) = (p as usize, m as usize);
    m * (p + 1) - m * m.saturating_sub(1) / 2
}

/// The coefficient `(n, m)` for any `-n <= m <= n` of a stored expansion (`X_n^(-m) =
/// (-1)^m conj(X_n^m)`); zero for `|m| > n`. For tests and reference operators.
pub fn coefficient(x: &[Complex], n: u32, m: i32) -> Complex {
    let a = m.unsigned_abs();
    if a > n {
        return Complex::ZERO;
    }
    let v = x[index(n, a)];
    if m >= 0 {
        v
    } else if a.is_multiple_of(2) {
        v.conj()
    } else {
        -v.conj()
    }
}
