//! The CPU executor's primitives against plain `std` implementations, on random input
//! of bounded size including the empty and one-element cases, plus every error path.

use orrery_core::executor::{Executor, ReduceOp};
use orrery_core::{CpuExecutor, DeviceBuffer, Error};
use proptest::prelude::*;

fn exec() -> CpuExecutor {
    CpuExecutor::new()
}

/// Stable sort on the masked key bits, the reference for `sort_pairs`.
fn std_sort(keys: &[u64], values: &[u32], bits: std::ops::Range<u32>) -> (Vec<u64>, Vec<u32>) {
    let width = bits.end - bits.start;
    let mask = match width {
        0 => 0,
        64 => u64::MAX,
        w => ((1u64 << w) - 1) << bits.start,
    };
    let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    pairs.sort_by_key(|&(k, _)| k & mask);
    pairs.into_iter().unzip()
}

/// Keys of one of four kinds: 0 random, 1 all equal, 2 few distinct, 3 clustered (most
/// keys share their high bits and spread over scales, a few anywhere: the shape of a
/// Plummer sphere's Hilbert keys).
fn keys_of_kind(kind: u32, n: usize, seed: u64) -> Vec<u64> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| match kind {
            0 => rng.random(),
            1 => 0x0123_4567_89ab_cdef,
            2 => rng.random_range(0..4u64) * 0x1111_1111_1111_1111,
            _ if rng.random_range(0..8) == 0 => rng.random(),
            _ => 0x7fe0_0000_0000_0000 | rng.random::<u64>() >> rng.random_range(12..52),
        })
        .collect()
}

fn bit_range() -> impl Strategy<Value = std::ops::Range<u32>> {
    (0u32..=64, 0u32..=64).prop_map(|(a, b)| a.min(b)..a.max(b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sort_pairs_matches_stable_std_sort(
        keys in prop::collection::vec(any::<u64>(), 0..3000),
        bits in bit_range(),
        few_distinct in any::<bool>(),
    ) {
        // With `few_distinct`, keys collide constantly, so stability is exercised.
        let keys: Vec<u64> = if few_distinct { keys.iter().map(|k| k % 7 * 0x0101_0101_0101_0101).collect() } else { keys };
        let values: Vec<u32> = (0..keys.len() as u32).collect();
        let e = exec();
        let (mut k, mut v) = (e.upload(&keys).unwrap(), e.upload(&values).unwrap());
        e.sort_pairs(&mut k, &mut v, bits.clone()).unwrap();
        let (rk, rv) = std_sort(&keys, &values, bits);
        prop_assert_eq!(e.download(&v).unwrap(), rv);
        prop_assert_eq!(e.download(&k).unwrap(), rk);
    }

    #[test]
    fn sort_pairs_matches_stable_std_sort_on_skewed_keys(
        seed in any::<u64>(),
        kind in 0u32..4,
        n in 0usize..3000,
        bits in bit_range(),
    ) {
        let keys = keys_of_kind(kind, n, seed);
        let values: Vec<u32> = (0..n as u32).collect();
        let e = exec();
        let (mut k, mut v) = (e.upload(&keys).unwrap(), e.upload(&values).unwrap());
        e.sort_pairs(&mut k, &mut v, bits.clone()).unwrap();
        let (rk, rv) = std_sort(&keys, &values, bits);
        prop_assert_eq!(e.download(&v).unwrap(), rv);
        prop_assert_eq!(e.download(&k).unwrap(), rk);
    }

    #[test]
    fn exclusive_scan_matches_running_sum(input in prop::collection::vec(any::<u32>(), 0..5000)) {
        let e = exec();
        let inp = e.upload(&input).unwrap();
        let mut out = e.alloc::<u32>(input.len() + 1).unwrap();
        e.exclusive_scan(&inp, &mut out).unwrap();
        let mut expected = vec![0u32];
        for &v in &input {
            expected.push(expected.last().unwrap().wrapping_add(v));
        }
        prop_assert_eq!(e.download(&out).unwrap(), expected);
    }

    #[test]
    fn integer_reductions_match_iterators(input in prop::collection::vec(any::<i64>(), 0..5000)) {
        let e = exec();
        let inp = e.upload(&input).unwrap();
        let mut out = e.alloc::<i64>(1).unwrap();
        e.reduce(&inp, ReduceOp::Sum, &mut out).unwrap();
        prop_assert_eq!(e.download(&out).unwrap()[0], input.iter().fold(0i64, |a, &b| a.wrapping_add(b)));
        e.reduce(&inp, ReduceOp::Min, &mut out).unwrap();
        prop_assert_eq!(e.download(&out).unwrap()[0], input.iter().copied().min().unwrap_or(i64::MAX));
        e.reduce(&inp, ReduceOp::Max, &mut out).unwrap();
        prop_assert_eq!(e.download(&out).unwrap()[0], input.iter().copied().max().unwrap_or(i64::MIN));
    }

    #[test]
    fn float_min_max_exact_and_sum_close(input in prop::collection::vec(-1.0e3f32..1.0e3, 0..40_000)) {
        let e = exec();
        let inp = e.upload(&input).unwrap();
        let mut out = e.alloc::<f32>(1).unwrap();
        e.reduce(&inp, ReduceOp::Min, &mut out).unwrap();
        prop_assert_eq!(e.download(&out).unwrap()[0], input.iter().copied().fold(f32::INFINITY, f32::min));
        e.reduce(&inp, ReduceOp::Max, &mut out).unwrap();
        prop_assert_eq!(e.download(&out).unwrap()[0], input.iter().copied().fold(f32::NEG_INFINITY, f32::max));
        e.reduce(&inp, ReduceOp::Sum, &mut out).unwrap();
        let exact: f64 = input.iter().map(|&v| f64::from(v)).sum();
        let abs_sum: f64 = input.iter().map(|&v| f64::from(v).abs()).sum();
        // Tiled left-to-right f32 summation: error bound ~ (tile + tiles) * eps * sum|x|;
        // 2e-3 * sum|x| is far above it and far below any indexing mistake.
        prop_assert!((f64::from(e.download(&out).unwrap()[0]) - exact).abs() <= 2e-3 * abs_sum + 1e-3);
    }

    #[test]
    fn compaction_matches_filter(input in prop::collection::vec(any::<u64>(), 0..5000), density in 0u32..=4) {
        let flags: Vec<u32> = input.iter().map(|&v| u32::from(v % 4 < u64::from(density))).collect();
        let e = exec();
        let (inp, fl) = (e.upload(&input).unwrap(), e.upload(&flags).unwrap());
        let mut out = e.alloc::<u64>(input.len()).unwrap();
        let mut count = e.alloc::<u32>(1).unwrap();
        e.compact(&inp, &fl, &mut out, &mut count).unwrap();
        let expected: Vec<u64> = input.iter().zip(&flags).filter(|(_, f)| **f != 0).map(|(v, _)| *v).collect();
        let n = e.download(&count).unwrap()[0] as usize;
        prop_assert_eq!(n, expected.len());
        prop_assert_eq!(&e.download(&out).unwrap()[..n], &expected[..]);
    }

    #[test]
    fn gather_then_scatter_by_a_permutation_round_trips(seed in any::<u64>(), n in 0usize..3000) {
        use rand::{seq::SliceRandom, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut perm: Vec<u32> = (0..n as u32).collect();
        perm.shuffle(&mut rng);
        let data: Vec<f64> = (0..n).map(|i| i as f64 * 0.5).collect();
        let e = exec();
        let (d, p) = (e.upload(&data).unwrap(), e.upload(&perm).unwrap());
        let mut gathered = e.alloc::<f64>(n).unwrap();
        e.gather(&d, &p, &mut gathered).unwrap();
        let g = e.download(&gathered).unwrap();
        for i in 0..n {
            prop_assert_eq!(g[i], data[perm[i] as usize]);
        }
        let mut back = e.alloc::<f64>(n).unwrap();
        e.scatter(&gathered, &p, &mut back).unwrap();
        prop_assert_eq!(e.download(&back).unwrap(), data);
    }
}

#[test]
fn fill_iota_copy_and_resize_keep_their_contracts() {
    let e = exec();
    let mut a = e.alloc::<u32>(10).unwrap();
    e.iota(&mut a, 5).unwrap();
    assert_eq!(e.download(&a).unwrap(), (5..15).collect::<Vec<u32>>());
    let mut b = e.alloc::<u32>(10).unwrap();
    e.copy(&a, &mut b).unwrap();
    assert_eq!(e.download(&b).unwrap(), e.download(&a).unwrap());
    e.fill(&mut b, 7).unwrap();
    assert_eq!(e.download(&b).unwrap(), vec![7; 10]);
    // Growth keeps the prefix and adds 25% headroom; shrinking keeps the allocation.
    e.resize(&mut a, 100).unwrap();
    assert_eq!(a.len(), 100);
    assert!(a.capacity() >= 125);
    assert_eq!(e.download(&a).unwrap()[..10], (5..15).collect::<Vec<u32>>()[..]);
    let cap = a.capacity();
    e.resize(&mut a, 3).unwrap();
    assert_eq!((a.len(), a.capacity()), (3, cap));
    let mut part = [0u32; 2];
    e.read(&a, 1, &mut part).unwrap();
    assert_eq!(part, [6, 7]);
    e.write(&mut a, 2, &[42]).unwrap();
    assert_eq!(e.download(&a).unwrap(), vec![5, 6, 42]);
}

#[test]
fn empty_inputs_give_identities() {
    let e = exec();
    let empty = e.alloc::<f32>(0).unwrap();
    let mut out = e.alloc::<f32>(1).unwrap();
    e.reduce(&empty, ReduceOp::Min, &mut out).unwrap();
    assert_eq!(e.download(&out).unwrap(), vec![f32::INFINITY]);
    e.reduce(&empty, ReduceOp::Sum, &mut out).unwrap();
    assert_eq!(e.download(&out).unwrap(), vec![0.0]);
    let empty_u = e.alloc::<u32>(0).unwrap();
    let mut offsets = e.alloc::<u32>(1).unwrap();
    e.exclusive_scan(&empty_u, &mut offsets).unwrap();
    assert_eq!(e.download(&offsets).unwrap(), vec![0]);
}

#[test]
fn length_mismatches_are_named() {
    let e = exec();
    let a = e.upload(&[1u32, 2, 3]).unwrap();
    let mut short = e.alloc::<u32>(3).unwrap();
    assert_eq!(
        e.exclusive_scan(&a, &mut short),
        Err(Error::LengthMismatch { what: "scan output", expected: 4, actual: 3 })
    );
    let mut keys = e.upload(&[3u64, 1]).unwrap();
    let mut vals = e.upload(&[0u32]).unwrap();
    assert_eq!(
        e.sort_pairs(&mut keys, &mut vals, 0..64),
        Err(Error::LengthMismatch { what: "sort values", expected: 2, actual: 1 })
    );
    let mut two = e.alloc::<u32>(2).unwrap();
    assert_eq!(
        e.reduce(&a, ReduceOp::Sum, &mut two),
        Err(Error::LengthMismatch { what: "reduction output", expected: 1, actual: 2 })
    );
    assert_eq!(e.copy(&a, &mut two), Err(Error::LengthMismatch { what: "copy destination", expected: 3, actual: 2 }));
    let flags = e.upload(&[1u32, 0]).unwrap();
    let mut out = e.alloc::<u32>(3).unwrap();
    let mut count = e.alloc::<u32>(1).unwrap();
    assert_eq!(
        e.compact(&a, &flags, &mut out, &mut count),
        Err(Error::LengthMismatch { what: "compaction flags", expected: 3, actual: 2 })
    );
    assert_eq!(
        e.write(&mut out, 2, &[1, 2]),
        Err(Error::LengthMismatch { what: "write destination", expected: 4, actual: 3 })
    );
    let mut buf = [0u32; 4];
    assert_eq!(e.read(&a, 0, &mut buf), Err(Error::LengthMismatch { what: "read source", expected: 4, actual: 3 }));
    let x = e.upload(&[0.5f32, 0.5]).unwrap();
    let y = e.upload(&[0.5f32]).unwrap();
    let mapper = orrery_core::sfc::KeyMapper::<f32, u64>::new(
        orrery_core::Aabb::cube(0.0, 1.0).unwrap(),
        orrery_core::sfc::Curve::Morton,
    );
    let mut k = e.alloc::<u64>(2).unwrap();
    assert_eq!(
        e.sfc_keys(&x, &y, &x, &mapper, &mut k),
        Err(Error::LengthMismatch { what: "y", expected: 2, actual: 1 })
    );
}

#[test]
fn bad_bit_ranges_and_indices_are_rejected() {
    let e = exec();
    let mut keys = e.upload(&[3u64, 1]).unwrap();
    let mut vals = e.upload(&[0u32, 1]).unwrap();
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = 9..3;
    assert_eq!(
        e.sort_pairs(&mut keys, &mut vals, reversed),
        Err(Error::InvalidBitRange { start: 9, end: 3, key_bits: 64 })
    );
    assert_eq!(
        e.sort_pairs(&mut keys, &mut vals, 0..65),
        Err(Error::InvalidBitRange { start: 0, end: 65, key_bits: 64 })
    );
    let data = e.upload(&[1.0f32, 2.0]).unwrap();
    let idx = e.upload(&[0u32, 2]).unwrap();
    let mut out = e.alloc::<f32>(2).unwrap();
    assert_eq!(
        e.gather(&data, &idx, &mut out),
        Err(Error::IndexOutOfBounds { what: "gather indices", position: 1, index: 2, len: 2 })
    );
    assert_eq!(
        e.scatter(&data, &idx, &mut out),
        Err(Error::IndexOutOfBounds { what: "scatter indices", position: 1, index: 2, len: 2 })
    );
    assert!(matches!(CpuExecutor::with_threads(0), Err(Error::InvalidArgument { what: "threads", .. })));
}

#[test]
fn float_sums_do_not_depend_on_the_thread_count() {
    let data: Vec<f32> = (0..200_003).map(|i| ((i * 7919) % 1000) as f32 * 1.0e-3 - 0.3).collect();
    let mut sums = Vec::new();
    for threads in [1, 2, 3] {
        let e = CpuExecutor::with_threads(threads).unwrap();
        let inp = e.upload(&data).unwrap();
        let mut out = e.alloc::<f32>(1).unwrap();
        e.reduce(&inp, ReduceOp::Sum, &mut out).unwrap();
        sums.push(e.download(&out).unwrap()[0].to_bits());
    }
    assert!(sums.windows(2).all(|w| w[0] == w[1]), "float sum changed with the thread count: {sums:?}");
}

#[test]
fn sorts_of_every_kind_and_range_match_beyond_the_sequential_sizes() {
    // Sizes past the sequential threshold, the per-thread buckets and a million pairs,
    // on pools of 1 and 3 threads (different bucket splits).
    for threads in [1, 3] {
        let e = CpuExecutor::with_threads(threads).unwrap();
        for n in [32_769usize, 65_537, 262_147, 1 << 20] {
            for kind in 0..4 {
                let keys = keys_of_kind(kind, n, n as u64 + u64::from(kind));
                let values: Vec<u32> = (0..n as u32).collect();
                for bits in [0..64, 0..63, 3..17, 60..64, 0..1] {
                    let (mut k, mut v) = (e.upload(&keys).unwrap(), e.upload(&values).unwrap());
                    e.sort_pairs(&mut k, &mut v, bits.clone()).unwrap();
                    let (rk, rv) = std_sort(&keys, &values, bits.clone());
                    assert!(
                        e.download(&v).unwrap() == rv,
                        "{n} pairs of kind {kind}, bits {bits:?}, {threads} threads"
                    );
                    assert!(e.download(&k).unwrap() == rk, "{n} keys of kind {kind}, bits {bits:?}");
                }
            }
        }
    }
}

#[test]
fn the_kept_sort_scratch_serves_growing_shrinking_and_concurrent_sorts() {
    let e = CpuExecutor::with_threads(2).unwrap();
    e.reserve(&orrery_core::Reserve { sort_pairs: 100_000, ..Default::default() }).unwrap();
    let check = |e: &CpuExecutor, n: usize, seed: u64| {
        let keys = keys_of_kind(3, n, seed);
        let values: Vec<u32> = (0..n as u32).collect();
        let (mut k, mut v) = (e.upload(&keys).unwrap(), e.upload(&values).unwrap());
        e.sort_pairs(&mut k, &mut v, 0..63).unwrap();
        let (rk, rv) = std_sort(&keys, &values, 0..63);
        assert!(e.download(&v).unwrap() == rv && e.download(&k).unwrap() == rk, "{n} pairs (seed {seed})");
    };
    for (i, n) in [50_000usize, 300_001, 5, 70_000, 2].into_iter().enumerate() {
        check(&e, n, i as u64);
    }
    // Clones share the scratch; sorts running at once must not share it.
    std::thread::scope(|s| {
        for t in 0..3u64 {
            let e = e.clone();
            s.spawn(move || {
                for r in 0..4 {
                    check(&e, 40_000 + 10_007 * r, 100 + t * 10 + r as u64);
                }
            });
        }
    });
}

#[test]
fn large_sort_is_stable_across_chunks() {
    // More than one 65536-element chunk, few distinct keys: stability across chunks.
    let n = 300_001usize;
    let keys: Vec<u64> = (0..n as u64).map(|i| ((i * 2_654_435_761) % 5) << 40).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let e = exec();
    let (mut k, mut v) = (e.upload(&keys).unwrap(), e.upload(&values).unwrap());
    e.sort_pairs(&mut k, &mut v, 0..64).unwrap();
    let (rk, rv) = std_sort(&keys, &values, 0..64);
    assert_eq!(e.download(&k).unwrap(), rk);
    assert_eq!(e.download(&v).unwrap(), rv);
}
