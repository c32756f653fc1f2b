//! The CUDA executor against the CPU reference executor: every primitive and key kernel
//! on random input at the sizes of `common::SIZES`, bit-identical for integer outputs
//! (keys, permutations, counts, offsets, integer reductions, float min/max) and within a
//! stated tolerance for floating-point sums; plus every error path and the GPU launch
//! interface. Without a device each test prints "skipped: <reason>" and passes, unless
//! `ORRERY_REQUIRE_CUDA=1`.

use crate::common;

use std::ops::Range;

use orrery_backend_cuda::{CudaExecutor, Policy};
use orrery_core::gpu::buf;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{
    Aabb, CpuExecutor, DeviceBuffer, Element, Error, Executor, GpuExecutor, KernelArg, KernelSource, Launch, Real,
    ReduceOp, Scalar,
};
use rand::Rng;
use rand::seq::SliceRandom;

fn cpu() -> CpuExecutor {
    CpuExecutor::new()
}

// ---- generic drivers: the same calls on any executor ------------------------------------

fn sort_on<E: Executor>(e: &E, keys: &[u64], values: &[u32], bits: Range<u32>) -> (Vec<u64>, Vec<u32>) {
    let (mut k, mut v) = (e.upload(keys).unwrap(), e.upload(values).unwrap());
    e.sort_pairs(&mut k, &mut v, bits).unwrap();
    (e.download(&k).unwrap(), e.download(&v).unwrap())
}

fn scan_on<E: Executor>(e: &E, input: &[u32]) -> Vec<u32> {
    let inp = e.upload(input).unwrap();
    let mut out = e.alloc::<u32>(input.len() + 1).unwrap();
    e.exclusive_scan(&inp, &mut out).unwrap();
    e.download(&out).unwrap()
}

fn reduce_on<E: Executor, T: Element>(e: &E, input: &[T], op: ReduceOp) -> T {
    let inp = e.upload(input).unwrap();
    let mut out = e.alloc::<T>(1).unwrap();
    e.reduce(&inp, op, &mut out).unwrap();
    e.download(&out).unwrap()[0]
}

fn compact_on<E: Executor, T: Element>(e: &E, input: &[T], flags: &[u32]) -> Vec<T> {
    let (inp, fl) = (e.upload(input).unwrap(), e.upload(flags).unwrap());
    let mut out = e.alloc::<T>(input.len()).unwrap();
    let mut count = e.upload(&[u32::MAX]).unwrap();
    e.compact(&inp, &fl, &mut out, &mut count).unwrap();
    let c = e.download(&count).unwrap()[0] as usize;
    let mut all = e.download(&out).unwrap();
    all.truncate(c);
    all
}

fn gather_on<E: Executor, T: Element>(e: &E, input: &[T], indices: &[u32]) -> Vec<T> {
    let (inp, idx) = (e.upload(input).unwrap(), e.upload(indices).unwrap());
    let mut out = e.alloc::<T>(indices.len()).unwrap();
    e.gather(&inp, &idx, &mut out).unwrap();
    e.download(&out).unwrap()
}

fn scatter_on<E: Executor, T: Element>(e: &E, input: &[T], indices: &[u32], len: usize) -> Vec<T> {
    let (inp, idx) = (e.upload(input).unwrap(), e.upload(indices).unwrap());
    let mut out = e.upload(&vec![T::ZERO; len]).unwrap();
    e.scatter(&inp, &idx, &mut out).unwrap();
    e.download(&out).unwrap()
}

fn keys_on<E: Executor, T: Real>(e: &E, x: &[T], y: &[T], z: &[T], mapper: &KeyMapper<T, u64>) -> Vec<u64> {
    let (bx, by, bz) = (e.upload(x).unwrap(), e.upload(y).unwrap(), e.upload(z).unwrap());
    let mut keys = e.upload(&vec![0xdead_beef_u64; x.len()]).unwrap();
    e.sfc_keys(&bx, &by, &bz, mapper, &mut keys).unwrap();
    e.download(&keys).unwrap()
}

// ---- sort ----------------------------------------------------------------------------------

const BIT_RANGES: [Range<u32>; 7] = [0..64, 0..63, 0..30, 13..47, 0..8, 0..0, 56..64];

#[test]
fn sort_pairs_matches_cpu_for_every_size_and_bit_range() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(1, n);
        let keys: Vec<u64> = (0..n).map(|_| r.random()).collect();
        let values: Vec<u32> = (0..n).map(|_| r.random()).collect();
        for bits in BIT_RANGES {
            let got = sort_on(gpu, &keys, &values, bits.clone());
            let want = sort_on(&cpu, &keys, &values, bits.clone());
            assert!(got == want, "sort of {n} pairs on bits {bits:?} differs from the CPU");
        }
    }
}

#[test]
fn sort_pairs_is_stable_on_keys_with_many_equal_values() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(2, n);
        // 7 distinct keys spread over all bytes, so every pass sees heavy collisions;
        // values are the original positions, so stability shows in them.
        let keys: Vec<u64> = (0..n).map(|_| r.random_range(0..7u64) * 0x0101_0101_0101_0101).collect();
        let values: Vec<u32> = (0..n as u32).collect();
        for bits in [0..64, 8..24, 0..3] {
            let (gk, gv) = sort_on(gpu, &keys, &values, bits.clone());
            let (ck, cv) = sort_on(&cpu, &keys, &values, bits.clone());
            assert!(gk == ck && gv == cv, "stable sort of {n} colliding keys on bits {bits:?} differs from the CPU");
        }
        // All keys equal: the permutation must stay the identity.
        let same = vec![0x1234_5678_9abc_def0_u64; n];
        let (_, v) = sort_on(gpu, &same, &values, 0..64);
        assert!(v == values, "equal keys moved (n = {n})");
    }
}

#[test]
fn sort_pairs_of_already_sorted_and_reversed_keys() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    let n = 100_000;
    let values: Vec<u32> = (0..n as u32).collect();
    let ascending: Vec<u64> = (0..n as u64).map(|i| i * 0x0000_0100_0000_0001).collect();
    let descending: Vec<u64> = ascending.iter().rev().copied().collect();
    for keys in [ascending, descending] {
        assert!(sort_on(gpu, &keys, &values, 0..64) == sort_on(&cpu, &keys, &values, 0..64));
    }
}

#[test]
fn sort_pairs_reuses_scratch_across_sizes() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    // Large, then small, then large again: scratch and look-back words are reused with
    // fresh epochs, never cleared.
    for (i, &n) in [300_000usize, 5, 4096, 70_001, 300_000].iter().enumerate() {
        let mut r = common::rng(3 + i as u64, n);
        let keys: Vec<u64> = (0..n).map(|_| r.random::<u64>() >> 20).collect();
        let values: Vec<u32> = (0..n).map(|_| r.random()).collect();
        assert!(sort_on(gpu, &keys, &values, 0..44) == sort_on(&cpu, &keys, &values, 0..44), "n = {n}");
    }
}

// ---- scan ----------------------------------------------------------------------------------

#[test]
fn exclusive_scan_matches_cpu() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(10, n);
        let small: Vec<u32> = (0..n).map(|_| r.random_range(0..100)).collect();
        let wrapping: Vec<u32> = (0..n).map(|_| r.random()).collect();
        for input in [small, wrapping] {
            assert!(scan_on(gpu, &input) == scan_on(&cpu, &input), "scan of {n} elements differs from the CPU");
        }
    }
}

#[test]
fn exclusive_scan_writes_every_element() {
    let gpu = cuda_or_skip!();
    let n = 1_000_003;
    let input = vec![1u32; n];
    let inp = gpu.upload(&input).unwrap();
    let mut out = gpu.upload(&vec![u32::MAX; n + 1]).unwrap();
    gpu.exclusive_scan(&inp, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as u32));
}

// ---- reductions ----------------------------------------------------------------------------

fn check_exact_reductions<T: Element>(make: impl Fn(&mut rand_chacha::ChaCha8Rng) -> T, test: u64) {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(test, n);
        let input: Vec<T> = (0..n).map(|_| make(&mut r)).collect();
        for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
            let (g, c) = (reduce_on(gpu, &input, op), reduce_on(&cpu, &input, op));
            assert!(bytemuck::bytes_of(&g) == bytemuck::bytes_of(&c), "{op:?} of {n} {:?}: {g:?} != {c:?}", T::DTYPE);
        }
    }
}

#[test]
fn integer_reductions_match_cpu_exactly() {
    check_exact_reductions::<u32>(rand::Rng::random, 20);
    check_exact_reductions::<i32>(rand::Rng::random, 21);
    check_exact_reductions::<u64>(rand::Rng::random, 22);
    check_exact_reductions::<i64>(rand::Rng::random, 23);
}

/// Float sums: both executors sum in a fixed order, but not the same one. Each result
/// lies within (depth * eps * sum |x|) of the exact sum, where depth bounds the number of
/// roundings any element goes through: the CPU adds each 16384-element tile left to
/// right, then the tiles (depth <= 16384 + n / 16384); the GPU adds 16 (f32) or 8 (f64)
/// elements per thread, 5 warp levels and 8 warps per tile, at most 3 tile levels
/// (depth <= 3 * 29 < 100). So the two differ by at most the sum of both bounds.
fn check_float_reductions<T: Real>(eps: f64, test: u64) {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(test, n);
        let input: Vec<T> = (0..n).map(|_| <T as Real>::from_f64(r.random_range(-1.0..1.0))).collect();
        for op in [ReduceOp::Min, ReduceOp::Max] {
            let (g, c) = (reduce_on(gpu, &input, op), reduce_on(&cpu, &input, op));
            assert!(bytemuck::bytes_of(&g) == bytemuck::bytes_of(&c), "{op:?} of {n} {:?}: {g:?} != {c:?}", T::DTYPE);
        }
        let g: f64 = reduce_on(gpu, &input, ReduceOp::Sum).into();
        let c: f64 = reduce_on(&cpu, &input, ReduceOp::Sum).into();
        let abs_sum: f64 = input.iter().map(|&v| Into::<f64>::into(v).abs()).sum();
        let depth = (n.min(16384) + n / 16384 + 100) as f64;
        assert!((g - c).abs() <= depth * eps * abs_sum, "sum of {n} {:?}: gpu {g} cpu {c}", T::DTYPE);
        // Deterministic run to run.
        let again: f64 = reduce_on(gpu, &input, ReduceOp::Sum).into();
        assert!(g.to_bits() == again.to_bits(), "sum of {n} {:?} changed between runs", T::DTYPE);
    }
}

#[test]
fn float_reductions_match_cpu_within_rounding_and_repeat_exactly() {
    check_float_reductions::<f32>(f64::from(f32::EPSILON), 30);
    check_float_reductions::<f64>(f64::EPSILON, 31);
}

#[test]
fn reductions_of_empty_input_give_the_identity() {
    let gpu = cuda_or_skip!();
    assert_eq!(reduce_on::<_, u32>(gpu, &[], ReduceOp::Sum), 0);
    assert_eq!(reduce_on::<_, i64>(gpu, &[], ReduceOp::Min), i64::MAX);
    assert_eq!(reduce_on::<_, f32>(gpu, &[], ReduceOp::Max), f32::NEG_INFINITY);
    assert_eq!(reduce_on::<_, f64>(gpu, &[], ReduceOp::Min), f64::INFINITY);
}

// ---- compaction ----------------------------------------------------------------------------

fn check_compaction<T: Element>(make: impl Fn(&mut rand_chacha::ChaCha8Rng) -> T, test: u64) {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(test, n);
        let input: Vec<T> = (0..n).map(|_| make(&mut r)).collect();
        for density in [0.0, 0.01, 0.5, 1.0] {
            let flags: Vec<u32> =
                (0..n).map(|_| if r.random_bool(density) { r.random_range(1..=u32::MAX) } else { 0 }).collect();
            let (g, c) = (compact_on(gpu, &input, &flags), compact_on(&cpu, &input, &flags));
            assert!(
                bytemuck::cast_slice::<T, u8>(&g) == bytemuck::cast_slice::<T, u8>(&c),
                "compaction of {n} {:?} at density {density} differs",
                T::DTYPE
            );
        }
    }
}

#[test]
fn compaction_matches_cpu_for_4_and_8_byte_elements() {
    check_compaction::<u32>(rand::Rng::random, 40);
    check_compaction::<f32>(|r| r.random_range(-1.0f32..1.0), 41);
    check_compaction::<u64>(rand::Rng::random, 42);
    check_compaction::<f64>(|r| r.random_range(-1.0f64..1.0), 43);
}

// ---- gather, scatter, fill, iota, copy -----------------------------------------------------

fn check_gather_scatter<T: Element>(make: impl Fn(&mut rand_chacha::ChaCha8Rng) -> T, test: u64) {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(test, n);
        let input: Vec<T> = (0..n).map(|_| make(&mut r)).collect();
        let mut perm: Vec<u32> = (0..n as u32).collect();
        perm.shuffle(&mut r);
        let g = gather_on(gpu, &input, &perm);
        assert!(bytemuck::cast_slice::<T, u8>(&g) == bytemuck::cast_slice::<T, u8>(&gather_on(&cpu, &input, &perm)));
        let s = scatter_on(gpu, &input, &perm, n);
        assert!(
            bytemuck::cast_slice::<T, u8>(&s) == bytemuck::cast_slice::<T, u8>(&scatter_on(&cpu, &input, &perm, n))
        );
        // Gather with repeated indices into a shorter output.
        if n > 0 {
            let idx: Vec<u32> = (0..=n / 2).map(|_| r.random_range(0..n as u32)).collect();
            let g = gather_on(gpu, &input, &idx);
            assert!(bytemuck::cast_slice::<T, u8>(&g) == bytemuck::cast_slice::<T, u8>(&gather_on(&cpu, &input, &idx)));
        }
    }
}

#[test]
fn gather_and_scatter_match_cpu_for_4_and_8_byte_elements() {
    check_gather_scatter::<u32>(rand::Rng::random, 50);
    check_gather_scatter::<i32>(rand::Rng::random, 51);
    check_gather_scatter::<u64>(rand::Rng::random, 52);
    check_gather_scatter::<f64>(|r| r.random_range(-1.0f64..1.0), 53);
}

#[test]
fn fill_iota_and_copy_match_cpu() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut a = gpu.alloc::<u32>(n).unwrap();
        gpu.iota(&mut a, u32::MAX - 7).unwrap();
        let mut b = cpu.alloc::<u32>(n).unwrap();
        cpu.iota(&mut b, u32::MAX - 7).unwrap();
        assert!(gpu.download(&a).unwrap() == cpu.download(&b).unwrap(), "iota of {n}");

        let mut f = gpu.alloc::<f64>(n).unwrap();
        gpu.fill(&mut f, -2.5).unwrap();
        assert!(gpu.download(&f).unwrap().iter().all(|&v| v == -2.5), "fill f64 of {n}");
        let mut i = gpu.alloc::<i32>(n).unwrap();
        gpu.fill(&mut i, -7).unwrap();
        assert!(gpu.download(&i).unwrap().iter().all(|&v| v == -7), "fill i32 of {n}");
        let mut u = gpu.alloc::<u64>(n).unwrap();
        gpu.fill(&mut u, 0x0123_4567_89ab_cdef).unwrap();
        assert!(gpu.download(&u).unwrap().iter().all(|&v| v == 0x0123_4567_89ab_cdef), "fill u64 of {n}");

        let mut c = gpu.alloc::<u32>(n).unwrap();
        gpu.copy(&a, &mut c).unwrap();
        assert!(gpu.download(&c).unwrap() == gpu.download(&a).unwrap(), "copy of {n}");
    }
}

// ---- SFC keys ------------------------------------------------------------------------------

/// Positions mostly inside the box, some outside (clamped), and every few hundredth a
/// special value (NaN, infinities, the faces themselves).
fn positions<T: Real>(n: usize, test: u64, lo: [f64; 3], hi: [f64; 3]) -> [Vec<T>; 3] {
    let mut r = common::rng(test, n);
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e30, -1e30];
    let axis = |a: usize, r: &mut rand_chacha::ChaCha8Rng| -> Vec<T> {
        (0..n)
            .map(|i| {
                let v = match i % 257 {
                    0 => specials[r.random_range(0..specials.len())],
                    1 => lo[a],
                    2 => hi[a],
                    _ => lo[a] + (hi[a] - lo[a]) * r.random_range(-0.05..1.05),
                };
                <T as Real>::from_f64(v)
            })
            .collect()
    };
    [axis(0, &mut r), axis(1, &mut r), axis(2, &mut r)]
}

fn check_keys<T: Real>(test: u64) {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    let (lo, hi) = ([-1.5, 0.25, 3.0], [2.0, 0.75, 1000.0]);
    let bbox = Aabb::new(lo.map(<T as Real>::from_f64).into(), hi.map(<T as Real>::from_f64).into()).unwrap();
    // A flat box (zero extent on z) maps every z to cell 0.
    let flat = Aabb::new(lo.map(<T as Real>::from_f64).into(), [hi[0], hi[1], lo[2]].map(<T as Real>::from_f64).into())
        .unwrap();
    for n in common::sizes() {
        let [x, y, z] = positions::<T>(n, test, lo, hi);
        for b in [bbox, flat] {
            for curve in [Curve::Morton, Curve::Hilbert] {
                let mapper = KeyMapper::<T, u64>::new(b, curve);
                let g = keys_on(gpu, &x, &y, &z, &mapper);
                let c = keys_on(&cpu, &x, &y, &z, &mapper);
                assert!(g == c, "{curve:?} keys of {n} {:?} points differ from the CPU", T::DTYPE);
            }
        }
    }
}

#[test]
fn sfc_keys_match_cpu_bit_for_bit_f32() {
    check_keys::<f32>(60);
}

#[test]
fn sfc_keys_match_cpu_bit_for_bit_f64() {
    check_keys::<f64>(61);
}

/// Executors with other launch shapes than the default policy: every variant the
/// benchmark weighs must compute the same function.
fn policy_variants(gpu: &CudaExecutor) -> Vec<CudaExecutor> {
    let base = *gpu.policy();
    let shapes = [
        Policy { hilbert_levels: 1, scan_vecs: 4, scan_lookback_words: 4, sort_min_blocks: 2, ..base },
        Policy { scan_threads: 512, scan_vecs: 8, scan_lookback_words: 2, sort_items: 12, ..base },
        Policy { scan_threads: 128, scan_vecs: 16, sort_items: 12, sort_min_blocks: 2, ..base },
        Policy { sort_items: 18, sort_hist_items: 16, ..base },
    ];
    shapes.iter().map(|&p| CudaExecutor::with_policy(gpu.ordinal(), p).unwrap()).collect()
}

#[test]
fn other_launch_shapes_compute_the_same_results() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    let variants = policy_variants(gpu);
    let sizes: Vec<usize> = common::sizes().into_iter().filter(|n| [0, 1, 33, 4097, 1_000_003].contains(n)).collect();
    for n in sizes {
        let mut r = common::rng(70, n);
        let keys: Vec<u64> = (0..n).map(|_| r.random()).collect();
        let values: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let flags: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.3))).collect();
        let [x, y, z] = positions::<f32>(n, 71, [0.0; 3], [1.0; 3]);
        let [xd, yd, zd] = positions::<f64>(n, 72, [0.0; 3], [1.0; 3]);
        let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0).unwrap(), Curve::Hilbert);
        let mapper_d = KeyMapper::<f64, u64>::new(Aabb::cube(0.0, 1.0).unwrap(), Curve::Hilbert);
        let want_sort = sort_on(&cpu, &keys, &values, 0..64);
        let want_scan = scan_on(&cpu, &values);
        let want_compact = compact_on(&cpu, &keys, &flags);
        let want_keys = keys_on(&cpu, &x, &y, &z, &mapper);
        let want_keys_d = keys_on(&cpu, &xd, &yd, &zd, &mapper_d);
        for v in &variants {
            let p = v.policy();
            assert!(sort_on(v, &keys, &values, 0..64) == want_sort, "sort of {n} with {p:?}");
            assert!(scan_on(v, &values) == want_scan, "scan of {n} with {p:?}");
            assert!(compact_on(v, &keys, &flags) == want_compact, "compaction of {n} with {p:?}");
            assert!(keys_on(v, &x, &y, &z, &mapper) == want_keys, "f32 Hilbert keys of {n} with {p:?}");
            assert!(keys_on(v, &xd, &yd, &zd, &mapper_d) == want_keys_d, "f64 Hilbert keys of {n} with {p:?}");
        }
    }
}

// ---- memory, timing, errors ----------------------------------------------------------------

#[test]
fn zero_length_buffers_work_everywhere() {
    let gpu = cuda_or_skip!();
    let empty = gpu.alloc::<u64>(0).unwrap();
    assert_eq!(empty.len(), 0);
    assert_eq!(gpu.download(&empty).unwrap(), Vec::<u64>::new());
    let up = gpu.upload::<f32>(&[]).unwrap();
    assert!(up.is_empty());
    let mut copy = gpu.alloc::<f32>(0).unwrap();
    gpu.copy(&up, &mut copy).unwrap();
    gpu.synchronize().unwrap();
}

#[test]
fn resize_keeps_data_grows_with_headroom_and_never_shrinks() {
    let gpu = cuda_or_skip!();
    let data: Vec<u32> = (0..10).collect();
    let mut b = gpu.upload(&data).unwrap();
    assert_eq!(b.capacity(), 10);
    gpu.resize(&mut b, 20).unwrap();
    assert_eq!((b.len(), b.capacity()), (20, 25));
    assert_eq!(&gpu.download(&b).unwrap()[..10], &data[..]);
    gpu.resize(&mut b, 4).unwrap();
    assert_eq!((b.len(), b.capacity()), (4, 25));
    assert_eq!(gpu.download(&b).unwrap(), &data[..4]);
    let ptr = b.device_ptr();
    gpu.resize(&mut b, 25).unwrap();
    assert_eq!(b.device_ptr(), ptr, "growing within the capacity must not reallocate");
    let mut z = gpu.alloc::<u64>(0).unwrap();
    gpu.resize(&mut z, 3).unwrap();
    gpu.write(&mut z, 0, &[1, 2, 3]).unwrap();
    assert_eq!(gpu.download(&z).unwrap(), vec![1, 2, 3]);
}

#[test]
fn partial_reads_and_writes() {
    let gpu = cuda_or_skip!();
    let mut b = gpu.upload(&[0u64; 8]).unwrap();
    gpu.write(&mut b, 5, &[7, 8, 9]).unwrap();
    let mut out = [0u64; 4];
    gpu.read(&b, 4, &mut out).unwrap();
    assert_eq!(out, [0, 7, 8, 9]);
    assert!(matches!(gpu.write(&mut b, 6, &[1, 2, 3]), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.read(&b, 7, &mut out), Err(Error::LengthMismatch { .. })));
}

#[test]
fn markers_measure_device_time() {
    let gpu = cuda_or_skip!();
    let a = gpu.upload(&vec![1u32; 1 << 20]).unwrap();
    let mut out = gpu.alloc::<u32>((1 << 20) + 1).unwrap();
    let start = gpu.mark().unwrap();
    gpu.exclusive_scan(&a, &mut out).unwrap();
    let end = gpu.mark().unwrap();
    let t = gpu.elapsed(&start, &end).unwrap();
    assert!(t.as_secs_f64() < 10.0);
    assert!(gpu.name().starts_with("cuda:"));
}

#[test]
fn length_mismatches_and_bad_bit_ranges_are_errors() {
    let gpu = cuda_or_skip!();
    let k = gpu.upload(&[3u64, 1, 2]).unwrap();
    let v2 = gpu.upload(&[0u32, 1]).unwrap();
    let v3 = gpu.upload(&[0u32, 1, 2]).unwrap();
    let (mut k1, mut k2) = (gpu.upload(&[3u64, 1, 2]).unwrap(), gpu.upload(&[3u64, 1, 2]).unwrap());
    let mut v2m = gpu.upload(&[0u32, 1]).unwrap();
    let mut v3m = gpu.upload(&[0u32, 1, 2]).unwrap();
    assert!(matches!(gpu.sort_pairs(&mut k1, &mut v2m, 0..64), Err(Error::LengthMismatch { .. })));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 5..3;
    assert!(matches!(
        gpu.sort_pairs(&mut k2, &mut v3m, reversed),
        Err(Error::InvalidBitRange { start: 5, end: 3, .. })
    ));
    assert!(matches!(gpu.sort_pairs(&mut k2, &mut v3m, 0..65), Err(Error::InvalidBitRange { .. })));
    // Nothing was changed by the failed calls.
    assert_eq!(gpu.download(&k2).unwrap(), vec![3, 1, 2]);

    let mut short = gpu.alloc::<u32>(3).unwrap();
    assert!(matches!(gpu.exclusive_scan(&v3, &mut short), Err(Error::LengthMismatch { .. })));
    let mut two = gpu.alloc::<u64>(2).unwrap();
    assert!(matches!(gpu.reduce(&k, ReduceOp::Sum, &mut two), Err(Error::LengthMismatch { .. })));
    let mut out3 = gpu.alloc::<u64>(3).unwrap();
    let mut count = gpu.alloc::<u32>(1).unwrap();
    assert!(matches!(gpu.compact(&k, &v2, &mut out3, &mut count), Err(Error::LengthMismatch { .. })));
    let mut no_count = gpu.alloc::<u32>(0).unwrap();
    assert!(matches!(gpu.compact(&k, &v3, &mut out3, &mut no_count), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.gather(&k, &v3, &mut two), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.scatter(&k, &v2, &mut out3), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.copy(&k, &mut two), Err(Error::LengthMismatch { .. })));
    let x = gpu.upload(&[0.5f32; 3]).unwrap();
    let y = gpu.upload(&[0.5f32; 2]).unwrap();
    let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0).unwrap(), Curve::Morton);
    assert!(matches!(gpu.sfc_keys(&x, &y, &x, &mapper, &mut out3), Err(Error::LengthMismatch { .. })));
}

#[test]
fn missing_device_ordinal_is_unavailable_not_a_panic() {
    let gpu = cuda_or_skip!();
    let _ = gpu;
    assert!(matches!(CudaExecutor::new(4096), Err(Error::DeviceUnavailable { .. })));
}

// ---- GpuExecutor ---------------------------------------------------------------------------

const SAXPY: KernelSource = KernelSource::new(
    "test/saxpy",
    r#"
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#,
    "",
);

const BROKEN: KernelSource =
    KernelSource::new("test/broken", r#"extern "C" __global__ void broken(float* x) { x[0] = undeclared_name; }"#, "");

#[test]
fn user_kernels_launch_through_gpu_executor() {
    let gpu = cuda_or_skip!();
    let n = 1000u32;
    let x = gpu.upload(&(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap();
    let y = gpu.upload(&vec![1.0f32; n as usize]).unwrap();
    gpu.prepare(&SAXPY).unwrap();
    let args = [
        buf::<CudaExecutor, f32>(&x),
        buf::<CudaExecutor, f32>(&y),
        KernelArg::Scalar(Scalar::F32(2.0)),
        KernelArg::Scalar(Scalar::U32(n)),
    ];
    gpu.launch(&SAXPY, "saxpy", Launch::per_item(n as usize, 128), &args).unwrap();
    gpu.launch(&SAXPY, "saxpy", Launch { blocks: 0, threads: 128 }, &args).unwrap();
    let got = gpu.download(&y).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == 2.0 * i as f32 + 1.0));
    assert!(matches!(
        gpu.launch(&SAXPY, "no_such_entry", Launch::per_item(1, 32), &args),
        Err(Error::InvalidArgument { .. })
    ));
}

#[test]
fn kernel_that_fails_to_compile_reports_nvrtc_log() {
    let gpu = cuda_or_skip!();
    match gpu.prepare(&BROKEN) {
        Err(Error::KernelCompile { module, log, .. }) => {
            assert_eq!(module, "test/broken");
            assert!(log.contains("undeclared_name"), "log: {log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

// ---- v2: views, any-width elements, counted and inclusive scans -----------------------------

/// A 12-byte element: moves through the word kernels.
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Body {
    w: [u32; 3],
}

/// A 40-byte element: more than 8 words, so `fill` takes two word launches.
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Wide {
    w: [u32; 10],
}

fn random_bodies(r: &mut rand_chacha::ChaCha8Rng, n: usize) -> Vec<Body> {
    (0..n).map(|_| Body { w: [r.random(), r.random(), r.random()] }).collect()
}

fn compact_all_on<E: Executor, T: orrery_core::Storage>(e: &E, input: &[T], flags: &[u32]) -> (Vec<T>, u32) {
    let (inp, fl) = (e.upload(input).unwrap(), e.upload(flags).unwrap());
    let mut out = e.upload(input).unwrap();
    let mut count = e.upload(&[u32::MAX]).unwrap();
    e.compact(&inp, &fl, &mut out, &mut count).unwrap();
    let c = e.download(&count).unwrap()[0];
    let mut all = e.download(&out).unwrap();
    all.truncate(c as usize);
    (all, c)
}

#[test]
fn twelve_and_forty_byte_elements_gather_scatter_fill_and_compact_like_the_cpu() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(80, n);
        let bodies = random_bodies(&mut r, n);
        let mut perm: Vec<u32> = (0..n as u32).collect();
        perm.shuffle(&mut r);
        let run = |e: &dyn Fn() -> (Vec<Body>, Vec<Body>)| e();
        let on = |e: &CudaExecutor| {
            let (inp, idx) = (e.upload(&bodies).unwrap(), e.upload(&perm).unwrap());
            let mut g = e.upload(&bodies).unwrap();
            e.gather(&inp, &idx, &mut g).unwrap();
            let mut s = e.upload(&bodies).unwrap();
            e.scatter(&inp, &idx, &mut s).unwrap();
            (e.download(&g).unwrap(), e.download(&s).unwrap())
        };
        let (inp, idx) = (cpu.upload(&bodies).unwrap(), cpu.upload(&perm).unwrap());
        let mut g = cpu.upload(&bodies).unwrap();
        cpu.gather(&inp, &idx, &mut g).unwrap();
        let mut s = cpu.upload(&bodies).unwrap();
        cpu.scatter(&inp, &idx, &mut s).unwrap();
        let want = (cpu.download(&g).unwrap(), cpu.download(&s).unwrap());
        assert!(run(&|| on(gpu)) == want, "gather / scatter of {n} 12-byte elements");

        let flags: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.4))).collect();
        assert!(
            compact_all_on(gpu, &bodies, &flags) == compact_all_on(&cpu, &bodies, &flags),
            "compaction of {n} bodies"
        );

        let mut f = gpu.alloc::<Body>(n).unwrap();
        gpu.fill(&mut f, Body { w: [1, 2, 3] }).unwrap();
        assert!(gpu.download(&f).unwrap().iter().all(|b| b.w == [1, 2, 3]), "fill of {n} bodies");
        let wide = Wide { w: [9, 8, 7, 6, 5, 4, 3, 2, 1, 0] };
        let mut fw = gpu.alloc::<Wide>(n).unwrap();
        gpu.fill(&mut fw, wide).unwrap();
        assert!(gpu.download(&fw).unwrap().iter().all(|b| *b == wide), "fill of {n} 40-byte elements");
    }
}

#[test]
fn out_of_bounds_indices_never_fault() {
    let gpu = cuda_or_skip!();
    let input = gpu.upload(&[5u64, 6, 7]).unwrap();
    let idx = gpu.upload(&[0u32, 3, u32::MAX, 2]).unwrap();
    let mut out = gpu.upload(&[1u64; 4]).unwrap();
    gpu.gather(&input, &idx, &mut out).unwrap();
    let got = gpu.download(&out).unwrap();
    assert_eq!((got[0], got[3]), (5, 7));
    let src = gpu.upload(&[1u64, 2, 3, 4]).unwrap();
    let mut dst = gpu.upload(&[0u64; 3]).unwrap();
    gpu.scatter(&src, &idx, &mut dst).unwrap();
    assert_eq!(gpu.download(&dst).unwrap(), vec![1, 0, 4]);
}

#[test]
fn primitives_on_views_at_odd_offsets_match_the_cpu() {
    use orrery_core::Slice;
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(81, n);
        let pad = 3usize;
        let data: Vec<u32> = (0..n + 2 * pad).map(|_| r.random_range(0..1000)).collect();
        let keys: Vec<u64> = (0..n + 2 * pad).map(|_| r.random()).collect();
        let flags: Vec<u32> = (0..n + 2 * pad).map(|_| u32::from(r.random_bool(0.5))).collect();
        let f64s: Vec<f64> = (0..n + 2 * pad).map(|_| r.random_range(-1.0..1.0)).collect();
        macro_rules! on {
            ($e:expr) => {{
                let e = $e;
                let d = e.upload(&data).unwrap();
                let fl = e.upload(&flags).unwrap();
                let mut scan = e.upload(&vec![7u32; n + 2 * pad + 1]).unwrap();
                e.exclusive_scan(d.slice(pad..pad + n).unwrap(), scan.slice_mut(1..n + 2).unwrap()).unwrap();
                let mut incl = e.upload(&vec![7u32; n + 2 * pad]).unwrap();
                e.inclusive_scan(d.slice(pad..pad + n).unwrap(), incl.slice_mut(pad - 1..pad - 1 + n).unwrap()).unwrap();
                let mut k = e.upload(&keys).unwrap();
                let mut v = e.upload(&data).unwrap();
                e.sort_pairs(k.slice_mut(pad..pad + n).unwrap(), v.slice_mut(1..1 + n).unwrap(), 0..64).unwrap();
                let mut out = e.upload(&data).unwrap();
                let mut count = e.upload(&[0u32, 0, 0]).unwrap();
                e.compact(
                    d.slice(pad..pad + n).unwrap(),
                    fl.slice(1..1 + n).unwrap(),
                    out.slice_mut(pad..pad + n).unwrap(),
                    count.slice_mut(1..2).unwrap(),
                )
                .unwrap();
                let x = e.upload(&f64s).unwrap();
                let mut sum = e.upload(&[0.0f64; 3]).unwrap();
                e.reduce(x.slice(1..1 + n).unwrap(), ReduceOp::Max, sum.slice_mut(2..3).unwrap()).unwrap();
                let mut filled = e.upload(&keys).unwrap();
                e.fill(filled.slice_mut(pad..pad + n).unwrap(), 42u64).unwrap();
                (
                    e.download(&scan).unwrap(),
                    e.download(&incl).unwrap(),
                    e.download(&k).unwrap(),
                    e.download(&v).unwrap(),
                    e.download(&count).unwrap(),
                    e.download(&out).unwrap()[pad..pad + e.download(&count).unwrap()[1] as usize].to_vec(),
                    e.download(&sum).unwrap(),
                    e.download(&filled).unwrap(),
                )
            }};
        }
        let (g, c) = (on!(gpu), on!(&cpu));
        assert!(g.0 == c.0, "exclusive scan of a view of {n}");
        assert!(g.1 == c.1, "inclusive scan of a view of {n}");
        assert!(g.2 == c.2 && g.3 == c.3, "sort of views of {n}");
        assert!(g.4 == c.4 && g.5 == c.5, "compaction of views of {n}");
        assert!(bytemuck::cast_slice::<f64, u8>(&g.6) == bytemuck::cast_slice::<f64, u8>(&c.6), "max of a view of {n}");
        assert!(g.7 == c.7, "fill of a view of {n}");
    }
}

#[test]
fn counted_scans_and_compactions_read_the_count_on_the_device() {
    use orrery_core::DeviceCount;
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for n in common::sizes() {
        let mut r = common::rng(82, n);
        let input: Vec<u32> = (0..n).map(|_| r.random()).collect();
        let flags: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.3))).collect();
        for live in [0, n / 2, n, n + 5, u32::MAX as usize] {
            macro_rules! on {
                ($e:expr) => {{
                    let e = $e;
                    let slot = e.upload(&[u32::try_from(live).unwrap_or(u32::MAX)]).unwrap();
                    let count = DeviceCount::new(&slot, n).unwrap();
                    let inp = e.upload(&input).unwrap();
                    let fl = e.upload(&flags).unwrap();
                    let mut out = e.upload(&vec![0xdead_beefu32; n + 1]).unwrap();
                    e.exclusive_scan_counted(&inp, count, &mut out).unwrap();
                    let mut comp = e.upload(&input).unwrap();
                    let mut c = e.upload(&[u32::MAX]).unwrap();
                    e.compact_counted(&inp, &fl, count, &mut comp, &mut c).unwrap();
                    let c0 = e.download(&c).unwrap()[0];
                    (e.download(&out).unwrap(), c0, e.download(&comp).unwrap()[..c0 as usize].to_vec())
                }};
            }
            assert!(on!(gpu) == on!(&cpu), "counted scan / compaction of {n} with live {live}");
        }
        let mut want = cpu.alloc::<u32>(n).unwrap();
        cpu.inclusive_scan(&cpu.upload(&input).unwrap(), &mut want).unwrap();
        let mut got = gpu.alloc::<u32>(n).unwrap();
        gpu.inclusive_scan(&gpu.upload(&input).unwrap(), &mut got).unwrap();
        assert!(gpu.download(&got).unwrap() == cpu.download(&want).unwrap(), "inclusive scan of {n}");
    }
}

#[test]
fn many_scans_in_a_row_keep_the_device_epochs_consistent() {
    // Alternating large and small scans and sorts on one executor: every launch draws
    // its epoch on the device and the status words of bigger earlier launches must never
    // be mistaken for current ones.
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    for round in 0..40usize {
        let n = if round % 3 == 0 { 300_001 } else { 1 + round * 977 };
        let mut r = common::rng(83 + round as u64, n);
        let input: Vec<u32> = (0..n).map(|_| r.random()).collect();
        assert!(scan_on(gpu, &input) == scan_on(&cpu, &input), "round {round}: scan of {n}");
        if round % 5 == 0 {
            let keys: Vec<u64> = (0..n).map(|_| r.random()).collect();
            assert!(sort_on(gpu, &keys, &input, 0..64) == sort_on(&cpu, &keys, &input, 0..64), "round {round}: sort");
        }
    }
}

#[test]
fn scans_and_sorts_stay_correct_across_the_epoch_wrap() {
    // Status words of an earlier cycle must never pass for current ones: a large launch
    // at the last epoch, then a small one at epoch 1 (which clears the large one's words
    // past its own), then a jump to the last epoch again and a large launch reading those
    // words; and the mirror case (large at epoch 1, small at the last epoch, large at 1).
    let gpu = &cuda_or_skip!().fork().unwrap();
    let cpu = cpu();
    let max_epoch: u32 = (1 << 30) - 1;
    let big = 300_001;
    let mut r = common::rng(85, big);
    let large: Vec<u32> = (0..big).map(|_| r.random()).collect();
    let small: Vec<u32> = large[..5000].to_vec();
    let keys: Vec<u64> = (0..big).map(|_| r.random()).collect();
    // Each large scan gets other input, so a stale status word gives a wrong prefix.
    let round = std::cell::Cell::new(0u32);
    let check = |what: &str| {
        round.set(round.get() + 1);
        let input: Vec<u32> = large.iter().map(|&v| v.wrapping_mul(round.get()).wrapping_add(round.get())).collect();
        assert!(scan_on(gpu, &input) == scan_on(&cpu, &input), "{what}: large scan");
    };
    gpu.jump_lookback_epoch_for_tests(max_epoch).unwrap();
    check("at the last epoch");
    assert!(scan_on(gpu, &small) == scan_on(&cpu, &small), "small scan at epoch 1");
    gpu.jump_lookback_epoch_for_tests(max_epoch).unwrap();
    check("at the last epoch of the next cycle");
    check("at epoch 1 after a large launch at the last epoch");
    gpu.jump_lookback_epoch_for_tests(max_epoch).unwrap();
    assert!(scan_on(gpu, &small) == scan_on(&cpu, &small), "small scan at the last epoch");
    check("at epoch 1 after a small launch at the last epoch");
    // The sort's passes cross the wrap too (8 launches).
    gpu.jump_lookback_epoch_for_tests(max_epoch - 3).unwrap();
    assert!(sort_on(gpu, &keys, &large, 0..64) == sort_on(&cpu, &keys, &large, 0..64), "sort across the wrap");
    assert!(gpu.jump_lookback_epoch_for_tests(0).is_err() && gpu.jump_lookback_epoch_for_tests(1 << 30).is_err());
}

// ---- v2: limits, status reads, forks -------------------------------------------------------

#[test]
fn limits_come_from_the_device() {
    let gpu = cuda_or_skip!();
    let l = gpu.limits();
    assert_eq!(l.subgroup_size, Some(32));
    assert!(l.max_threads_per_block >= 1024 && l.max_shared_bytes_per_block >= 48 * 1024);
    assert_eq!(l.compute_units, gpu.sm_count());
    assert!(l.replay && l.f64 && l.view_alignment == 1 && l.max_blocks >= 65535);
}

#[test]
fn read_async_returns_the_values_after_the_work_before_it() {
    use orrery_core::Slice;
    let gpu = cuda_or_skip!();
    let input = gpu.upload(&vec![1u32; 100_000]).unwrap();
    let mut out = gpu.alloc::<u32>(100_001).unwrap();
    gpu.exclusive_scan(&input, &mut out).unwrap();
    let total = gpu.read_async(out.slice(100_000..100_001).unwrap()).unwrap();
    let head = gpu.read_async(out.slice(0..3).unwrap()).unwrap();
    let empty = gpu.read_async(out.slice(5..5).unwrap()).unwrap();
    // Work enqueued after the reads does not change what they return.
    gpu.fill(&mut out, 9).unwrap();
    assert_eq!(gpu.wait(total).unwrap(), vec![100_000]);
    assert_eq!(gpu.wait(head).unwrap(), vec![0, 1, 2]);
    assert!(gpu.wait(empty).unwrap().is_empty());
    // A pending read dropped unwaited is harmless.
    drop(gpu.read_async(&out).unwrap());
    assert!(gpu.download(&out).unwrap().iter().all(|&v| v == 9));
}

#[test]
fn forks_run_on_their_own_stream_ordered_by_events() {
    let gpu = cuda_or_skip!();
    let cpu = cpu();
    let fork = gpu.fork().unwrap();
    let n = 500_000;
    let mut r = common::rng(84, n);
    let input: Vec<u32> = (0..n).map(|_| r.random_range(0..10)).collect();
    let inp = gpu.upload(&input).unwrap();
    let mut a = gpu.alloc::<u32>(n + 1).unwrap();
    gpu.exclusive_scan(&inp, &mut a).unwrap();
    let done = gpu.signal().unwrap();
    // The fork scans the main stream's result (with its own scratch), after the event.
    fork.wait_for(&done).unwrap();
    let mut b = fork.alloc::<u32>(n + 2).unwrap();
    fork.exclusive_scan(&a, &mut b).unwrap();
    let back = fork.signal().unwrap();
    gpu.wait_for(&back).unwrap();
    let mut sum = gpu.alloc::<u32>(1).unwrap();
    gpu.reduce(&b, ReduceOp::Max, &mut sum).unwrap();
    let want_a = scan_on(&cpu, &input);
    let want_b = scan_on(&cpu, &want_a);
    assert!(gpu.download(&sum).unwrap()[0] == *want_b.iter().max().unwrap());
    fork.synchronize().unwrap();
    assert!(fork.download(&b).unwrap() == want_b);
}

// ---- v2: typed kernels, argument checks, indirect launches ---------------------------------

const LIVE: KernelSource = KernelSource::new(
    "test/live",
    r#"
typedef unsigned int u32;
// dst[i] = src[i] * 2 + 1 for i < *count; launched indirectly (args[3] blocks of 256).
extern "C" __global__ void double_live(const u32* src, const u32* count, const u32* args, u32* dst) {
    if (blockIdx.x >= args[3]) return;
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < *count) dst[i] = src[i] * 2u + 1u;
}
extern "C" __global__ void scale_by(const float* x, float* y, float a, u32 n) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE_BIAS + a * x[i];
}
"#,
    "",
)
.with_defines(&[orrery_core::Define { name: "SCALE_BIAS", value: "0.5f" }]);

mod typed {
    use super::LIVE;
    orrery_core::kernels! {
        module = LIVE;
        /// As declared in the source.
        pub fn scale_by(read x: f32, write y: f32, scalar a: f32, scalar n: u32);
    }
    pub mod wrong {
        use super::LIVE;
        orrery_core::kernels! {
            module = LIVE;
            /// Declares `a` as an integer: the check must refuse it.
            pub fn scale_by(read x: f32, write y: f32, scalar a: u32, scalar n: u32);
        }
    }
}

#[test]
fn typed_kernels_are_checked_and_defines_reach_nvrtc() {
    use orrery_core::gpu::LaunchConfig;
    let gpu = cuda_or_skip!();
    let x = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut y = gpu.alloc::<f32>(3).unwrap();
    typed::scale_by(gpu, &LaunchConfig::per_item(3, 64), &x, &mut y, 2.0, 3).unwrap();
    assert_eq!(gpu.download(&y).unwrap(), vec![2.5, 4.5, 6.5]);
    assert!(matches!(
        typed::wrong::scale_by(gpu, &LaunchConfig::per_item(3, 64), &x, &mut y, 2, 3),
        Err(Error::KernelSignature { .. })
    ));
    // The untyped launch checks the argument count and sizes against the driver.
    let few = [buf::<CudaExecutor, f32>(&x), buf::<CudaExecutor, f32>(&y)];
    assert!(matches!(gpu.launch(&LIVE, "scale_by", Launch::per_item(3, 64), &few), Err(Error::KernelSignature { .. })));
    let wide = [
        buf::<CudaExecutor, f32>(&x),
        buf::<CudaExecutor, f32>(&y),
        KernelArg::Scalar(Scalar::F64(2.0)),
        KernelArg::Scalar(Scalar::U32(3)),
    ];
    assert!(matches!(
        gpu.launch(&LIVE, "scale_by", Launch::per_item(3, 64), &wide),
        Err(Error::KernelSignature { .. })
    ));
    assert_eq!(gpu.download(&y).unwrap(), vec![2.5, 4.5, 6.5], "a refused launch must not run");
}

/// The CPU result of the recorded sequence: counted scan, counted compaction, the
/// indirect kernel over the compaction's count.
fn live_sequence_on_cpu(
    values: &[u32],
    flags: &[u32],
    live: u32,
    scan_init: &[u32],
    dst_init: &[u32],
) -> (Vec<u32>, Vec<u32>, u32, Vec<u32>) {
    use orrery_core::DeviceCount;
    let cpu = cpu();
    let n = values.len();
    let slot = cpu.upload(&[live]).unwrap();
    let count = DeviceCount::new(&slot, n).unwrap();
    let (v, f) = (cpu.upload(values).unwrap(), cpu.upload(flags).unwrap());
    let mut scan = cpu.upload(scan_init).unwrap();
    cpu.exclusive_scan_counted(&v, count, &mut scan).unwrap();
    let mut comp = cpu.upload(values).unwrap();
    let mut c = cpu.alloc::<u32>(1).unwrap();
    cpu.compact_counted(&v, &f, count, &mut comp, &mut c).unwrap();
    let c0 = cpu.download(&c).unwrap()[0];
    let comp = cpu.download(&comp).unwrap();
    let mut dst = dst_init.to_vec();
    for i in 0..c0 as usize {
        dst[i] = comp[i].wrapping_mul(2).wrapping_add(1);
    }
    (cpu.download(&scan).unwrap(), comp[..c0 as usize].to_vec(), c0, dst)
}

#[test]
fn a_recorded_sequence_replays_with_changing_inputs_and_matches_the_cpu() {
    use orrery_core::gpu::{LaunchConfig, indirect_words};
    use orrery_core::{DeviceCount, GpuExecutor, Reserve, Slice};
    // A fork: a stream of its own, so other tests' work on the shared executor's stream
    // cannot land in this capture.
    let gpu = &cuda_or_skip!().fork().unwrap();
    let n = 70_000usize;
    let threads = 256u32;
    let max_blocks = n.div_ceil(threads as usize) as u32;
    gpu.reserve(&Reserve { scan: n, ..Reserve::default() }).unwrap();
    gpu.prepare(&LIVE).unwrap();
    let mut slot = gpu.upload(&[0u32]).unwrap();
    let mut values = gpu.alloc::<u32>(n).unwrap();
    let mut flags = gpu.alloc::<u32>(n).unwrap();
    let mut scan = gpu.alloc::<u32>(n + 1).unwrap();
    let mut comp = gpu.alloc::<u32>(n).unwrap();
    let mut comp_count = gpu.alloc::<u32>(1).unwrap();
    let mut args = gpu.alloc::<u32>(4).unwrap();
    let mut dst = gpu.alloc::<u32>(n).unwrap();
    let recording = {
        let (slot, values, flags) = (&slot, &values, &flags);
        let (scan, comp, comp_count, args, dst) = (&mut scan, &mut comp, &mut comp_count, &mut args, &mut dst);
        let mut body = || {
            let count = DeviceCount::new(slot, n)?;
            gpu.exclusive_scan_counted(values, count, &mut *scan)?;
            gpu.compact_counted(values, flags, count, &mut *comp, &mut *comp_count)?;
            let live = DeviceCount::new(&*comp_count, n)?;
            gpu.indirect_args(live, threads, &mut *args)?;
            let config = LaunchConfig::indirect(&*args, max_blocks, threads)?;
            gpu.launch_with(
                &LIVE,
                "double_live",
                &config,
                &[
                    KernelArg::read(comp.view()),
                    KernelArg::read(comp_count.view()),
                    KernelArg::read(args.view()),
                    KernelArg::write(dst.view_mut()),
                ],
            )
        };
        // Run once directly (the user kernel is looked up outside the capture), then record.
        body().unwrap();
        gpu.record(&mut body).unwrap()
    };
    for (round, live) in [n as u32, 4097, 0, u32::MAX, 33].into_iter().enumerate() {
        let mut r = common::rng(90 + round as u64, n);
        let v: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let f: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.5))).collect();
        let scan_init = vec![0xdead_beefu32; n + 1];
        let dst_init = vec![7u32; n];
        gpu.write(&mut slot, 0, &[live]).unwrap();
        gpu.write(&mut values, 0, &v).unwrap();
        gpu.write(&mut flags, 0, &f).unwrap();
        gpu.write(&mut scan, 0, &scan_init).unwrap();
        gpu.write(&mut dst, 0, &dst_init).unwrap();
        gpu.replay(&recording).unwrap();
        let status = gpu.read_async(comp_count.slice(0..1).unwrap()).unwrap();
        let (want_scan, want_comp, want_count, want_dst) = live_sequence_on_cpu(&v, &f, live, &scan_init, &dst_init);
        assert_eq!(gpu.wait(status).unwrap(), vec![want_count], "round {round}: status read");
        assert!(gpu.download(&scan).unwrap() == want_scan, "round {round}: counted scan (live {live})");
        assert!(gpu.download(&comp).unwrap()[..want_count as usize] == want_comp[..], "round {round}: compaction");
        assert!(gpu.download(&dst).unwrap() == want_dst, "round {round}: indirect launch");
        let blocks = want_count.div_ceil(threads);
        assert_eq!(gpu.download(&args).unwrap()[3], indirect_words(blocks, 65535)[3], "round {round}: args");
    }
}

#[test]
fn recording_refuses_host_reads_allocations_and_scratch_growth() {
    let gpu = &cuda_or_skip!().fork().unwrap();
    let b = gpu.upload(&[1u32, 2, 3]).unwrap();
    let recording_err =
        |r: orrery_core::Result<orrery_backend_cuda::CudaRecording>| matches!(r, Err(Error::Recording { .. }));
    assert!(recording_err(gpu.record(&mut || gpu.download(&b).map(|_| ()))), "download");
    assert!(recording_err(gpu.record(&mut || gpu.read_async(&b).map(|_| ()))), "read_async");
    assert!(recording_err(gpu.record(&mut || gpu.alloc::<u32>(4).map(|_| ()))), "alloc");
    assert!(recording_err(gpu.record(&mut || gpu.synchronize())), "synchronize");
    let mut grow = gpu.upload(&[0u32; 2]).unwrap();
    assert!(recording_err(gpu.record(&mut || gpu.resize(&mut grow, 100))), "resize beyond the capacity");
    // A fork has empty scratch: its first scan must grow it, which a recording refuses.
    let fork = gpu.fork().unwrap();
    let mut out = fork.alloc::<u32>(4).unwrap();
    match fork.record(&mut || fork.exclusive_scan(&b, &mut out)) {
        Err(Error::Recording { reason, .. }) => assert!(reason.contains("reserve"), "{reason}"),
        other => panic!("expected Error::Recording, got {other:?}"),
    }
    // Both executors work normally afterwards.
    fork.exclusive_scan(&b, &mut out).unwrap();
    assert_eq!(fork.download(&out).unwrap(), vec![0, 1, 3, 6]);
    assert_eq!(gpu.download(&b).unwrap(), vec![1, 2, 3]);
}

#[test]
fn replaying_after_a_buffer_was_dropped_or_reallocated_is_an_error() {
    let gpu = &cuda_or_skip!().fork().unwrap();
    gpu.reserve(&orrery_core::Reserve { scan: 1000, ..orrery_core::Reserve::default() }).unwrap();
    let input = gpu.upload(&[1u32; 1000]).unwrap();
    let mut out = gpu.alloc::<u32>(1001).unwrap();
    let rec = {
        let (input, out) = (&input, &mut out);
        gpu.record(&mut || gpu.exclusive_scan(input, &mut *out)).unwrap()
    };
    gpu.replay(&rec).unwrap();
    assert_eq!(gpu.download(&out).unwrap()[1000], 1000);
    gpu.resize(&mut out, 5000).unwrap(); // a new allocation
    assert!(matches!(gpu.replay(&rec), Err(Error::Recording { .. })));
    let mut target = gpu.alloc::<u32>(10).unwrap();
    let rec2 = {
        let t = &mut target;
        gpu.record(&mut || gpu.fill(&mut *t, 5)).unwrap()
    };
    gpu.replay(&rec2).unwrap();
    assert_eq!(gpu.download(&target).unwrap(), vec![5; 10]);
    drop(target);
    match gpu.replay(&rec2) {
        Err(Error::Recording { reason, .. }) => assert!(reason.contains("dropped"), "{reason}"),
        other => panic!("expected Error::Recording, got {other:?}"),
    }
}

// ---- shared memory: static and dynamic share the default limit ------------------------------

const SHARED_SUM: KernelSource = KernelSource::new(
    "test/shared_sum",
    r#"
// 20 KB of static shared memory plus `dyn_floats` dynamic floats: past 48 KB together, so the
// launch needs the dynamic opt-in even though the dynamic part alone is below 48 KB.
extern "C" __global__ void shared_sum(const float* x, float* out, unsigned dyn_floats) {
    __shared__ float fixed[5120];
    extern __shared__ float dyn[];
    for (unsigned i = threadIdx.x; i < 5120u; i += blockDim.x) fixed[i] = x[i];
    for (unsigned i = threadIdx.x; i < dyn_floats; i += blockDim.x) dyn[i] = 1.0f;
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (unsigned i = 0; i < 5120u; ++i) s += fixed[i];
        for (unsigned i = 0; i < dyn_floats; ++i) s += dyn[i];
        out[0] = s;
    }
}
"#,
    "",
);

mod shared_kernels {
    orrery_core::kernels! {
        module = super::SHARED_SUM;
        /// Sums 5,120 inputs through static shared memory and `dyn_floats` ones through dynamic.
        pub fn shared_sum(read x: f32, write out: f32, scalar dyn_floats: u32);
    }
}

#[test]
fn static_and_dynamic_shared_memory_together_past_48_kb_launch() {
    let gpu = cuda_or_skip!();
    let x = gpu.upload(&vec![0.5f32; 5120]).unwrap();
    let mut out = gpu.alloc::<f32>(1).unwrap();
    // 10,240 dynamic floats (40 KB) + 20 KB static = 60 KB; then 12,288 (exactly 48 KB).
    for dyn_floats in [10_240u32, 12_288, 1024] {
        let config = orrery_core::LaunchConfig::<CudaExecutor>::blocks(1, 128).with_shared_bytes(dyn_floats * 4);
        shared_kernels::shared_sum(gpu, &config, &x, &mut out, dyn_floats).unwrap();
        assert_eq!(gpu.download(&out).unwrap()[0], 2560.0 + dyn_floats as f32, "{dyn_floats} dynamic floats");
    }
}
