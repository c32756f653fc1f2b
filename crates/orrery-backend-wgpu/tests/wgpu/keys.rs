//! SFC keys: bit-identical to `KeyMapper::key_clamped` for Morton and Hilbert curves,
//! f32 positions (and f64 where the adapter has SHADER_F64), including points on the
//! faces, outside the box, NaN and infinities, boxes with a flat axis, views at
//! offsets, sizes that end inside a workgroup or a round of the grid-stride loop, and a
//! launch of several rounds in which every axis takes every cell value.
//!
//! Every case runs on each executor of [`each`], on [`coarse`] (views through the
//! `off_*` fields) and on [`small_workgroup_memory`], where Hilbert keys take the
//! one-level fallback instead of the 24 KB three-level table.

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Error, Executor, Real, Slice, Vec3};
use rand::Rng;
use rand::distr::uniform::SampleUniform;

use crate::common::{SIZES, SMALL_WORKGROUP_BYTES, coarse, each, rng, small_workgroup_memory};

/// Runs `f` on every executor of [`each`], on [`coarse`] and on [`small_workgroup_memory`].
fn each_path(mut f: impl FnMut(&str, &WgpuExecutor)) {
    each(&mut f);
    if let Some(e) = coarse() {
        f("coarse view alignment (256 bytes)", e);
    }
    if let Some(e) = small_workgroup_memory() {
        f("16 KB workgroup memory (one-level Hilbert)", e);
    }
}

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
        min[2],
        max[2],
        <T as Real>::from_f64(-0.0),
        <T as Real>::from_f64(1e30),
        <T as Real>::from_f64(-1e30),
    ];
    v.extend([f64::NAN, f64::INFINITY, f64::NEG_INFINITY].map(<T as Real>::from_f64));
    v
}

/// Asserts that `got` holds `mapper.key_clamped` of every point of `xyz`, bit for bit.
fn compare<T: Real>(label: &str, xyz: &[Vec<T>; 3], mapper: &KeyMapper<T, u64>, got: &[u64]) {
    let [x, y, z] = xyz;
    assert_eq!(got.len(), x.len(), "{label}");
    for i in 0..x.len() {
        let want = mapper.key_clamped(x[i], y[i], z[i]);
        assert_eq!(
            got[i],
            want,
            "{label} {:?} point {i} of {} ({:?}, {:?}, {:?}): {:#x} vs {want:#x}",
            mapper.curve(),
            x.len(),
            x[i],
            y[i],
            z[i],
            got[i]
        );
    }
}

fn check<T: Real>(label: &str, e: &WgpuExecutor, xyz: &[Vec<T>; 3], mapper: &KeyMapper<T, u64>) {
    let n = xyz[0].len();
    let [x, y, z] = xyz;
    let (gx, gy, gz) = (e.upload(x).unwrap(), e.upload(y).unwrap(), e.upload(z).unwrap());
    let mut keys = e.alloc::<u64>(n).unwrap();
    e.sfc_keys(&gx, &gy, &gz, mapper, &mut keys).unwrap();
    compare(label, xyz, mapper, &e.download(&keys).unwrap());
}

/// Keys written before a key view and after it, which the launch must leave alone.
const UNTOUCHED: u64 = 0x5eed_5eed_5eed_5eed;

/// [`check`] on views: x, y, z and keys start 1, 2, 3 and 5 elements into longer
/// buffers, and the keys around the view keep [`UNTOUCHED`].
fn check_views<T: Real>(label: &str, e: &WgpuExecutor, xyz: &[Vec<T>; 3], mapper: &KeyMapper<T, u64>) {
    let n = xyz[0].len();
    let padded = |v: &[T], at: usize| -> Vec<T> {
        let mut out = vec![<T as Real>::from_f64(0.25); at];
        out.extend_from_slice(v);
        out.extend([<T as Real>::from_f64(0.75); 3]);
        out
    };
    let [x, y, z] = xyz;
    let (gx, gy, gz) =
        (e.upload(&padded(x, 1)).unwrap(), e.upload(&padded(y, 2)).unwrap(), e.upload(&padded(z, 3)).unwrap());
    let mut keys = e.upload(&vec![UNTOUCHED; n + 9]).unwrap();
    let (xv, yv, zv) = (gx.slice(1..n + 1).unwrap(), gy.slice(2..n + 2).unwrap(), gz.slice(3..n + 3).unwrap());
    e.sfc_keys(xv, yv, zv, mapper, keys.slice_mut(5..n + 5).unwrap()).unwrap();
    let got = e.download(&keys).unwrap();
    assert!(got[..5].iter().chain(&got[n + 5..]).all(|&k| k == UNTOUCHED), "{label}: a key outside the view changed");
    compare(label, xyz, mapper, &got[5..n + 5]);
}

/// Cell-centre positions of `n` points of a box of 2^21 cells per axis (scale 1) in
/// which each axis takes every one of its 2^21 cell values: x counts up, y is x with
/// its 21 bits reversed, z an odd-multiplier congruential map of x (each a permutation
/// of the cell values, repeating every 2^21 points).
fn lattice<T: Real>(n: usize) -> (Aabb<T>, [Vec<T>; 3]) {
    let cells = 1u32 << 21;
    let centre = |c: u32| <T as Real>::from_f64(f64::from(c) + 0.5);
    let cell = |i: usize| (i as u32) & (cells - 1);
    let x = (0..n).map(|i| centre(cell(i))).collect();
    let y = (0..n).map(|i| centre(cell(i).reverse_bits() >> 11)).collect();
    let z = (0..n).map(|i| centre(cell(i).wrapping_mul(0x9e37_79b1).wrapping_add(12_345) & (cells - 1))).collect();
    let bbox = Aabb::cube(<T as Real>::from_f64(0.0), <T as Real>::from_f64(f64::from(cells))).unwrap();
    (bbox, [x, y, z])
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
    each_path(|label, e| {
        for n in SIZES.into_iter().chain([1024, 1025, 1_000_000, (1 << 20) + 1]) {
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
    each_path(|label, e| {
        let xyz = positions(100_000, 3, 0.0f32, 1.0);
        for curve in [Curve::Morton, Curve::Hilbert] {
            check(label, e, &xyz, &KeyMapper::new(bbox, curve));
        }
    });
}

#[test]
fn a_flat_axis_puts_every_point_in_cell_zero_on_it() {
    let bbox = Aabb::new(Vec3::new(0.0f32, 0.0, 0.5), Vec3::new(1.0, 1.0, 0.5)).unwrap();
    each_path(|label, e| {
        let xyz = positions(4097, 11, 0.0f32, 1.0);
        for curve in [Curve::Morton, Curve::Hilbert] {
            check(label, e, &xyz, &KeyMapper::new(bbox, curve));
        }
    });
}

#[test]
fn f64_keys_match_with_shader_f64_and_are_unsupported_without() {
    let bbox = Aabb::new(Vec3::new(-1.0f64, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0)).unwrap();
    each_path(|label, e| {
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

#[test]
fn every_cell_value_of_every_axis_over_several_grid_stride_rounds() {
    // 3 rounds of 1024 workgroups x 1024 positions, then 785 positions of a fourth.
    let n = (3 << 20) + 785;
    let (bbox32, xyz32) = lattice::<f32>(n);
    let (bbox64, xyz64) = lattice::<f64>(n);
    each_path(|label, e| {
        for curve in [Curve::Morton, Curve::Hilbert] {
            check(label, e, &xyz32, &KeyMapper::new(bbox32, curve));
            if e.capabilities().f64 {
                check(label, e, &xyz64, &KeyMapper::new(bbox64, curve));
            }
        }
    });
}

#[test]
fn keys_of_views_at_offsets_for_both_curves_and_position_types() {
    let bbox32 = Aabb::new(Vec3::new(-1.5f32, 0.0, 10.0), Vec3::new(2.5, 1e-3, 10.5)).unwrap();
    let bbox64 = Aabb::new(Vec3::new(-1.0f64, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0)).unwrap();
    each_path(|label, e| {
        for n in SIZES.into_iter().filter(|&n| n > 0).chain([1025, 70_001]) {
            let xyz32 = with_edges(positions(n, 7 + n as u64, -3.0f32, 11.0), &bbox32);
            let xyz64 = with_edges(positions(n, 9 + n as u64, -4.0f64, 4.0), &bbox64);
            for curve in [Curve::Morton, Curve::Hilbert] {
                check_views(label, e, &xyz32, &KeyMapper::new(bbox32, curve));
                if e.capabilities().f64 {
                    check_views(label, e, &xyz64, &KeyMapper::new(bbox64, curve));
                }
            }
        }
    });
}

#[test]
fn a_device_opened_with_less_workgroup_memory_reports_it() {
    if let Some(e) = small_workgroup_memory() {
        let bytes = e.limits().max_shared_bytes_per_block;
        assert!(bytes <= SMALL_WORKGROUP_BYTES, "{bytes} bytes of workgroup memory");
    }
}
