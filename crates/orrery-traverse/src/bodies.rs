//! Bodies, the force law and the forces: what every solver of this crate takes and returns.
//!
//! Bodies are orrery-core's [`ParticlesView`] (structure of arrays: x, y, z, mass), with
//! the extra rule of gravity that every mass is positive ([`check_bodies`]). The force
//! law is [`Gravity`]: Newton's constant and a [`Softening`]. Results are [`Forces`]:
//! accelerations and potentials per body, in the bodies' order.

use orrery_core::{Error, ParticlesView, Real, Result};
use rayon::prelude::*;

/// How the 1/r potential is softened at short range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Softening<T: Real> {
    /// Plummer softening of length `eps`: `phi = -G m / sqrt(r^2 + eps^2)`,
    /// `a = G m d / (r^2 + eps^2)^(3/2)` (`d` from the target to the source). Every
    /// solver of this crate (direct summation and every walk) evaluates it.
    Plummer(T),
    /// The pair distance clamped below at `2 h`: `a = G m d / max(r^2, (2h)^2)^(3/2)`,
    /// `phi = -G m / max(r, 2h)`. This is Ryoanji's particle-particle kernel (every body
    /// with smoothing length `h`), offered by direct summation only, so that the peer's
    /// accelerations can be checked against a reference of its own force law.
    Clamped(T),
}

impl<T: Real> Softening<T> {
    /// The softening length (`eps` or `h`).
    pub fn length(self) -> T {
        match self {
            Self::Plummer(l) | Self::Clamped(l) => l,
        }
    }

    /// Checks the length: finite and not negative (0 is unsoftened gravity).
    ///
    /// # Errors
    /// [`Error::NonFiniteValue`] for NaN or infinity, [`Error::InvalidArgument`] for a
    /// negative length.
    pub fn check(self) -> Result<()> {
        let l = self.length();
        if !l.finite() {
            return Err(Error::NonFiniteValue { what: "softening", index: 0, value: l.into() });
        }
        if l < T::zero() {
            return Err(Error::InvalidArgument {
                what: "softening",
                reason: format!("the softening length must not be negative, got {}", Into::<f64>::into(l)),
            });
        }
        Ok(())
    }

    /// The same softening in another precision.
    pub fn cast<U: Real>(self) -> Softening<U> {
        match self {
            Self::Plummer(l) => Softening::Plummer(<U as Real>::from_f64(l.into())),
            Self::Clamped(l) => Softening::Clamped(<U as Real>::from_f64(l.into())),
        }
    }
}

/// The force law: Newton's constant `g` and the softening.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gravity<T: Real> {
    /// Newton's constant (1 in N-body units, the default).
    pub g: T,
    /// The softening.
    pub softening: Softening<T>,
}

impl<T: Real> Gravity<T> {
    /// `G = 1` with Plummer softening `eps`.
    pub fn plummer(eps: T) -> Self {
        Self { g: T::one(), softening: Softening::Plummer(eps) }
    }

    /// Checks `g` (finite and positive) and the softening ([`Softening::check`]).
    ///
    /// # Errors
    /// [`Error::NonFiniteValue`] or [`Error::InvalidArgument`] naming the bad value.
    pub fn check(&self) -> Result<()> {
        if !self.g.finite() {
            return Err(Error::NonFiniteValue { what: "gravitational constant", index: 0, value: self.g.into() });
        }
        if self.g <= T::zero() {
            return Err(Error::InvalidArgument {
                what: "gravitational constant",
                reason: format!("must be positive, got {}", Into::<f64>::into(self.g)),
            });
        }
        self.softening.check()
    }

    /// The same law in another precision.
    pub fn cast<U: Real>(&self) -> Gravity<U> {
        Gravity { g: <U as Real>::from_f64(self.g.into()), softening: self.softening.cast() }
    }
}

/// Checks bodies for gravity: at least one, and every mass positive (the view already
/// guarantees equal lengths and finite values).
///
/// # Errors
/// [`Error::EmptyInput`] for no bodies; [`Error::InvalidArgument`] naming the first body
/// (lowest index) whose mass is zero or negative.
pub fn check_bodies<T: Real>(bodies: &ParticlesView<'_, T>) -> Result<()> {
    if bodies.is_empty() {
        return Err(Error::EmptyInput { what: "bodies", min: 1 });
    }
    let mass = bodies.mass();
    if let Some(i) = mass.par_iter().position_first(|&m| m <= T::zero()) {
        return Err(Error::InvalidArgument {
            what: "mass",
            reason: format!("body {i} has mass {}: gravity needs positive masses", Into::<f64>::into(mass[i])),
        });
    }
    Ok(())
}

/// Accelerations and potentials, one entry per target, in the targets' order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Forces<T> {
    /// x components of the accelerations.
    pub ax: Vec<T>,
    /// y components.
    pub ay: Vec<T>,
    /// z components.
    pub az: Vec<T>,
    /// Potentials (the self term excluded).
    pub pot: Vec<T>,
}

impl<T: Real> Forces<T> {
    /// `n` zero entries.
    pub fn zeros(n: usize) -> Self {
        Self { ax: vec![T::zero(); n], ay: vec![T::zero(); n], az: vec![T::zero(); n], pot: vec![T::zero(); n] }
    }

    /// Targets.
    pub fn len(&self) -> usize {
        self.ax.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ax.is_empty()
    }

    /// The acceleration of target `i`.
    pub fn acc(&self, i: usize) -> [T; 3] {
        [self.ax[i], self.ay[i], self.az[i]]
    }

    /// Every entry widened to f64.
    pub fn to_f64(&self) -> Forces<f64> {
        let w = |v: &[T]| v.iter().map(|&x| x.into()).collect();
        Forces { ax: w(&self.ax), ay: w(&self.ay), az: w(&self.az), pot: w(&self.pot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masses_must_be_positive() {
        let v = [0.0f32; 3];
        let bodies = ParticlesView::new(&v, &v, &v, &[1.0, 0.0, 2.0]).unwrap();
        let e = check_bodies(&bodies).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { what: "mass", ref reason } if reason.contains("body 1")), "{e}");
        let bodies = ParticlesView::new(&v, &v, &v, &[1.0, 1.0, -2.0]).unwrap();
        assert!(check_bodies(&bodies).is_err());
        let bodies = ParticlesView::new(&v, &v, &v, &[1.0, 1.0, 2.0]).unwrap();
        assert!(check_bodies(&bodies).is_ok());
        let none = ParticlesView::<f32>::new(&[], &[], &[], &[]).unwrap();
        assert!(matches!(check_bodies(&none), Err(Error::EmptyInput { .. })));
    }

    #[test]
    fn softening_and_g_are_checked() {
        assert!(Softening::Plummer(0.0f64).check().is_ok());
        assert!(matches!(Softening::Plummer(-1.0f64).check(), Err(Error::InvalidArgument { .. })));
        assert!(matches!(Softening::Clamped(f64::NAN).check(), Err(Error::NonFiniteValue { .. })));
        assert!(Gravity::plummer(0.01f32).check().is_ok());
        assert!(Gravity { g: 0.0f32, softening: Softening::Plummer(0.1) }.check().is_err());
        assert!(Gravity { g: f32::INFINITY, softening: Softening::Plummer(0.1) }.check().is_err());
    }
}
