//! Every primitive on views that start and end off the adapter's alignment (and, on the
//! coarse executor, off 256 bytes), compared with the CPU executor on the whole
//! buffers: the elements outside the views must be left as they were.
//!
//! Each check is one function generic over the executor, run on the CPU and on wgpu with
//! the same inputs.

use orrery_core::gpu::indirect_words;
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, DeviceCount, Executor, ReduceOp, Slice, Storage};
use rand::Rng;

use crate::common::{cpu, each_view, rng};

const SIZES: [usize; 5] = [0, 1, 33, 2049, 4100];

fn random<T: Storage>(n: usize, seed: u64) -> Vec<T> {
    let mut r = rng(seed);
    let bytes: Vec<u8> = (0..n * size_of::<T>()).map(|_| r.random()).collect();
    bytemuck::pod_collect_to_vec(&bytes)
}

fn bits<T: Storage>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

macro_rules! compare {
    ($what:expr, $f:ident $(::<$($g:ty),*>)? $(, $arg:expr)*) => {{
        let want = $f $(::<$($g),*>)? (&cpu() $(, $arg)*);
        each_view(|label, e| {
            let got = $f $(::<$($g),*>)? (e $(, $arg)*);
            assert!(got == want, "{} on {label}: differs from the CPU", $what);
        });
    }};
}

// ---- data movement -------------------------------------------------------------------

fn copy_view<E: Executor, T: Storage>(e: &E, n: usize, seed: u64) -> Vec<u8> {
    let src = e.upload(&random::<T>(n + 5, seed)).unwrap();
    let mut dst = e.upload(&random::<T>(n + 7, seed + 1)).unwrap();
    e.copy(src.slice(1..n + 1).unwrap(), dst.slice_mut(3..n + 3).unwrap()).unwrap();
    bits(&e.download(&dst).unwrap())
}

/// `n` elements from element `from` of a source to element `to` of a destination; the
/// whole destination (its elements outside the copy included).
fn copy_at<E: Executor, T: Storage>(e: &E, n: usize, from: usize, to: usize, seed: u64) -> Vec<u8> {
    let src = e.upload(&random::<T>(n + from + 2, seed)).unwrap();
    let mut dst = e.upload(&random::<T>(n + to + 3, seed + 1)).unwrap();
    e.copy(src.slice(from..from + n).unwrap(), dst.slice_mut(to..to + n).unwrap()).unwrap();
    bits(&e.download(&dst).unwrap())
}

/// Copies of `T` at every (source, destination) element offset pair below: with the
/// offsets of 4- and 8-byte elements these are 16-byte aligned, aligned differently, or
/// not at all, so both copy kernels and each view rule run (16-byte elements are always
/// the vec4 kernel). The 1000003-element copy runs at the first two pairs only (time).
fn copies_of<T: Storage>(what: &str) {
    const PAIRS: [(usize, usize); 6] = [(0, 0), (1, 3), (4, 8), (8, 4), (1, 1), (3, 0)];
    for n in [0usize, 1, 3, 4, 5, 17, 1_000_003] {
        let pairs = if n > 1000 { &PAIRS[..2] } else { &PAIRS[..] };
        for &(from, to) in pairs {
            compare!(format!("copy {what} n={n} {from}->{to}"), copy_at::<_, T>, n, from, to, n as u64 + 17);
        }
    }
}

#[test]
fn copies_of_every_storage_width_at_aligned_and_odd_offsets() {
    copies_of::<u32>("u32");
    copies_of::<i32>("i32");
    copies_of::<f32>("f32");
    copies_of::<u64>("u64");
    copies_of::<i64>("i64");
    copies_of::<f64>("f64");
    copies_of::<[u32; 3]>("[u32; 3]");
    copies_of::<[f32; 4]>("[f32; 4]");
    copies_of::<[u32; 5]>("[u32; 5]");
}

fn fill_view<E: Executor, T: Storage>(e: &E, n: usize, value: T) -> Vec<u8> {
    let mut dst = e.upload(&random::<T>(n + 5, 9)).unwrap();
    e.fill(dst.slice_mut(1..n + 1).unwrap(), value).unwrap();
    bits(&e.download(&dst).unwrap())
}

fn iota_view<E: Executor>(e: &E, n: usize) -> Vec<u32> {
    let mut dst = e.upload(&random::<u32>(n + 5, 3)).unwrap();
    e.iota(dst.slice_mut(3..n + 3).unwrap(), 7).unwrap();
    e.download(&dst).unwrap()
}

fn gather_scatter_view<E: Executor, T: Storage>(e: &E, n: usize, seed: u64) -> Vec<u8> {
    let len = n + 2;
    let input = e.upload(&random::<T>(len + 5, seed)).unwrap();
    let mut r = rng(seed);
    let mut idx: Vec<u32> = (0..len as u32).collect();
    for i in (1..idx.len()).rev() {
        idx.swap(i, r.random_range(0..=i));
    }
    let mut padded = vec![0u32; 1];
    padded.extend_from_slice(&idx[..n]);
    padded.extend([0, 0, 0]);
    let indices = e.upload(&padded).unwrap();
    let iv = indices.slice(1..n + 1).unwrap();
    let mut out = e.upload(&random::<T>(n + 6, seed + 1)).unwrap();
    e.gather(input.slice(1..len + 1).unwrap(), iv, out.slice_mut(3..n + 3).unwrap()).unwrap();
    let mut scattered = e.upload(&random::<T>(len + 6, seed + 2)).unwrap();
    e.scatter(input.slice(2..n + 2).unwrap(), iv, scattered.slice_mut(3..len + 3).unwrap()).unwrap();
    let mut image = bits(&e.download(&out).unwrap());
    image.extend(bits(&e.download(&scattered).unwrap()));
    image
}

#[test]
fn copy_fill_iota_on_unaligned_views() {
    for n in SIZES {
        compare!(format!("copy u32 n={n}"), copy_view::<_, u32>, n, 1);
        compare!(format!("copy u64 n={n}"), copy_view::<_, u64>, n, 2);
        compare!(format!("fill u32 n={n}"), fill_view, n, 0xdead_beefu32);
        compare!(format!("fill zero u32 n={n}"), fill_view, n, 0u32);
        compare!(format!("fill u64 n={n}"), fill_view, n, 0x0123_4567_89ab_cdefu64);
        compare!(format!("fill [u32; 3] n={n}"), fill_view, n, [1u32, 2, 3]);
        compare!(
            format!("fill [u32; 20] n={n}"),
            fill_view,
            n,
            std::array::from_fn::<u32, 20, _>(|i| i as u32 * 7 + 1)
        );
        compare!(format!("iota n={n}"), iota_view, n);
    }
}

#[test]
fn gather_and_scatter_of_4_8_12_and_20_byte_elements_on_unaligned_views() {
    for n in SIZES {
        compare!(format!("gather/scatter u32 n={n}"), gather_scatter_view::<_, u32>, n, 11);
        compare!(format!("gather/scatter u64 n={n}"), gather_scatter_view::<_, u64>, n, 12);
        compare!(format!("gather/scatter [u32; 3] n={n}"), gather_scatter_view::<_, [u32; 3]>, n, 13);
        compare!(format!("gather/scatter [u32; 5] n={n}"), gather_scatter_view::<_, [u32; 5]>, n, 14);
    }
}

// ---- sort, scans, reductions, compaction, keys ------------------------------------------

fn sort_view<E: Executor>(e: &E, n: usize) -> Vec<u64> {
    let mut r = rng(n as u64);
    let keys: Vec<u64> = (0..n + 4).map(|_| r.random::<u64>() >> r.random_range(0..60)).collect();
    let mut k = e.upload(&keys).unwrap();
    let mut v = e.alloc::<u32>(n + 6).unwrap();
    e.iota(&mut v, 0).unwrap();
    e.sort_pairs(k.slice_mut(1..n + 1).unwrap(), v.slice_mut(3..n + 3).unwrap(), 0..64).unwrap();
    let mut image = e.download(&k).unwrap();
    image.extend(e.download(&v).unwrap().iter().map(|&v| u64::from(v)));
    image
}

fn scans_view<E: Executor>(e: &E, n: usize) -> Vec<u32> {
    let input = e.upload(&random::<u32>(n + 4, 21)).unwrap();
    let mut excl = e.upload(&random::<u32>(n + 6, 22)).unwrap();
    e.exclusive_scan(input.slice(1..n + 1).unwrap(), excl.slice_mut(3..n + 4).unwrap()).unwrap();
    let mut incl = e.upload(&random::<u32>(n + 6, 23)).unwrap();
    e.inclusive_scan(input.slice(2..n + 2).unwrap(), incl.slice_mut(1..n + 1).unwrap()).unwrap();
    let mut out = e.download(&excl).unwrap();
    out.extend(e.download(&incl).unwrap());
    out
}

fn reduce_view<E: Executor, T: orrery_core::Element>(e: &E, n: usize, op: ReduceOp) -> Vec<u8> {
    let input = e.upload(&random::<T>(n + 4, 31)).unwrap();
    let mut out = e.upload(&random::<T>(5, 32)).unwrap();
    e.reduce(input.slice(1..n + 1).unwrap(), op, out.slice_mut(3..4).unwrap()).unwrap();
    bits(&e.download(&out).unwrap())
}

fn compact_view<E: Executor, T: Storage>(e: &E, n: usize) -> Vec<u8> {
    let input = e.upload(&random::<T>(n + 4, 41)).unwrap();
    let flags: Vec<u32> = random::<u32>(n + 4, 42).iter().map(|f| f % 3).collect();
    let flags = e.upload(&flags).unwrap();
    let mut out = e.upload(&random::<T>(n + 6, 43)).unwrap();
    let mut count = e.upload(&[5u32, 6, 7]).unwrap();
    e.compact(
        input.slice(1..n + 1).unwrap(),
        flags.slice(2..n + 2).unwrap(),
        out.slice_mut(3..n + 3).unwrap(),
        count.slice_mut(1..2).unwrap(),
    )
    .unwrap();
    let c = e.download(&count).unwrap();
    let all = e.download(&out).unwrap();
    // Elements past the count are unspecified: compare the kept ones and the count.
    let mut image = bits(&c);
    image.extend(bits(&all[3..3 + c[1] as usize]));
    image
}

fn keys_view<E: Executor>(e: &E, n: usize) -> Vec<u64> {
    let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0).unwrap(), Curve::Hilbert);
    let mut r = rng(51);
    let pos: Vec<f32> = (0..n + 4).map(|_| r.random()).collect();
    let (x, y, z) = (e.upload(&pos).unwrap(), e.upload(&pos[1..]).unwrap(), e.upload(&pos).unwrap());
    let mut keys = e.upload(&vec![9u64; n + 5]).unwrap();
    let (xv, yv, zv) = (x.slice(1..n + 1).unwrap(), y.slice(0..n).unwrap(), z.slice(3..n + 3).unwrap());
    e.sfc_keys(xv, yv, zv, &mapper, keys.slice_mut(1..n + 1).unwrap()).unwrap();
    e.download(&keys).unwrap()
}

#[test]
fn sort_scans_reductions_compaction_and_keys_on_unaligned_views() {
    for n in SIZES {
        compare!(format!("sort n={n}"), sort_view, n);
        compare!(format!("scans n={n}"), scans_view, n);
        compare!(format!("reduce u32 sum n={n}"), reduce_view::<_, u32>, n, ReduceOp::Sum);
        compare!(format!("reduce i64 min n={n}"), reduce_view::<_, i64>, n, ReduceOp::Min);
        compare!(format!("reduce u64 max n={n}"), reduce_view::<_, u64>, n, ReduceOp::Max);
        compare!(format!("reduce i32 sum n={n}"), reduce_view::<_, i32>, n, ReduceOp::Sum);
        compare!(format!("compact u32 n={n}"), compact_view::<_, u32>, n);
        compare!(format!("compact u64 n={n}"), compact_view::<_, u64>, n);
        compare!(format!("compact [u32; 3] n={n}"), compact_view::<_, [u32; 3]>, n);
        compare!(format!("sfc keys n={n}"), keys_view, n);
    }
}

// ---- counted primitives ---------------------------------------------------------------

/// A counted scan and a counted compaction with the live count in an unaligned slot;
/// `live` may exceed the bound (clamped).
fn counted<E: Executor>(e: &E, bound: usize, live: u32) -> Vec<u32> {
    let slots = e.upload(&[1u32, 2, live, 4]).unwrap();
    let count = DeviceCount::<E>::new(slots.slice(2..3).unwrap(), bound).unwrap();
    let input = e.upload(&random::<u32>(bound + 4, 61).iter().map(|v| v % 100).collect::<Vec<_>>()).unwrap();
    let mut out = e.upload(&vec![0xeeee_eeee; bound + 6]).unwrap();
    e.exclusive_scan_counted(input.slice(1..bound + 1).unwrap(), count, out.slice_mut(3..bound + 4).unwrap()).unwrap();
    let flags = e.upload(&random::<u32>(bound + 4, 62).iter().map(|f| f % 2).collect::<Vec<_>>()).unwrap();
    let mut kept = e.upload(&vec![0xdddd_ddddu32; bound + 5]).unwrap();
    let mut n = e.upload(&[0u32; 3]).unwrap();
    e.compact_counted(
        input.slice(2..bound + 2).unwrap(),
        flags.slice(1..bound + 1).unwrap(),
        count,
        kept.slice_mut(1..bound + 1).unwrap(),
        n.slice_mut(1..2).unwrap(),
    )
    .unwrap();
    let n = e.download(&n).unwrap();
    let mut image = e.download(&out).unwrap();
    image.extend(&n);
    image.extend(&e.download(&kept).unwrap()[1..=(n[1] as usize)]);
    image
}

#[test]
fn counted_scan_and_compaction_use_the_device_count_clamped_to_the_bound() {
    for bound in [0usize, 1, 33, 2049, 4100] {
        for live in [0u32, 1, (bound / 2) as u32, bound as u32, bound as u32 + 7, u32::MAX] {
            compare!(format!("counted bound={bound} live={live}"), counted, bound, live);
        }
    }
}

// ---- indirect launches -------------------------------------------------------------------

#[test]
fn indirect_args_match_the_host_reference() {
    use orrery_core::gpu::GpuExecutor;
    each_view(|label, e| {
        let max = e.capabilities().max_workgroups_per_dimension;
        for (bound, live, per) in
            [(0usize, 0u32, 64u32), (100, 64, 64), (100, 65, 64), (1000, 5000, 7), (1 << 24, 1 << 24, 1)]
        {
            let slots = e.upload(&[9u32, live]).unwrap();
            let count = DeviceCount::new(slots.slice(1..2).unwrap(), bound).unwrap();
            let mut args = e.upload(&[7u32; 6]).unwrap();
            e.indirect_args(count, per, args.slice_mut(1..5).unwrap()).unwrap();
            let blocks = (live.min(bound as u32)).div_ceil(per);
            let mut want = vec![7u32];
            want.extend(indirect_words(blocks, max));
            want.push(7);
            assert_eq!(e.download(&args).unwrap(), want, "{label} bound={bound} live={live} per={per}");
        }
    });
}
