//! Hilbert keys, 3D and 2D, as a finite-state machine over per-level Morton digits.
//!
//! # Construction
//!
//! The 3D curve is Cornerstone's (after Miki & Umemura, GOTHIC, New Astronomy 2017), the
//! 2D curve is Warren's (Hacker's Delight, 2nd ed., section 16-2). Both are usually
//! written as a loop that, per level, reads one bit of each coordinate, appends a digit,
//! and then reflects and permutes the remaining coordinate bits. The reflections and
//! permutations form a finite group, so the loop is a finite-state machine: the state
//! is the orientation (axis permutation and reflections) of the current cell, and one
//! table lookup per level maps `(state, Morton digit)` to `(next state, Hilbert digit)`.
//! 24 orientations are reachable in 3D and 4 in 2D. The tables below are generated from
//! the reflect-and-permute rule by the unit test `tables_follow_the_reflect_and_permute_rule`
//! (which also holds the rule itself); they are the whole curve.
//!
//! Why tables: one dependent byte load per level, no branches, and the same per-level
//! logic in CUDA C and WGSL with 32-bit integer operations only (`& !7`, `|`, a load,
//! `& 7`); the 64-bit key is assembled from 3-bit digits.
//!
//! # Table layout
//!
//! An entry is `next_state << 3 | hilbert_digit` in 3D (written in octal below, so the
//! last octal digit is the key digit and the others the next state) and
//! `next_state << 2 | hilbert_digit` in 2D. The table is indexed by
//! `state << 3 | morton_digit` (`state << 2` in 2D); as the state sits in the upper bits
//! of the previous entry, the index is `(previous_entry & !7) | morton_digit` (`& !3` in
//! 2D), starting from entry 0 (state 0). The Morton digit of level `l` is
//! `((x >> l) & 1) << 2 | ((y >> l) & 1) << 1 | ((z >> l) & 1)` (2D: `x` bit, then `y`
//! bit). The decode tables map `state << 3 | hilbert_digit` to
//! `next_state << 3 | morton_digit` the same way.
//!
//! Properties the tests prove: consecutive keys decode to face neighbours (L1 distance
//! 1), at every level and across every cell boundary; every level-`l` cell is one
//! contiguous key interval; a key of fewer levels is a prefix of a key of more levels.

use super::{SfcKey, validate};
use crate::error::Result;

/// The curve name of 3D Hilbert keys in errors.
pub const NAME_3D: &str = "3D Hilbert";
/// The curve name of 2D Hilbert keys in errors.
pub const NAME_2D: &str = "2D Hilbert";

/// Deepest 3D level that fits a `u64` (63 key bits).
const MAX_LEVELS_3D: u32 = 21;
/// Deepest 2D level that fits a `u64` (64 key bits).
const MAX_LEVELS_2D: u32 = 32;

/// Number of 3D orientations (states) reachable from the identity.
pub const STATES_3D: usize = 24;
/// Number of 2D orientations (states) reachable from the identity.
pub const STATES_2D: usize = 4;

/// 3D encoding: `ENCODE_3D[state << 3 | morton_digit] = next_state << 3 | hilbert_digit`.
pub const ENCODE_3D: [u8; 8 * STATES_3D] = [
    0o010, 0o021, 0o033, 0o022, 0o047, 0o056, 0o034, 0o055, // state 0
    0o000, 0o107, 0o073, 0o074, 0o061, 0o116, 0o062, 0o115, // state 1
    0o120, 0o143, 0o157, 0o144, 0o131, 0o132, 0o166, 0o165, // state 2
    0o202, 0o003, 0o201, 0o170, 0o145, 0o004, 0o146, 0o077, // state 3
    0o226, 0o211, 0o225, 0o212, 0o007, 0o100, 0o174, 0o173, // state 4
    0o246, 0o245, 0o231, 0o232, 0o127, 0o204, 0o150, 0o203, // state 5
    0o130, 0o121, 0o167, 0o156, 0o213, 0o122, 0o214, 0o155, // state 6
    0o222, 0o215, 0o221, 0o216, 0o013, 0o014, 0o250, 0o037, // state 7
    0o206, 0o017, 0o205, 0o254, 0o141, 0o040, 0o142, 0o253, // state 8
    0o276, 0o137, 0o261, 0o160, 0o275, 0o224, 0o262, 0o223, // state 9
    0o020, 0o263, 0o011, 0o012, 0o057, 0o264, 0o046, 0o045, // state 10
    0o060, 0o117, 0o001, 0o106, 0o233, 0o234, 0o002, 0o105, // state 11
    0o242, 0o241, 0o235, 0o236, 0o023, 0o270, 0o024, 0o267, // state 12
    0o176, 0o175, 0o027, 0o274, 0o071, 0o072, 0o050, 0o273, // state 13
    0o256, 0o031, 0o067, 0o110, 0o255, 0o032, 0o244, 0o243, // state 14
    0o044, 0o043, 0o257, 0o030, 0o065, 0o112, 0o066, 0o111, // state 15
    0o054, 0o277, 0o053, 0o260, 0o135, 0o136, 0o162, 0o161, // state 16
    0o272, 0o063, 0o265, 0o064, 0o271, 0o240, 0o266, 0o237, // state 17
    0o114, 0o125, 0o113, 0o152, 0o247, 0o126, 0o230, 0o151, // state 18
    0o252, 0o035, 0o133, 0o134, 0o251, 0o036, 0o220, 0o217, // state 19
    0o164, 0o163, 0o005, 0o102, 0o227, 0o210, 0o006, 0o101, // state 20
    0o104, 0o025, 0o177, 0o026, 0o103, 0o052, 0o070, 0o051, // state 21
    0o172, 0o171, 0o123, 0o200, 0o075, 0o076, 0o124, 0o147, // state 22
    0o154, 0o207, 0o015, 0o016, 0o153, 0o140, 0o042, 0o041, // state 23
];

/// 3D decoding: `DECODE_3D[state << 3 | hilbert_digit] = next_state << 3 | morton_digit`.
pub const DECODE_3D: [u8; 8 * STATES_3D] = [
    0o010, 0o021, 0o023, 0o032, 0o036, 0o057, 0o055, 0o044, // state 0
    0o000, 0o064, 0o066, 0o072, 0o073, 0o117, 0o115, 0o101, // state 1
    0o120, 0o134, 0o135, 0o141, 0o143, 0o167, 0o166, 0o152, // state 2
    0o173, 0o202, 0o200, 0o001, 0o005, 0o144, 0o146, 0o077, // state 3
    0o105, 0o211, 0o213, 0o177, 0o176, 0o222, 0o220, 0o004, // state 4
    0o156, 0o232, 0o233, 0o207, 0o205, 0o241, 0o240, 0o124, // state 5
    0o130, 0o121, 0o125, 0o214, 0o216, 0o157, 0o153, 0o162, // state 6
    0o256, 0o222, 0o220, 0o014, 0o015, 0o211, 0o213, 0o037, // state 7
    0o045, 0o144, 0o146, 0o257, 0o253, 0o202, 0o200, 0o011, // state 8
    0o163, 0o262, 0o266, 0o227, 0o225, 0o274, 0o270, 0o131, // state 9
    0o020, 0o012, 0o013, 0o261, 0o265, 0o047, 0o046, 0o054, // state 10
    0o060, 0o002, 0o006, 0o234, 0o235, 0o107, 0o103, 0o111, // state 11
    0o275, 0o241, 0o240, 0o024, 0o026, 0o232, 0o233, 0o267, // state 12
    0o056, 0o074, 0o075, 0o277, 0o273, 0o171, 0o170, 0o022, // state 13
    0o113, 0o031, 0o035, 0o247, 0o246, 0o254, 0o250, 0o062, // state 14
    0o033, 0o117, 0o115, 0o041, 0o040, 0o064, 0o066, 0o252, // state 15
    0o263, 0o167, 0o166, 0o052, 0o050, 0o134, 0o135, 0o271, // state 16
    0o245, 0o274, 0o270, 0o061, 0o063, 0o262, 0o266, 0o237, // state 17
    0o236, 0o157, 0o153, 0o112, 0o110, 0o121, 0o125, 0o244, // state 18
    0o226, 0o254, 0o250, 0o132, 0o133, 0o031, 0o035, 0o217, // state 19
    0o215, 0o107, 0o103, 0o161, 0o160, 0o002, 0o006, 0o224, // state 20
    0o076, 0o057, 0o055, 0o104, 0o100, 0o021, 0o023, 0o172, // state 21
    0o203, 0o171, 0o170, 0o122, 0o126, 0o074, 0o075, 0o147, // state 22
    0o145, 0o047, 0o046, 0o154, 0o150, 0o012, 0o013, 0o201, // state 23
];

/// 2D encoding: `ENCODE_2D[state << 2 | morton_digit] = next_state << 2 | hilbert_digit`,
/// written as `0b<next state>_<digit>`.
pub const ENCODE_2D: [u8; 4 * STATES_2D] = [
    0b01_00, 0b00_01, 0b10_11, 0b00_10, // state 0
    0b00_00, 0b11_11, 0b01_01, 0b01_10, // state 1
    0b10_10, 0b10_01, 0b00_11, 0b11_00, // state 2
    0b11_10, 0b01_11, 0b11_01, 0b10_00, // state 3
];

/// 2D decoding: `DECODE_2D[state << 2 | hilbert_digit] = next_state << 2 | morton_digit`.
pub const DECODE_2D: [u8; 4 * STATES_2D] = [
    0b01_00, 0b00_01, 0b00_11, 0b10_10, // state 0
    0b00_00, 0b01_10, 0b01_11, 0b11_01, // state 1
    0b11_11, 0b10_01, 0b10_00, 0b00_10, // state 2
    0b10_11, 0b11_10, 0b11_00, 0b01_01, // state 3
];

/// [`ENCODE_3D`] padded to 256 entries, so that a `u8` index needs no bounds check.
static ENCODE_3D_PADDED: [u8; 256] = pad_256(&ENCODE_3D);
/// [`DECODE_3D`] padded to 256 entries.
static DECODE_3D_PADDED: [u8; 256] = pad_256(&DECODE_3D);
/// [`ENCODE_3D`] composed with itself: two levels per lookup (see [`pairs`]).
static ENCODE_3D_PAIRS: [u16; 2048] = pairs(&ENCODE_3D);
/// [`DECODE_3D`] composed with itself.
static DECODE_3D_PAIRS: [u16; 2048] = pairs(&DECODE_3D);

const fn pad_256(table: &[u8; 8 * STATES_3D]) -> [u8; 256] {
    let mut out = [0u8; 256];
    let mut i = 0;
    while i < table.len() {
        out[i] = table[i];
        i += 1;
    }
    out
}

/// Two steps of a per-level table as one: `pairs[state << 6 | d1 << 3 | d0] =
/// next_state << 6 | out1 << 3 | out0`, for the digit `d1` of a level and `d0` of the
/// level below. Built at compile time from the per-level table, so it is the same curve
/// by construction; it halves the chain of dependent loads on the CPU (21 levels take
/// 11 lookups instead of 21). Padded to 2048 entries so a masked index needs no bounds
/// check. GPU kernels may use either form.
const fn pairs(table: &[u8; 8 * STATES_3D]) -> [u16; 2048] {
    let mut out = [0u16; 2048];
    let mut state = 0;
    while state < STATES_3D {
        let mut digits = 0;
        while digits < 64 {
            let first = table[(state << 3) | (digits >> 3)] as usize;
            let second = table[(first & !7) | (digits & 7)] as usize;
            out[(state << 6) | digits] = (((second >> 3) << 6) | ((first & 7) << 3) | (second & 7)) as u16;
            digits += 1;
        }
        state += 1;
    }
    out
}

/// Runs a 3D digit table over the `levels` octal digits of `key`, coarsest first: one
/// single step when `levels` is odd, then two levels per lookup.
#[inline]
fn run_3d(single: &[u8; 256], pairs: &[u16; 2048], key: u64, levels: u32) -> u64 {
    let mut l = levels.min(MAX_LEVELS_3D);
    let mut out = 0u64;
    let mut state = 0u32;
    if l % 2 == 1 {
        l -= 1;
        let digit = ((key >> (3 * l)) & 7) as u32;
        let entry = u32::from(single[((state << 3) | digit) as u8 as usize]);
        out = u64::from(entry & 7);
        state = entry >> 3;
    }
    while l > 0 {
        l -= 2;
        let digits = ((key >> (3 * l)) & 63) as u32;
        let entry = u32::from(pairs[(((state << 6) | digits) & 2047) as usize]);
        out = (out << 6) | u64::from(entry & 63);
        state = entry >> 6;
    }
    out
}

/// The per-level form of [`run_3d`], as GPU kernels write it (kept as the reference
/// the paired form is tested against).
#[cfg(test)]
fn run_3d_per_level(table: &[u8; 256], key: u64, levels: u32) -> u64 {
    let mut out = 0u64;
    let mut entry = 0u32;
    let mut l = levels.min(MAX_LEVELS_3D);
    while l > 0 {
        l -= 1;
        let digit = ((key >> (3 * l)) & 7) as u32;
        entry = u32::from(table[((entry & !7) | digit) as u8 as usize]);
        out = (out << 3) | u64::from(entry & 7);
    }
    out
}

/// Runs a 2D digit table over the `levels` base-4 digits of `key`, coarsest first.
#[inline]
fn run_2d(table: &[u8; 4 * STATES_2D], key: u64, levels: u32) -> u64 {
    let mut out = 0u64;
    let mut entry = 0u32;
    let mut l = levels.min(MAX_LEVELS_2D);
    while l > 0 {
        l -= 1;
        let digit = ((key >> (2 * l)) & 3) as u32;
        entry = u32::from(table[(((entry & !3) | digit) & 15) as usize]);
        out = (out << 2) | u64::from(entry & 3);
    }
    out
}

/// Converts a 3D Morton key of `levels` levels (capped at 21) to the Hilbert key of the
/// same cell. Key bits at and above `3 * levels` are ignored.
#[inline]
pub fn morton_to_hilbert_3d(morton: u64, levels: u32) -> u64 {
    run_3d(&ENCODE_3D_PADDED, &ENCODE_3D_PAIRS, morton, levels)
}

/// Converts a 3D Hilbert key of `levels` levels (capped at 21) to the Morton key of the
/// same cell: the inverse of [`morton_to_hilbert_3d`].
#[inline]
pub fn hilbert_to_morton_3d(hilbert: u64, levels: u32) -> u64 {
    run_3d(&DECODE_3D_PADDED, &DECODE_3D_PAIRS, hilbert, levels)
}

/// Converts a 2D Morton key of `levels` levels (capped at 32) to the Hilbert key of the
/// same cell. Key bits at and above `2 * levels` are ignored.
#[inline]
pub fn morton_to_hilbert_2d(morton: u64, levels: u32) -> u64 {
    run_2d(&ENCODE_2D, morton, levels)
}

/// Converts a 2D Hilbert key of `levels` levels (capped at 32) to the Morton key of the
/// same cell: the inverse of [`morton_to_hilbert_2d`].
#[inline]
pub fn hilbert_to_morton_2d(hilbert: u64, levels: u32) -> u64 {
    run_2d(&DECODE_2D, hilbert, levels)
}

/// The 3D Hilbert key of `levels` levels (capped at 21); coordinate bits at and above
/// `levels` are ignored.
#[inline]
pub fn encode_3d_levels(x: u32, y: u32, z: u32, levels: u32) -> u64 {
    morton_to_hilbert_3d(super::morton::encode_3d_levels(x, y, z, levels), levels)
}

/// The coordinates `[x, y, z]` of a 3D Hilbert key of `levels` levels (capped at 21);
/// key bits at and above `3 * levels` are ignored.
#[inline]
pub fn decode_3d_levels(key: u64, levels: u32) -> [u32; 3] {
    super::morton::decode_3d_levels(hilbert_to_morton_3d(key, levels), levels)
}

/// The 2D Hilbert key of `levels` levels (capped at 32); coordinate bits at and above
/// `levels` are ignored.
#[inline]
pub fn encode_2d_levels(x: u32, y: u32, levels: u32) -> u64 {
    morton_to_hilbert_2d(super::morton::encode_2d_levels(x, y, levels), levels)
}

/// The coordinates `[x, y]` of a 2D Hilbert key of `levels` levels (capped at 32); key
/// bits at and above `2 * levels` are ignored.
#[inline]
pub fn decode_2d_levels(key: u64, levels: u32) -> [u32; 2] {
    super::morton::decode_2d_levels(hilbert_to_morton_2d(key, levels), levels)
}

/// The 3D Hilbert key of integer coordinates in `0..2^K::LEVELS_3D`.
///
/// ```
/// use orrery_core::sfc::hilbert;
/// // The first cells of the curve: (0,0,0), (0,0,1), (0,1,1), (0,1,0), ...
/// assert_eq!(hilbert::encode_3d::<u64>(0, 0, 0)?, 0);
/// assert_eq!(hilbert::decode_3d::<u64>(1)?, [0, 0, 1]);
/// assert_eq!(hilbert::decode_3d::<u64>(2)?, [0, 1, 1]);
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::CoordinateOverflow`] for the first coordinate `>= 2^K::LEVELS_3D`.
pub fn encode_3d<K: SfcKey>(x: u32, y: u32, z: u32) -> Result<K> {
    validate::coords(&[x.into(), y.into(), z.into()], K::LEVELS_3D, K::BITS, NAME_3D)?;
    Ok(encode_3d_unchecked(x, y, z))
}

/// The 3D Hilbert key of integer coordinates; bits at and above `K::LEVELS_3D` are
/// ignored.
#[inline]
pub fn encode_3d_unchecked<K: SfcKey>(x: u32, y: u32, z: u32) -> K {
    K::from_u64(encode_3d_levels(x, y, z, K::LEVELS_3D))
}

/// The coordinates `[x, y, z]` of a 3D Hilbert key.
///
/// # Errors
/// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (3 * K::LEVELS_3D)`.
pub fn decode_3d<K: SfcKey>(key: K) -> Result<[u32; 3]> {
    validate::key(key.to_u64(), 3 * K::LEVELS_3D, K::BITS, NAME_3D)?;
    Ok(decode_3d_unchecked(key))
}

/// The coordinates of a 3D Hilbert key; bits at and above `3 * K::LEVELS_3D` are
/// ignored.
#[inline]
pub fn decode_3d_unchecked<K: SfcKey>(key: K) -> [u32; 3] {
    decode_3d_levels(key.to_u64(), K::LEVELS_3D)
}

/// The 2D Hilbert key of integer coordinates in `0..2^K::LEVELS_2D`.
///
/// # Errors
/// [`crate::Error::CoordinateOverflow`] for the first coordinate `>= 2^K::LEVELS_2D`.
pub fn encode_2d<K: SfcKey>(x: u32, y: u32) -> Result<K> {
    validate::coords(&[x.into(), y.into()], K::LEVELS_2D, K::BITS, NAME_2D)?;
    Ok(encode_2d_unchecked(x, y))
}

/// The 2D Hilbert key of integer coordinates; bits at and above `K::LEVELS_2D` are
/// ignored.
#[inline]
pub fn encode_2d_unchecked<K: SfcKey>(x: u32, y: u32) -> K {
    K::from_u64(encode_2d_levels(x, y, K::LEVELS_2D))
}

/// The coordinates `[x, y]` of a 2D Hilbert key.
///
/// # Errors
/// [`crate::Error::KeyOutOfRange`] when `key >= 1 << (2 * K::LEVELS_2D)`.
pub fn decode_2d<K: SfcKey>(key: K) -> Result<[u32; 2]> {
    validate::key(key.to_u64(), 2 * K::LEVELS_2D, K::BITS, NAME_2D)?;
    Ok(decode_2d_unchecked(key))
}

/// The coordinates of a 2D Hilbert key; bits at and above `2 * K::LEVELS_2D` are
/// ignored.
#[inline]
pub fn decode_2d_unchecked<K: SfcKey>(key: K) -> [u32; 2] {
    decode_2d_levels(key.to_u64(), K::LEVELS_2D)
}

#[cfg(test)]
mod tests {
    //! The tables against the rule they were generated from, and small exhaustive
    //! checks; the property tests are in `tests/core/sfc_hilbert.rs`.

    use super::*;

    /// An orientation: local coordinate `i` is original coordinate `perm[i]`, reflected
    /// (all bits complemented) when `flip[i]`.
    #[derive(Clone, Copy, PartialEq, Eq)]
    struct Orientation<const D: usize> {
        perm: [usize; D],
        flip: [bool; D],
    }

    /// The per-level reflect-and-permute rule of the 3D curve for local octant bits
    /// `(x, y, z)`: which local axes are reflected, then which local axis each new
    /// local axis is taken from.
    fn rule_3d(o: u32) -> ([bool; 3], [usize; 3]) {
        let (x, y, z) = ((o >> 2) & 1 == 1, (o >> 1) & 1 == 1, o & 1 == 1);
        let flip = [x && (!y || z), (x && z) || (y && !z), (x || y) && !z];
        let perm = if z {
            [1, 2, 0] // cyclic rotation: x <- y, y <- z, z <- x
        } else if !y {
            [2, 1, 0] // swap x and z
        } else {
            [0, 1, 2]
        };
        (flip, perm)
    }

    /// Hilbert digit of the local octant (the traversal order of the eight children).
    const OCTANT_TO_DIGIT_3D: [u32; 8] = [0, 1, 3, 2, 7, 6, 4, 5];

    /// Warren's 2D rule: when the y bit is 0, swap x and y and, if the x bit is 1,
    /// reflect both.
    fn rule_2d(o: u32) -> ([bool; 2], [usize; 2]) {
        let (x, y) = ((o >> 1) & 1 == 1, o & 1 == 1);
        if y { ([false, false], [0, 1]) } else { ([x, x], [1, 0]) }
    }

    fn digit_2d(o: u32) -> u32 {
        let (x, y) = ((o >> 1) & 1, o & 1);
        2 * x + (x ^ y)
    }

    fn then<const D: usize>(s: Orientation<D>, (f, q): ([bool; D], [usize; D])) -> Orientation<D> {
        Orientation {
            perm: std::array::from_fn(|i| s.perm[q[i]]),
            flip: std::array::from_fn(|i| s.flip[q[i]] ^ f[q[i]]),
        }
    }

    /// Local digit of an original digit under `s` (bit `D - 1 - axis` is the axis' bit).
    fn to_local<const D: usize>(s: Orientation<D>, m: u32) -> u32 {
        (0..D).fold(0, |o, i| {
            let bit = ((m >> (D - 1 - s.perm[i])) & 1) ^ u32::from(s.flip[i]);
            o | (bit << (D - 1 - i))
        })
    }

    fn to_original<const D: usize>(s: Orientation<D>, o: u32) -> u32 {
        (0..D).fold(0, |m, i| {
            let bit = ((o >> (D - 1 - i)) & 1) ^ u32::from(s.flip[i]);
            m | (bit << (D - 1 - s.perm[i]))
        })
    }

    /// Builds (encode, decode) tables by breadth-first search from the identity.
    fn build<const D: usize>(rule: fn(u32) -> ([bool; D], [usize; D]), digit: fn(u32) -> u32) -> (Vec<u8>, Vec<u8>) {
        let n = 1u32 << D;
        let mut states = vec![Orientation { perm: std::array::from_fn(|i| i), flip: [false; D] }];
        let (mut enc, mut dec) = (Vec::new(), Vec::new());
        let index_of = |states: &mut Vec<Orientation<D>>, s: Orientation<D>| {
            states.iter().position(|&t| t == s).unwrap_or_else(|| {
                states.push(s);
                states.len() - 1
            }) as u8
        };
        let mut i = 0;
        while i < states.len() {
            let s = states[i];
            // New states are numbered in the order of the local octant that leads to them.
            for o in 0..n {
                index_of(&mut states, then(s, rule(o)));
            }
            for m in 0..n {
                let o = to_local(s, m);
                let next = index_of(&mut states, then(s, rule(o)));
                enc.push((next << D) | digit(o) as u8);
            }
            for h in 0..n {
                let o = (0..n).find(|&o| digit(o) == h).unwrap();
                let next = index_of(&mut states, then(s, rule(o)));
                dec.push((next << D) | to_original(s, o) as u8);
            }
            i += 1;
        }
        (enc, dec)
    }

    #[test]
    fn tables_follow_the_reflect_and_permute_rule() {
        let (enc, dec) = build::<3>(rule_3d, |o| OCTANT_TO_DIGIT_3D[o as usize]);
        assert_eq!(enc, ENCODE_3D);
        assert_eq!(dec, DECODE_3D);
        let (enc, dec) = build::<2>(rule_2d, digit_2d);
        assert_eq!(enc, ENCODE_2D);
        assert_eq!(dec, DECODE_2D);
    }

    /// The curve in its textbook form: per level, read the octant, append its digit,
    /// reflect and permute the coordinates.
    fn reference_3d(mut p: [u32; 3], levels: u32) -> u64 {
        let mut key = 0;
        for l in (0..levels).rev() {
            let o = ((p[0] >> l) & 1) << 2 | ((p[1] >> l) & 1) << 1 | ((p[2] >> l) & 1);
            key = (key << 3) | u64::from(OCTANT_TO_DIGIT_3D[o as usize]);
            let (flip, perm) = rule_3d(o);
            let q: [u32; 3] = std::array::from_fn(|i| if flip[i] { !p[i] } else { p[i] });
            p = std::array::from_fn(|i| q[perm[i]]);
        }
        key
    }

    fn reference_2d(mut p: [u32; 2], levels: u32) -> u64 {
        let mut key = 0;
        for l in (0..levels).rev() {
            let o = ((p[0] >> l) & 1) << 1 | ((p[1] >> l) & 1);
            key = (key << 2) | u64::from(digit_2d(o));
            let (flip, perm) = rule_2d(o);
            let q: [u32; 2] = std::array::from_fn(|i| if flip[i] { !p[i] } else { p[i] });
            p = std::array::from_fn(|i| q[perm[i]]);
        }
        key
    }

    #[test]
    fn tables_agree_with_the_textbook_loop_exhaustively_at_four_levels() {
        for x in 0..16 {
            for y in 0..16 {
                for z in 0..16 {
                    assert_eq!(encode_3d_levels(x, y, z, 4), reference_3d([x, y, z], 4));
                }
                assert_eq!(encode_2d_levels(x, y, 4), reference_2d([x, y], 4));
            }
        }
    }

    #[test]
    fn tables_agree_with_the_textbook_loop_at_full_width() {
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let p = [(s >> 1) as u32 & 0x1f_ffff, (s >> 22) as u32 & 0x1f_ffff, (s >> 43) as u32 & 0x1f_ffff];
            assert_eq!(encode_3d_levels(p[0], p[1], p[2], 21), reference_3d(p, 21));
            let q = [s as u32 & 0x7fff_ffff, (s >> 32) as u32 & 0x7fff_ffff];
            assert_eq!(encode_2d_levels(q[0], q[1], 31), reference_2d(q, 31));
        }
    }

    #[test]
    fn paired_lookups_equal_per_level_lookups_at_every_depth() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..4000 {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            for levels in 0..=21 {
                let key = s >> 1;
                assert_eq!(morton_to_hilbert_3d(key, levels), run_3d_per_level(&ENCODE_3D_PADDED, key, levels));
                assert_eq!(hilbert_to_morton_3d(key, levels), run_3d_per_level(&DECODE_3D_PADDED, key, levels));
            }
        }
    }

    #[test]
    fn first_eight_keys_walk_the_unit_cube() {
        let walk: Vec<[u32; 3]> = (0..8).map(|k| decode_3d_levels(k, 1)).collect();
        assert_eq!(walk, [[0, 0, 0], [0, 0, 1], [0, 1, 1], [0, 1, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1], [1, 0, 0]]);
        let walk: Vec<[u32; 2]> = (0..4).map(|k| decode_2d_levels(k, 1)).collect();
        assert_eq!(walk, [[0, 0], [0, 1], [1, 1], [1, 0]]);
    }

    #[test]
    fn unchecked_forms_mask_out_of_contract_input() {
        assert_eq!(encode_3d_unchecked::<u32>(1 << 10, 1 << 11, 0), 0);
        assert_eq!(decode_3d_unchecked::<u32>(u32::MAX), decode_3d_unchecked::<u32>(u32::MAX >> 2));
        assert_eq!(decode_3d_unchecked::<u64>(u64::MAX), decode_3d_unchecked::<u64>(u64::MAX >> 1));
        assert_eq!(decode_2d_unchecked::<u64>(u64::MAX), decode_2d_unchecked::<u64>(u64::MAX >> 2));
    }
}
