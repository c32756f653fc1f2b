//! Hilbert keys: bijection, continuity (consecutive keys are face neighbours, across
//! every cell boundary at every level), cells as contiguous key intervals, the prefix
//! property between key widths, and every error path with its fields.
//!
//! Exhaustive where the curve is small (`*_levels` functions at up to 5 levels in 3D and
//! 8 in 2D), sampled at the full widths.

use orrery_core::sfc::{Curve, KeyLayout, SfcKey, hilbert};
use orrery_core::{Axis, Error};
use proptest::prelude::*;

fn l1<const D: usize>(a: [u32; D], b: [u32; D]) -> u32 {
    a.iter().zip(&b).map(|(p, q)| p.abs_diff(*q)).sum()
}

const C3_64: u32 = 1 << u64::LEVELS_3D;
const C3_32: u32 = 1 << u32::LEVELS_3D;
const C2_64: u32 = 1 << u64::LEVELS_2D;
const C2_32: u32 = 1 << u32::LEVELS_2D;
const END3_64: u64 = 1 << 63;
const END2_64: u64 = 1 << 62;

#[test]
fn hilbert_3d_is_a_continuous_bijection_exhaustively_up_to_five_levels() {
    for levels in 1..=5u32 {
        let n = 1u64 << (3 * levels);
        let mut seen = vec![false; n as usize];
        let mut previous = hilbert::decode_3d_levels(0, levels);
        for key in 0..n {
            let p = hilbert::decode_3d_levels(key, levels);
            assert!(p.iter().all(|&c| c < 1 << levels), "levels {levels}: key {key} -> {p:?}");
            assert_eq!(hilbert::encode_3d_levels(p[0], p[1], p[2], levels), key);
            let cell = ((p[0] << (2 * levels)) | (p[1] << levels) | p[2]) as usize;
            assert!(!seen[cell], "levels {levels}: cell {p:?} visited twice");
            seen[cell] = true;
            if key > 0 {
                assert_eq!(l1(previous, p), 1, "levels {levels}: keys {} and {key}", key - 1);
            }
            previous = p;
        }
    }
}

#[test]
fn hilbert_2d_is_a_continuous_bijection_exhaustively_up_to_eight_levels() {
    for levels in 1..=8u32 {
        let n = 1u64 << (2 * levels);
        let mut seen = vec![false; n as usize];
        let mut previous = hilbert::decode_2d_levels(0, levels);
        for key in 0..n {
            let p = hilbert::decode_2d_levels(key, levels);
            assert_eq!(hilbert::encode_2d_levels(p[0], p[1], levels), key);
            let cell = ((p[0] << levels) | p[1]) as usize;
            assert!(!seen[cell], "levels {levels}: cell {p:?} visited twice");
            seen[cell] = true;
            if key > 0 {
                assert_eq!(l1(previous, p), 1, "levels {levels}: keys {} and {key}", key - 1);
            }
            previous = p;
        }
    }
}

#[test]
fn every_cell_of_a_four_level_curve_is_a_cube_of_consecutive_keys() {
    let levels = 4u32;
    for level in 0..=levels {
        let size = 1u64 << (3 * (levels - level));
        let side = 1u32 << (levels - level);
        for start in (0..1u64 << (3 * levels)).step_by(size as usize) {
            let corner = hilbert::decode_3d_levels(start, levels).map(|c| c & !(side - 1));
            for key in start..start + size {
                let p = hilbert::decode_3d_levels(key, levels);
                assert_eq!(p.map(|c| c & !(side - 1)), corner, "level {level}: key {key} leaves its cell");
            }
        }
    }
}

#[test]
fn hilbert_3d_steps_once_across_every_boundary_of_the_top_four_levels() {
    fn check<K: SfcKey>(decode: fn(K) -> [u32; 3]) {
        let layout = KeyLayout::octree::<K>();
        for level in 1..=4 {
            let size = layout.cell_size_unchecked::<K>(level).to_u64();
            for i in 1..1u64 << (3 * level) {
                let end = i * size;
                let (a, b) = (decode(K::from_u64(end - 1)), decode(K::from_u64(end)));
                assert_eq!(l1(a, b), 1, "{} bits, level {level}: boundary at key {end:#x}", K::BITS);
            }
        }
    }
    check::<u64>(hilbert::decode_3d_unchecked);
    check::<u32>(hilbert::decode_3d_unchecked);
}

#[test]
fn the_curve_starts_at_the_origin_and_ends_on_a_corner() {
    assert_eq!(hilbert::decode_3d(0u64), Ok([0, 0, 0]));
    assert_eq!(hilbert::decode_3d(END3_64 - 1), Ok([C3_64 - 1, 0, 0]));
    assert_eq!(hilbert::decode_3d((1u32 << 30) - 1), Ok([C3_32 - 1, 0, 0]));
    assert_eq!(hilbert::decode_2d(END2_64 - 1), Ok([C2_64 - 1, 0]));
}

proptest! {
    // Each case costs microseconds; more cases sample more of the 2^63 keys.
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn hilbert_3d_u64_encodes_and_decodes_back(x in 0..C3_64, y in 0..C3_64, z in 0..C3_64) {
        let key: u64 = hilbert::encode_3d(x, y, z)?;
        prop_assert!(key < END3_64);
        prop_assert_eq!(hilbert::decode_3d(key)?, [x, y, z]);
        prop_assert_eq!(Curve::Hilbert.encode_3d::<u64>(x, y, z)?, key);
    }

    #[test]
    fn hilbert_3d_u32_encodes_and_decodes_back(x in 0..C3_32, y in 0..C3_32, z in 0..C3_32) {
        let key: u32 = hilbert::encode_3d(x, y, z)?;
        prop_assert!(key < 1 << 30);
        prop_assert_eq!(hilbert::decode_3d(key)?, [x, y, z]);
        prop_assert_eq!(Curve::Hilbert.decode_3d(key)?, [x, y, z]);
    }

    #[test]
    fn hilbert_2d_encodes_and_decodes_back(x in 0..C2_64, y in 0..C2_64, u in 0..C2_32, v in 0..C2_32) {
        let key: u64 = hilbert::encode_2d(x, y)?;
        prop_assert_eq!(hilbert::decode_2d(key)?, [x, y]);
        let key: u32 = Curve::Hilbert.encode_2d(u, v)?;
        prop_assert_eq!(Curve::Hilbert.decode_2d(key)?, [u, v]);
    }

    #[test]
    fn every_valid_hilbert_key_decodes_and_encodes_back(
        k64 in 0..END3_64, k32 in 0u32..1 << 30, q64 in 0..END2_64, q32 in 0u32..1 << 30,
    ) {
        let [x, y, z] = hilbert::decode_3d(k64)?;
        prop_assert_eq!(hilbert::encode_3d::<u64>(x, y, z)?, k64);
        let [x, y, z] = hilbert::decode_3d(k32)?;
        prop_assert_eq!(hilbert::encode_3d::<u32>(x, y, z)?, k32);
        let [x, y] = hilbert::decode_2d(q64)?;
        prop_assert_eq!(hilbert::encode_2d::<u64>(x, y)?, q64);
        let [x, y] = hilbert::decode_2d(q32)?;
        prop_assert_eq!(hilbert::encode_2d::<u32>(x, y)?, q32);
    }

    #[test]
    fn consecutive_hilbert_keys_are_face_neighbours_at_full_width(
        k64 in 0..END3_64 - 1, k32 in 0u32..(1 << 30) - 1, q64 in 0..END2_64 - 1, q32 in 0u32..(1 << 30) - 1,
    ) {
        prop_assert_eq!(l1(hilbert::decode_3d(k64)?, hilbert::decode_3d(k64 + 1)?), 1);
        prop_assert_eq!(l1(hilbert::decode_3d(k32)?, hilbert::decode_3d(k32 + 1)?), 1);
        prop_assert_eq!(l1(hilbert::decode_2d(q64)?, hilbert::decode_2d(q64 + 1)?), 1);
        prop_assert_eq!(l1(hilbert::decode_2d(q32)?, hilbert::decode_2d(q32 + 1)?), 1);
    }

    #[test]
    fn hilbert_3d_u64_steps_once_across_cell_boundaries_at_every_level(
        key in 0..END3_64, level in 1..=21u32,
    ) {
        let layout = KeyLayout::octree::<u64>();
        let end = layout.cell_start(key, level)? + layout.cell_size::<u64>(level)?;
        prop_assume!(end < END3_64);
        prop_assert_eq!(l1(hilbert::decode_3d(end - 1)?, hilbert::decode_3d(end)?), 1);
        // The first key of a cell steps once from the last key of the previous cell.
        let start = layout.cell_start(key, level)?;
        prop_assume!(start > 0);
        prop_assert_eq!(l1(hilbert::decode_3d(start - 1)?, hilbert::decode_3d(start)?), 1);
    }

    #[test]
    fn hilbert_2d_u64_steps_once_across_cell_boundaries_at_every_level(
        key in 0..END2_64, level in 1..=31u32,
    ) {
        let layout = KeyLayout::quadtree::<u64>();
        let end = layout.cell_start(key, level)? + layout.cell_size::<u64>(level)?;
        prop_assume!(end < END2_64);
        prop_assert_eq!(l1(hilbert::decode_2d(end - 1)?, hilbert::decode_2d(end)?), 1);
    }

    #[test]
    fn every_hilbert_3d_cell_is_a_contiguous_key_interval(
        key in 0..END3_64, level in 0..=21u32, offsets in proptest::collection::vec(any::<u64>(), 16),
        point in any::<[u32; 3]>(),
    ) {
        let layout = KeyLayout::octree::<u64>();
        let (start, size) = (layout.cell_start(key, level)?, layout.cell_size::<u64>(level)?);
        let (corner, side) = Curve::Hilbert.cell_box_3d(key, level)?;
        let in_cube = |p: [u32; 3]| (0..3).all(|a| p[a] >= corner[a] && p[a] - corner[a] < side);
        prop_assert!(in_cube(hilbert::decode_3d(start)?));
        prop_assert!(in_cube(hilbert::decode_3d(start + size - 1)?));
        if size <= 512 {
            for k in start..start + size {
                prop_assert!(in_cube(hilbert::decode_3d(k)?), "key {:#x} outside the cell", k);
            }
        } else {
            for offset in offsets {
                prop_assert!(in_cube(hilbert::decode_3d(start + offset % size)?));
            }
        }
        // Conversely every point of the cube has its key in the interval.
        let p: [u32; 3] = std::array::from_fn(|a| corner[a] + point[a] % side);
        let k: u64 = hilbert::encode_3d(p[0], p[1], p[2])?;
        prop_assert!(start <= k && k < start + size);
    }

    #[test]
    fn every_hilbert_2d_cell_is_a_contiguous_key_interval(
        key in 0..END2_64, level in 0..=31u32, point in any::<[u32; 2]>(),
    ) {
        let layout = KeyLayout::quadtree::<u64>();
        let (start, size) = (layout.cell_start(key, level)?, layout.cell_size::<u64>(level)?);
        let side = 1u32 << (31 - level);
        let corner = hilbert::decode_2d(start)?.map(|c| c & !(side - 1));
        let p: [u32; 2] = std::array::from_fn(|a| corner[a] + point[a] % side);
        let k: u64 = hilbert::encode_2d(p[0], p[1])?;
        prop_assert!(start <= k && k < start + size);
        prop_assert_eq!(hilbert::decode_2d(start + size - 1)?.map(|c| c & !(side - 1)), corner);
    }

    #[test]
    fn a_coarser_hilbert_key_is_a_prefix_of_a_finer_one(
        x in 0..C3_64, y in 0..C3_64, z in 0..C3_64, shift in 0..=21u32,
    ) {
        let fine = hilbert::encode_3d_levels(x, y, z, 21);
        let coarse = hilbert::encode_3d_levels(x >> shift, y >> shift, z >> shift, 21 - shift);
        prop_assert_eq!(coarse, fine >> (3 * shift));
        // In particular the 32-bit key is the 64-bit key of 11 more bits, shifted.
        let k32: u32 = hilbert::encode_3d(x >> 11, y >> 11, z >> 11)?;
        prop_assert_eq!(u64::from(k32), fine >> 33);
    }

    #[test]
    fn hilbert_and_morton_agree_on_which_cells_form_a_parent(
        x in 0..C3_64, y in 0..C3_64, z in 0..C3_64, level in 0..=21u32,
    ) {
        // Both curves are orders of the same octree: the level-l cell containing a point
        // is the same cube, whatever its position on the curve.
        let h = Curve::Hilbert.cell_box_3d(hilbert::encode_3d::<u64>(x, y, z)?, level)?;
        let m = Curve::Morton.cell_box_3d(Curve::Morton.encode_3d::<u64>(x, y, z)?, level)?;
        prop_assert_eq!(h, m);
    }

    #[test]
    fn unchecked_hilbert_ignores_bits_above_the_levels(x: u32, y: u32, z: u32, k: u64) {
        let mask = C3_64 - 1;
        prop_assert_eq!(
            hilbert::encode_3d_unchecked::<u64>(x, y, z),
            hilbert::encode_3d::<u64>(x & mask, y & mask, z & mask)?
        );
        prop_assert_eq!(hilbert::decode_3d_unchecked(k), hilbert::decode_3d(k & (END3_64 - 1))?);
        prop_assert_eq!(hilbert::decode_2d_unchecked(k), hilbert::decode_2d(k & (END2_64 - 1))?);
        let k32 = k as u32;
        prop_assert_eq!(hilbert::decode_3d_unchecked(k32), hilbert::decode_3d(k32 & ((1 << 30) - 1))?);
    }
}

#[test]
fn hilbert_errors_name_the_curve() {
    assert_eq!(
        hilbert::encode_3d::<u32>(1 << 10, 0, 0),
        Err(Error::CoordinateOverflow {
            axis: Axis::X,
            value: 1 << 10,
            max: (1 << 10) - 1,
            bits: 32,
            curve: "3D Hilbert"
        })
    );
    assert_eq!(
        Curve::Hilbert.encode_3d::<u64>(0, 0, u32::MAX),
        Err(Error::CoordinateOverflow {
            axis: Axis::Z,
            value: 0xffff_ffff,
            max: (1 << 21) - 1,
            bits: 64,
            curve: "3D Hilbert"
        })
    );
    assert_eq!(
        hilbert::encode_2d::<u64>(0, 1 << 31),
        Err(Error::CoordinateOverflow {
            axis: Axis::Y,
            value: 1 << 31,
            max: (1 << 31) - 1,
            bits: 64,
            curve: "2D Hilbert"
        })
    );
    assert_eq!(
        hilbert::decode_3d(END3_64),
        Err(Error::KeyOutOfRange { key: END3_64, max: END3_64 - 1, bits: 64, curve: "3D Hilbert" })
    );
    assert_eq!(
        Curve::Hilbert.decode_3d(1u32 << 30),
        Err(Error::KeyOutOfRange { key: 1 << 30, max: (1 << 30) - 1, bits: 32, curve: "3D Hilbert" })
    );
    assert_eq!(
        hilbert::decode_2d(1u32 << 31),
        Err(Error::KeyOutOfRange { key: 1 << 31, max: (1 << 30) - 1, bits: 32, curve: "2D Hilbert" })
    );
    assert_eq!(
        Curve::Hilbert.cell_box_3d(0u64, 22),
        Err(Error::LevelOutOfRange { level: 22, max: 21, what: "a 3D key" })
    );
}
