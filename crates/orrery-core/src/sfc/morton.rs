//! Morton (Z-order) keys: interleaved coordinate bits.
//!
//! The interleave is done by bit dilation with magic numbers (five or six shift-or-mask
//! steps instead of a loop over bits), in 64-bit arithmetic for both key widths: a
//! 32-bit key is the same interleave of fewer coordinate bits, so one implementation
//! serves both and the width only sets the level count. The `*_levels` functions take
//! the level count explicitly; the `K: SfcKey` functions fix it to the key's.
//!
//! Layout (Cornerstone's convention): in 3D, key bit `3l + 2` is bit `l` of x, `3l + 1`
//! of y and `3l` of z, so x is the most significant bit of every octal digit; in 2D,
//! key bit `2l + 1` is bit `l` of x and `2l` is bit `l` of y.

use super::{SfcKey, validate};
use crate::error::Result;

/// The curve name of 3D Morton keys in errors.
pub const NAME_3D: &str = "3D Morton";
/// The curve name of 2D Morton keys in errors.
pub const NAME_2D: &str = "2D Morton";

/// Deepest 3D level the 64-bit dilation supports (21 coordinate bits, 63 key bits).
const MAX_LEVELS_3D: u32 = 21;
/// Deepest 2D level the 64-bit dilation supports (32 coordinate bits, 64 key bits).
const MAX_LEVELS_2D: u32 = 32;

/// Spreads the low 21 bits of `v` so that bit `l` lands on bit `3l` (two zeros after
/// every bit). Higher bits of `v` are ignored.
#[inline]
pub const fn spread_3d(v: u32) -> u64 {
    let mut x = (v as u64) & 0x1f_ffff;
    x = (x | (x << 32)) & 0x001f_0000_0000_ffff;
    x = (x | (x << 16)) & 0x001f_0000_ff00_00ff;
    x = (x | (x << 8)) & 0x100f_00f0_0f00_f00f;
    x = (x | (x << 4)) & 0x10c3_0c30_c30c_30c3;
    x = (x | (x << 2)) & 0x1249_2492_4924_9249;
    x
}

/// Gathers bits `0, 3, 6, ..., 60` of `v` into the low 21 bits: the inverse of
/// [`spread_3d`]. Other bits of `v` are ignored.
#[inline]
pub const fn compact_3d(v: u64) -> u32 {
    let mut x = v & 0x1249_2492_4924_9249;
    x = (x ^ (x >> 2)) & 0x10c3_0c30_c30c_30c3;
    x = (x ^ (x >> 4)) & 0x100f_00f0_0f00_f00f;
    x = (x ^ (x >> 8)) & 0x001f_0000_ff00_00ff;
    x = (x ^ (x >> 16)) & 0x001f_0000_0000_ffff;
    x = (x ^ (x >> 32)) & 0x1f_ffff;
    x as u32
}

/// Spreads the 32 bits of `v` so that bit `l` lands on bit `2l` (one zero after every
/// bit).
#[inline]
pub const fn spread_2d(v: u32) -> u64 {
    let mut x = v as u64;
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    x = (x | (x << 1)) & 0x5555_5555_5555_5555;
    x
}

/// Gathers the even bits of `v` into 32 bits: the inverse of [`spread_2d`]. Odd bits
/// of `v` are ignored.
#[inline]
pub const fn compact_2d(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x ^ (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x ^ (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x ^ (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x ^ (x >> 8)) & 0x0000_ffff_0000_ffff;
    x = (x ^ (x >> 16)) & 0x0000_0000_ffff_ffff;
    x as u32
}

/// The low `levels` bits of a coordinate (`levels <= 32`).
#[inline]
const fn low_bits(v: u32, levels: u32) -> u32 {
    if levels >= 32 { v } else { v & ((1u32 << levels) - 1) }
}

/// The 3D Morton key of `levels` levels (`levels` is capped at 21): coordinate bits at
/// and above `levels` are ignored.
#[inline]
pub const fn encode_3d_levels(x: u32, y: u32, z: u32, levels: u32) -> u64 {
    let levels = if levels > MAX_LEVELS_3D { MAX_LEVELS_3D } else { levels };
    (spread_3d(low_bits(x, levels)) << 2) | (spread_3d(low_bits(y, levels)) << 1) | spread_3d(low_bits(z, levels))
}

/// The coordinates `[x, y, z]` of a 3D Morton key of `levels` levels (capped at 21):
/// key bits at and above `3 * levels` are ignored.
#[inline]
pub const fn decode_3d_levels(key: u64, levels: u32) -> [u32; 3] {
    let levels = if levels > MAX_LEVELS_3D { MAX_LEVELS_3D } else { levels };
    let key = key & ((1u64 << (3 * levels)) - 1);
    [compact_3d(key >> 2), compact_3d(key >> 1), compact_3d(key)]
}

/// The 2D Morton key of `levels` levels (`levels` is capped at 32): coordinate bits at
/// and above `levels` are ignored.
#[inline]
pub const fn encode_2d_levels(x: u32, y: u32, levels: u32) -> u64 {
    let levels = if levels > MAX_LEVELS_2D { MAX_LEVELS_2D } else { levels };
    (spread_2d(low_bits(x, levels)) << 1) | spread_2d(low_bits(y, levels))
}

/// The coordinates `[x, y]` of a 2D Morton key of `levels` levels (capped at 32): key
/// bits at and above `2 * levels` are ignored.
#[inline]
pub const fn decode_2d_levels(key: u64, levels: u32) -> [u32; 2] {
    let levels = if levels > MAX_LEVELS_2D { MAX_LEVELS_2D } else { levels };
    let key = if levels >= 32 { key } else { key & ((1u64 << (2 * levels)) - 1) };
    [compact_2d(key >> 1), compact_2d(key)]
}

/// The 3D Morton key of integer coordinates in `0..2^K::LEVELS_3D`.
///
/// ```
/// use orrery_core::sfc::morton;
/// // x is the most significant bit of each octal digit.
/// assert_eq!(morton::encode_3d::<u32>(1, 0, 0)?, 0b100);
/// assert_eq!(morton::encode_3d::<u64>(0, 3, 1)?, 0b010_011); // digits (x y z): 010, 011
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::CoordinateOverflow`] for the first coordinate `>= 2^K::LEVELS_3D`.
pub fn encode_3d<K: SfcKey>(x: u32, y: u32, z: u32) -> Result<K> {
    validate::coords(&[x.into(), y.into(), z.into()], K::LEVELS_3D, K::BITS, NAME_3D)?;
    Ok(encode_3d_unchecked(x, y, z))
}

/// The 3D Morton key of integer coordinates; bits at and above `K::LEVELS_3D` are
/// ignored.
#[inline]
pub fn encode_3d_unchecked<K: SfcKey>(x: u32, y: u32, z: u32) -> K {
    K::from_u64(encode_3d_levels(x, y, z, K::LEVELS_3D))
}

/// The coordinates `[x, y, z]` of a 3D Morton key.
///
/// # Errors
/// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (3 * K::LEVELS_3D)`.
pub fn decode_3d<K: SfcKey>(key: K) -> Result<[u32; 3]> {
    validate::key(key.to_u64(), 3 * K::LEVELS_3D, K::BITS, NAME_3D)?;
    Ok(decode_3d_unchecked(key))
}

/// The coordinates of a 3D Morton key; bits at and above `3 * K::LEVELS_3D` are
/// ignored.
#[inline]
pub fn decode_3d_unchecked<K: SfcKey>(key: K) -> [u32; 3] {
    decode_3d_levels(key.to_u64(), K::LEVELS_3D)
}

/// The 2D Morton key of integer coordinates in `0..2^K::LEVELS_2D`.
///
/// # Errors
/// [`crate::Error::CoordinateOverflow`] for the first coordinate `>= 2^K::LEVELS_2D`.
pub fn encode_2d<K: SfcKey>(x: u32, y: u32) -> Result<K> {
    validate::coords(&[x.into(), y.into()], K::LEVELS_2D, K::BITS, NAME_2D)?;
    Ok(encode_2d_unchecked(x, y))
}

/// The 2D Morton key of integer coordinates; bits at and above `K::LEVELS_2D` are
/// ignored.
#[inline]
pub fn encode_2d_unchecked<K: SfcKey>(x: u32, y: u32) -> K {
    K::from_u64(encode_2d_levels(x, y, K::LEVELS_2D))
}

/// The coordinates `[x, y]` of a 2D Morton key.
///
/// # Errors
/// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (2 * K::LEVELS_2D)`.
pub fn decode_2d<K: SfcKey>(key: K) -> Result<[u32; 2]> {
    validate::key(key.to_u64(), 2 * K::LEVELS_2D, K::BITS, NAME_2D)?;
    Ok(decode_2d_unchecked(key))
}

/// The coordinates of a 2D Morton key; bits at and above `2 * K::LEVELS_2D` are
/// ignored.
#[inline]
pub fn decode_2d_unchecked<K: SfcKey>(key: K) -> [u32; 2] {
    decode_2d_levels(key.to_u64(), K::LEVELS_2D)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_3d_places_bit_l_on_bit_3l() {
        for l in 0..21 {
            assert_eq!(spread_3d(1 << l), 1u64 << (3 * l));
            assert_eq!(compact_3d(1u64 << (3 * l)), 1 << l);
        }
        assert_eq!(spread_3d(u32::MAX), 0x1249_2492_4924_9249);
    }

    #[test]
    fn spread_2d_places_bit_l_on_bit_2l() {
        for l in 0..32 {
            assert_eq!(spread_2d(1 << l), 1u64 << (2 * l));
            assert_eq!(compact_2d(1u64 << (2 * l)), 1 << l);
        }
    }

    #[test]
    fn x_is_the_most_significant_bit_of_each_digit() {
        assert_eq!(encode_3d_levels(1, 0, 0, 21), 4);
        assert_eq!(encode_3d_levels(0, 1, 0, 21), 2);
        assert_eq!(encode_3d_levels(0, 0, 1, 21), 1);
        assert_eq!(encode_2d_levels(1, 0, 31), 2);
        assert_eq!(encode_2d_levels(0, 1, 31), 1);
    }

    #[test]
    fn unchecked_forms_mask_out_of_contract_input() {
        assert_eq!(encode_3d_unchecked::<u32>(1 << 10, 0, 0), 0);
        assert_eq!(decode_3d_unchecked::<u32>(1 << 30), [0, 0, 0]);
        assert_eq!(decode_3d_unchecked::<u64>(1 << 63), [0, 0, 0]);
        assert_eq!(encode_2d_unchecked::<u64>(1 << 31, 0), 0);
        assert_eq!(decode_2d_unchecked::<u64>(1 << 62), [0, 0]);
    }
}
