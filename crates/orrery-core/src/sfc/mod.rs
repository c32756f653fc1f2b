//! Space-filling-curve keys: Morton and Hilbert, 2D and 3D, 32- and 64-bit, the binary
//! longest-side key, and the key-range arithmetic of Cornerstone trees.
//!
//! # Shape of this module
//!
//! One file per concern, so that each can be read (and ported to a kernel) alone:
//!
//! | file           | what it holds                                                    |
//! |----------------|------------------------------------------------------------------|
//! | `mod.rs`       | [`SfcKey`], [`Curve`] (dispatch by curve), this documentation    |
//! | [`morton`]     | bit dilation by magic numbers; Morton encode and decode          |
//! | [`hilbert`]    | the per-level state tables; Hilbert encode and decode            |
//! | [`cell`]       | [`KeyLayout`]: cell sizes, starts, levels, digits of tree keys   |
//! | `mapping.rs`   | [`KeyMapper`], [`KeyMapper2D`]: positions in a box to keys       |
//! | [`binary`]     | [`BinaryLayout`]: one bit per level, longest side split first    |
//! | `validate.rs`  | the checks behind every `Result`-returning encoder and decoder   |
//!
//! Every encoder and decoder comes twice: a checked form returning [`crate::Result`]
//! for data from outside (coordinates that may not fit, keys that may be garbage), and
//! an `_unchecked` form for hot loops over validated data. The unchecked forms mask
//! their inputs, so input outside their contract gives a wrong key, never a panic or
//! undefined behaviour.
//!
//! # Key layout
//!
//! A key of `levels` levels and `d` bits per level holds one `d`-bit digit per level,
//! the coarsest level in the most significant digit. The key widths are chosen so that
//! the one-past-the-end key `1 << (d * levels)` still fits the type (Cornerstone trees
//! store it as the last element of the leaf array):
//!
//! | key   | 3D ([`SfcKey::LEVELS_3D`]) | 2D ([`SfcKey::LEVELS_2D`]) | binary ([`SfcKey::LEVELS_BINARY`]) |
//! |-------|---------------------------|---------------------------|------------------------------------|
//! | `u32` | 10 levels, 30 bits        | 15 levels, 30 bits        | 31 levels, 31 bits                 |
//! | `u64` | 21 levels, 63 bits        | 31 levels, 62 bits        | 63 levels, 63 bits                 |
//!
//! Integer coordinates of a `levels`-level key lie in `0..2^levels`. A coarser key is a
//! prefix of a finer one on every curve here: the 32-bit 3D key of `(x, y, z)` is the
//! 64-bit key of `(x << 11, y << 11, z << 11)` shifted right by 33, so each level-`l`
//! cell is the contiguous key interval [`KeyLayout::cell_start`] ..
//! `cell_start + cell_size(l)`.
//!
//! - **Morton** interleaves bits: in 3D, key bit `3l + 2` is bit `l` of x, `3l + 1` of y,
//!   `3l` of z (Cornerstone's convention); in 2D, key bit `2l + 1` is x's, `2l` is y's.
//! - **Hilbert** is Cornerstone's 3D curve (Miki & Umemura's GOTHIC construction) and
//!   Warren's 2D curve (Hacker's Delight), both written as a state machine over the
//!   per-level Morton digit; see [`hilbert`].
//! - **Binary** keys take one bit per level from the axis whose cell is currently the
//!   longest; see [`binary`].
//!
//! # Reproducing the keys on a GPU, bit for bit
//!
//! GPU kernels (`kernels/core/sfc.cu`, `shaders/core/sfc.wgsl`) must give the same
//! integers as [`KeyMapper::key_clamped`]. What they need:
//!
//! 1. **Quantisation**, per axis `a`, in the position type `T` (f32 or f64), exactly:
//!    `d = p[a] - min[a]` (one rounded subtraction), `f = floor(d * scale[a])` (one
//!    rounded multiplication, then floor). No fused multiply-add, no widening to f64
//!    for f32 data, no reciprocal: upload [`KeyMapper::scale`] as computed on the host
//!    (`scale[a] = T(2^levels) / extent[a]`, correctly rounded, `0` when the extent is
//!    `0`) together with `bbox().min()`. In CUDA write `__fmul_rn(__fsub_rn(p, lo), s)`
//!    (`__dmul_rn`/`__dsub_rn` for f64) so NVRTC cannot contract it; WGSL has no FMA
//!    contraction of a subtract followed by a multiply. `floor` is exact everywhere
//!    (the CPU truncates instead, after the clamp below, which gives the same integer).
//!    Do not compile with `--use_fast_math`: its flush-to-zero of subnormals (which
//!    WGSL also permits for f32) changes keys only for boxes whose extent is itself
//!    near the subnormal range (below about `1e-30` in f32), but that is a difference.
//! 2. **Clamping**: the coordinate is `0` when `!(f > 0)` (this also maps NaN to 0),
//!    `2^levels - 1` when `f >= T(2^levels)` (compared in `T`; powers of two are
//!    exact), and `f` converted to an integer otherwise.
//!    Clamp in floating point before the conversion: a float-to-integer conversion of
//!    an out-of-range value is not portable (WGSL clamps, C++ does not define it).
//!    For [`BinaryLayout`] the same rule applies per axis with `2^bits_per_axis[a]`.
//! 3. **Morton**: interleave as above. The host uses the 64-bit dilation of
//!    [`morton::spread_3d`]; any dilation gives the same bits. With 32-bit integer
//!    arithmetic only (WGSL), build the 63-bit key as two words.
//! 4. **Hilbert**: for `l = levels - 1` down to `0`, with `e = 0` initially:
//!    `m = ((x >> l) & 1) << 2 | ((y >> l) & 1) << 1 | ((z >> l) & 1)`,
//!    `e = ENCODE_3D[(e & ~7) | m]`, then append the digit `e & 7` to the key
//!    (`key = key << 3 | (e & 7)`). In 2D: `m = ((x >> l) & 1) << 1 | ((y >> l) & 1)`,
//!    `e = ENCODE_2D[(e & ~3) | m]`, `key = key << 2 | (e & 3)`. The tables
//!    [`hilbert::ENCODE_3D`] (192 bytes, 24 states) and [`hilbert::ENCODE_2D`]
//!    (16 bytes, 4 states) are the whole curve; copy them literally (as
//!    `__constant__`/shared memory in CUDA, a `const array<u32, 192>` in WGSL). Every
//!    per-level operation is a 32-bit integer operation; only the key needs 64 bits.
//!    WGSL has no `u64`: keep the key as two words and shift the pair,
//!    `hi = (hi << 3) | (lo >> 29); lo = (lo << 3) | (e & 7)`, and store it as
//!    `vec2<u32>(lo, hi)`. The 32-bit key is the same loop over `levels = 10`. (The CPU
//!    takes `m` from the Morton key, `(morton >> 3l) & 7`, which is the same digit.)
//!    Decoding runs [`hilbert::DECODE_3D`] the same way and yields Morton digits. The
//!    CPU composes each table with itself (two levels per 2048-entry `u16` lookup, built
//!    at compile time); that is an optimisation of the same state machine, not a
//!    different curve, and kernels may do the same.
//! 5. **Binary**: upload the per-level axis sequence ([`BinaryLayout::axes`]) or, per
//!    level, the axis and the coordinate bit it takes; integer coordinates reach 63
//!    bits, so they are 64-bit on the device (two words in WGSL); the clamp compares
//!    with `T(2^bits_per_axis[a])`, exact up to `2^63` in f32 and f64.
//! 6. **Precision**: with f32 positions, a resolution above 2^24 cells per axis (31-level
//!    2D keys, binary axes with more than 24 bits) is finer than the float spacing, so
//!    some integer coordinates are never hit and a point one ULP inside the upper face
//!    may land a few cells before the last one. The keys are still valid and the rule
//!    above still reproduces them exactly; only "one ULP inside is the last cell" needs
//!    cells wider than an ULP (always true for 3D keys: 21 bits <= 24).
//!
//! The CPU reference of each step is the `_unchecked` function of the same name here;
//! GPU equivalence tests compare against [`KeyMapper::key_clamped`].

pub mod binary;
pub mod cell;
pub mod hilbert;
mod mapping;
pub mod morton;
mod validate;

pub use binary::BinaryLayout;
pub use cell::KeyLayout;
pub use mapping::{KeyMapper, KeyMapper2D};

use crate::error::Result;

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A key type: `u32` or `u64` (sealed: kernels exist for exactly these two widths).
///
/// The level counts are the deepest levels whose one-past-the-end key still fits the
/// type; see the [module documentation](self) for the table.
pub trait SfcKey: sealed::Sealed + Copy + Ord + Eq + std::hash::Hash + std::fmt::Debug + Send + Sync + 'static {
    /// Width of the type in bits.
    const BITS: u32;
    /// Levels of a 3D key (10 for u32, 21 for u64), 3 bits per level.
    const LEVELS_3D: u32;
    /// Levels of a 2D key (15 for u32, 31 for u64), 2 bits per level.
    const LEVELS_2D: u32;
    /// Levels of a binary key (31 for u32, 63 for u64), 1 bit per level.
    const LEVELS_BINARY: u32;
    /// Widening conversion.
    fn to_u64(self) -> u64;
    /// Narrowing conversion (the value must fit; higher bits are dropped).
    fn from_u64(v: u64) -> Self;
}

impl SfcKey for u32 {
    const BITS: u32 = 32;
    const LEVELS_3D: u32 = 10;
    const LEVELS_2D: u32 = 15;
    const LEVELS_BINARY: u32 = 31;
    #[inline]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    #[inline]
    fn from_u64(v: u64) -> Self {
        v as u32
    }
}

impl SfcKey for u64 {
    const BITS: u32 = 64;
    const LEVELS_3D: u32 = 21;
    const LEVELS_2D: u32 = 31;
    const LEVELS_BINARY: u32 = 63;
    #[inline]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline]
    fn from_u64(v: u64) -> Self {
        v
    }
}

/// Which curve orders the cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Curve {
    /// Morton (Z-order): interleaved coordinate bits.
    Morton,
    /// Hilbert: continuous, consecutive keys are face neighbours.
    Hilbert,
}

impl Curve {
    /// The name used in errors for 3D keys ("3D Morton", "3D Hilbert").
    pub const fn name_3d(self) -> &'static str {
        match self {
            Curve::Morton => morton::NAME_3D,
            Curve::Hilbert => hilbert::NAME_3D,
        }
    }

    /// The name used in errors for 2D keys ("2D Morton", "2D Hilbert").
    pub const fn name_2d(self) -> &'static str {
        match self {
            Curve::Morton => morton::NAME_2D,
            Curve::Hilbert => hilbert::NAME_2D,
        }
    }

    /// The 3D key of integer coordinates in `0..2^K::LEVELS_3D`.
    ///
    /// # Errors
    /// [`crate::Error::CoordinateOverflow`] for the first coordinate (x, y, z) that is
    /// `>= 2^K::LEVELS_3D`.
    pub fn encode_3d<K: SfcKey>(self, x: u32, y: u32, z: u32) -> Result<K> {
        match self {
            Curve::Morton => morton::encode_3d(x, y, z),
            Curve::Hilbert => hilbert::encode_3d(x, y, z),
        }
    }

    /// The 3D key of integer coordinates, unchecked: coordinate bits at and above
    /// `K::LEVELS_3D` are ignored.
    #[inline]
    pub fn encode_3d_unchecked<K: SfcKey>(self, x: u32, y: u32, z: u32) -> K {
        match self {
            Curve::Morton => morton::encode_3d_unchecked(x, y, z),
            Curve::Hilbert => hilbert::encode_3d_unchecked(x, y, z),
        }
    }

    /// The integer coordinates `[x, y, z]` of a 3D key.
    ///
    /// # Errors
    /// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (3 * K::LEVELS_3D)`.
    pub fn decode_3d<K: SfcKey>(self, key: K) -> Result<[u32; 3]> {
        match self {
            Curve::Morton => morton::decode_3d(key),
            Curve::Hilbert => hilbert::decode_3d(key),
        }
    }

    /// The integer coordinates of a 3D key, unchecked: key bits at and above
    /// `3 * K::LEVELS_3D` are ignored.
    #[inline]
    pub fn decode_3d_unchecked<K: SfcKey>(self, key: K) -> [u32; 3] {
        match self {
            Curve::Morton => morton::decode_3d_unchecked(key),
            Curve::Hilbert => hilbert::decode_3d_unchecked(key),
        }
    }

    /// The 2D key of integer coordinates in `0..2^K::LEVELS_2D`.
    ///
    /// # Errors
    /// [`crate::Error::CoordinateOverflow`] for the first coordinate (x, y) that is
    /// `>= 2^K::LEVELS_2D`.
    pub fn encode_2d<K: SfcKey>(self, x: u32, y: u32) -> Result<K> {
        match self {
            Curve::Morton => morton::encode_2d(x, y),
            Curve::Hilbert => hilbert::encode_2d(x, y),
        }
    }

    /// The 2D key of integer coordinates, unchecked: coordinate bits at and above
    /// `K::LEVELS_2D` are ignored.
    #[inline]
    pub fn encode_2d_unchecked<K: SfcKey>(self, x: u32, y: u32) -> K {
        match self {
            Curve::Morton => morton::encode_2d_unchecked(x, y),
            Curve::Hilbert => hilbert::encode_2d_unchecked(x, y),
        }
    }

    /// The integer coordinates `[x, y]` of a 2D key.
    ///
    /// # Errors
    /// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (2 * K::LEVELS_2D)`.
    pub fn decode_2d<K: SfcKey>(self, key: K) -> Result<[u32; 2]> {
        match self {
            Curve::Morton => morton::decode_2d(key),
            Curve::Hilbert => hilbert::decode_2d(key),
        }
    }

    /// The integer coordinates of a 2D key, unchecked: key bits at and above
    /// `2 * K::LEVELS_2D` are ignored.
    #[inline]
    pub fn decode_2d_unchecked<K: SfcKey>(self, key: K) -> [u32; 2] {
        match self {
            Curve::Morton => morton::decode_2d_unchecked(key),
            Curve::Hilbert => hilbert::decode_2d_unchecked(key),
        }
    }

    /// The integer cube of the level-`level` octree cell that contains `key`: its
    /// lower corner and its side `2^(K::LEVELS_3D - level)`. The cell holds the keys
    /// `KeyLayout::octree::<K>().cell_start(key, level)` and the following
    /// `cell_size(level) - 1` keys, on either curve.
    ///
    /// # Errors
    /// [`crate::Error::LevelOutOfRange`] for `level > K::LEVELS_3D`,
    /// [`crate::Error::KeyOutOfRange`] as [`Curve::decode_3d`].
    pub fn cell_box_3d<K: SfcKey>(self, key: K, level: u32) -> Result<([u32; 3], u32)> {
        validate::level(level, K::LEVELS_3D, "a 3D key")?;
        let [x, y, z] = self.decode_3d(key)?;
        let side_log2 = K::LEVELS_3D - level;
        let mask = !((1u32 << side_log2) - 1);
        Ok(([x & mask, y & mask, z & mask], 1u32 << side_log2))
    }
}
