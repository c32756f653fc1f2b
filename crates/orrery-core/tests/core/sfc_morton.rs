//! Morton keys: bijection for both dimensions and both key widths, agreement with a
//! naive per-bit interleave, and every error path with its fields.

use orrery_core::sfc::{Curve, SfcKey, morton};
use orrery_core::{Axis, Error};
use proptest::prelude::*;

/// The definition: key bit `3l + 2` is x's bit `l`, `3l + 1` y's, `3l` z's.
fn naive_3d(x: u32, y: u32, z: u32, levels: u32) -> u64 {
    (0..levels).fold(0, |key, l| {
        let bit = |v: u32| u64::from((v >> l) & 1);
        key | (bit(x) << (3 * l + 2)) | (bit(y) << (3 * l + 1)) | (bit(z) << (3 * l))
    })
}

/// The definition: key bit `2l + 1` is x's bit `l`, `2l` y's.
fn naive_2d(x: u32, y: u32, levels: u32) -> u64 {
    (0..levels).fold(0, |key, l| {
        let bit = |v: u32| u64::from((v >> l) & 1);
        key | (bit(x) << (2 * l + 1)) | (bit(y) << (2 * l))
    })
}

const C3_64: u32 = 1 << u64::LEVELS_3D;
const C3_32: u32 = 1 << u32::LEVELS_3D;
const C2_64: u32 = 1 << u64::LEVELS_2D;
const C2_32: u32 = 1 << u32::LEVELS_2D;

proptest! {
    #[test]
    fn morton_3d_u64_is_the_naive_interleave_and_decodes_back(
        x in 0..C3_64, y in 0..C3_64, z in 0..C3_64,
    ) {
        let key: u64 = morton::encode_3d(x, y, z)?;
        prop_assert_eq!(key, naive_3d(x, y, z, 21));
        prop_assert_eq!(morton::decode_3d(key)?, [x, y, z]);
        prop_assert_eq!(Curve::Morton.encode_3d::<u64>(x, y, z)?, key);
    }

    #[test]
    fn morton_3d_u32_is_the_naive_interleave_and_decodes_back(
        x in 0..C3_32, y in 0..C3_32, z in 0..C3_32,
    ) {
        let key: u32 = morton::encode_3d(x, y, z)?;
        prop_assert_eq!(u64::from(key), naive_3d(x, y, z, 10));
        prop_assert_eq!(morton::decode_3d(key)?, [x, y, z]);
        prop_assert_eq!(Curve::Morton.decode_3d(key)?, [x, y, z]);
    }

    #[test]
    fn morton_2d_u64_is_the_naive_interleave_and_decodes_back(x in 0..C2_64, y in 0..C2_64) {
        let key: u64 = morton::encode_2d(x, y)?;
        prop_assert_eq!(key, naive_2d(x, y, 31));
        prop_assert_eq!(morton::decode_2d(key)?, [x, y]);
        prop_assert_eq!(Curve::Morton.encode_2d::<u64>(x, y)?, key);
    }

    #[test]
    fn morton_2d_u32_is_the_naive_interleave_and_decodes_back(x in 0..C2_32, y in 0..C2_32) {
        let key: u32 = morton::encode_2d(x, y)?;
        prop_assert_eq!(u64::from(key), naive_2d(x, y, 15));
        prop_assert_eq!(morton::decode_2d(key)?, [x, y]);
        prop_assert_eq!(Curve::Morton.decode_2d(key)?, [x, y]);
    }

    #[test]
    fn every_valid_morton_key_decodes_and_encodes_back(
        k64 in 0u64..1 << 63, k32 in 0u32..1 << 30, q64 in 0u64..1 << 62, q32 in 0u32..1 << 30,
    ) {
        let [x, y, z] = morton::decode_3d(k64)?;
        prop_assert_eq!(morton::encode_3d::<u64>(x, y, z)?, k64);
        let [x, y, z] = morton::decode_3d(k32)?;
        prop_assert_eq!(morton::encode_3d::<u32>(x, y, z)?, k32);
        let [x, y] = morton::decode_2d(q64)?;
        prop_assert_eq!(morton::encode_2d::<u64>(x, y)?, q64);
        let [x, y] = morton::decode_2d(q32)?;
        prop_assert_eq!(morton::encode_2d::<u32>(x, y)?, q32);
    }

    #[test]
    fn unchecked_morton_ignores_bits_above_the_levels(x: u32, y: u32, z: u32, k: u64) {
        let mask = C3_64 - 1;
        prop_assert_eq!(
            morton::encode_3d_unchecked::<u64>(x, y, z),
            morton::encode_3d::<u64>(x & mask, y & mask, z & mask)?
        );
        prop_assert_eq!(morton::decode_3d_unchecked(k), morton::decode_3d(k & ((1 << 63) - 1))?);
        prop_assert_eq!(morton::decode_2d_unchecked(k), morton::decode_2d(k & ((1 << 62) - 1))?);
    }
}

#[test]
fn morton_3d_is_a_bijection_exhaustively_at_four_levels() {
    let mut seen = vec![false; 1 << 12];
    for x in 0..16 {
        for y in 0..16 {
            for z in 0..16 {
                let key = morton::encode_3d_levels(x, y, z, 4);
                assert_eq!(key, naive_3d(x, y, z, 4));
                assert!(!seen[key as usize], "key {key} twice");
                seen[key as usize] = true;
                assert_eq!(morton::decode_3d_levels(key, 4), [x, y, z]);
            }
        }
    }
}

#[test]
fn largest_coordinates_give_the_largest_key() {
    assert_eq!(morton::encode_3d::<u64>(C3_64 - 1, C3_64 - 1, C3_64 - 1), Ok((1 << 63) - 1));
    assert_eq!(morton::encode_3d::<u32>(C3_32 - 1, C3_32 - 1, C3_32 - 1), Ok((1 << 30) - 1));
    assert_eq!(morton::encode_2d::<u64>(C2_64 - 1, C2_64 - 1), Ok((1 << 62) - 1));
    assert_eq!(morton::encode_2d::<u32>(C2_32 - 1, C2_32 - 1), Ok((1 << 30) - 1));
}

#[test]
fn coordinate_overflow_names_axis_value_limit_width_and_curve() {
    assert_eq!(
        morton::encode_3d::<u32>(0, 1024, 0),
        Err(Error::CoordinateOverflow { axis: Axis::Y, value: 1024, max: 1023, bits: 32, curve: "3D Morton" })
    );
    assert_eq!(
        morton::encode_3d::<u64>(1, 2, 1 << 21),
        Err(Error::CoordinateOverflow {
            axis: Axis::Z,
            value: 1 << 21,
            max: (1 << 21) - 1,
            bits: 64,
            curve: "3D Morton"
        })
    );
    // The first offending axis is reported.
    assert!(matches!(
        morton::encode_3d::<u32>(u32::MAX, u32::MAX, 0),
        Err(Error::CoordinateOverflow { axis: Axis::X, value: 0xffff_ffff, .. })
    ));
    assert_eq!(
        morton::encode_2d::<u64>(1 << 31, 0),
        Err(Error::CoordinateOverflow {
            axis: Axis::X,
            value: 1 << 31,
            max: (1 << 31) - 1,
            bits: 64,
            curve: "2D Morton"
        })
    );
    assert_eq!(
        Curve::Morton.encode_2d::<u32>(5, 1 << 15),
        Err(Error::CoordinateOverflow {
            axis: Axis::Y,
            value: 1 << 15,
            max: (1 << 15) - 1,
            bits: 32,
            curve: "2D Morton"
        })
    );
}

#[test]
fn key_out_of_range_names_key_limit_width_and_curve() {
    assert_eq!(
        morton::decode_3d(1u32 << 30),
        Err(Error::KeyOutOfRange { key: 1 << 30, max: (1 << 30) - 1, bits: 32, curve: "3D Morton" })
    );
    assert_eq!(
        morton::decode_3d(u64::MAX),
        Err(Error::KeyOutOfRange { key: u64::MAX, max: (1 << 63) - 1, bits: 64, curve: "3D Morton" })
    );
    assert_eq!(
        Curve::Morton.decode_2d(1u64 << 62),
        Err(Error::KeyOutOfRange { key: 1 << 62, max: (1 << 62) - 1, bits: 64, curve: "2D Morton" })
    );
    assert_eq!(
        morton::decode_2d(u32::MAX),
        Err(Error::KeyOutOfRange { key: 0xffff_ffff, max: (1 << 30) - 1, bits: 32, curve: "2D Morton" })
    );
}
