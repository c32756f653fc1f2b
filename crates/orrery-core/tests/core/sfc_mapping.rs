//! Positions to keys: the quantisation rule at box faces and corners, one ULP inside and
//! outside, degenerate (zero-extent) axes, non-finite input, and the parallel
//! `keys_of`, for f32 and f64 positions and both key widths.

use orrery_core::sfc::{BinaryLayout, Curve, KeyMapper, KeyMapper2D, SfcKey};
use orrery_core::{Aabb, Axis, Error, PositionsView, Real, Vec3};
use proptest::prelude::*;

/// The neighbouring floats, for faces "one ULP inside/outside".
trait Ulp: Real {
    /// Mantissa digits: cells narrower than `2^-DIGITS` of the extent are finer than an ULP.
    const DIGITS: u32;
    fn up(self) -> Self;
    fn down(self) -> Self;
    fn huge() -> Self;
}

impl Ulp for f32 {
    const DIGITS: u32 = f32::MANTISSA_DIGITS;
    fn up(self) -> Self {
        self.next_up()
    }
    fn down(self) -> Self {
        self.next_down()
    }
    fn huge() -> Self {
        f32::MAX
    }
}

impl Ulp for f64 {
    const DIGITS: u32 = f64::MANTISSA_DIGITS;
    fn up(self) -> Self {
        self.next_up()
    }
    fn down(self) -> Self {
        self.next_down()
    }
    fn huge() -> Self {
        f64::MAX
    }
}

fn t<T: Real>(v: f64) -> T {
    <T as Real>::from_f64(v)
}

fn v3<T: Real>(x: T, y: T, z: T) -> Vec3<T> {
    Vec3::new(x, y, z)
}

/// Boxes whose cells are all wider than one ULP of their coordinates in f32.
fn boxes<T: Real>() -> Vec<Aabb<T>> {
    vec![
        Aabb::cube(t(0.0), t(1.0)).unwrap(),
        Aabb::new(v3(t(-3.7), t(1e-3), t(-1e6)), v3(t(12.9), t(2e-3), t(1e6))).unwrap(),
        Aabb::new(v3(t(-0.5), t(-0.5), t(-0.5)), v3(t(0.25), t(0.5), t(0.75))).unwrap(),
    ]
}

fn outside<T: Real>(mapper_box: &Aabb<T>, p: Vec3<T>) -> Error {
    let (box_min, box_max) = mapper_box.to_f64();
    Error::OutsideBox { index: 0, position: [p.x.into(), p.y.into(), p.z.into()], box_min, box_max }
}

fn faces_map_to_the_first_and_last_cells<T: Ulp, K: SfcKey>() {
    let last = (1u32 << K::LEVELS_3D) - 1;
    for bbox in boxes::<T>() {
        for curve in [Curve::Morton, Curve::Hilbert] {
            let m = KeyMapper::<T, K>::new(bbox, curve);
            let (lo, hi) = (bbox.min(), bbox.max());
            assert_eq!(m.integer_coords(lo), Ok([0, 0, 0]));
            assert_eq!(m.key(lo), Ok(K::from_u64(0)));
            assert_eq!(m.integer_coords(hi), Ok([last; 3]));
            assert_eq!(m.key(hi), Ok(curve.encode_3d_unchecked(last, last, last)));
            assert_eq!(m.integer_coords(v3(lo.x, hi.y, lo.z)), Ok([0, last, 0]));
            assert_eq!(m.integer_coords(v3(hi.x, lo.y, hi.z)), Ok([last, 0, last]));
            // One ULP inside the faces: still the first and last cells.
            assert_eq!(m.integer_coords(v3(lo.x.up(), lo.y.up(), lo.z.up())), Ok([0, 0, 0]));
            assert_eq!(m.integer_coords(v3(hi.x.down(), hi.y.down(), hi.z.down())), Ok([last; 3]));
            // One ULP outside: an error from `key`, the face's key from `key_clamped`.
            for a in 0..3 {
                let mut below = lo;
                below[a] = below[a].down();
                assert_eq!(m.key(below), Err(outside(&bbox, below)));
                assert_eq!(m.integer_coords(below), Err(outside(&bbox, below)));
                assert_eq!(m.key_clamped(below.x, below.y, below.z), K::from_u64(0));
                let mut above = hi;
                above[a] = above[a].up();
                assert_eq!(m.key(above), Err(outside(&bbox, above)));
                assert_eq!(m.key_clamped(above.x, above.y, above.z), m.key(hi).unwrap());
            }
            // Far outside and at the float extremes: clamped, never a panic.
            assert_eq!(
                m.integer_coords_clamped(T::huge(), -T::huge(), t(0.0)),
                [last, 0, m.integer_coords_clamped(t(0.0), t(0.0), t(0.0))[2]]
            );
        }
    }
}

#[test]
fn faces_map_to_the_first_and_last_cells_f32_u64() {
    faces_map_to_the_first_and_last_cells::<f32, u64>();
}

#[test]
fn faces_map_to_the_first_and_last_cells_f32_u32() {
    faces_map_to_the_first_and_last_cells::<f32, u32>();
}

#[test]
fn faces_map_to_the_first_and_last_cells_f64_u64() {
    faces_map_to_the_first_and_last_cells::<f64, u64>();
}

#[test]
fn faces_map_to_the_first_and_last_cells_f64_u32() {
    faces_map_to_the_first_and_last_cells::<f64, u32>();
}

fn degenerate_axes_put_every_point_in_cell_zero<T: Ulp>() {
    let plane = Aabb::new(v3(t(0.0), t(-1.0), t(2.5)), v3(t(1.0), t(1.0), t(2.5))).unwrap();
    let m = KeyMapper::<T, u64>::new(plane, Curve::Hilbert);
    assert_eq!(m.scale()[2], t(0.0));
    assert_eq!(m.integer_coords(v3(t(1.0), t(1.0), t(2.5))), Ok([(1 << 21) - 1, (1 << 21) - 1, 0]));
    assert_eq!(m.integer_coords_clamped(t(0.5), t(0.0), t(1e3)), [1 << 20, 1 << 20, 0]);
    assert_eq!(m.integer_coords_clamped(t(0.5), t(0.0), -T::huge()), [1 << 20, 1 << 20, 0]);
    let off = v3(t(0.5), t(0.0), t::<T>(2.5).up());
    assert_eq!(m.key(off), Err(outside(&plane, off)));

    let point = Aabb::cube(t(-7.0), t(-7.0)).unwrap();
    let m = KeyMapper::<T, u32>::new(point, Curve::Morton);
    assert_eq!(m.scale(), [t(0.0); 3]);
    assert_eq!(m.key(v3(t(-7.0), t(-7.0), t(-7.0))), Ok(0));
    assert_eq!(m.key_clamped(t(100.0), t(-100.0), T::huge()), 0);
}

#[test]
fn degenerate_axes_put_every_point_in_cell_zero_f32() {
    degenerate_axes_put_every_point_in_cell_zero::<f32>();
}

#[test]
fn degenerate_axes_put_every_point_in_cell_zero_f64() {
    degenerate_axes_put_every_point_in_cell_zero::<f64>();
}

fn scale_is_computed_in_the_position_type<T: Ulp, K: SfcKey>() {
    for bbox in boxes::<T>() {
        let m = KeyMapper::<T, K>::new(bbox, Curve::Morton);
        let cells: T = t((1u64 << K::LEVELS_3D) as f64);
        for a in 0..3 {
            assert_eq!(m.scale()[a], cells / bbox.extent()[a]);
        }
        assert_eq!(m.levels(), K::LEVELS_3D);
        assert_eq!(m.bbox(), &bbox);
        assert_eq!(m.curve(), Curve::Morton);
    }
}

#[test]
fn scale_is_computed_in_the_position_type_f32_and_f64() {
    scale_is_computed_in_the_position_type::<f32, u64>();
    scale_is_computed_in_the_position_type::<f32, u32>();
    scale_is_computed_in_the_position_type::<f64, u64>();
    scale_is_computed_in_the_position_type::<f64, u32>();
}

fn non_finite_positions<T: Ulp>() {
    let bbox = Aabb::cube(t(0.0), t(1.0)).unwrap();
    let m = KeyMapper::<T, u64>::new(bbox, Curve::Hilbert);
    let nan: T = t(f64::NAN);
    let inf: T = t(f64::INFINITY);
    assert!(matches!(
        m.key(v3(t(0.5), nan, t(0.5))),
        Err(Error::NonFiniteCoordinate { index: 0, axis: Axis::Y, value }) if value.is_nan()
    ));
    assert_eq!(
        m.integer_coords(v3(t(0.5), t(0.5), -inf)),
        Err(Error::NonFiniteCoordinate { index: 0, axis: Axis::Z, value: f64::NEG_INFINITY })
    );
    // Out of contract for key_clamped, but defined: NaN -> 0, infinities clamp.
    assert_eq!(m.integer_coords_clamped(nan, inf, -inf), [0, (1 << 21) - 1, 0]);
}

#[test]
fn non_finite_positions_are_rejected_or_clamped_f32() {
    non_finite_positions::<f32>();
}

#[test]
fn non_finite_positions_are_rejected_or_clamped_f64() {
    non_finite_positions::<f64>();
}

/// The rule, written out: subtract, multiply, floor, clamp, all in `T`.
fn reference_coord<T: Real>(v: T, lo: T, scale: T, levels: u32) -> u32 {
    let f = ((v - lo) * scale).floor();
    let last = t::<T>(((1u64 << levels) - 1) as f64);
    let c = if f < t(0.0) {
        t(0.0)
    } else if f > last {
        last
    } else {
        f
    };
    let c: f64 = c.into();
    c as u32
}

fn check_rule<T: Real, K: SfcKey>(lo: [f64; 3], ext: [f64; 3], u: [f64; 3], curve: Curve) -> Result<(), TestCaseError> {
    let bbox = Aabb::new(v3(t(lo[0]), t(lo[1]), t(lo[2])), v3(t(lo[0] + ext[0]), t(lo[1] + ext[1]), t(lo[2] + ext[2])))
        .unwrap();
    let m = KeyMapper::<T, K>::new(bbox, curve);
    let p: Vec3<T> = Vec3::from_fn(|a, _| t::<T>(lo[a] + u[a] * ext[a]).max(bbox.min()[a]).min(bbox.max()[a]));
    let c = m.integer_coords(p)?;
    for a in 0..3 {
        prop_assert_eq!(c[a], reference_coord(p[a], bbox.min()[a], m.scale()[a], K::LEVELS_3D));
    }
    prop_assert_eq!(m.key(p)?, curve.encode_3d::<K>(c[0], c[1], c[2])?);
    prop_assert_eq!(m.key_clamped(p.x, p.y, p.z), m.key(p)?);
    // Monotone along each axis.
    for a in 0..3 {
        let mut q = p;
        q[a] = bbox.max()[a];
        prop_assert!(m.integer_coords(q)?[a] >= c[a]);
    }
    Ok(())
}

proptest! {
    #[test]
    fn coordinates_follow_the_subtract_multiply_floor_clamp_rule(
        lo in proptest::array::uniform3(-1e4f64..1e4),
        ext in proptest::array::uniform3(1e-3f64..1e4),
        u in proptest::array::uniform3(0.0f64..=1.0),
        hilbert: bool,
    ) {
        let curve = if hilbert { Curve::Hilbert } else { Curve::Morton };
        check_rule::<f32, u64>(lo, ext, u, curve)?;
        check_rule::<f32, u32>(lo, ext, u, curve)?;
        check_rule::<f64, u64>(lo, ext, u, curve)?;
        check_rule::<f64, u32>(lo, ext, u, curve)?;
    }
}

/// `sign * m * 2^e`, rounded to `T` (for magnitudes over the whole exponent range).
fn magnitude<T: Real>((negative, m, e): Magnitude) -> T {
    let v = m * 2f64.powi(e);
    t(if negative { -v } else { v })
}

/// Exponents over the whole range of a type (`min..=max`), with extra weight near both
/// ends: near the top, bounds of opposite sign have an extent that overflows; near the
/// bottom, extents fall below `Aabb::min_extent`.
fn exponents(min: i32, max: i32) -> impl Strategy<Value = i32> {
    prop_oneof![min..=max, (max - 8)..=max, min..=(min + 100)]
}

/// A signed magnitude: sign, mantissa in `[1, 2)`, exponent.
type Magnitude = (bool, f64, i32);

/// Per axis: two magnitudes (sorted into `[lo, hi]`) and whether the extent is zero
/// (`[a, a]`).
type ExtremeAxes = [(Magnitude, Magnitude, bool); 3];

/// Per axis: two signed magnitudes (sorted into `[lo, hi]`), or one for a zero extent.
fn extreme_axes(min_exp: i32, max_exp: i32) -> impl Strategy<Value = ExtremeAxes> {
    let coord = move || (any::<bool>(), 1.0f64..2.0, exponents(min_exp, max_exp));
    proptest::array::uniform3((coord(), coord(), proptest::bool::weighted(0.125)))
}

/// The box `[min(a, b), max(a, b)]` on every axis (`[a, a]` where `flat`): accepted
/// exactly when every extent `hi - lo` (in `T`) is 0 or finite and at least
/// `Aabb::min_extent`; and then every mapper's scale is finite, positive on the
/// non-zero axes, and the upper corner lands in the last cell. Before the extent check,
/// `[-MAX, MAX]` was accepted with scale 0 (key 0 for every point).
fn check_extreme_box<T: Real>(axes: ExtremeAxes) -> Result<(), TestCaseError> {
    let mut lo = [t::<T>(0.0); 3];
    let mut hi = [t::<T>(0.0); 3];
    for (a, &(p, q, flat)) in axes.iter().enumerate() {
        let (u, v): (T, T) = (magnitude(p), magnitude(q));
        let v = if flat { u } else { v };
        (lo[a], hi[a]) = if u <= v { (u, v) } else { (v, u) };
    }
    let extent: [T; 3] = std::array::from_fn(|a| hi[a] - lo[a]);
    let valid = (0..3).all(|a| extent[a].finite() && (extent[a] == t(0.0) || extent[a] >= Aabb::<T>::min_extent()));
    let bbox = Aabb::new(v3(lo[0], lo[1], lo[2]), v3(hi[0], hi[1], hi[2]));
    prop_assert_eq!(bbox.is_ok(), valid, "box {:?}..{:?}: {:?}", lo, hi, bbox);
    let Ok(bbox) = bbox else { return Ok(()) };
    let positive = |s: T, a: usize| s.finite() && (s > t(0.0)) == (extent[a] > t(0.0));
    let m64 = KeyMapper::<T, u64>::new(bbox, Curve::Hilbert);
    let m32 = KeyMapper::<T, u32>::new(bbox, Curve::Morton);
    let m2d = KeyMapper2D::<T, u64>::new(bbox, Curve::Hilbert);
    let binary = BinaryLayout::<T, u64>::full_depth(bbox);
    for a in 0..3 {
        prop_assert!(positive(m64.scale()[a], a), "u64 scale {:?} on axis {}", m64.scale()[a], a);
        prop_assert!(positive(m32.scale()[a], a), "u32 scale {:?} on axis {}", m32.scale()[a], a);
        prop_assert!(positive(binary.scale()[a], a), "binary scale {:?} on axis {}", binary.scale()[a], a);
        if a < 2 {
            prop_assert!(positive(m2d.scale()[a], a), "2D scale {:?} on axis {}", m2d.scale()[a], a);
        }
    }
    let top = m64.integer_coords(bbox.max())?;
    for a in 0..3 {
        let last = if extent[a] > t(0.0) { (1u32 << 21) - 1 } else { 0 };
        prop_assert_eq!(top[a], last, "axis {}", a);
    }
    Ok(())
}

proptest! {
    #[test]
    fn extreme_boxes_are_rejected_or_map_with_finite_scales_f32(axes in extreme_axes(-149, 127)) {
        check_extreme_box::<f32>(axes)?;
    }

    #[test]
    fn extreme_boxes_are_rejected_or_map_with_finite_scales_f64(axes in extreme_axes(-1074, 1023)) {
        check_extreme_box::<f64>(axes)?;
    }
}

#[test]
fn keys_of_matches_per_point_keys_and_names_the_first_point_outside() {
    let bbox = Aabb::cube(-1.0f64, 1.0).unwrap();
    let m = KeyMapper::<f64, u64>::new(bbox, Curve::Hilbert);
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| (f64::from(i) * 0.618_033).fract() * 2.0 - 1.0).collect();
    let y: Vec<f64> = (0..n).map(|i| (f64::from(i) * 0.414_213).fract() * 2.0 - 1.0).collect();
    let mut z: Vec<f64> = (0..n).map(|i| (f64::from(i) * 0.732_050).fract() * 2.0 - 1.0).collect();
    let view = PositionsView::new(&x, &y, &z).unwrap();
    let keys = m.keys_of(view).unwrap();
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(*key, m.key(view.point(i)).unwrap());
    }
    z[700] = 1.0f64.next_up();
    z[300] = -2.0;
    let view = PositionsView::new(&x, &y, &z).unwrap();
    assert!(matches!(m.keys_of(view), Err(Error::OutsideBox { index: 300, position, .. }) if position[2] == -2.0));
    let empty: [f64; 0] = [];
    assert_eq!(m.keys_of(PositionsView::new(&empty, &empty, &empty).unwrap()), Ok(vec![]));
}

fn mapper_2d<T: Ulp, K: SfcKey>() {
    let last = (1u32 << K::LEVELS_2D) - 1;
    let bbox = Aabb::new(v3(t(-2.0), t(3.0), t(0.0)), v3(t(6.0), t(3.5), t(0.0))).unwrap();
    for curve in [Curve::Morton, Curve::Hilbert] {
        let m = KeyMapper2D::<T, K>::new(bbox, curve);
        assert_eq!(m.levels(), K::LEVELS_2D);
        assert_eq!(m.curve(), curve);
        assert_eq!(m.bbox(), &bbox);
        assert_eq!(m.scale()[0], t::<T>((1u64 << K::LEVELS_2D) as f64) / t(8.0));
        assert_eq!(m.integer_coords(t(-2.0), t(3.0)), Ok([0, 0]));
        assert_eq!(m.integer_coords(t(6.0), t(3.5)), Ok([last, last]));
        if K::LEVELS_2D <= T::DIGITS {
            // One ULP inside is the last cell when a cell is wider than an ULP (not so
            // for f32 positions and 31-level u64 keys).
            assert_eq!(m.integer_coords(t::<T>(6.0).down(), t::<T>(3.5).down()), Ok([last, last]));
        }
        assert_eq!(m.key(t(6.0), t(3.5)), Ok(curve.encode_2d_unchecked(last, last)));
        assert_eq!(m.key(t(-2.0), t(3.0)), Ok(K::from_u64(0)));
        let above = t::<T>(3.5).up();
        assert_eq!(
            m.key(t(0.0), above),
            Err(Error::OutsideBox {
                index: 0,
                position: [0.0, above.into(), 0.0],
                box_min: [-2.0, 3.0, 0.0],
                box_max: [6.0, 3.5, 0.0],
            })
        );
        assert_eq!(m.key_clamped(t(0.0), above), m.key(t(0.0), t(3.5)).unwrap());
        assert_eq!(m.integer_coords_clamped(-T::huge(), T::huge()), [0, last]);
    }
    let line = Aabb::new(v3(t(0.0), t(1.0), t(0.0)), v3(t(4.0), t(1.0), t(0.0))).unwrap();
    let m = KeyMapper2D::<T, K>::new(line, Curve::Hilbert);
    assert_eq!(m.integer_coords(t(4.0), t(1.0)), Ok([last, 0]));
}

#[test]
fn mapper_2d_follows_the_same_rule() {
    mapper_2d::<f32, u64>();
    mapper_2d::<f32, u32>();
    mapper_2d::<f64, u64>();
    mapper_2d::<f64, u32>();
}
