//! Space-filling-curve keys. SKELETON: the agreed API; bodies are being written.

use crate::element::Real;
use crate::error::Result;
use crate::geometry::{Aabb, Vec3};

/// A key type: `u32` or `u64`.
pub trait SfcKey: Copy + Ord + Eq + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static {
    /// Width of the type in bits.
    const BITS: u32;
    /// Levels of a 3D key (10 for u32, 21 for u64).
    const LEVELS_3D: u32;
    /// Widening conversion.
    fn to_u64(self) -> u64;
    /// Narrowing conversion (the value must fit).
    fn from_u64(v: u64) -> Self;
}
impl SfcKey for u32 {
    const BITS: u32 = 32;
    const LEVELS_3D: u32 = 10;
    fn to_u64(self) -> u64 { self as u64 }
    fn from_u64(v: u64) -> Self { v as u32 }
}
impl SfcKey for u64 {
    const BITS: u32 = 64;
    const LEVELS_3D: u32 = 21;
    fn to_u64(self) -> u64 { self }
    fn from_u64(v: u64) -> Self { v }
}

/// Which curve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Curve {
    /// Morton (Z-order).
    Morton,
    /// Hilbert.
    Hilbert,
}

/// Maps positions in a box to 3D keys.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyMapper<T: Real, K: SfcKey> {
    bbox: Aabb<T>,
    curve: Curve,
    scale: [T; 3],
    _key: std::marker::PhantomData<K>,
}

impl<T: Real, K: SfcKey> KeyMapper<T, K> {
    /// A mapper for `bbox`.
    pub fn new(bbox: Aabb<T>, curve: Curve) -> Self {
        let _ = (bbox, curve);
        todo!()
    }
    /// The curve.
    pub fn curve(&self) -> Curve { self.curve }
    /// The box.
    pub fn bbox(&self) -> &Aabb<T> { &self.bbox }
    /// Per-axis scale.
    pub fn scale(&self) -> [T; 3] { self.scale }
    /// Key, clamped.
    pub fn key_clamped(&self, x: T, y: T, z: T) -> K { let _ = (x, y, z); todo!() }
    /// Key, checked.
    pub fn key(&self, p: Vec3<T>) -> Result<K> { let _ = p; todo!() }
}
