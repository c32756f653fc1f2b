//! Stream compaction: bit-identical to the CPU executor (kept elements, their order and
//! their count) for 4- and 8-byte elements and flag densities from none to all.

use orrery_core::{Element, Executor};
use rand::Rng;

use crate::common::{SIZES, cpu, each, rng};

fn check<T: Element>(seed: u64) {
    each(|label, e| {
        for n in SIZES.into_iter().chain([1 << 20]) {
            for density in [0.0, 0.3, 1.0] {
                let mut r = rng(seed + n as u64);
                let bytes: Vec<u8> = (0..n * size_of::<T>()).map(|_| r.random()).collect();
                let input: Vec<T> = bytemuck::pod_collect_to_vec(&bytes);
                // Flags are any non-zero value, not just 1.
                let flags: Vec<u32> =
                    (0..n).map(|_| if r.random_bool(density) { r.random_range(1..=u32::MAX) } else { 0 }).collect();

                let (gi, gf) = (e.upload(&input).unwrap(), e.upload(&flags).unwrap());
                let mut go = e.alloc::<T>(n).unwrap();
                let mut gc = e.upload(&[u32::MAX]).unwrap();
                e.compact(&gi, &gf, &mut go, &mut gc).unwrap();

                let c = cpu();
                let (ci, cf) = (c.upload(&input).unwrap(), c.upload(&flags).unwrap());
                let mut co = c.alloc::<T>(n).unwrap();
                let mut cc = c.alloc::<u32>(1).unwrap();
                c.compact(&ci, &cf, &mut co, &mut cc).unwrap();

                let count = c.download(&cc).unwrap()[0] as usize;
                assert_eq!(e.download(&gc).unwrap()[0] as usize, count, "{label} n={n} density={density}");
                let (g, c) = (e.download(&go).unwrap(), c.download(&co).unwrap());
                assert_eq!(
                    bytemuck::cast_slice::<T, u8>(&g[..count]),
                    bytemuck::cast_slice::<T, u8>(&c[..count]),
                    "{label} n={n} density={density}"
                );
            }
        }
    });
}

#[test]
fn compaction_of_u32_keeps_flagged_elements_in_order() {
    check::<u32>(10);
}

#[test]
fn compaction_of_f32_moves_bits_unchanged() {
    check::<f32>(20);
}

#[test]
fn compaction_of_u64_and_f64_moves_both_words() {
    check::<u64>(30);
    check::<f64>(40);
}
