//! The accuracy harness: relative errors of approximate forces against a reference (an
//! f64 direct sum, [`crate::direct::direct_sum_f64`]), summarised as [`ErrorStats`].
//!
//! Per target `k`, the acceleration error is `|a_k - r_k| / |r_k|` (Euclidean norms, in
//! f64) and the potential error `|phi_k - p_k| / |p_k|`. Reference and approximation list
//! the same targets in the same order; [`gather_targets`] picks a reference's targets out
//! of a result for all bodies.
//!
//! # Rules
//! - Percentiles use the nearest rank: the `p`-th percentile of `N` sorted errors is the
//!   one of rank `ceil(p N / 100)` (1-based), so the median of an even count is the lower
//!   middle value, and every reported value is one of the errors.
//! - A reference that is zero (acceleration or potential) has no relative error: it is a
//!   typed error ([`Error::InvalidArgument`] naming the target), not a skipped entry. With
//!   evenly spaced targets of a random model it does not happen; a hand-built symmetric
//!   case should pick other targets.
//! - A non-finite reference is [`Error::NonFiniteValue`]; a non-finite approximation has
//!   error `+inf` (it counts, and shows as the maximum and the mean).

use orrery_core::{Error, Real, Result};

use crate::bodies::Forces;

/// Summary of relative errors over targets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ErrorStats {
    /// Number of targets.
    pub count: usize,
    /// Median (nearest rank).
    pub median: f64,
    /// 90th percentile (nearest rank).
    pub p90: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Largest error.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

impl ErrorStats {
    /// Statistics of `errors` (each `>= 0`, `+inf` allowed).
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for no errors; [`Error::NonFiniteValue`] for a NaN.
    pub fn from_errors(mut errors: Vec<f64>) -> Result<Self> {
        if errors.is_empty() {
            return Err(Error::EmptyInput { what: "errors", min: 1 });
        }
        if let Some(index) = errors.iter().position(|e| e.is_nan()) {
            return Err(Error::NonFiniteValue { what: "errors", index, value: f64::NAN });
        }
        errors.sort_unstable_by(f64::total_cmp);
        let n = errors.len();
        let rank = |p: usize| errors[(p * n).div_ceil(100).clamp(1, n) - 1];
        Ok(Self {
            count: n,
            median: rank(50),
            p90: rank(90),
            p99: rank(99),
            max: errors[n - 1],
            mean: errors.iter().sum::<f64>() / n as f64,
        })
    }
}

fn check_lengths<T>(reference: &Forces<f64>, approx: &Forces<T>) -> Result<usize> {
    let n = reference.ax.len();
    for (what, len) in [
        ("reference ay", reference.ay.len()),
        ("reference az", reference.az.len()),
        ("reference potential", reference.pot.len()),
        ("approximate ax", approx.ax.len()),
        ("approximate ay", approx.ay.len()),
        ("approximate az", approx.az.len()),
        ("approximate potential", approx.pot.len()),
    ] {
        if len != n {
            return Err(Error::LengthMismatch { what, expected: n, actual: len });
        }
    }
    if n == 0 {
        return Err(Error::EmptyInput { what: "reference forces", min: 1 });
    }
    Ok(n)
}

fn relative(what: &'static str, k: usize, err: f64, norm: f64) -> Result<f64> {
    if !norm.is_finite() {
        return Err(Error::NonFiniteValue { what, index: k, value: norm });
    }
    if norm == 0.0 {
        return Err(Error::InvalidArgument {
            what,
            reason: format!("target {k} has a zero reference: its relative error is undefined"),
        });
    }
    Ok(if err.is_finite() { err / norm } else { f64::INFINITY })
}

/// Relative acceleration errors `|a - a_ref| / |a_ref|` per target.
///
/// # Errors
/// [`Error::LengthMismatch`] unless all eight arrays have one length;
/// [`Error::EmptyInput`] for no targets; [`Error::InvalidArgument`] for a zero reference
/// acceleration, [`Error::NonFiniteValue`] for a non-finite one (see the module rules).
pub fn acceleration_errors<T: Real>(reference: &Forces<f64>, approx: &Forces<T>) -> Result<ErrorStats> {
    let n = check_lengths(reference, approx)?;
    let errors = (0..n)
        .map(|k| {
            let r = reference.acc(k);
            let a = approx.acc(k).map(Into::<f64>::into);
            let norm = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
            let d = [a[0] - r[0], a[1] - r[1], a[2] - r[2]];
            relative("reference acceleration", k, (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt(), norm)
        })
        .collect::<Result<Vec<f64>>>()?;
    ErrorStats::from_errors(errors)
}

/// Relative potential errors `|phi - phi_ref| / |phi_ref|` per target.
///
/// # Errors
/// As [`acceleration_errors`], for the potentials.
pub fn potential_errors<T: Real>(reference: &Forces<f64>, approx: &Forces<T>) -> Result<ErrorStats> {
    let n = check_lengths(reference, approx)?;
    let errors = (0..n)
        .map(|k| {
            let (r, a) = (reference.pot[k], approx.pot[k].into());
            relative("reference potential", k, (a - r).abs(), r.abs())
        })
        .collect::<Result<Vec<f64>>>()?;
    ErrorStats::from_errors(errors)
}

/// The entries of `targets` (indices into `forces`) in their order: the approximation at
/// a reference's targets when the approximation covers every body.
///
/// # Errors
/// [`Error::IndexOutOfBounds`] for the first index `>= forces.ax.len()`;
/// [`Error::LengthMismatch`] when the four arrays of `forces` differ in length.
pub fn gather_targets<T: Copy>(forces: &Forces<T>, targets: &[u32]) -> Result<Forces<T>> {
    let n = forces.ax.len();
    for (what, len) in [("ay", forces.ay.len()), ("az", forces.az.len()), ("potential", forces.pot.len())] {
        if len != n {
            return Err(Error::LengthMismatch { what, expected: n, actual: len });
        }
    }
    orrery_core::executor::check_indices("targets", targets, n)?;
    let pick = |v: &[T]| targets.iter().map(|&i| v[i as usize]).collect();
    Ok(Forces { ax: pick(&forces.ax), ay: pick(&forces.ay), az: pick(&forces.az), pot: pick(&forces.pot) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let s = ErrorStats::from_errors((1..=200).rev().map(f64::from).collect()).unwrap();
        assert_eq!((s.count, s.median, s.p90, s.p99, s.max), (200, 100.0, 180.0, 198.0, 200.0));
        assert_eq!(s.mean, 100.5);
        let one = ErrorStats::from_errors(vec![0.25]).unwrap();
        assert_eq!((one.median, one.p90, one.p99, one.max, one.mean), (0.25, 0.25, 0.25, 0.25, 0.25));
        assert!(matches!(ErrorStats::from_errors(vec![]), Err(Error::EmptyInput { .. })));
        assert!(matches!(ErrorStats::from_errors(vec![1.0, f64::NAN]), Err(Error::NonFiniteValue { index: 1, .. })));
    }
}
