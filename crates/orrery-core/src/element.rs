//! Element types that executors store in buffers and kernels operate on.

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
pub trait Element: sealed::Sealed + bytemuck::Pod + Debug + PartialOrd + Send + Sync + 'static {
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
}

macro_rules! int_element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            const HIGHEST: Self = <$t>::MAX;
            #[inline]
            fn add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
        }
    };
}
macro_rules! float_element {
    ($t:ty, $d:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            const ZERO: Self = 0.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const HIGHEST: Self = <$t>::INFINITY;
            #[inline]
            fn add(self, other: Self) -> Self {
                self + other
            }
        }
    };
}
int_element!(u32, U32);
int_element!(i32, I32);
int_element!(u64, U64);
int_element!(i64, I64);
float_element!(f32, F32);
float_element!(f64, F64);

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
