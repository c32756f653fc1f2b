//! Exclusive scan: bit-identical to the CPU executor, wrapping included.

use orrery_core::Executor;
use rand::Rng;

use crate::common::{SIZES, cpu, each, random_u32, rng};

fn check(label: &str, e: &orrery_backend_wgpu::WgpuExecutor, input: &[u32]) {
    let n = input.len();
    let g = e.upload(input).unwrap();
    let mut go = e.alloc::<u32>(n + 1).unwrap();
    e.exclusive_scan(&g, &mut go).unwrap();
    let c = cpu();
    let ci = c.upload(input).unwrap();
    let mut co = c.alloc::<u32>(n + 1).unwrap();
    c.exclusive_scan(&ci, &mut co).unwrap();
    assert_eq!(e.download(&go).unwrap(), c.download(&co).unwrap(), "{label} n={n}");
}

#[test]
fn scan_of_full_range_values_wraps_like_the_cpu() {
    each(|label, e| {
        for n in SIZES.into_iter().chain([2048, 2049, 1 << 20]) {
            check(label, e, &random_u32(&mut rng(n as u64), n));
        }
    });
}

#[test]
fn scan_of_small_counts_gives_csr_offsets() {
    each(|label, e| {
        for n in [1000usize, 4097, 2048 * 2048 + 3] {
            let mut r = rng(7 + n as u64);
            let input: Vec<u32> = (0..n).map(|_| r.random_range(0..4)).collect();
            check(label, e, &input);
        }
    });
}

#[test]
fn scan_of_an_empty_input_writes_a_zero_total() {
    each(|label, e| {
        let g = e.alloc::<u32>(0).unwrap();
        let mut go = e.upload(&[123u32]).unwrap();
        e.exclusive_scan(&g, &mut go).unwrap();
        assert_eq!(e.download(&go).unwrap(), [0], "{label}");
    });
}
