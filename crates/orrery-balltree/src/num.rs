//! Conversions between a coordinate type and f64, named so that they do not clash
//! with the same-named methods of nalgebra's traits that `Real` also brings in.

use orrery_core::Real;

/// `v` widened to f64 (exact).
#[inline]
pub(crate) fn wide<T: Real>(v: T) -> f64 {
    Into::<f64>::into(v)
}

/// `v` rounded to `T` (nearest).
#[inline]
pub(crate) fn narrow<T: Real>(v: f64) -> T {
    <T as Real>::from_f64(v)
}
