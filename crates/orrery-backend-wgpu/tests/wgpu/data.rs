//! copy, fill, iota, gather, scatter: bit-identical to the CPU executor for 4- and
//! 8-byte elements, including empty buffers.

use orrery_core::{CpuExecutor, Element, Executor};
use rand::Rng;
use rand::seq::SliceRandom;

use crate::common::{SIZES, cpu, each, rng};

fn sizes() -> impl Iterator<Item = usize> {
    SIZES.into_iter().chain([1 << 20])
}

fn bits<T: Element>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn random<T: Element>(n: usize, seed: u64) -> Vec<T> {
    let mut r = rng(seed);
    // Arbitrary bit patterns: movement kernels must not interpret them (NaNs included).
    let bytes: Vec<u8> = (0..n * size_of::<T>()).map(|_| r.random()).collect();
    bytemuck::pod_collect_to_vec(&bytes)
}

fn fill_matches_cpu<T: Element>(value: T) {
    each(|label, e| {
        for n in sizes() {
            let mut g = e.alloc::<T>(n).unwrap();
            e.fill(&mut g, value).unwrap();
            let mut c = cpu().alloc::<T>(n).unwrap();
            cpu().fill(&mut c, value).unwrap();
            assert_eq!(bits(&e.download(&g).unwrap()), bits(&cpu().download(&c).unwrap()), "{label} n={n}");
        }
    });
}

#[test]
fn fill_4_and_8_byte_values_including_zero_which_uses_clear() {
    fill_matches_cpu(0xdead_beefu32);
    fill_matches_cpu(-7i32);
    fill_matches_cpu(1.5f32);
    fill_matches_cpu(0u32);
    fill_matches_cpu(0x0123_4567_89ab_cdefu64);
    fill_matches_cpu(-3i64);
    fill_matches_cpu(-0.25f64);
    fill_matches_cpu(0.0f64);
}

#[test]
fn iota_wraps_like_the_cpu() {
    each(|label, e| {
        for n in sizes() {
            for start in [0, 17, u32::MAX - 5] {
                let mut g = e.alloc::<u32>(n).unwrap();
                e.iota(&mut g, start).unwrap();
                let mut c = cpu().alloc::<u32>(n).unwrap();
                cpu().iota(&mut c, start).unwrap();
                assert_eq!(e.download(&g).unwrap(), cpu().download(&c).unwrap(), "{label} n={n} start={start}");
            }
        }
    });
}

fn gather_scatter_match_cpu<T: Element>(seed: u64) {
    each(|label, e| {
        for n in sizes() {
            let input = random::<T>(n, seed + n as u64);
            let mut perm: Vec<u32> = (0..n as u32).collect();
            perm.shuffle(&mut rng(seed ^ 0x55));
            // Gather with repeated indices (a permutation is not required).
            let repeated: Vec<u32> = perm.iter().map(|&i| i / 2).collect();
            for idx in [&perm, &repeated] {
                let (gi, gx) = (e.upload(&input).unwrap(), e.upload(idx).unwrap());
                let mut go = e.alloc::<T>(n).unwrap();
                e.gather(&gi, &gx, &mut go).unwrap();
                let c = CpuExecutor::new();
                let (ci, cx) = (c.upload(&input).unwrap(), c.upload(idx).unwrap());
                let mut co = c.alloc::<T>(n).unwrap();
                c.gather(&ci, &cx, &mut co).unwrap();
                assert_eq!(bits(&e.download(&go).unwrap()), bits(&c.download(&co).unwrap()), "gather {label} n={n}");
            }
            let (gi, gx) = (e.upload(&input).unwrap(), e.upload(&perm).unwrap());
            let mut go = e.alloc::<T>(n).unwrap();
            e.scatter(&gi, &gx, &mut go).unwrap();
            let c = cpu();
            let (ci, cx) = (c.upload(&input).unwrap(), c.upload(&perm).unwrap());
            let mut co = c.alloc::<T>(n).unwrap();
            c.scatter(&ci, &cx, &mut co).unwrap();
            assert_eq!(bits(&e.download(&go).unwrap()), bits(&c.download(&co).unwrap()), "scatter {label} n={n}");
        }
    });
}

#[test]
fn gather_and_scatter_move_bits_of_every_element_type() {
    gather_scatter_match_cpu::<u32>(1);
    gather_scatter_match_cpu::<f32>(2);
    gather_scatter_match_cpu::<u64>(3);
    gather_scatter_match_cpu::<f64>(4);
}

#[test]
fn copy_write_read_and_resize_keep_contents() {
    each(|label, e| {
        for n in sizes() {
            let data = random::<u64>(n, 9);
            let src = e.upload(&data).unwrap();
            let mut dst = e.alloc::<u64>(n).unwrap();
            e.copy(&src, &mut dst).unwrap();
            assert_eq!(e.download(&dst).unwrap(), data, "copy {label} n={n}");

            // Partial write and read at an offset.
            if n >= 3 {
                e.write(&mut dst, 1, &[7, 8]).unwrap();
                let mut out = [0u64; 3];
                e.read(&dst, 0, &mut out).unwrap();
                assert_eq!(out, [data[0], 7, 8], "{label} n={n}");
            }

            // Growing keeps the prefix and leaves headroom; shrinking keeps the allocation.
            let mut buf = e.upload(&data).unwrap();
            e.resize(&mut buf, n + 10).unwrap();
            assert!(orrery_core::DeviceBuffer::capacity(&buf) >= n + 10);
            let grown = e.download(&buf).unwrap();
            assert_eq!(&grown[..n], &data[..], "{label} n={n}");
            let capacity = orrery_core::DeviceBuffer::capacity(&buf);
            e.resize(&mut buf, n / 2).unwrap();
            assert_eq!(orrery_core::DeviceBuffer::capacity(&buf), capacity);
            assert_eq!(e.download(&buf).unwrap(), &data[..n / 2], "{label} n={n}");
        }
    });
}

#[test]
fn writes_are_ordered_after_earlier_work_and_before_later_work() {
    each(|label, e| {
        let n = 5000;
        let mut a = e.alloc::<u32>(n).unwrap();
        e.fill(&mut a, 1).unwrap();
        let mut b = e.alloc::<u32>(n).unwrap();
        e.copy(&a, &mut b).unwrap(); // recorded before the write: must see 1s
        e.write(&mut a, 0, &vec![2; n]).unwrap();
        let mut c = e.alloc::<u32>(n).unwrap();
        e.copy(&a, &mut c).unwrap(); // recorded after the write: must see 2s
        assert!(e.download(&b).unwrap().iter().all(|&v| v == 1), "{label}");
        assert!(e.download(&c).unwrap().iter().all(|&v| v == 2), "{label}");
    });
}
