//! The per-element rules the GPU kernels implement, written once on the host: the exact
//! comparison of spreads that picks a node's split dimension, and the order-preserving
//! integer encoding of coordinates that the sorts and the integer atomics work on.
//!
//! # Exact spread comparison
//! The spread of a dimension is `hi - lo`. The kernels never round it: TwoSum turns it
//! into an error-free pair `(s, e)` with `s = fl(hi - lo)` and `s + e = hi - lo`
//! exactly, and pairs compare lexicographically. Rounding is monotone, so `x < y` gives
//! `fl(x) <= fl(y)`, and when `fl(x) == fl(y)` the errors decide; the order of the
//! pairs is the order of the exact real spreads. It needs no wider type, so WGSL (no
//! f64) and CUDA agree with each other and with this function bit for bit.
//!
//! One case needs care: `hi - lo` can overflow the type although both are finite
//! (`hi = 3e38, lo = -3e38` in f32). Then `s` is infinite and TwoSum's error is NaN.
//! Such a spread is at least `MAX + ulp(MAX) / 2`, larger than every spread that does
//! not overflow, and both bounds are then at least `ulp(MAX) / 2` in magnitude, so
//! halving them is exact: overflowed spreads compare as `(1, TwoSum(hi/2, -lo/2))`,
//! the others as `(0, TwoSum(hi, -lo))`.
//!
//! The CPU build follows the same rule ([`crate::split`]): it compares the f64 spreads of
//! its widened bounds (f32 bounds widen exactly) and, only where the largest of them tie
//! or overflow, decides by [`split_dim_exact`] in f64. Rounding is monotone, so a rounded
//! spread strictly larger than all others is the strictly largest exact one: every
//! executor picks the same dimension, for f32 and f64 input alike.
//!
//! Subnormal coordinates: CUDA keeps them (NVRTC compiles without flush-to-zero). A
//! Vulkan adapter may flush f32 subnormals in arithmetic, which can only change the
//! comparison of spreads whose bounds are subnormal (below 1.2e-38).
//!
//! # Order-preserving encoding
//! [`ordered_f32`] and [`ordered_f64`] map a finite float to an unsigned integer of the
//! same width whose unsigned order is the float order, with `-0.0` mapped to the code of
//! `0.0` (the split order compares `-0.0 == 0.0` and falls back to the point index).

use orrery_core::Real;

/// A spread as an error-free pair, ordered exactly (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spread<T> {
    /// Whether `hi - lo` overflows `T`; then `s + e = (hi - lo) / 2`.
    pub overflow: bool,
    /// The rounded spread (halved when `overflow`).
    pub s: T,
    /// The rounding error of `s`.
    pub e: T,
}

/// TwoSum (Knuth): `s = fl(a + b)` and `e` with `s + e = a + b` exactly, for finite
/// `a + b`.
#[inline]
fn two_sum<T: Real>(a: T, b: T) -> (T, T) {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    (s, e)
}

impl<T: Real> Spread<T> {
    /// The zero spread (the starting point of the split-dimension search).
    pub fn zero() -> Self {
        Self { overflow: false, s: T::ZERO, e: T::ZERO }
    }

    /// The exact spread `hi - lo` of finite bounds `lo <= hi`.
    pub fn of(lo: T, hi: T) -> Self {
        let (s, e) = two_sum(hi, -lo);
        if s.finite() {
            return Self { overflow: false, s, e };
        }
        let half = crate::num::narrow::<T>(0.5);
        let (s, e) = two_sum(hi * half, -(lo * half));
        Self { overflow: true, s, e }
    }

    /// Whether `self` is strictly larger than `other` as real numbers.
    pub fn greater(&self, other: &Self) -> bool {
        if self.overflow != other.overflow {
            return self.overflow;
        }
        if self.s != other.s {
            return self.s > other.s;
        }
        self.e > other.e
    }
}

/// The split dimension from per-dimension `(lo, hi)` bounds: the first dimension whose
/// exact spread is strictly larger than every earlier one, starting from 0 (so ties go
/// to the lowest dimension and a node of coincident points splits along dimension 0).
/// This is what the GPU kernels compute; it equals [`crate::split`]'s f64 rule whenever
/// the f64 subtractions are exact.
pub(crate) fn split_dim_exact<T: Real>(bounds: impl Iterator<Item = (T, T)>) -> usize {
    let mut best = Spread::zero();
    let mut best_dim = 0;
    for (d, (lo, hi)) in bounds.enumerate() {
        let s = Spread::of(lo, hi);
        if s.greater(&best) {
            best = s;
            best_dim = d;
        }
    }
    best_dim
}

/// The order-preserving code of a finite f32 (`-0.0` as `0.0`).
#[inline]
pub(crate) fn ordered_f32(x: f32) -> u32 {
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    if b & 0x8000_0000 != 0 { !b } else { b | 0x8000_0000 }
}

/// The order-preserving code of a finite f64 (`-0.0` as `0.0`).
#[inline]
pub(crate) fn ordered_f64(x: f64) -> u64 {
    let b = if x == 0.0 { 0 } else { x.to_bits() };
    if b & (1 << 63) != 0 { !b } else { b | (1 << 63) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A random finite f32 with an exponent in `-exp..exp` and either sign.
    fn random_f32(rng: &mut ChaCha8Rng, exp: i32) -> f32 {
        let m: f32 = rng.random_range(1.0..2.0);
        let e = rng.random_range(-exp..exp);
        let v = m * 2f32.powi(e);
        if rng.random::<bool>() { v } else { -v }
    }

    /// `x * 2^64` exactly, for zero and normal f32 of magnitude below 2^36 and above 2^-64.
    fn scaled(x: f32) -> i128 {
        if x == 0.0 {
            return 0;
        }
        let bits = x.to_bits();
        let exp = ((bits >> 23) & 0xff).cast_signed();
        let mantissa = i128::from((bits & 0x7f_ffff) | 0x80_0000);
        let shift = exp - 150 + 64;
        assert!((0..100).contains(&shift), "{x} out of the exact range");
        let v = mantissa << shift;
        if x < 0.0 { -v } else { v }
    }

    #[test]
    fn pairs_order_like_exact_spreads() {
        // Exact reference: integers scaled by 2^64 (f64 would round when the bounds are
        // more than 2^29 apart in magnitude).
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200_000 {
            let mut a = [random_f32(&mut rng, 20), random_f32(&mut rng, 20)];
            let mut b = [random_f32(&mut rng, 20), random_f32(&mut rng, 20)];
            if rng.random::<u32>() % 4 == 0 {
                // Near ties: the same spread shifted, or one ulp off.
                b = [a[0] + 1.0, a[1] + 1.0];
            }
            a.sort_by(f32::total_cmp);
            b.sort_by(f32::total_cmp);
            let exact_a = scaled(a[1]) - scaled(a[0]);
            let exact_b = scaled(b[1]) - scaled(b[0]);
            let (sa, sb) = (Spread::of(a[0], a[1]), Spread::of(b[0], b[1]));
            assert_eq!(sa.greater(&sb), exact_a > exact_b, "{a:?} vs {b:?}");
            assert_eq!(sb.greater(&sa), exact_b > exact_a, "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn overflowing_spreads_are_exact_and_larger_than_all_others() {
        let big = Spread::of(-3.0e38f32, 3.0e38);
        let bigger = Spread::of(-3.0e38f32, 3.1e38);
        let max_finite = Spread::of(0.0f32, f32::MAX);
        assert!(big.overflow && bigger.overflow && !max_finite.overflow);
        assert!(bigger.greater(&big) && !big.greater(&bigger));
        assert!(big.greater(&max_finite));
        // One ulp of the halved sum apart.
        let x = Spread::of(-f32::MAX, f32::MAX);
        let y = Spread::of(-f32::MAX, f32::MAX - 2f32.powi(104));
        assert!(x.greater(&y));
        assert!(x.e.is_finite() && y.e.is_finite());
    }

    #[test]
    fn split_dimension_ties_go_to_the_lowest() {
        assert_eq!(split_dim_exact([(0.0f32, 1.0), (2.0, 3.0)].into_iter()), 0);
        assert_eq!(split_dim_exact([(0.0f32, 0.0), (2.0, 2.0)].into_iter()), 0);
        assert_eq!(split_dim_exact([(0.0f32, 1.0), (2.0, 3.0000002)].into_iter()), 1);
        // 1e8 + 2 and 1e8 + 3 both round to 1e8 in f32 (ulp 8): the errors decide.
        assert_eq!(split_dim_exact([(-2.0f32, 1.0e8), (-3.0f32, 1.0e8)].into_iter()), 1);
        assert_eq!(split_dim_exact([(-3.0f32, 1.0e8), (-2.0f32, 1.0e8)].into_iter()), 0);
        assert_eq!(split_dim_exact([(-2.0f64, 1.0e17), (-3.0f64, 1.0e17)].into_iter()), 1);
    }

    #[test]
    fn ordered_codes_follow_the_float_order_and_merge_zeros() {
        let values = [f32::MIN, -1.0, -f32::MIN_POSITIVE, -1.0e-45, -0.0, 0.0, 1.0e-45, 1.0, f32::MAX];
        for w in values.windows(2) {
            assert!(ordered_f32(w[0]) <= ordered_f32(w[1]), "{w:?}");
        }
        assert_eq!(ordered_f32(-0.0), ordered_f32(0.0));
        assert_eq!(ordered_f64(-0.0), ordered_f64(0.0));
        assert!(ordered_f64(-1.0) < ordered_f64(-0.5) && ordered_f64(0.5) < ordered_f64(1.0));
        assert!(ordered_f32(f32::MAX) < 0xff80_0000, "finite codes stay below the padding key");
    }
}
