//! Binary longest-side keys: the split sequence against its definition, the Morton key
//! of a cube, bijection, cells as key intervals, positions at the faces, and every
//! error path with its fields.

use orrery_core::sfc::{BinaryLayout, Curve, KeyMapper, morton};
use orrery_core::{Aabb, Axis, Error, PositionsView, Vec3};
use proptest::prelude::*;

fn boxed(ext: [f64; 3]) -> Aabb<f64> {
    Aabb::new(Vec3::new(-1.0, 0.5, 2.0), Vec3::new(-1.0 + ext[0], 0.5 + ext[1], 2.0 + ext[2])).unwrap()
}

/// The definition, with cell extents `extent * 2^-bits` (exact for these extents).
fn reference_axes(extent: [f64; 3], levels: u32) -> Vec<Axis> {
    let mut bits = [0i32; 3];
    (0..levels)
        .map(|_| {
            let cell = |a: usize| extent[a] * 2f64.powi(-bits[a]);
            let mut best = 0;
            for a in 1..3 {
                if cell(a) > cell(best) {
                    best = a;
                }
            }
            bits[best] += 1;
            Axis::from_index(best)
        })
        .collect()
}

fn extent_strategy() -> impl Strategy<Value = [f64; 3]> {
    // Powers of two make exact ties likely, so the tie rule is exercised.
    let one = prop_oneof![
        Just(0.0),
        (-6i32..6).prop_map(|e| 2f64.powi(e)),
        (-6i32..6).prop_map(|e| 3.0 * 2f64.powi(e)),
        1e-3f64..1e3,
    ];
    proptest::array::uniform3(one)
}

#[test]
fn a_cube_cycles_x_y_z_and_gives_the_morton_key() {
    let cube = Aabb::cube(0.0f64, 1.0).unwrap();
    let layout = BinaryLayout::<f64, u64>::full_depth(cube);
    assert_eq!(layout.levels(), 63);
    assert_eq!(layout.bits_per_axis(), [21, 21, 21]);
    for (l, axis) in layout.axes().iter().enumerate() {
        assert_eq!(*axis, Axis::from_index(l % 3));
    }
    let mapper = KeyMapper::<f64, u64>::new(cube, Curve::Morton);
    assert_eq!(layout.scale(), mapper.scale());
    let layout32 = BinaryLayout::<f32, u32>::new(Aabb::cube(-2.0f32, 2.0).unwrap(), 30).unwrap();
    assert_eq!(layout32.bits_per_axis(), [10, 10, 10]);
    assert_eq!(BinaryLayout::<f32, u32>::full_depth(Aabb::cube(0.0f32, 1.0).unwrap()).bits_per_axis(), [11, 10, 10]);
}

proptest! {
    #[test]
    fn cube_binary_keys_equal_morton_keys(
        c in proptest::array::uniform3(0u64..1 << 21),
        p in proptest::array::uniform3(-2.0f32..=2.0),
    ) {
        let layout = BinaryLayout::<f64, u64>::full_depth(Aabb::cube(0.0, 1.0).unwrap());
        prop_assert_eq!(layout.encode(c)?, morton::encode_3d::<u64>(c[0] as u32, c[1] as u32, c[2] as u32)?);
        let cube32 = Aabb::cube(-2.0f32, 2.0).unwrap();
        let layout32 = BinaryLayout::<f32, u32>::new(cube32, 30)?;
        let mapper32 = KeyMapper::<f32, u32>::new(cube32, Curve::Morton);
        prop_assert_eq!(layout32.key(Vec3::new(p[0], p[1], p[2]))?, mapper32.key(Vec3::new(p[0], p[1], p[2]))?);
        let layout64 = BinaryLayout::<f32, u64>::full_depth(cube32);
        let mapper64 = KeyMapper::<f32, u64>::new(cube32, Curve::Morton);
        prop_assert_eq!(layout64.key_clamped(p[0], p[1], p[2]), mapper64.key_clamped(p[0], p[1], p[2]));
    }

    #[test]
    fn split_sequence_halves_the_longest_cell_side_ties_to_the_lowest_axis(
        extent in extent_strategy(), levels in 0..=63u32,
    ) {
        let layout = BinaryLayout::<f64, u64>::new(boxed(extent), levels)?;
        let expected = reference_axes(extent, levels);
        prop_assert_eq!(layout.axes(), expected.as_slice());
        let bits = layout.bits_per_axis();
        prop_assert_eq!(bits.iter().sum::<u32>(), levels);
        prop_assert_eq!(layout.cell_bits(levels)?, bits);
        for level in 0..=levels {
            let cb = layout.cell_bits(level)?;
            prop_assert_eq!(cb.iter().sum::<u32>(), level);
            if level > 0 {
                let axis = layout.split_axis(level).unwrap();
                let before = layout.cell_bits(level - 1)?;
                prop_assert_eq!(cb[axis as usize], before[axis as usize] + 1);
            }
        }
        prop_assert_eq!(layout.split_axis(0), None);
        prop_assert_eq!(layout.split_axis(levels + 1), None);
    }

    #[test]
    fn binary_keys_are_a_bijection(
        extent in extent_strategy(), levels in 0..=63u32, key: u64, c in proptest::array::uniform3(any::<u64>()),
    ) {
        let layout = BinaryLayout::<f64, u64>::new(boxed(extent), levels)?;
        let bits = layout.bits_per_axis();
        let key = if levels == 0 { 0 } else { key >> (64 - levels) };
        let coords = layout.decode(key)?;
        for a in 0..3 {
            prop_assert!(bits[a] == 64 || coords[a] >> bits[a] == 0);
        }
        prop_assert_eq!(layout.encode(coords)?, key);
        let c: [u64; 3] = std::array::from_fn(|a| c[a] & ((1u64 << bits[a]) - 1));
        prop_assert_eq!(layout.decode(layout.encode(c)?)?, c);
        prop_assert_eq!(layout.encode_unchecked(c), layout.encode(c)?);
        prop_assert_eq!(layout.decode_unchecked(key | (u64::MAX << levels.min(63))), coords);
    }

    #[test]
    fn binary_cells_are_key_intervals_of_the_cell_bits(
        extent in extent_strategy(), key in 0u64..1 << 31, level in 0..=31u32,
    ) {
        let layout = BinaryLayout::<f64, u32>::full_depth(boxed(extent));
        let key = key as u32;
        let kl = layout.key_layout();
        prop_assert_eq!(kl.levels(), 31);
        let start = kl.cell_start(key, level)?;
        let end = start + kl.cell_size::<u32>(level)?;
        prop_assert_eq!(kl.level_of_range(start, end), Some(level));
        // Every key of the cell shares the top `cell_bits(level)` bits of each coordinate.
        let (bits, cb) = (layout.bits_per_axis(), layout.cell_bits(level)?);
        let top = |k: u32| {
            let c = layout.decode(k).unwrap();
            [0, 1, 2].map(|a| c[a] >> (bits[a] - cb[a]))
        };
        prop_assert_eq!(top(start), top(key));
        prop_assert_eq!(top(end - 1), top(key));
        if end < 1 << 31 {
            prop_assert_ne!(top(end), top(key));
        }
    }

    #[test]
    fn binary_positions_follow_the_mapper_rule(
        extent in extent_strategy(), u in proptest::array::uniform3(0.0f64..=1.0),
    ) {
        let bbox = boxed(extent);
        let layout = BinaryLayout::<f64, u64>::full_depth(bbox);
        let p = Vec3::from_fn(|a, _| (bbox.min()[a] + u[a] * extent[a]).min(bbox.max()[a]));
        let c = layout.integer_coords(p)?;
        let bits = layout.bits_per_axis();
        for a in 0..3 {
            let f = ((p[a] - bbox.min()[a]) * layout.scale()[a]).floor();
            let last = ((1u64 << bits[a]) - 1) as f64;
            prop_assert_eq!(c[a] as f64, f.clamp(0.0, last));
        }
        prop_assert_eq!(layout.key(p)?, layout.encode(c)?);
        // The upper face is the last cell while a cell is wider than an ULP (f64: up to
        // 53 bits per axis); beyond that it is still a valid key near the end.
        if bits.iter().all(|&b| b <= 53) {
            prop_assert_eq!(layout.key(bbox.max())?, (1u64 << 63) - 1);
        }
        prop_assert_eq!(layout.key(bbox.min())?, 0);
    }
}

#[test]
fn a_long_box_splits_its_long_side_first() {
    use Axis::{X, Y, Z};
    let bbox = Aabb::new(Vec3::zeros(), Vec3::new(1.0f32, 8.0, 2.0)).unwrap();
    let layout = BinaryLayout::<f32, u64>::new(bbox, 7).unwrap();
    assert_eq!(layout.axes(), [Y, Y, Y, Z, X, Y, Z]);
    assert_eq!(layout.bits_per_axis(), [1, 4, 2]);
    assert_eq!(layout.split_axis(1), Some(Y));
    assert_eq!(layout.split_axis(7), Some(Z));
    // Zero-extent axes are never split unless every axis has zero extent.
    let plane = BinaryLayout::<f64, u64>::new(boxed([2.0, 0.0, 1.0]), 6).unwrap();
    assert_eq!(plane.axes(), [X, X, Z, X, Z, X]);
    let point = BinaryLayout::<f64, u32>::full_depth(boxed([0.0; 3]));
    assert_eq!(point.bits_per_axis(), [31, 0, 0]);
    assert_eq!(point.key_clamped(5.0, -5.0, 0.0), 0);
}

#[test]
fn binary_faces_and_ulps() {
    let bbox = Aabb::new(Vec3::new(-1.0f32, 0.0, 0.5), Vec3::new(3.0, 1.0, 1.5)).unwrap();
    let layout = BinaryLayout::<f32, u64>::full_depth(bbox);
    let bits = layout.bits_per_axis();
    let last = bits.map(|b| (1u64 << b) - 1);
    assert_eq!(layout.integer_coords(bbox.max()), Ok(last));
    assert_eq!(layout.integer_coords(bbox.min()), Ok([0, 0, 0]));
    assert_eq!(layout.integer_coords(Vec3::new(3.0f32.next_down(), 1.0f32.next_down(), 1.5f32.next_down())), Ok(last));
    assert_eq!(
        layout.integer_coords(Vec3::new((-1.0f32).next_up(), 0.0f32.next_up(), 0.5f32.next_up())),
        Ok([0, 0, 0])
    );
    let out = Vec3::new(3.0f32.next_up(), 0.5, 1.25);
    assert_eq!(
        layout.key(out),
        Err(Error::OutsideBox {
            index: 0,
            position: [f64::from(3.0f32.next_up()), 0.5, 1.25],
            box_min: [-1.0, 0.0, 0.5],
            box_max: [3.0, 1.0, 1.5],
        })
    );
    assert_eq!(layout.key_clamped(out.x, out.y, out.z), layout.key(Vec3::new(3.0, 0.5, 1.25)).unwrap());
    assert_eq!(layout.integer_coords_clamped(f32::MAX, f32::MIN, f32::NAN), [last[0], 0, 0]);
}

#[test]
fn binary_keys_of_checks_the_box() {
    let bbox = Aabb::new(Vec3::new(0.0f64, 0.0, 0.0), Vec3::new(4.0, 1.0, 1.0)).unwrap();
    let layout = BinaryLayout::<f64, u64>::full_depth(bbox);
    let x = [0.0, 4.0, 2.5, 1.0];
    let y = [0.0, 1.0, 0.5, 0.25];
    let z = [0.0, 1.0, 0.5, 1.5];
    let view = PositionsView::new(&x[..3], &y[..3], &z[..3]).unwrap();
    let keys = layout.keys_of(view).unwrap();
    assert_eq!(keys, [0, (1 << 63) - 1, layout.key(Vec3::new(2.5, 0.5, 0.5)).unwrap()]);
    let view = PositionsView::new(&x, &y, &z).unwrap();
    assert!(matches!(layout.keys_of(view), Err(Error::OutsideBox { index: 3, .. })));
}

#[test]
fn binary_error_paths_name_their_fields() {
    let bbox = boxed([4.0, 2.0, 1.0]);
    assert_eq!(
        BinaryLayout::<f64, u64>::new(bbox, 64).map(|l| l.levels()),
        Err(Error::LevelOutOfRange { level: 64, max: 63, what: "a binary key" })
    );
    assert_eq!(
        BinaryLayout::<f64, u32>::new(bbox, 32).map(|l| l.levels()),
        Err(Error::LevelOutOfRange { level: 32, max: 31, what: "a binary key" })
    );
    let layout = BinaryLayout::<f64, u32>::new(bbox, 6).unwrap();
    assert_eq!(layout.bits_per_axis(), [3, 2, 1]);
    assert_eq!(
        layout.encode([7, 4, 0]),
        Err(Error::CoordinateOverflow { axis: Axis::Y, value: 4, max: 3, bits: 32, curve: "binary" })
    );
    assert_eq!(layout.decode(64), Err(Error::KeyOutOfRange { key: 64, max: 63, bits: 32, curve: "binary" }));
    assert_eq!(layout.cell_bits(7), Err(Error::LevelOutOfRange { level: 7, max: 6, what: "a binary key" }));
    assert_eq!(layout.encode([0b101, 0b10, 0b1]), Ok(0b101101));
    assert_eq!(layout.decode(0b101101), Ok([0b101, 0b10, 0b1]));
}
