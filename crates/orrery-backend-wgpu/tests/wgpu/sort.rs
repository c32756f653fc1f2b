//! Radix sort of (u64 key, u32 value) pairs: bit-identical to the CPU executor (keys
//! and values, so stability is checked through the values) for every bit range the
//! trees use, sizes around the tile edges, and keys with many equal values.

use std::ops::Range;

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::{Error, Executor};
use rand::Rng;

use crate::common::{SIZES, cpu, each, large_tests, rng};

/// The bit ranges: full keys, 63-bit SFC keys, 32-bit keys, a middle window, one digit,
/// and the empty range (a no-op).
const RANGES: [Range<u32>; 6] = [0..64, 0..63, 0..30, 13..47, 0..8, 0..0];

/// Sizes around a 1024-pair tile and a 256-invocation workgroup, and one of 257 tiles.
fn sizes() -> impl Iterator<Item = usize> {
    SIZES.into_iter().chain([1024, 1025, 262_147])
}

fn check(label: &str, e: &WgpuExecutor, keys: &[u64], values: &[u32], bits: Range<u32>) {
    let n = keys.len();
    let (mut gk, mut gv) = (e.upload(keys).unwrap(), e.upload(values).unwrap());
    e.sort_pairs(&mut gk, &mut gv, bits.clone()).unwrap();
    let c = cpu();
    let (mut ck, mut cv) = (c.upload(keys).unwrap(), c.upload(values).unwrap());
    c.sort_pairs(&mut ck, &mut cv, bits.clone()).unwrap();
    let (gk, ck) = (e.download(&gk).unwrap(), c.download(&ck).unwrap());
    if let Some(i) = (0..n).find(|&i| gk[i] != ck[i]) {
        panic!("{label} n={n} bits={bits:?}: keys differ first at {i}: {:#x} vs {:#x}", gk[i], ck[i]);
    }
    let (gv, cv) = (e.download(&gv).unwrap(), c.download(&cv).unwrap());
    if let Some(i) = (0..n).find(|&i| gv[i] != cv[i]) {
        panic!("{label} n={n} bits={bits:?}: values differ first at {i}: {} vs {} (unstable?)", gv[i], cv[i]);
    }
}

fn iota(n: usize) -> Vec<u32> {
    (0..n as u32).collect()
}

#[test]
fn random_keys_sort_like_the_cpu_for_every_bit_range() {
    each(|label, e| {
        for bits in RANGES {
            for n in sizes() {
                let mut r = rng(n as u64 ^ u64::from(bits.start << 8 | bits.end));
                // All 64 bits random: bits outside the range differ and must ride along.
                let keys: Vec<u64> = (0..n).map(|_| r.random()).collect();
                check(label, e, &keys, &iota(n), bits.clone());
            }
        }
    });
}

#[test]
fn many_equal_keys_keep_their_input_order() {
    each(|label, e| {
        for n in [33usize, 4097, 262_147] {
            let mut r = rng(n as u64 + 1);
            // Few distinct digits in every pass, with random bits outside 0..40 as well.
            let keys: Vec<u64> = (0..n).map(|_| r.random_range(0u64..5) << 20 | r.random::<u64>() << 40).collect();
            check(label, e, &keys, &iota(n), 0..40);
            let all_equal = vec![0x1234_5678_9abc_def0u64; n];
            check(label, e, &all_equal, &iota(n), 0..64);
        }
    });
}

#[test]
fn presorted_and_reversed_keys() {
    each(|label, e| {
        let n = 100_003;
        let sorted: Vec<u64> = (0..n as u64).map(|i| i * 0x9e37_79b9).collect();
        let reversed: Vec<u64> = sorted.iter().rev().copied().collect();
        check(label, e, &sorted, &iota(n), 0..64);
        check(label, e, &reversed, &iota(n), 0..64);
    });
}

#[test]
fn one_million_pairs_sort_like_the_cpu() {
    if !large_tests() {
        eprintln!("skipped: set ORRERY_LARGE_TESTS=1 for the 1M-pair sort");
        return;
    }
    each(|label, e| {
        let n = 1 << 20;
        let mut r = rng(1 << 20);
        let keys: Vec<u64> = (0..n).map(|_| r.random::<u64>() >> 1).collect();
        check(label, e, &keys, &iota(n), 0..63);
    });
}

#[test]
fn mismatched_lengths_and_bad_bit_ranges_are_rejected() {
    each(|label, e| {
        let (mut k, mut v) = (e.upload(&[3u64, 1]).unwrap(), e.upload(&[0u32]).unwrap());
        assert!(matches!(e.sort_pairs(&mut k, &mut v, 0..64), Err(Error::LengthMismatch { .. })), "{label}");
        let mut v = e.upload(&[0u32, 1]).unwrap();
        assert!(matches!(e.sort_pairs(&mut k, &mut v, 0..65), Err(Error::InvalidBitRange { .. })), "{label}");
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 10..5;
        assert!(matches!(e.sort_pairs(&mut k, &mut v, reversed), Err(Error::InvalidBitRange { .. })), "{label}");
    });
}
