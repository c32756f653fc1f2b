//! The CUDA executor against the CPU reference executor: every primitive and key kernel
//! on random input at the sizes of `common::SIZES`, bit-identical for integer outputs
//! (keys, permutations, counts, offsets, integer reductions, float min/max) and within a
//! stated tolerance for floating-point sums; plus every error path and the GPU launch
//! interface. Without a device each test prints "skipped: <reason>" and passes, unless
//! `ORRERY_REQUIRE_CUDA=1`.

mod common;

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
