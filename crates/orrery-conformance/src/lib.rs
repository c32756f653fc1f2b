//! # orrery-conformance
//!
//! One conformance suite for every executor: each check is a function generic over
//! [`Executor`] (or [`GpuExecutor`] for launches) that runs an operation on the executor
//! under test and on [`CpuExecutor`], the reference, and compares: integers bit for bit,
//! floats within a tolerance stated at the check. The runner (`tests/conformance/main.rs`)
//! runs [`checks`] and [`gpu_checks`] on the CPU, CUDA and wgpu executors available,
//! prints one line per check, the skipped executors on stderr, and a summary.
//!
//! Checks name the edge case they cover; sizes are the edges of warps, blocks and tiles
//! plus a size that is a multiple of none.

// Every check returns `Err` with the first mismatch it found; that is its whole contract.
#![allow(clippy::missing_errors_doc)]

use orrery_core::gpu::{GpuExecutor, KernelSource, LaunchConfig};
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{
    Aabb, CpuExecutor, DeviceCount, Element, Error, Executor, Order, Real, ReduceOp, Reserve, ScanKind, Slice, Storage,
    Vec3, kernels,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The result of one check: `Err` describes the first mismatch.
pub type Outcome = Result<(), String>;

/// A named check over executors of type `E`.
pub type Check<E> = (&'static str, fn(&E) -> Outcome);

/// Sizes most checks run at.
pub const SIZES: [usize; 8] = [0, 1, 31, 33, 255, 1025, 4097, 100_003];

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn dev<T>(r: orrery_core::Result<T>, what: &str) -> Result<T, String> {
    r.map_err(|e| format!("{what}: {e}"))
}

fn same<T: PartialEq + std::fmt::Debug>(what: &str, got: &[T], want: &[T]) -> Outcome {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => Ok(()),
        Some(i) => Err(format!("{what}: element {i} is {:?}, expected {:?}", got[i], want[i])),
    }
}

fn same_bits<T: Element>(what: &str, got: &[T], want: &[T]) -> Outcome {
    let g: Vec<u64> = got.iter().map(|v| v.order_key()).collect();
    let w: Vec<u64> = want.iter().map(|v| v.order_key()).collect();
    same(what, &g, &w)
}

/// Runs `op` on `exec` and on the CPU with the same uploaded inputs and compares the
/// downloaded `out` buffers.
fn upload<E: Executor, T: Storage>(exec: &E, data: &[T]) -> Result<E::Buffer<T>, String> {
    dev(exec.upload(data), "upload")
}

fn down<E: Executor, T: Storage>(exec: &E, b: &E::Buffer<T>) -> Result<Vec<T>, String> {
    dev(exec.download(b), "download")
}

/// Random CSR offsets over `n` elements with `segments` segments (some empty).
fn offsets(r: &mut ChaCha8Rng, n: usize, segments: usize) -> Vec<u32> {
    let mut cuts: Vec<u32> = (0..segments.saturating_sub(1)).map(|_| r.random_range(0..=n as u32)).collect();
    cuts.sort_unstable();
    let mut out = vec![0u32];
    out.extend(cuts);
    if segments > 0 {
        out.push(n as u32);
    }
    out
}

// ---- views, storage and movement ------------------------------------------------------

/// Scans and compactions of sub-ranges at every alignment: views start at 0..4 and end
/// short of the buffer, outputs are views too.
pub fn views_of_scans_and_compactions<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(1);
    for &n in &SIZES {
        for start in 0..4usize.min(n + 1) {
            let data: Vec<u32> = (0..n).map(|_| r.random_range(0..4)).collect();
            let end = n - (n - start) / 7;
            let (a, c) = (upload(exec, &data)?, upload(&cpu, &data)?);
            let (mut out, mut out_c) = (upload(exec, &vec![7u32; n + 2])?, upload(&cpu, &vec![7u32; n + 2])?);
            let len = end - start;
            dev(
                exec.exclusive_scan(dev(a.slice(start..end), "slice")?, dev(out.slice_mut(1..len + 2), "slice")?),
                "scan",
            )?;
            dev(
                cpu.exclusive_scan(dev(c.slice(start..end), "slice")?, dev(out_c.slice_mut(1..len + 2), "slice")?),
                "scan",
            )?;
            same(&format!("scan of {start}..{end} of {n}"), &down(exec, &out)?, &down(&cpu, &out_c)?)?;
            let (mut o, mut o_c) = (upload(exec, &vec![0u32; len])?, upload(&cpu, &vec![0u32; len])?);
            let (mut k, mut k_c) = (upload(exec, &[0u32])?, upload(&cpu, &[0u32])?);
            let v = dev(a.slice(start..end), "slice")?;
            dev(exec.compact(v, v, &mut o, &mut k), "compact")?;
            let vc = dev(c.slice(start..end), "slice")?;
            dev(cpu.compact(vc, vc, &mut o_c, &mut k_c), "compact")?;
            let count = down(&cpu, &k_c)?[0] as usize;
            same("compaction count", &down(exec, &k)?, &[count as u32])?;
            same("compaction", &down(exec, &o)?[..count], &down(&cpu, &o_c)?[..count])?;
        }
    }
    Ok(())
}

/// A 16-byte body type and a 12-byte one gathered, scattered, copied and filled.
pub fn plain_old_data_of_any_width<E: Executor>(exec: &E) -> Outcome {
    let mut r = rng(2);
    for &n in &[0usize, 1, 33, 4097] {
        let bodies: Vec<[f32; 4]> = (0..n).map(|i| [i as f32, r.random(), r.random(), 1.0]).collect();
        let triples: Vec<[u32; 3]> = (0..n).map(|i| [i as u32, r.random(), 3]).collect();
        let mut perm: Vec<u32> = (0..n as u32).collect();
        for i in (1..n).rev() {
            perm.swap(i, r.random_range(0..=i));
        }
        let idx = upload(exec, &perm)?;
        let (b, t) = (upload(exec, &bodies)?, upload(exec, &triples)?);
        let (mut gb, mut gt) = (upload(exec, &vec![[0f32; 4]; n])?, upload(exec, &vec![[0u32; 3]; n])?);
        dev(exec.gather(&b, &idx, &mut gb), "gather [f32; 4]")?;
        dev(exec.gather(&t, &idx, &mut gt), "gather [u32; 3]")?;
        let want_b: Vec<[f32; 4]> = perm.iter().map(|&i| bodies[i as usize]).collect();
        let want_t: Vec<[u32; 3]> = perm.iter().map(|&i| triples[i as usize]).collect();
        same("gather [f32; 4]", &down(exec, &gb)?, &want_b)?;
        same("gather [u32; 3]", &down(exec, &gt)?, &want_t)?;
        let mut sb = upload(exec, &vec![[0f32; 4]; n])?;
        dev(exec.scatter(&gb, &idx, &mut sb), "scatter [f32; 4]")?;
        same("scatter undoes gather", &down(exec, &sb)?, &bodies)?;
        if n > 2 {
            let mut c = upload(exec, &vec![[9u32; 3]; n])?;
            dev(exec.copy(dev(t.slice(1..n - 1), "slice")?, dev(c.slice_mut(0..n - 2), "slice")?), "copy")?;
            dev(exec.fill(dev(c.slice_mut(n - 2..n), "slice")?, [5, 6, 7]), "fill")?;
            let mut want: Vec<[u32; 3]> = triples[1..n - 1].to_vec();
            want.extend([[5, 6, 7], [5, 6, 7]]);
            same("copy and fill of [u32; 3] views", &down(exec, &c)?, &want)?;
        }
    }
    Ok(())
}

/// `n` elements from element `from` of a random source to element `to` of a random
/// destination; the whole destination after the copy.
fn copied<E: Executor, T: Storage>(exec: &E, n: usize, from: usize, to: usize, seed: u64) -> Result<Vec<T>, String> {
    let random = |len: usize, seed: u64| -> Vec<T> {
        let mut r = rng(seed);
        let bytes: Vec<u8> = (0..len * size_of::<T>()).map(|_| r.random()).collect();
        bytemuck::pod_collect_to_vec(&bytes)
    };
    let src = upload(exec, &random(from + n + 2, seed))?;
    let mut dst = upload(exec, &random(to + n + 3, seed + 1))?;
    dev(exec.copy(dev(src.slice(from..from + n), "slice")?, dev(dst.slice_mut(to..to + n), "slice")?), "copy")?;
    down(exec, &dst)
}

fn copies_of<E: Executor, T: Storage>(exec: &E, what: &str) -> Outcome {
    let cpu = CpuExecutor::new();
    // Element offsets that put 4- and 8-byte views on, off and differently off 16 bytes.
    let pairs = [(0usize, 0usize), (1, 3), (4, 8), (8, 4), (1, 1), (3, 0)];
    for n in [0usize, 1, 3, 4, 5, 17, 1_000_003] {
        for &(from, to) in if n > 1000 { &pairs[..2] } else { &pairs[..] } {
            let seed = n as u64 ^ (from as u64) << 32 ^ (to as u64) << 40;
            let (got, want) = (copied::<E, T>(exec, n, from, to, seed)?, copied::<_, T>(&cpu, n, from, to, seed)?);
            let (got, want): (&[u8], &[u8]) = (bytemuck::cast_slice(&got), bytemuck::cast_slice(&want));
            same(&format!("copy of {n} {what} from {from} to {to} (bytes)"), got, want)?;
        }
    }
    Ok(())
}

/// Copies of 4-, 8-, 12- and 16-byte elements, lengths 0 to 1000003, between views at
/// element offsets that are 16-byte aligned, differently aligned and unaligned; the
/// destination's elements outside the copy stay as they were.
pub fn copies_of_every_width_at_any_offset<E: Executor>(exec: &E) -> Outcome {
    copies_of::<E, u32>(exec, "u32")?;
    copies_of::<E, f64>(exec, "f64")?;
    copies_of::<E, [u32; 3]>(exec, "[u32; 3]")?;
    copies_of::<E, [f32; 4]>(exec, "[f32; 4]")
}

/// A sort of the middle of a key array leaves the ends untouched.
pub fn sort_of_a_sub_range<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(3);
    for &n in &SIZES {
        let keys: Vec<u64> = (0..n).map(|_| r.random::<u64>() >> r.random_range(0..64)).collect();
        let vals: Vec<u32> = (0..n as u32).collect();
        let (a, b) = (n / 5, n - n / 7);
        let (mut k, mut v) = (upload(exec, &keys)?, upload(exec, &vals)?);
        let (mut kc, mut vc) = (upload(&cpu, &keys)?, upload(&cpu, &vals)?);
        dev(exec.sort_pairs(dev(k.slice_mut(a..b), "slice")?, dev(v.slice_mut(a..b), "slice")?, 0..64), "sort")?;
        dev(cpu.sort_pairs(dev(kc.slice_mut(a..b), "slice")?, dev(vc.slice_mut(a..b), "slice")?, 0..64), "sort")?;
        same("sorted keys", &down(exec, &k)?, &down(&cpu, &kc)?)?;
        same("sorted values", &down(exec, &v)?, &down(&cpu, &vc)?)?;
    }
    Ok(())
}

// ---- searching -------------------------------------------------------------------------

fn bounds_of<E: Executor, T: Element>(exec: &E, sorted: &[T], queries: &[T], what: &str) -> Outcome {
    let cpu = CpuExecutor::new();
    let (s, q) = (upload(exec, sorted)?, upload(exec, queries)?);
    let (sc, qc) = (upload(&cpu, sorted)?, upload(&cpu, queries)?);
    for upper in [false, true] {
        let mut o = upload(exec, &vec![0u32; queries.len()])?;
        let mut oc = upload(&cpu, &vec![0u32; queries.len()])?;
        if upper {
            dev(exec.upper_bound(&s, &q, &mut o), "upper_bound")?;
            dev(cpu.upper_bound(&sc, &qc, &mut oc), "upper_bound")?;
        } else {
            dev(exec.lower_bound(&s, &q, &mut o), "lower_bound")?;
            dev(cpu.lower_bound(&sc, &qc, &mut oc), "lower_bound")?;
        }
        same(&format!("{what} ({})", if upper { "upper" } else { "lower" }), &down(exec, &o)?, &down(&cpu, &oc)?)?;
    }
    Ok(())
}

/// Lower and upper bounds of u64, i32 and f32 (with -0.0, infinities and NaN), sorted
/// with duplicates and also unsorted (the same probe sequence gives the same answer).
pub fn bounds_of_sorted_and_unsorted_arrays<E: Executor>(exec: &E) -> Outcome {
    let mut r = rng(4);
    for &n in &SIZES {
        let mut a: Vec<u64> = (0..n).map(|_| r.random_range(0..(n as u64 / 3 + 2))).collect();
        let q: Vec<u64> = (0..1000).map(|_| r.random_range(0..(n as u64 / 3 + 4))).collect();
        bounds_of(exec, &a, &q, "unsorted u64")?;
        a.sort_unstable();
        bounds_of(exec, &a, &q, "sorted u64")?;
        let mut b: Vec<i32> = (0..n).map(|_| r.random_range(-50..50)).collect();
        b.sort_unstable();
        bounds_of(exec, &b, &[-60, -50, -1, 0, 1, 49, 50, i32::MIN, i32::MAX], "sorted i32")?;
    }
    let mut f = vec![f32::NEG_INFINITY, -1.0, -0.0, 0.0, 0.0, 2.5, f32::INFINITY, f32::NAN];
    f.sort_by_key(|v| v.order_key());
    bounds_of(exec, &f, &[-0.0, 0.0, f32::NAN, -f32::NAN, 1.0, f32::INFINITY, -2.0], "f32 with signed zeros and NaN")
}

/// Histograms into 1, 17 and 5000 bins with values past the last bin.
pub fn histograms_ignore_values_past_the_bins<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(5);
    for &n in &SIZES {
        for bins in [1usize, 17, 5000] {
            let v: Vec<u32> = (0..n).map(|_| r.random_range(0..(bins as u32 + bins as u32 / 4 + 1))).collect();
            let (a, ac) = (upload(exec, &v)?, upload(&cpu, &v)?);
            let (mut o, mut oc) = (upload(exec, &vec![9u32; bins])?, upload(&cpu, &vec![9u32; bins])?);
            dev(exec.histogram(&a, &mut o), "histogram")?;
            dev(cpu.histogram(&ac, &mut oc), "histogram")?;
            same(&format!("histogram of {n} into {bins}"), &down(exec, &o)?, &down(&cpu, &oc)?)?;
        }
    }
    Ok(())
}

// ---- scans and reductions ----------------------------------------------------------------

/// Inclusive scans, wrapping past 2^32.
pub fn inclusive_scans_wrap<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(6);
    for &n in &SIZES {
        let v: Vec<u32> =
            (0..n).map(|_| if r.random_bool(0.01) { u32::MAX - 3 } else { r.random_range(0..100) }).collect();
        let (a, ac) = (upload(exec, &v)?, upload(&cpu, &v)?);
        let (mut o, mut oc) = (upload(exec, &vec![0u32; n])?, upload(&cpu, &vec![0u32; n])?);
        dev(exec.inclusive_scan(&a, &mut o), "inclusive_scan")?;
        dev(cpu.inclusive_scan(&ac, &mut oc), "inclusive_scan")?;
        same(&format!("inclusive scan of {n}"), &down(exec, &o)?, &down(&cpu, &oc)?)?;
    }
    Ok(())
}

/// Segmented scans of CSR offsets with empty segments, and of non-monotone offsets.
pub fn segmented_scans_of_csr_and_bad_offsets<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(7);
    for &n in &SIZES {
        for segments in [1usize, 3, 100] {
            let v: Vec<u32> = (0..n).map(|_| r.random_range(0..10)).collect();
            let mut offs = offsets(&mut r, n, segments);
            if segments == 100 && n > 10 {
                offs[50] = offs[50].saturating_add(n as u32); // past the end: clamped
                offs.swap(10, 20); // non-monotone
            }
            let (a, ac, o, oc) = (upload(exec, &v)?, upload(&cpu, &v)?, upload(exec, &offs)?, upload(&cpu, &offs)?);
            for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                let (mut out, mut outc) = (upload(exec, &vec![7u32; n])?, upload(&cpu, &vec![7u32; n])?);
                dev(exec.segmented_scan(&a, &o, kind, &mut out), "segmented_scan")?;
                dev(cpu.segmented_scan(&ac, &oc, kind, &mut outc), "segmented_scan")?;
                same(
                    &format!("{kind:?} segmented scan of {n} in {segments}"),
                    &down(exec, &out)?,
                    &down(&cpu, &outc)?,
                )?;
            }
        }
    }
    Ok(())
}

/// A float comparison: the conversion to f64 and the relative tolerance.
type Tolerance<T> = (fn(T) -> f64, f64);

/// `tolerance`: `None` compares bit for bit; `Some((to_f64, rel))` compares sums within
/// `rel` relative.
fn segmented_reduce_of<E: Executor, T: Element>(
    exec: &E,
    v: &[T],
    offs: &[u32],
    tolerance: Option<Tolerance<T>>,
) -> Outcome {
    let cpu = CpuExecutor::new();
    let (a, ac, o, oc) = (upload(exec, v)?, upload(&cpu, v)?, upload(exec, offs)?, upload(&cpu, offs)?);
    let segments = offs.len() - 1;
    for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
        let (mut out, mut outc) = (upload(exec, &vec![T::ZERO; segments])?, upload(&cpu, &vec![T::ZERO; segments])?);
        dev(exec.segmented_reduce(&a, &o, op, &mut out), "segmented_reduce")?;
        dev(cpu.segmented_reduce(&ac, &oc, op, &mut outc), "segmented_reduce")?;
        let (got, want) = (down(exec, &out)?, down(&cpu, &outc)?);
        match tolerance {
            Some((to_f64, rel)) if op == ReduceOp::Sum => {
                for (s, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    let (g, w) = (to_f64(g), to_f64(w));
                    if (g - w).abs() > rel * w.abs().max(1.0) {
                        return Err(format!("segmented sum of segment {s}: {g}, expected {w}"));
                    }
                }
            }
            _ => same_bits(&format!("segmented {op:?}"), &got, &want)?,
        }
    }
    Ok(())
}

/// Segmented reductions of u32, i64 and f32 (sums within 1e-5 relative: each executor
/// sums in its own fixed order, the CPU left to right), with empty and clamped segments.
pub fn segmented_reductions<E: Executor>(exec: &E) -> Outcome {
    let mut r = rng(8);
    for &n in &SIZES {
        for segments in [1usize, 7, 300] {
            let mut offs = offsets(&mut r, n, segments);
            if segments == 300 {
                offs[3] = u32::MAX;
            }
            let u: Vec<u32> = (0..n).map(|_| r.random()).collect();
            segmented_reduce_of(exec, &u, &offs, None)?;
            let i: Vec<i64> = (0..n).map(|_| r.random_range(-1_000_000..1_000_000)).collect();
            segmented_reduce_of(exec, &i, &offs, None).or_else(|e| skip_unsupported(&e))?;
            let f: Vec<f32> = (0..n).map(|_| r.random_range(-1.0..1.0)).collect();
            segmented_reduce_of(exec, &f, &offs, Some((f64::from, 1e-5)))?;
        }
    }
    Ok(())
}

/// Top-k of u32, f32 and u64 keys with ties, k from 1 to 1024, both orders, segments
/// shorter than k.
pub fn segmented_top_k_with_ties_and_padding<E: Executor>(exec: &E) -> Outcome {
    let mut r = rng(9);
    for &n in &[0usize, 1, 33, 1025, 20_000] {
        for &(segments, k) in &[(1usize, 1u32), (5, 5), (40, 64), (3, 1024)] {
            let offs = offsets(&mut r, n, segments);
            let u: Vec<u32> = (0..n).map(|_| r.random_range(0..50)).collect();
            top_k_of(exec, &u, &offs, k)?;
            let f: Vec<f32> = (0..n).map(|_| (r.random_range(-20..20) as f32) * 0.5).collect();
            top_k_of(exec, &f, &offs, k)?;
            let w: Vec<u64> = (0..n).map(|_| r.random::<u64>() >> r.random_range(0..64)).collect();
            top_k_of(exec, &w, &offs, k)?;
        }
    }
    Ok(())
}

fn top_k_of<E: Executor, T: Element>(exec: &E, keys: &[T], offs: &[u32], k: u32) -> Outcome {
    let cpu = CpuExecutor::new();
    let slots = (offs.len() - 1) * k as usize;
    let (a, ac, o, oc) = (upload(exec, keys)?, upload(&cpu, keys)?, upload(exec, offs)?, upload(&cpu, offs)?);
    for order in [Order::Smallest, Order::Largest] {
        let (mut i, mut ic) = (upload(exec, &vec![0u32; slots])?, upload(&cpu, &vec![0u32; slots])?);
        let (mut t, mut tc) = (upload(exec, &vec![T::ZERO; slots])?, upload(&cpu, &vec![T::ZERO; slots])?);
        dev(exec.segmented_top_k(&a, &o, k, order, &mut i, &mut t), "segmented_top_k")?;
        dev(cpu.segmented_top_k(&ac, &oc, k, order, &mut ic, &mut tc), "segmented_top_k")?;
        let what = format!("top-{k} {order:?} of {} in {}", keys.len(), offs.len() - 1);
        same(&what, &down(exec, &i)?, &down(&cpu, &ic)?)?;
        same_bits(&what, &down(exec, &t)?, &down(&cpu, &tc)?)?;
    }
    Ok(())
}

fn skip_unsupported(e: &str) -> Outcome {
    if e.contains("does not support") { Ok(()) } else { Err(e.to_owned()) }
}

// ---- space-filling-curve keys -----------------------------------------------------------

/// Keys around a key view, which `sfc_keys` must leave alone.
const UNTOUCHED_KEY: u64 = 0x5eed_5eed_5eed_5eed;

/// The keys of `n` positions through views (x, y, z and keys start 1, 2, 3 and 5
/// elements into longer buffers), compared bit for bit with `key_clamped`. The first
/// positions are every pair of edge values (the box faces, -0, far outside, NaN and
/// infinities); the rest are uniform over 1.5 times the box.
fn sfc_keys_of<E: Executor, T: Real>(exec: &E, mapper: &KeyMapper<T, u64>, n: usize, seed: u64) -> Outcome {
    let (lo, hi) = (mapper.bbox().min(), mapper.bbox().max());
    let mut edges: Vec<T> = (0..3).flat_map(|a| [lo[a], hi[a]]).collect();
    edges.extend([-0.0, 1e30, -1e30, f64::NAN, f64::INFINITY, f64::NEG_INFINITY].map(<T as Real>::from_f64));
    let mut r = rng(seed);
    let mut axis = |a: usize| -> Vec<T> {
        let (l, h): (f64, f64) = (lo[a].into(), hi[a].into());
        let pad = 0.25 * (h - l) + 1e-3;
        let mut v = vec![<T as Real>::from_f64(0.5); 1 + a];
        v.extend((0..n).map(|_| <T as Real>::from_f64(r.random_range(l - pad..=h + pad))));
        v.extend([<T as Real>::from_f64(0.5); 3]);
        v
    };
    let (mut x, mut y, mut z) = (axis(0), axis(1), axis(2));
    let e = edges.len();
    for at in 0..n.min(e * e) {
        (x[1 + at], y[2 + at], z[3 + at]) = (edges[at / e], edges[at % e], edges[(at / e + at % e) % e]);
    }
    let (gx, gy, gz) = (upload(exec, &x)?, upload(exec, &y)?, upload(exec, &z)?);
    let mut keys = upload(exec, &vec![UNTOUCHED_KEY; n + 9])?;
    let (xv, yv, zv) =
        (dev(gx.slice(1..n + 1), "slice")?, dev(gy.slice(2..n + 2), "slice")?, dev(gz.slice(3..n + 3), "slice")?);
    dev(exec.sfc_keys(xv, yv, zv, mapper, dev(keys.slice_mut(5..n + 5), "slice")?), "sfc_keys")?;
    let mut want = vec![UNTOUCHED_KEY; n + 9];
    for i in 0..n {
        want[5 + i] = mapper.key_clamped(x[1 + i], y[2 + i], z[3 + i]);
    }
    same(&format!("{:?} keys of {n} {:?} positions", mapper.curve(), T::DTYPE), &down(exec, &keys)?, &want)
}

/// Morton and Hilbert keys of f32 and (where the executor has f64) f64 positions, on
/// views, at [`SIZES`] and at one size of several grid-stride rounds of the GPU kernels
/// (3 Mi + 785), against `KeyMapper::key_clamped`.
pub fn sfc_keys_of_both_curves_on_views_edges_and_many_rounds<E: Executor>(exec: &E) -> Outcome {
    let box32 = dev(Aabb::new(Vec3::new(-1.5f32, 0.0, 10.0), Vec3::new(2.5, 1e-3, 10.5)), "box")?;
    let box64 = dev(Aabb::new(Vec3::new(-1.0f64, -2.0, -3.0), Vec3::new(1.0, 2.0, 3.0)), "box")?;
    for (seed, n) in SIZES.into_iter().chain([(3 << 20) + 785]).enumerate() {
        for curve in [Curve::Morton, Curve::Hilbert] {
            sfc_keys_of(exec, &KeyMapper::new(box32, curve), n, 100 + seed as u64)?;
            if exec.limits().f64 {
                sfc_keys_of(exec, &KeyMapper::new(box64, curve), n, 200 + seed as u64)?;
            }
        }
    }
    Ok(())
}

// ---- device-resident counts, status reads, streams ------------------------------------

/// A scan and a compaction whose length is the count a previous compaction left on the
/// device, including a device value past the bound (clamped).
pub fn counted_scans_and_compactions<E: Executor>(exec: &E) -> Outcome {
    let cpu = CpuExecutor::new();
    let mut r = rng(10);
    for &n in &SIZES {
        for live in [0usize, n / 2, n, n + 5] {
            let v: Vec<u32> = (0..n).map(|_| r.random_range(0..3)).collect();
            let (a, ac) = (upload(exec, &v)?, upload(&cpu, &v)?);
            let (c, cc) = (upload(exec, &[live as u32])?, upload(&cpu, &[live as u32])?);
            let (mut o, mut oc) = (upload(exec, &vec![5u32; n + 1])?, upload(&cpu, &vec![5u32; n + 1])?);
            dev(exec.exclusive_scan_counted(&a, dev(DeviceCount::new(&c, n), "count")?, &mut o), "counted scan")?;
            dev(cpu.exclusive_scan_counted(&ac, dev(DeviceCount::new(&cc, n), "count")?, &mut oc), "counted scan")?;
            same(&format!("counted scan of {live} of {n}"), &down(exec, &o)?, &down(&cpu, &oc)?)?;
            let (mut p, mut pc) = (upload(exec, &vec![0u32; n])?, upload(&cpu, &vec![0u32; n])?);
            let (mut k, mut kc) = (upload(exec, &[0u32])?, upload(&cpu, &[0u32])?);
            dev(
                exec.compact_counted(&a, &a, dev(DeviceCount::new(&c, n), "count")?, &mut p, &mut k),
                "counted compaction",
            )?;
            dev(
                cpu.compact_counted(&ac, &ac, dev(DeviceCount::new(&cc, n), "count")?, &mut pc, &mut kc),
                "counted compaction",
            )?;
            let kept = down(&cpu, &kc)?[0] as usize;
            same("counted compaction count", &down(exec, &k)?, &[kept as u32])?;
            same("counted compaction", &down(exec, &p)?[..kept], &down(&cpu, &pc)?[..kept])?;
        }
    }
    Ok(())
}

/// A status read started between two pieces of work returns the values of the moment it
/// was enqueued.
pub fn status_reads_see_the_work_before_them<E: Executor>(exec: &E) -> Outcome {
    let mut b = upload(exec, &vec![1u32; 1000])?;
    dev(exec.fill(dev(b.slice_mut(10..20), "slice")?, 7), "fill")?;
    let pending = dev(exec.read_async(dev(b.slice(8..12), "slice")?), "read_async")?;
    dev(exec.fill(&mut b, 9), "fill")?;
    same("status block", &dev(exec.wait(pending), "wait")?, &[1, 1, 7, 7])?;
    same("later work", &down(exec, &b)?[..2], &[9, 9])
}

/// Work on a fork after an event of the first stream sees that stream's results.
pub fn forks_are_ordered_by_events<E: Executor>(exec: &E) -> Outcome {
    let other = dev(exec.fork(), "fork")?;
    let mut a = upload(exec, &vec![0u32; 1 << 16])?;
    let mut b = upload(exec, &vec![0u32; 1 << 16])?;
    dev(exec.fill(&mut a, 42), "fill")?;
    let done = dev(exec.signal(), "signal")?;
    dev(other.wait_for(&done), "wait_for")?;
    dev(other.copy(&a, &mut b), "copy on the fork")?;
    dev(other.synchronize(), "synchronize")?;
    same("copy after the event", &down(exec, &b)?[..3], &[42, 42, 42])
}

/// A recorded update-shaped sequence (a counted scan of a device count and a counted
/// compaction whose count is the next step's count) replays three times over changed
/// inputs with one status read per step, matching the CPU; recording a host read is an
/// error; replaying after a buffer it uses is dropped is an error.
pub fn recorded_sequences_replay_without_host_reads<E: Executor>(exec: &E) -> Outcome {
    if !exec.limits().replay {
        return match exec.record(&mut || Ok(())) {
            Err(Error::Unsupported { .. }) => Ok(()),
            other => Err(format!("record without replay support gave {:?}", other.map(|_| ()))),
        };
    }
    let n = 5000usize;
    dev(exec.reserve(&Reserve { scan: n, ..Reserve::default() }), "reserve")?;
    let mut flags = upload(exec, &vec![0u32; n])?;
    let count = upload(exec, &[n as u32])?;
    let mut scan = upload(exec, &vec![0u32; n + 1])?;
    let mut kept = upload(exec, &vec![0u32; n])?;
    let mut next = upload(exec, &[0u32])?;
    let recording = {
        let (f, c, s, k, x) = (&flags, &count, &mut scan, &mut kept, &mut next);
        dev(
            exec.record(&mut || {
                exec.exclusive_scan_counted(f, DeviceCount::new(c, n)?, &mut *s)?;
                exec.compact_counted(f, f, DeviceCount::new(c, n)?, &mut *k, &mut *x)
            }),
            "record",
        )?
    };
    let mut r = rng(11);
    for step in 0..3 {
        let v: Vec<u32> = (0..n).map(|_| u32::from(r.random_bool(0.3))).collect();
        dev(exec.write(&mut flags, 0, &v), "write")?;
        dev(exec.replay(&recording), "replay")?;
        let status = dev(exec.wait(dev(exec.read_async(&next), "read_async")?), "wait")?;
        let want = v.iter().filter(|&&f| f != 0).count() as u32;
        same(&format!("step {step} status"), &status, &[want])?;
        let mut total = 0u32;
        let want_scan: Vec<u32> = std::iter::once(0)
            .chain(v.iter().map(|&x| {
                total += x;
                total
            }))
            .collect();
        same(&format!("step {step} scan"), &down(exec, &scan)?, &want_scan)?;
    }
    match exec.record(&mut || exec.download(&count).map(|_| ())) {
        Err(Error::Recording { .. }) => {}
        other => return Err(format!("a host read inside a recording gave {:?}", other.map(|_| ()))),
    }
    drop(kept);
    match exec.replay(&recording) {
        Err(Error::Recording { .. }) => Ok(()),
        other => Err(format!("replay after dropping a buffer gave {other:?}")),
    }
}

/// Every check of the [`Executor`] contract.
pub fn checks<E: Executor>() -> Vec<Check<E>> {
    vec![
        ("views_of_scans_and_compactions", views_of_scans_and_compactions::<E>),
        ("plain_old_data_of_any_width", plain_old_data_of_any_width::<E>),
        ("copies_of_every_width_at_any_offset", copies_of_every_width_at_any_offset::<E>),
        ("sort_of_a_sub_range", sort_of_a_sub_range::<E>),
        ("bounds_of_sorted_and_unsorted_arrays", bounds_of_sorted_and_unsorted_arrays::<E>),
        ("histograms_ignore_values_past_the_bins", histograms_ignore_values_past_the_bins::<E>),
        ("inclusive_scans_wrap", inclusive_scans_wrap::<E>),
        ("segmented_scans_of_csr_and_bad_offsets", segmented_scans_of_csr_and_bad_offsets::<E>),
        ("segmented_reductions", segmented_reductions::<E>),
        ("segmented_top_k_with_ties_and_padding", segmented_top_k_with_ties_and_padding::<E>),
        (
            "sfc_keys_of_both_curves_on_views_edges_and_many_rounds",
            sfc_keys_of_both_curves_on_views_edges_and_many_rounds::<E>,
        ),
        ("counted_scans_and_compactions", counted_scans_and_compactions::<E>),
        ("status_reads_see_the_work_before_them", status_reads_see_the_work_before_them::<E>),
        ("forks_are_ordered_by_events", forks_are_ordered_by_events::<E>),
        ("recorded_sequences_replay_without_host_reads", recorded_sequences_replay_without_host_reads::<E>),
    ]
}

// ---- launches (GPU executors) -----------------------------------------------------------

/// The test kernel of the launch checks: `output[i] = 2 * input[i] + 1` for `i <
/// min(count, bound)`, launched indirectly.
pub const TEST_KERNELS: KernelSource = KernelSource::new(
    "conformance/test_kernels",
    r#"
extern "C" __global__ void cf_double(const unsigned int* __restrict__ args, const unsigned int* __restrict__ count,
                                     const unsigned int* __restrict__ input, unsigned int* __restrict__ output,
                                     unsigned int bound) {
    if (blockIdx.x >= args[3]) return;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int n = min(count[0], bound);
    if (i < n) output[i] = 2u * input[i] + 1u;
}
"#,
    r"
struct Params { bound: u32, off_args: u32, off_count: u32, off_input: u32, off_output: u32 }
@group(0) @binding(0) var<storage, read> args: array<u32>;
@group(0) @binding(1) var<storage, read> count: array<u32>;
@group(0) @binding(2) var<storage, read> input: array<u32>;
@group(0) @binding(3) var<storage, read_write> output: array<u32>;
@group(0) @binding(4) var<uniform> params: Params;
override WORKGROUP_SIZE: u32 = 64u;
@compute @workgroup_size(WORKGROUP_SIZE)
fn cf_double(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>) {
    let block = wid.x + wid.y * nwg.x;
    if (block >= args[params.off_args + 3u]) { return; }
    let i = block * WORKGROUP_SIZE + lid.x;
    let n = min(count[params.off_count], params.bound);
    if (i < n) { output[params.off_output + i] = 2u * input[params.off_input + i] + 1u; }
}
",
);

mod typed {
    use super::{TEST_KERNELS, kernels};
    kernels! {
        module = TEST_KERNELS;
        /// The declaration that matches the sources.
        pub fn cf_double(read args: u32, read count: u32, read input: u32, write output: u32, scalar bound: u32);
    }
    /// Declarations that do not match the sources.
    pub mod wrong {
        use super::{TEST_KERNELS, kernels};
        kernels! {
            module = TEST_KERNELS;
            /// One scalar too many.
            pub fn cf_double(read args: u32, read count: u32, read input: u32, write output: u32, scalar bound: u32, scalar extra: u32);
        }
    }
}

/// An indirect launch sized by a device count (through `indirect_args`), also inside a
/// recording that is replayed; a declaration with a wrong parameter list is rejected
/// before the launch.
pub fn indirect_launches_sized_by_a_device_count<E: GpuExecutor>(exec: &E) -> Outcome {
    let threads = 64u32;
    let bound = 10_000usize;
    let input: Vec<u32> = (0..bound as u32).collect();
    let inp = upload(exec, &input)?;
    let mut out = upload(exec, &vec![0u32; bound])?;
    let mut args = upload(exec, &[0u32; 4])?;
    for live in [0usize, 1, 63, 64, 65, 4097, bound, bound + 7] {
        let count = upload(exec, &[live as u32])?;
        dev(exec.fill(&mut out, 0), "fill")?;
        dev(exec.indirect_args(dev(DeviceCount::new(&count, bound), "count")?, threads, &mut args), "indirect_args")?;
        let words = down(exec, &args)?;
        let blocks = live.min(bound).div_ceil(threads as usize) as u32;
        if words[3] != blocks || words[0] * words[1] * words[2] < blocks {
            return Err(format!("indirect args {words:?} for {blocks} blocks"));
        }
        let config = dev(LaunchConfig::indirect(&args, bound.div_ceil(threads as usize) as u32, threads), "config")?;
        dev(typed::cf_double(exec, &config, &args, &count, &inp, &mut out, bound as u32), "launch")?;
        let got = down(exec, &out)?;
        let want: Vec<u32> = (0..bound).map(|i| if i < live.min(bound) { 2 * i as u32 + 1 } else { 0 }).collect();
        same(&format!("indirect launch for {live}"), &got, &want)?;
    }
    let config = LaunchConfig::blocks(1, threads);
    match typed::wrong::cf_double(exec, &config, &args, &inp, &inp, &mut out, 1, 2) {
        Err(Error::KernelSignature { .. }) => Ok(()),
        other => Err(format!("a wrong declaration gave {other:?}")),
    }
}

/// Every check of the [`GpuExecutor`] contract.
pub fn gpu_checks<E: GpuExecutor>() -> Vec<Check<E>> {
    vec![("indirect_launches_sized_by_a_device_count", indirect_launches_sized_by_a_device_count::<E>)]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checks themselves run on the reference (a check that cannot run on the CPU
    /// would only ever fail on a GPU for its own sake).
    #[test]
    fn every_check_passes_on_the_cpu_reference() {
        let cpu = CpuExecutor::new();
        for (name, check) in checks::<CpuExecutor>() {
            check(&cpu).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}
