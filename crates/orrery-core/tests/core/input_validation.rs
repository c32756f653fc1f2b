//! Every input error of the particle and box types names the offending value.

use orrery_core::particles::check_index_range;
use orrery_core::{Aabb, Axis, Error, ParticleSet, ParticlesView, PositionsView, Vec3};

#[test]
fn nan_and_infinite_coordinates_name_point_and_axis() {
    let x = [0.0f32, 1.0, 2.0];
    let y = [0.0f32, f32::NAN, 2.0];
    let z = [0.0f32, 1.0, f32::INFINITY];
    let err = PositionsView::new(&x, &y, &z).unwrap_err();
    assert!(matches!(err, Error::NonFiniteCoordinate { index: 1, axis: Axis::Y, value } if value.is_nan()));
    let err = PositionsView::new(&x, &x, &z).unwrap_err();
    assert_eq!(err, Error::NonFiniteCoordinate { index: 2, axis: Axis::Z, value: f64::INFINITY });
    assert_eq!(err.to_string(), "non-finite coordinate: z of point 2 is inf");
}

#[test]
fn non_finite_masses_are_rejected() {
    let p = [0.0f64, 1.0];
    let m = [1.0, f64::NEG_INFINITY];
    assert_eq!(
        ParticlesView::new(&p, &p, &p, &m).unwrap_err(),
        Error::NonFiniteValue { what: "mass", index: 1, value: f64::NEG_INFINITY }
    );
}

#[test]
fn length_mismatches_name_the_short_array() {
    let a = [0.0f32; 3];
    let b = [0.0f32; 2];
    assert_eq!(
        PositionsView::new(&a, &b, &a).unwrap_err(),
        Error::LengthMismatch { what: "y", expected: 3, actual: 2 }
    );
    assert_eq!(
        PositionsView::new(&a, &a, &b).unwrap_err(),
        Error::LengthMismatch { what: "z", expected: 3, actual: 2 }
    );
    assert_eq!(
        ParticlesView::new(&a, &a, &a, &b).unwrap_err(),
        Error::LengthMismatch { what: "mass", expected: 3, actual: 2 }
    );
    let mut set = ParticleSet::<f32>::with_capacity(2);
    set.push(Vec3::new(1.0, 2.0, 3.0), 1.0);
    set.x.push(4.0);
    assert_eq!(set.view().unwrap_err(), Error::LengthMismatch { what: "y", expected: 2, actual: 1 });
}

#[test]
fn empty_input_has_no_bounding_box() {
    let e: [f64; 0] = [];
    let view = PositionsView::new(&e, &e, &e).unwrap();
    assert!(view.is_empty());
    assert_eq!(view.bounding_box().unwrap_err(), Error::EmptyInput { what: "positions", min: 1 });
    assert_eq!(Aabb::from_points(&e, &e, &e).unwrap_err(), Error::EmptyInput { what: "positions", min: 1 });
}

#[test]
fn bounding_box_is_tight_and_single_points_are_valid() {
    let x = [3.0f32, -1.0, 2.0];
    let y = [0.5f32, 0.25, 0.75];
    let z = [9.0f32, 9.0, 9.0];
    let b = Aabb::from_points(&x, &y, &z).unwrap();
    assert_eq!(b.min(), Vec3::new(-1.0, 0.25, 9.0));
    assert_eq!(b.max(), Vec3::new(3.0, 0.75, 9.0));
    assert_eq!(b.extent().z, 0.0);
    let one = Aabb::from_points(&[1.0f64], &[2.0], &[3.0]).unwrap();
    assert_eq!(one.min(), one.max());
}

#[test]
fn points_outside_a_given_box_are_named() {
    let bbox = Aabb::cube(0.0f32, 1.0).unwrap();
    let x = [0.5f32, 1.0, 0.0];
    let y = [0.5f32, 0.0, -1.0e-7];
    let view = PositionsView::new(&x, &y, &x).unwrap();
    assert_eq!(
        view.check_inside(&bbox).unwrap_err(),
        Error::OutsideBox {
            index: 2,
            position: [0.0, f64::from(-1.0e-7f32), 0.0],
            box_min: [0.0; 3],
            box_max: [1.0; 3]
        }
    );
    // The closed box includes both faces.
    let inside = PositionsView::new(&x[..2], &y[..2], &x[..2]).unwrap();
    assert_eq!(inside.check_inside(&bbox), Ok(()));
}

#[test]
fn invalid_boxes_are_rejected() {
    let err = Aabb::new(Vec3::new(0.0f64, 2.0, 0.0), Vec3::new(1.0, 1.0, 1.0)).unwrap_err();
    assert_eq!(err, Error::InvalidBox { axis: Axis::Y, min: 2.0, max: 1.0, reason: "min must not exceed max" });
    let err = Aabb::new(Vec3::new(0.0f32, 0.0, f32::NAN), Vec3::new(1.0, 1.0, 1.0)).unwrap_err();
    assert!(matches!(err, Error::InvalidBox { axis: Axis::Z, reason: "bounds must be finite", .. }));
}

#[test]
fn boxes_whose_extent_overflows_are_rejected() {
    // Before: accepted with extent inf, scale 0, every point at key 0.
    let err = Aabb::cube(-f64::MAX, f64::MAX).unwrap_err();
    assert_eq!(
        err,
        Error::InvalidBox { axis: Axis::X, min: -f64::MAX, max: f64::MAX, reason: "the extent max - min overflows" }
    );
    let err = Aabb::new(Vec3::new(0.0f32, -3e38, 0.0), Vec3::new(1.0, 3e38, 1.0)).unwrap_err();
    assert!(
        matches!(err, Error::InvalidBox { axis: Axis::Y, reason: "the extent max - min overflows", .. }),
        "{err:?}"
    );
    // The tightest box around such points is no box either.
    let (x, y) = ([0.0f32, 1.0], [-3e38f32, 3e38]);
    assert!(matches!(Aabb::from_points(&x, &y, &x).unwrap_err(), Error::InvalidBox { axis: Axis::Y, .. }));
    // Half of the range on each side still fits.
    let b = Aabb::cube(-f64::MAX / 2.0, f64::MAX / 2.0).unwrap();
    assert_eq!(b.extent().x, f64::MAX);
    assert!(Aabb::cube(-1.7e38f32, 1.7e38).is_ok());
}

#[test]
fn boxes_with_a_nonzero_extent_below_min_extent_are_rejected() {
    assert_eq!(Aabb::<f32>::min_extent(), 2f32.powi(-64));
    assert_eq!(Aabb::<f64>::min_extent(), 2f64.powi(-960));
    let tiny = 2f32.powi(-64).next_down();
    let err = Aabb::new(Vec3::new(0.0f32, 0.0, 0.0), Vec3::new(1.0, 1.0, tiny)).unwrap_err();
    assert!(matches!(err, Error::InvalidBox { axis: Axis::Z, max, .. } if max == f64::from(tiny)), "{err:?}");
    assert!(Aabb::cube(0.0f64, 2f64.powi(-961)).is_err());
    assert!(Aabb::cube(0.0f32, 2f32.powi(-64)).is_ok());
    assert!(Aabb::cube(0.0f64, 2f64.powi(-960)).is_ok());
    // Zero extents (planes, points) stay valid.
    assert!(Aabb::cube(3.0f32, 3.0).is_ok());
}

#[test]
fn more_points_than_u32_indices_hold_is_an_error() {
    assert_eq!(check_index_range(u32::MAX as usize, "points"), Ok(()));
    assert_eq!(
        check_index_range(u32::MAX as usize + 1, "points"),
        Err(Error::TooManyPoints { count: u32::MAX as usize + 1, max: u32::MAX as usize, what: "points" })
    );
}
