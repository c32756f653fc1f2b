//! Streaming moments: Welford's update per value ("per thread"), Chan's merge of partial
//! results ("across threads and blocks"), with Pébay's third-moment terms, plus minimum
//! and maximum.
//!
//! A pass gives every work item (a chunk of members, a group of tile pairs) its own
//! [`Moments`], feeds it values in order with [`Moments::push`], and merges the items of
//! a cluster in item order with [`Moments::merge`]; the result is therefore a fixed
//! function of the input, whatever the thread count. Welford's form keeps the centred
//! sums `M2 = sum (x - mean)^2` and `M3 = sum (x - mean)^3` directly, so a cluster of a
//! million nearly equal distances does not lose its variance to cancellation as the
//! naive `sum x^2 - n mean^2` would.
//!
//! References: B. P. Welford, Technometrics 4(3), 1962; T. F. Chan, G. H. Golub and
//! R. J. LeVeque, "Updating formulae and a pairwise algorithm for computing sample
//! variances", 1979; P. Pébay, "Formulas for robust, one-pass parallel computation of
//! covariances and arbitrary-order statistical moments", Sandia SAND2008-6212.

/// Count, mean, centred second and third moment sums, minimum and maximum of a stream of
/// `f64` values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    /// Number of values.
    pub count: u64,
    /// Their mean (0 while `count == 0`).
    pub mean: f64,
    /// `sum (x - mean)^2`.
    pub m2: f64,
    /// `sum (x - mean)^3`.
    pub m3: f64,
    /// Smallest value (`+inf` while empty).
    pub min: f64,
    /// Largest value (`-inf` while empty).
    pub max: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl Moments {
    /// No values.
    pub const EMPTY: Moments =
        Moments { count: 0, mean: 0.0, m2: 0.0, m3: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY };

    /// Adds one value (Welford, with Pébay's third-moment term).
    #[inline]
    pub fn push(&mut self, x: f64) {
        let n1 = self.count as f64;
        self.count += 1;
        let n = self.count as f64;
        let delta = x - self.mean;
        let delta_n = delta / n;
        let term1 = delta * delta_n * n1;
        self.mean += delta_n;
        self.m3 += term1 * delta_n * (n - 2.0) - 3.0 * delta_n * self.m2;
        self.m2 += term1;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// The moments of the union of two disjoint streams (Chan's merge; `self` first).
    #[inline]
    #[must_use]
    pub fn merge(&self, other: &Moments) -> Moments {
        if other.count == 0 {
            return *self;
        }
        if self.count == 0 {
            return *other;
        }
        let (na, nb) = (self.count as f64, other.count as f64);
        let count = self.count + other.count;
        let n = count as f64;
        let delta = other.mean - self.mean;
        let mean = self.mean + delta * (nb / n);
        let m2 = self.m2 + other.m2 + delta * delta * (na * nb / n);
        let m3 = self.m3
            + other.m3
            + delta * delta * delta * (na * nb * (na - nb) / (n * n))
            + 3.0 * delta * (na * other.m2 - nb * self.m2) / n;
        Moments { count, mean, m2, m3, min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// Population variance `M2 / n` (NaN when empty).
    pub fn variance(&self) -> f64 {
        if self.count == 0 { f64::NAN } else { (self.m2 / self.count as f64).max(0.0) }
    }

    /// Population standard deviation `sqrt(M2 / n)` (NaN when empty).
    pub fn std_dev(&self) -> f64 {
        self.variance().sqrt()
    }

    /// Population skewness `sqrt(n) M3 / M2^(3/2)`: NaN when empty, 0 when the values
    /// are all equal (`M2 == 0`).
    pub fn skewness(&self) -> f64 {
        if self.count == 0 {
            f64::NAN
        } else if self.m2 <= 0.0 {
            0.0
        } else {
            (self.count as f64).sqrt() * self.m3 / self.m2.powf(1.5)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn direct(x: &[f64]) -> (f64, f64, f64) {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let m2 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>();
        let m3 = x.iter().map(|v| (v - mean).powi(3)).sum::<f64>();
        (mean, m2, m3)
    }

    #[test]
    fn welford_and_chan_agree_with_the_two_pass_formulas() {
        let x: Vec<f64> = (0..97).map(|i| ((i * 37 % 101) as f64).sqrt() + 1e6).collect();
        let (mean, m2, m3) = direct(&x);
        let mut all = Moments::EMPTY;
        for &v in &x {
            all.push(v);
        }
        for split in [0, 1, 13, 50, 96, 97] {
            let (mut a, mut b) = (Moments::EMPTY, Moments::EMPTY);
            x[..split].iter().for_each(|&v| a.push(v));
            x[split..].iter().for_each(|&v| b.push(v));
            let m = a.merge(&b);
            assert_eq!(m.count, 97);
            assert!((m.mean - mean).abs() < 1e-9, "{split}");
            assert!((m.m2 - m2).abs() < 1e-9 * m2, "{split}: {} {m2}", m.m2);
            assert!((m.m3 - m3).abs() < 1e-6 * m2.powf(1.5), "{split}: {} {m3}", m.m3);
            assert_eq!((m.min, m.max), (all.min, all.max));
        }
        assert!((all.m2 - m2).abs() < 1e-9 * m2);
    }

    #[test]
    fn sentinels_of_empty_and_constant_streams() {
        assert!(Moments::EMPTY.variance().is_nan() && Moments::EMPTY.skewness().is_nan());
        let mut c = Moments::EMPTY;
        (0..5).for_each(|_| c.push(0.3));
        assert_eq!((c.mean, c.m2, c.m3, c.skewness()), (0.3, 0.0, 0.0, 0.0));
        assert_eq!(c.merge(&c).m2, 0.0);
    }
}
