//! SFC keys: bit-identical to `KeyMapper::key_clamped` for Morton and Hilbert curves,
//! f32 positions (and f64 where the adapter has SHADER_F64), including points on the
//! faces, outside the box, NaN and infinities, and boxes with a flat axis.

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Error, Executor, Real, Vec3};
use rand::Rng;
use rand::distr::uniform::SampleUniform;

use crate::common::{SIZES, each, rng};

fn positions<T: Real + SampleUniform>(n: usize, seed: u64, lo: T, hi: T) -> [Vec<T>; 3] {
    let mut r = rng(seed);
    let mut axis = || -> Vec<T> { (0..n).map(|_| r.random_range(lo..=hi)).collect() };
    [axis(), axis(), axis()]
}

/// Values that hit the edge cases of quantisation, spliced into the first positions.
fn edge_values<T: Real>(bbox: &Aabb<T>) -> Vec<T> {
    let (min, max) = (bbox.min(), bbox.max());
    let mut v = vec![
        min[0],
        max[0],
        min[1],
        max[1],
        <T as Real>::from_f64(-0.0),
        <T as Real>::from_f64(1e30),
        <T as Real>::from_f64(-1e30),
    ];
    v.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY].map(<T as Real>::from_f64));
    v
}

fn check<T: Real>(label: &str, e: &WgpuExecutor, xyz: &[Vec<T>; 3], mapper: &KeyMapper<T, u64>) {
    let n = xyz[0].len();
    let [x, y, z] = xyz;
    let (gx, gy, gz) = (e.upload(x).unwrap(), e.upload(y).unwrap(), e.upload(z).unwrap());
    let mut keys = e.alloc::<u64>(n).unwrap();
    e.sfc_keys(&gx, &gy, &gz, mapper, &mut keys).unwrap();
    let got = e.download(&keys).unwrap();
    for i in 0..n {
        let want = mapper.key_clamped(x[i], y[i], z[i]);
        assert_eq!(
            got[i],
            want,
            "{label} {:?} point {i} ({:?}, {:?}, {:?}): {:#x} vs {want:#x}",
            mapper.curve(),
            x[i],
            y[i],
            z[i],
            got[i]
        );
    }
}

fn with_edges<T: Real>(mut xyz: [Vec<T>; 3], bbox: &Aabb<T>) -> [Vec<T>; 3] {
    let edges = edge_values(bbox);
    for (i, &a) in edges.iter().enumerate() {
        for (j, &b) in edges.iter().enumerate() {
            let at = i * edges.len() + j;
            if at < xyz[0].len() {
                xyz[0][at] = a;
                xyz[1][at] = b;
                xyz[2][at] = edges[(i + j) % edges.len()];
            }
        }
    }
    xyz
}

#[test]
fn f32_keys_match_key_clamped_for_both_curves() {
    let bbox = Aabb::new(Vec3::new(-1.5f32, 0.0, 10.0), Vec3::new(2.5, 1e-3, 10.5)).unwrap();
    each(|label, e| {
        for n in SIZES.into_iter().chain([1_000_000]) {
            let xyz = with_edges(positions(n, n as u64, -3.0f32, 11.0), &bbox);
            for curve in [Curve::Morton, Curve::Hilbert] {
                check(label, e, &xyz, &KeyMapper::new(bbox, curve));
            }
        }
    });
}

#[test]
fn f32_keys_of_points_inside_the_unit_cube() {
    let bbox = Aabb::cube(0.0f32, 1.0).unwrap();
    each(|label, e| {
        let xyz = positions(100_000, 3, 0.0f32, 1.0);
        for curve in [Curve::Morton, Curve::Hilbert] {
            check(label, e, &xyz, &KeyMapper::new(bbox, curve));
        }
    });
}

#[test]
fn a_flat_axis_puts_every_point_in_cell_zero_on_it() {
    let bbox = Aabb::new(Vec3::new(0.0f32, 0.0, 0.5), Vec3::new(1.0, 1.0, 0.5)).unwrap();
    each(|label, e| {
        let xyz = positions(4097, 11, 0.0f32, 1.0);
        for curve in [Curve::Morton, Curve::Hilbert] {
            check(label, e, &xyz, &KeyMapper::new(bbox, curve));
        }
    });
}

#[test]
fn f64_keys_match_with_shader_f64_and_are_unsupported_without() {
    let bbox = Aabb::new(Vec3::new(-1.0f64, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0)).unwrap();
    each(|label, e| {
        let xyz = with_edges(positions(100_003, 5, -4.0f64, 4.0), &bbox);
        for curve in [Curve::Morton, Curve::Hilbert] {
            let mapper = KeyMapper::new(bbox, curve);
            if e.capabilities().f64 {
                check(label, e, &xyz, &mapper);
            } else {
                let [x, y, z] = &xyz;
                let (gx, gy, gz) = (e.upload(x).unwrap(), e.upload(y).unwrap(), e.upload(z).unwrap());
                let mut keys = e.alloc::<u64>(x.len()).unwrap();
                let result = e.sfc_keys(&gx, &gy, &gz, &mapper, &mut keys);
                assert!(matches!(result, Err(Error::Unsupported { .. })), "{label}: {result:?}");
            }
        }
    });
}

#[test]
fn key_buffers_of_the_wrong_length_are_rejected() {
    let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0).unwrap(), Curve::Morton);
    each(|label, e| {
        let x = e.upload(&[0.5f32; 4]).unwrap();
        let y = e.upload(&[0.5f32; 3]).unwrap();
        let mut keys = e.alloc::<u64>(4).unwrap();
        let result = e.sfc_keys(&x, &y, &x, &mapper, &mut keys);
        assert!(matches!(result, Err(Error::LengthMismatch { .. })), "{label}: {result:?}");
    });
}
