//! What executors store in buffers, and the scalars kernels do arithmetic on.
//!
//! - [`Storage`]: any plain-old-data type (a multipole struct, a `[f32; 4]` body, an f64
//!   kept where the adapter has no f64 arithmetic). Memory, movement and launches take
//!   it. GPU executors store types whose size is a multiple of 4 bytes (WGSL sees 32-bit
//!   words); [`check_gpu_storage`] says so as an error.
//! - [`Element`]: the sealed set of six scalars for the operations that look at values
//!   (sort keys, reductions, searches, top-k).

use std::fmt::Debug;

/// The scalar type of a buffer, as kernels see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// `u32`
    U32,
    /// `i32`
    I32,
    /// `u64`
    U64,
    /// `i64`
    I64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl DType {
    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::U32 | DType::I32 | DType::F32 => 4,
            DType::U64 | DType::I64 | DType::F64 => 8,
        }
    }

    /// The C / WGSL-ish name of the type (`u32`, `f64`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::U32 => "u32",
            DType::I32 => "i32",
            DType::U64 => "u64",
            DType::I64 => "i64",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
}

/// A plain-old-data type that can live in an executor buffer: any `bytemuck::Pod`
/// (no padding, no pointers, every bit pattern valid). Implemented for every such type.
pub trait Storage: bytemuck::Pod + Send + Sync + 'static {}

impl<T: bytemuck::Pod + Send + Sync + 'static> Storage for T {}

/// Checks that `T` can live in a GPU buffer: its size is a positive multiple of 4 bytes
/// (kernels address memory in 32-bit words; WGSL has no narrower storage type).
///
/// # Errors
/// [`crate::Error::Unsupported`] naming the type and its size.
pub fn check_gpu_storage<T: Storage>(executor: &str) -> crate::Result<()> {
    let size = size_of::<T>();
    if size > 0 && size.is_multiple_of(4) {
        Ok(())
    } else {
        Err(crate::Error::Unsupported {
            executor: executor.to_owned(),
            operation: format!("buffers of {}", std::any::type_name::<T>()),
            reason: format!("GPU buffers hold types whose size is a positive multiple of 4 bytes; this one has {size}"),
        })
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A plain scalar that can live in an executor buffer.
///
/// Sealed: kernels exist for exactly these six types. Data movement (gather, scatter,
/// compaction, fill) only looks at the element size; arithmetic (reductions) looks at
/// [`Element::DTYPE`].
pub trait Element: sealed::Sealed + Storage + Debug + PartialOrd {
    /// The runtime tag of this type.
    const DTYPE: DType;
    /// Zero.
    const ZERO: Self;
    /// The smallest value (identity of max); `-inf` for floats.
    const LOWEST: Self;
    /// The largest value (identity of min); `+inf` for floats.
    const HIGHEST: Self;
    /// Wrapping (integers) or IEEE (floats) addition.
    #[must_use]
    fn add(self, other: Self) -> Self;
    /// An unsigned integer whose order is the type's total order: integers in their
    /// natural order; floats in IEEE 754 `totalOrder` (-NaN < -inf < ... < -0.0 < +0.0 <
    /// ... < +inf < +NaN). Searches and top-k compare by it, so every executor orders
    /// ties, signed zeros and NaNs the same way.
    fn order_key(self) -> u64;
}

macro_rules! int_element {
    ($t:ty, $u:ty, $flip:expr, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline]
            fn order_key(self) -> u64 {
                // Flipping the sign bit maps signed order onto unsigned order (`$flip` is
                // 0 for unsigned types).
                ((self as $u) ^ $flip) as u64
            }
        }
    };
}
macro_rules! float_element {
    ($t:ty, $bits:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline]
            fn order_key(self) -> u64 {
                let bits = self.to_bits();
                let flipped = if bits >> (<$bits>::BITS - 1) == 1 { !bits } else { bits | (1 << (<$bits>::BITS - 1)) };
                flipped as u64
            }
        }
    };
}
int_element!(u32, u32, 0, U32);
int_element!(i32, u32, 1 << 31, I32);
int_element!(u64, u64, 0, U64);
int_element!(i64, u64, 1 << 63, I64);
float_element!(f32, u32, F32);
float_element!(f64, u64, F64);

/// A floating-point coordinate type: `f32` or `f64`.
pub trait Real: Element + nalgebra::RealField + Copy + Into<f64> {
    /// Converts from f64, rounding to nearest.
    fn from_f64(v: f64) -> Self;
    /// Whether the value is neither NaN nor infinite.
    fn finite(self) -> bool;
}

impl Real for f32 {
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

impl Real for f64 {
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::Element;

    fn sorted_by_key<T: Element>(values: &[T]) -> bool {
        values.windows(2).all(|w| w[0].order_key() < w[1].order_key())
    }

    #[test]
    fn order_keys_follow_each_types_total_order() {
        assert!(sorted_by_key(&[i32::MIN, -5, -1, 0, 1, 7, i32::MAX]));
        assert!(sorted_by_key(&[i64::MIN, -5, 0, 3, i64::MAX]));
        assert!(sorted_by_key(&[0u32, 1, 9, u32::MAX]));
        assert!(sorted_by_key(&[0u64, 1, u64::MAX]));
        let nan = f32::from_bits(0x7fc0_0000);
        assert!(sorted_by_key(&[-nan, f32::NEG_INFINITY, -1.5, -0.0, 0.0, 1e-45, 2.0, f32::INFINITY, nan]));
        assert!(sorted_by_key(&[f64::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f64::INFINITY, f64::NAN]));
    }
}
