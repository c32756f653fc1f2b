//! Opening criteria (multipole acceptance criteria, MACs): when a node's multipole may
//! stand for its particles.
//!
//! A node of side `s` (the longest side of its cell box: cells of a binary tree are not
//! cubes), centre of mass `c` and geometric centre `g` is *opened* for a target at `x`
//! when `|x - c|^2 < r^2`, with the critical radius
//!
//! | criterion | `r` | |
//! |---|---|---|
//! | [`Mac::Classic`] | `s / theta` | Barnes & Hut (1986): size over distance |
//! | [`Mac::Safe`] | `s / theta + |c - g|` | Bonsai (Bédorf et al. 2012), Cornerstone/Ryoanji's vector MAC |
//!
//! The classic test measures the distance from the centre of mass, which can sit near a
//! cell's edge: a target inside the cell (or just beside it) can then accept the cell,
//! and the error is unbounded for large `theta` (the "exploding galaxy" case of Salmon &
//! Warren 1994). The safe test adds the offset `delta = |c - g|`: every point of the cell
//! is within `delta + s * sqrt(3) / 2` of `c`, so an accepted target is at least
//! `s (1 / theta - sqrt(3) / 2) > 0` away from the cell for every `theta < 2 / sqrt(3)`
//! (1.15): the target is outside every cell it accepts, and the expansion's error is
//! bounded by the ratio of the cell's extent to that distance.
//!
//! A target group (the group walk) opens a node when the *nearest point of the group's
//! bounding box* is within `r` of `c` ([`box_distance2`]), so that the decision holds for
//! every target of the group.
//!
//! The test compares squares, computed as `((dx * dx + dy * dy) + dz * dz)` with every
//! product and sum rounded (no fused multiply-add): the GPU kernels evaluate exactly the
//! same operations, so that every executor opens the same nodes.

use orrery_core::{Error, Real, Result};

/// The opening criterion (see the [module documentation](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mac {
    /// `r = s / theta`.
    Classic,
    /// `r = s / theta + |c - g|`.
    Safe,
}

/// A criterion with its opening angle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opening<T: Real> {
    /// The criterion.
    pub mac: Mac,
    /// The opening angle `theta > 0` (smaller is more accurate; `theta -> 0` opens
    /// every node and gives direct summation).
    pub theta: T,
}

impl<T: Real> Opening<T> {
    /// The safe criterion at `theta`.
    pub fn safe(theta: T) -> Self {
        Self { mac: Mac::Safe, theta }
    }

    /// The classic criterion at `theta`.
    pub fn classic(theta: T) -> Self {
        Self { mac: Mac::Classic, theta }
    }

    /// Checks `theta`: finite and positive.
    ///
    /// # Errors
    /// [`Error::NonFiniteValue`] for NaN or infinity, [`Error::InvalidArgument`] for
    /// `theta <= 0`.
    pub fn check(&self) -> Result<()> {
        if !self.theta.finite() {
            return Err(Error::NonFiniteValue { what: "theta", index: 0, value: self.theta.into() });
        }
        if self.theta <= T::zero() {
            return Err(Error::InvalidArgument {
                what: "theta",
                reason: format!("the opening angle must be positive, got {}", Into::<f64>::into(self.theta)),
            });
        }
        Ok(())
    }

    /// The squared critical radius of a node with centre of mass `com`, box centre
    /// `centre` and box half-extents `half` (see the [module documentation](self)):
    /// `s = 2 max(half)`, `r = s / theta (+ |com - centre|)`, returned as `r * r`.
    /// Every operation is one rounded IEEE operation, in this order (the GPU kernels
    /// repeat it).
    pub fn critical_radius2(&self, com: [T; 3], centre: [T; 3], half: [T; 3]) -> T {
        let two = T::one() + T::one();
        let side = two * half[0].max(half[1]).max(half[2]);
        let mut r = side / self.theta;
        if self.mac == Mac::Safe {
            r += distance2(com, centre).sqrt();
        }
        r * r
    }
}

/// `|a - b|^2` as `((dx * dx + dy * dy) + dz * dz)` with `d = a - b`.
#[inline]
pub fn distance2<T: Real>(a: [T; 3], b: [T; 3]) -> T {
    let (dx, dy, dz) = (a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    dx * dx + dy * dy + dz * dz
}

/// The squared distance from `p` to the nearest point of the box with centre `centre`
/// and half-extents `half` (0 inside): per axis `max(|p - centre| - half, 0)`, then the
/// sum of squares in the order of [`distance2`].
#[inline]
pub fn box_distance2<T: Real>(p: [T; 3], centre: [T; 3], half: [T; 3]) -> T {
    let gap = |a: usize| ((p[a] - centre[a]).abs() - half[a]).max(T::zero());
    let (dx, dy, dz) = (gap(0), gap(1), gap(2));
    dx * dx + dy * dy + dz * dz
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn theta_is_checked() {
        assert!(Opening::safe(0.5f64).check().is_ok());
        assert!(matches!(Opening::safe(0.0f64).check(), Err(Error::InvalidArgument { what: "theta", .. })));
        assert!(matches!(Opening::classic(-1.0f32).check(), Err(Error::InvalidArgument { .. })));
        assert!(matches!(Opening::classic(f32::NAN).check(), Err(Error::NonFiniteValue { .. })));
    }

    #[test]
    fn radii_follow_the_formulas() {
        let half = [0.5, 0.25, 0.125];
        let centre = [0.0, 0.0, 0.0];
        let com = [0.3, 0.0, 0.4];
        assert_eq!(Opening::classic(0.5f64).critical_radius2(com, centre, half), 4.0);
        // s / theta + delta = 2 + 0.5.
        assert_eq!(Opening::safe(0.5f64).critical_radius2(com, centre, half), 6.25);
    }

    #[test]
    fn box_distance_is_zero_inside_and_euclidean_outside() {
        let (c, h) = ([0.0f64; 3], [1.0; 3]);
        assert_eq!(box_distance2([0.5, -0.5, 0.9], c, h), 0.0);
        assert_eq!(box_distance2([3.0, 0.0, 0.0], c, h), 4.0);
        assert_eq!(box_distance2([-2.0, 3.0, 0.0], c, h), 5.0);
    }
}
