//! The per-element arithmetic every pass shares: squared Euclidean distances and inner
//! products of `f32` vectors, accumulated in `f64` in one fixed order.
//!
//! Every statistic and every search score is built from these functions, so a value that
//! two passes compute from the same operands is the same bits in both (the outlier
//! threshold of the centroid family's third pass compares exactly the distances its
//! second pass measured; the fused search writes exactly the distances of the centroid
//! family). A GPU kernel mirrors them by the same order with correctly rounded `f64`
//! operations (`__dsub_rn`, `__dmul_rn`, `__dadd_rn`: no contraction into FMAs).
//!
//! **Why `f64`.** The product of two `f32` values is exact in `f64` (24 + 24 < 53 bits)
//! and the difference of two `f32` is exact whenever their exponents are within 29 of
//! each other, so the only rounding is in the sum: relative error below
//! `dim * 2^-53` (1e-13 at 1,024 dims) instead of `dim * 2^-24` (6e-5) in `f32`. That
//! is what makes exact search equal to an `f64` brute-force ranking and keeps the
//! 1M-member sums of the statistics meaningful.
//!
//! **Order.** Dimension `d` goes to lane `d % 8` (eight running sums, in increasing `d`);
//! the lanes are combined as `((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))`. The
//! eight independent lanes are what lets the CPU vectorise the loop (two AVX2 or four
//! SSE2 registers).

/// Lanes of the fixed summation order.
pub const LANES: usize = 8;

/// A value that widens to `f64` exactly (`f32` or `f64`).
pub trait Wide: Copy + Send + Sync {
    /// The value as `f64`.
    fn wide(self) -> f64;
}

impl Wide for f32 {
    #[inline]
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

impl Wide for f64 {
    #[inline]
    fn wide(self) -> f64 {
        self
    }
}

#[inline]
fn combine(l: [f64; LANES]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// `sum_d (a[d] - b[d])^2` in `f64`, in the fixed lane order.
///
/// # Panics
/// In debug builds when the lengths differ.
#[inline]
pub fn sq_l2<A: Wide, B: Wide>(a: &[A], b: &[B]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            let t = x[l].wide() - y[l].wide();
            acc[l] += t * t;
        }
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        let t = x.wide() - y.wide();
        acc[l] += t * t;
    }
    combine(acc)
}

/// `sum_d a[d] * b[d]` in `f64`, in the fixed lane order.
///
/// # Panics
/// In debug builds when the lengths differ.
#[inline]
pub fn dot<A: Wide, B: Wide>(a: &[A], b: &[B]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f64; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..LANES {
            acc[l] += x[l].wide() * y[l].wide();
        }
    }
    for (l, (x, y)) in ra.iter().zip(rb).enumerate() {
        acc[l] += x.wide() * y.wide();
    }
    combine(acc)
}

/// The Euclidean norm `sqrt(dot(a, a))`.
#[inline]
pub fn norm<A: Wide>(a: &[A]) -> f64 {
    dot(a, a).sqrt()
}

/// The Euclidean distance `sqrt(sq_l2(a, b))`.
#[inline]
pub fn l2<A: Wide, B: Wide>(a: &[A], b: &[B]) -> f64 {
    sq_l2(a, b).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_order_matches_a_hand_written_sum() {
        let a: Vec<f32> = (0..11).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..11).map(|i| 3.0 - i as f32).collect();
        let t: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2)).collect();
        let mut l = [0.0; 8];
        for (d, v) in t.iter().enumerate() {
            l[d % 8] += v;
        }
        assert_eq!(sq_l2(&a, &b), ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])));
        assert_eq!(dot(&[1.0f32, 2.0, 3.0], &[4.0f64, 5.0, 6.0]), 32.0);
        assert_eq!(norm(&[3.0f32, 4.0]), 5.0);
        assert_eq!(l2(&[0.0f32; 0], &[0.0f32; 0]), 0.0);
    }
}
