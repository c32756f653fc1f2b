//! The v2 primitives (lower and upper bounds, histogram, segmented scan, reduction and
//! top-k) against the CPU executor: integer results and every search, histogram, scan
//! and top-k result bit-identical, float Min/Max of segmented reductions bit-identical
//! (NaN and -0.0 included), float sums within rounding. Every case runs through views
//! that start at an unaligned element offset ([`PAD`] elements of junk before and after,
//! which must stay untouched), so the kernels' `off_*` offsets are exercised everywhere.

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::{Element, Error, Executor, Order, ReduceOp, ScanKind, Slice};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::common::{cpu, each, rng};

/// Junk elements before and after every view (3 elements: 12 or 24 bytes, never a
/// multiple of the storage alignment).
const PAD: usize = 3;

// ---- value generators ------------------------------------------------------------------

/// Test values of one element type.
trait Sample: Element {
    /// A value drawn from `range` distinct values (0: any bit pattern).
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self;
    /// Edge values: the extremes, zeros, and for floats NaNs, -0.0, infinities.
    fn specials() -> Vec<Self>;
    /// A finite value for sums.
    fn finite(r: &mut ChaCha8Rng) -> Self;
    /// A value junk slots hold.
    fn junk() -> Self;
}

impl Sample for u32 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        if range == 0 { r.random() } else { r.random_range(0..range) }
    }
    fn specials() -> Vec<Self> {
        vec![0, 1, u32::MAX, u32::MAX - 1, 1 << 31]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random()
    }
    fn junk() -> Self {
        0xdead_beef
    }
}

impl Sample for i32 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        if range == 0 { r.random() } else { r.random_range(0..range).cast_signed() - (range / 2).cast_signed() }
    }
    fn specials() -> Vec<Self> {
        vec![0, -1, 1, i32::MIN, i32::MAX]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random()
    }
    fn junk() -> Self {
        -0x1234_5678
    }
}

impl Sample for u64 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        // Spread over both words, so the high word decides some comparisons.
        if range == 0 { r.random() } else { u64::from(r.random_range(0..range)).wrapping_mul(0x1_0000_0001) }
    }
    fn specials() -> Vec<Self> {
        vec![0, 1, u64::MAX, 0xffff_ffff, 1 << 32, 1 << 63]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random()
    }
    fn junk() -> Self {
        0xdead_beef_dead_beef
    }
}

impl Sample for i64 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        if range == 0 {
            r.random()
        } else {
            (i64::from(r.random_range(0..range)) - i64::from(range / 2)).wrapping_mul(0x1_0000_0001)
        }
    }
    fn specials() -> Vec<Self> {
        vec![0, -1, 1, i64::MIN, i64::MAX, -(1 << 32), 0xffff_ffff]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random()
    }
    fn junk() -> Self {
        -0x1234_5678_9abc
    }
}

impl Sample for f32 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        if range == 0 {
            f32::from_bits(r.random())
        } else {
            (r.random_range(0..range) as f32 - (range / 2) as f32) * 0.5
        }
    }
    fn specials() -> Vec<Self> {
        vec![
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7f80_0001),
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            -1e-45,
            f32::MAX,
            f32::MIN,
        ]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random_range(-1.0f32..1.0)
    }
    fn junk() -> Self {
        -12345.5
    }
}

impl Sample for f64 {
    fn sample(r: &mut ChaCha8Rng, range: u32) -> Self {
        if range == 0 {
            f64::from_bits(r.random())
        } else {
            (f64::from(r.random_range(0..range)) - f64::from(range / 2)) * 0.25e10
        }
    }
    fn specials() -> Vec<Self> {
        vec![
            f64::NAN,
            -f64::NAN,
            f64::from_bits(0x7ff0_0000_0000_0001),
            f64::from_bits(0x7ff0_0001_0000_0000),
            0.0,
            -0.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            -5e-324,
            f64::MAX,
            f64::MIN,
        ]
    }
    fn finite(r: &mut ChaCha8Rng) -> Self {
        r.random_range(-1.0f64..1.0)
    }
    fn junk() -> Self {
        -12345.5
    }
}

/// `n` values from `range` distinct ones, with the specials mixed in.
fn values<T: Sample>(r: &mut ChaCha8Rng, n: usize, range: u32) -> Vec<T> {
    let specials = T::specials();
    (0..n)
        .map(
            |_| {
                if r.random_range(0..16) == 0 {
                    specials[r.random_range(0..specials.len())]
                } else {
                    T::sample(r, range)
                }
            },
        )
        .collect()
}

fn bits<T: Element>(v: &[T]) -> &[u8] {
    bytemuck::cast_slice(v)
}

/// `data` between PAD junk elements on either side.
fn padded<T: Sample>(data: &[T]) -> Vec<T> {
    let mut v = vec![T::junk(); PAD];
    v.extend_from_slice(data);
    v.extend(std::iter::repeat_n(T::junk(), PAD));
    v
}

/// The view of a padded buffer that holds `len` elements.
fn inner(len: usize) -> std::ops::Range<usize> {
    PAD..PAD + len
}

/// The result part of a downloaded padded output, after checking the junk is intact.
fn unpad<T: Sample>(what: &str, all: &[T]) -> Vec<T> {
    let len = all.len() - 2 * PAD;
    let junk = [T::junk(); PAD];
    assert_eq!(bits(&all[..PAD]), bits(&junk), "{what}: junk before the output view was written");
    assert_eq!(bits(&all[PAD + len..]), bits(&junk), "{what}: junk after the output view was written");
    all[PAD..PAD + len].to_vec()
}

// ---- the operations, on any executor, through padded views ------------------------------

fn run_bounds<E: Executor, T: Sample>(e: &E, sorted: &[T], queries: &[T], upper: bool) -> Result<Vec<u32>, Error> {
    let s = e.upload(&padded(sorted))?;
    let q = e.upload(&padded(queries))?;
    let mut o = e.upload(&padded(&vec![7u32; queries.len()]))?;
    let (sv, qv) = (s.slice(inner(sorted.len()))?, q.slice(inner(queries.len()))?);
    let ov = o.slice_mut(inner(queries.len()))?;
    if upper {
        e.upper_bound(sv, qv, ov)?;
    } else {
        e.lower_bound(sv, qv, ov)?;
    }
    Ok(unpad("bounds", &e.download(&o)?))
}

fn run_histogram<E: Executor>(e: &E, values: &[u32], bins: usize) -> Result<Vec<u32>, Error> {
    let v = e.upload(&padded(values))?;
    let mut o = e.upload(&padded(&vec![9u32; bins]))?;
    e.histogram(v.slice(inner(values.len()))?, o.slice_mut(inner(bins))?)?;
    Ok(unpad("histogram", &e.download(&o)?))
}

fn run_scan<E: Executor>(e: &E, input: &[u32], offsets: &[u32], kind: ScanKind) -> Result<Vec<u32>, Error> {
    let i = e.upload(&padded(input))?;
    let off = e.upload(&padded(offsets))?;
    let mut o = e.upload(&padded(&vec![5u32; input.len()]))?;
    e.segmented_scan(
        i.slice(inner(input.len()))?,
        off.slice(inner(offsets.len()))?,
        kind,
        o.slice_mut(inner(input.len()))?,
    )?;
    Ok(unpad("segmented scan", &e.download(&o)?))
}

fn run_reduce<E: Executor, T: Sample>(e: &E, input: &[T], offsets: &[u32], op: ReduceOp) -> Result<Vec<T>, Error> {
    let segments = offsets.len().saturating_sub(1);
    let i = e.upload(&padded(input))?;
    let off = e.upload(&padded(offsets))?;
    let mut o = e.upload(&padded(&vec![T::junk(); segments]))?;
    e.segmented_reduce(
        i.slice(inner(input.len()))?,
        off.slice(inner(offsets.len()))?,
        op,
        o.slice_mut(inner(segments))?,
    )?;
    Ok(unpad("segmented reduce", &e.download(&o)?))
}

type TopK<T> = (Vec<u32>, Vec<T>);

fn run_top_k<E: Executor, T: Sample>(
    e: &E,
    keys: &[T],
    offsets: &[u32],
    k: u32,
    order: Order,
) -> Result<TopK<T>, Error> {
    let slots = offsets.len().saturating_sub(1) * k as usize;
    let kb = e.upload(&padded(keys))?;
    let off = e.upload(&padded(offsets))?;
    let mut idx = e.upload(&padded(&vec![3u32; slots]))?;
    let mut top = e.upload(&padded(&vec![T::junk(); slots]))?;
    e.segmented_top_k(
        kb.slice(inner(keys.len()))?,
        off.slice(inner(offsets.len()))?,
        k,
        order,
        idx.slice_mut(inner(slots))?,
        top.slice_mut(inner(slots))?,
    )?;
    Ok((unpad("top-k indices", &e.download(&idx)?), unpad("top-k keys", &e.download(&top)?)))
}

// ---- offsets -------------------------------------------------------------------------------

/// CSR offsets over `n` elements: `segments` segments of random lengths (some empty,
/// some long), the last ending at `n`.
fn csr(r: &mut ChaCha8Rng, n: usize, segments: usize) -> Vec<u32> {
    let mut cuts: Vec<u32> = (0..segments.saturating_sub(1)).map(|_| r.random_range(0..=n as u32)).collect();
    cuts.sort_unstable();
    let mut out = vec![0];
    out.extend(cuts);
    if segments > 0 {
        out.push(n as u32);
    }
    out
}

/// Every kind of offsets a segmented primitive must give a defined answer for.
fn offset_cases(r: &mut ChaCha8Rng, n: usize) -> Vec<(&'static str, Vec<u32>)> {
    let big = n as u32;
    let mut cases = vec![
        ("no segments", vec![0]),
        ("one segment", vec![0, big]),
        ("csr", csr(r, n, 1 + n / 50)),
        ("csr few", csr(r, n, 3)),
        ("empty segments", vec![0, 0, 0, big / 2, big / 2, big, big]),
        ("clamped", vec![big / 3, big + 5, u32::MAX, u32::MAX]),
        ("starts late", vec![big / 2, big / 2 + 1, big]),
        ("ends early", vec![0, big / 4, big / 2]),
    ];
    let wild: Vec<u32> = (0..(2 + n / 100)).map(|_| r.random_range(0..big + 10)).collect();
    cases.push(("non-monotone", wild));
    let mut decreasing = csr(r, n, 6);
    decreasing.reverse();
    cases.push(("decreasing", decreasing));
    cases
}

// ---- bounds -----------------------------------------------------------------------------------

fn bounds_case<T: Sample>(label: &str, e: &WgpuExecutor, sorted: &[T], queries: &[T], what: &str) {
    let c = cpu();
    for upper in [false, true] {
        let g = run_bounds(e, sorted, queries, upper).unwrap();
        let want = run_bounds(&c, sorted, queries, upper).unwrap();
        if g != want {
            let bad = g.iter().zip(&want).position(|(a, b)| a != b).unwrap();
            panic!(
                "{label} {} {what} upper={upper} n={} q={}: query {bad} ({:?}) gives {} instead of {}",
                std::any::type_name::<T>(),
                sorted.len(),
                queries.len(),
                queries[bad],
                g[bad],
                want[bad]
            );
        }
    }
}

fn bounds_for<T: Sample>() {
    each(|label, e| {
        for (n, q, range) in
            [(0, 5, 0), (1, 7, 3), (2, 9, 3), (33, 100, 8), (1000, 1000, 50), (1000, 300, 0), (100_000, 20_000, 0)]
        {
            let mut r = rng(n as u64 * 7 + q as u64);
            let mut sorted: Vec<T> = values(&mut r, n, range);
            sorted.sort_by_key(|v| v.order_key());
            let mut queries: Vec<T> = values(&mut r, q, range);
            queries.extend(T::specials());
            queries.extend(sorted.iter().take(50).copied());
            bounds_case(label, e, &sorted, &queries, "sorted");
            // Unsorted input: the same search, so the same (meaningless) answer.
            let unsorted: Vec<T> = values(&mut r, n, range);
            bounds_case(label, e, &unsorted, &queries, "unsorted");
        }
        // No queries.
        bounds_case::<T>(label, e, &T::specials(), &[], "no queries");
    });
}

#[test]
fn bounds_match_the_cpu_for_every_type() {
    bounds_for::<u32>();
    bounds_for::<i32>();
    bounds_for::<f32>();
    bounds_for::<u64>();
    bounds_for::<i64>();
    bounds_for::<f64>();
}

#[test]
fn bounds_order_floats_by_total_order() {
    each(|label, e| {
        let sorted = [f32::NEG_INFINITY, -1.0, -0.0, 0.0, 1.0, f32::INFINITY, f32::NAN];
        let out = run_bounds(e, &sorted, &[-0.0, 0.0, f32::NAN, -f32::NAN], false).unwrap();
        assert_eq!(out, [2, 3, 6, 0], "{label}");
        let out = run_bounds(e, &sorted, &[-0.0, 0.0, f32::NAN, -f32::NAN], true).unwrap();
        assert_eq!(out, [3, 4, 7, 0], "{label}");
    });
}

// ---- histogram ------------------------------------------------------------------------------

#[test]
fn histogram_matches_the_cpu() {
    each(|label, e| {
        let c = cpu();
        for bins in [1usize, 7, 256, 4096, 4097, 70_000] {
            for n in [0usize, 1, 1000, 100_000] {
                let mut r = rng((bins * 131 + n) as u64);
                let top = (bins as u32).saturating_add(bins as u32 / 5 + 2);
                let mut v: Vec<u32> = (0..n).map(|_| r.random_range(0..top)).collect();
                if n > 0 {
                    v[0] = u32::MAX;
                    v[n / 2] = bins as u32;
                }
                let g = run_histogram(e, &v, bins).unwrap();
                let want = run_histogram(&c, &v, bins).unwrap();
                assert!(g == want, "{label} bins={bins} n={n}");
            }
        }
        // Every value in one bin.
        let v = vec![3u32; 50_000];
        assert_eq!(run_histogram(e, &v, 4).unwrap(), [0, 0, 0, 50_000], "{label}");
    });
}

// ---- segmented scan -------------------------------------------------------------------------

#[test]
fn segmented_scan_matches_the_cpu() {
    each(|label, e| {
        let c = cpu();
        for n in [0usize, 1, 5, 1023, 1025, 4097, 100_000] {
            let mut r = rng(n as u64 + 99);
            let input: Vec<u32> = (0..n).map(|_| if n > 5000 { r.random() } else { r.random_range(0..100) }).collect();
            for (what, offsets) in offset_cases(&mut r, n) {
                for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                    let g = run_scan(e, &input, &offsets, kind).unwrap();
                    let want = run_scan(&c, &input, &offsets, kind).unwrap();
                    if g != want {
                        let bad = g.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                        panic!("{label} n={n} {what} {kind:?}: element {bad} is {} instead of {}", g[bad], want[bad]);
                    }
                }
            }
        }
    });
}

// ---- segmented reduce -----------------------------------------------------------------------

const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

fn reduce_exact<T: Sample>(label: &str, e: &WgpuExecutor, input: &[T], offsets: &[u32], op: ReduceOp, what: &str) {
    let g = run_reduce(e, input, offsets, op).unwrap();
    let want = run_reduce(&cpu(), input, offsets, op).unwrap();
    if bits(&g) != bits(&want) {
        let bad = g.iter().zip(&want).position(|(a, b)| bytemuck::bytes_of(a) != bytemuck::bytes_of(b)).unwrap();
        panic!(
            "{label} {} {op:?} {what} n={}: segment {bad} is {:?} instead of {:?}",
            std::any::type_name::<T>(),
            input.len(),
            g[bad],
            want[bad]
        );
    }
}

fn reduce_sizes() -> [usize; 6] {
    [0, 1, 33, 1024, 5000, 100_000]
}

/// Integers: every op bit-identical; floats: Min and Max bit-identical.
fn reduce_exact_for<T: Sample>(ops: &[ReduceOp]) {
    each(|label, e| {
        for n in reduce_sizes() {
            let mut r = rng(n as u64 * 3 + 1);
            for range in [0u32, 5] {
                let input: Vec<T> = values(&mut r, n, range);
                for (what, offsets) in offset_cases(&mut r, n) {
                    for &op in ops {
                        reduce_exact(label, e, &input, &offsets, op, what);
                    }
                }
            }
        }
    });
}

#[test]
fn segmented_integer_reductions_are_bit_identical() {
    reduce_exact_for::<u32>(&OPS);
    reduce_exact_for::<i32>(&OPS);
    reduce_exact_for::<u64>(&OPS);
    reduce_exact_for::<i64>(&OPS);
}

#[test]
fn segmented_float_min_max_are_bit_identical_with_nans_and_signed_zeros() {
    reduce_exact_for::<f32>(&[ReduceOp::Min, ReduceOp::Max]);
    reduce_exact_for::<f64>(&[ReduceOp::Min, ReduceOp::Max]);
    each(|label, e| {
        // The first of equal values wins (-0.0 vs 0.0), NaNs never get in, across tiles.
        let mut input = vec![1.0f32; 3000];
        input[5] = -0.0;
        input[1500] = 0.0;
        input[0] = f32::NAN;
        input[2999] = f32::NAN;
        for op in [ReduceOp::Min, ReduceOp::Max] {
            reduce_exact(label, e, &input, &[0, 3000, 1500, 1501, 3000], op, "zeros");
        }
        let all_nan = vec![f64::NAN; 10];
        reduce_exact(label, e, &all_nan, &[0, 10], ReduceOp::Min, "all NaN");
    });
}

/// |gpu - cpu| per segment: both sum in fixed orders of depth at most len + 32.
fn check_sums<T: Sample + Into<f64>>(label: &str, input: &[T], offsets: &[u32], g: &[T], want: &[T], eps: f64) {
    let n = input.len();
    for s in 0..g.len() {
        let (a, b) = orrery_core::executor::segment_bounds(offsets, s, n);
        let abs: f64 = input[a..b].iter().map(|&v| Into::<f64>::into(v).abs()).sum();
        let tol = 2.0 * ((b - a) as f64 + 32.0) * eps * abs;
        let (x, y): (f64, f64) = (g[s].into(), want[s].into());
        assert!((x - y).abs() <= tol, "{label} n={n} segment {s} ({a}..{b}): {x} vs {y} (tolerance {tol})");
    }
}

#[test]
fn segmented_float_sums_agree_within_rounding() {
    each(|label, e| {
        for n in reduce_sizes() {
            let mut r = rng(n as u64 + 17);
            let input: Vec<f32> = (0..n).map(|_| f32::finite(&mut r)).collect();
            let input64: Vec<f64> = (0..n).map(|_| f64::finite(&mut r)).collect();
            for (what, offsets) in offset_cases(&mut r, n) {
                let g = run_reduce(e, &input, &offsets, ReduceOp::Sum).unwrap();
                let want = run_reduce(&cpu(), &input, &offsets, ReduceOp::Sum).unwrap();
                check_sums(&format!("{label} f32 {what}"), &input, &offsets, &g, &want, f64::from(f32::EPSILON));
                let g = run_reduce(e, &input64, &offsets, ReduceOp::Sum);
                if e.capabilities().f64 {
                    let want = run_reduce(&cpu(), &input64, &offsets, ReduceOp::Sum).unwrap();
                    check_sums(&format!("{label} f64 {what}"), &input64, &offsets, &g.unwrap(), &want, f64::EPSILON);
                } else {
                    assert!(matches!(g, Err(Error::Unsupported { .. })), "{label}: f64 sums need SHADER_F64: {g:?}");
                }
            }
        }
        // Empty segments give +0.0, the identity, and sums start from it (0.0 + -0.0).
        let g = run_reduce(e, &[-0.0f32], &[0, 0, 1], ReduceOp::Sum).unwrap();
        assert_eq!(bits(&g), bits(&run_reduce(&cpu(), &[-0.0f32], &[0, 0, 1], ReduceOp::Sum).unwrap()), "{label}");
        assert_eq!(bits(&g), bits(&[0.0f32, 0.0]), "{label}");
    });
}

// ---- segmented top-k ------------------------------------------------------------------------

fn top_k_case<T: Sample>(label: &str, e: &WgpuExecutor, keys: &[T], offsets: &[u32], k: u32, what: &str) {
    for order in [Order::Smallest, Order::Largest] {
        let (gi, gk) = run_top_k(e, keys, offsets, k, order).unwrap();
        let (wi, wk) = run_top_k(&cpu(), keys, offsets, k, order).unwrap();
        if gi != wi || bits(&gk) != bits(&wk) {
            let bad = (0..gi.len())
                .find(|&j| gi[j] != wi[j] || bytemuck::bytes_of(&gk[j]) != bytemuck::bytes_of(&wk[j]))
                .unwrap();
            panic!(
                "{label} {} {order:?} {what} n={} k={k}: slot {bad} (segment {}) is ({}, {:?}) instead of ({}, {:?})",
                std::any::type_name::<T>(),
                keys.len(),
                bad / k as usize,
                gi[bad],
                gk[bad],
                wi[bad],
                wk[bad]
            );
        }
    }
}

fn top_k_for<T: Sample>() {
    each(|label, e| {
        for (n, ks) in [
            (0usize, &[1u32, 4][..]),
            (1, &[1, 3]),
            (40, &[1, 5, 64]),
            (3000, &[1, 7, 100, 1024]),
            (100_000, &[16, 1024]),
        ] {
            let mut r = rng(n as u64 * 5 + 3);
            for range in [0u32, 4] {
                let keys: Vec<T> = values(&mut r, n, range);
                let cases = offset_cases(&mut r, n);
                for &k in ks {
                    for (what, offsets) in &cases {
                        // Keep the large cases to the shapes that matter (one big
                        // segment, CSR, clamped); every shape runs at the smaller sizes.
                        if n >= 100_000 && !matches!(*what, "one segment" | "csr few" | "clamped") {
                            continue;
                        }
                        top_k_case(label, e, &keys, offsets, k, what);
                    }
                }
            }
        }
    });
}

#[test]
fn top_k_matches_the_cpu_for_32_bit_types() {
    top_k_for::<u32>();
    top_k_for::<i32>();
    top_k_for::<f32>();
}

#[test]
fn top_k_matches_the_cpu_for_64_bit_types() {
    top_k_for::<u64>();
    top_k_for::<i64>();
    top_k_for::<f64>();
}

#[test]
fn top_k_breaks_ties_by_position_and_pads() {
    each(|label, e| {
        let keys = [5.0f32, 1.0, 1.0, -0.0, 0.0, 7.0];
        let (idx, tk) = run_top_k(e, &keys, &[0, 5, 6], 3, Order::Smallest).unwrap();
        assert_eq!(idx, [3, 4, 1, 5, u32::MAX, u32::MAX], "{label}");
        assert_eq!(bits(&tk), bits(&[-0.0f32, 0.0, 1.0, 7.0, f32::INFINITY, f32::INFINITY]), "{label}");
        let (idx, tk) = run_top_k(e, &keys, &[0, 5, 6], 3, Order::Largest).unwrap();
        assert_eq!(idx, [0, 1, 2, 5, u32::MAX, u32::MAX], "{label}");
        assert_eq!(bits(&tk), bits(&[5.0f32, 1.0, 1.0, 7.0, f32::NEG_INFINITY, f32::NEG_INFINITY]), "{label}");
        // All keys equal: the first k positions, for a segment that needs the select.
        let same = vec![42u64; 5000];
        let (idx, _) = run_top_k(e, &same, &[100, 5000], 1024, Order::Largest).unwrap();
        assert!(idx.iter().copied().eq(100..1124), "{label}");
    });
}

// ---- arguments ------------------------------------------------------------------------------

/// The error an operation gives, as text (the CPU and the GPU must give the same one).
fn err<R: std::fmt::Debug>(r: Result<R, Error>) -> String {
    format!("{:?}", r.expect_err("an argument error"))
}

/// Argument-error cases, run on both executors.
fn short_bounds<E: Executor>(e: &E) -> Result<(), Error> {
    let s = e.upload(&[1u32, 2])?;
    let q = e.upload(&[1u32, 2, 3])?;
    let mut o = e.alloc::<u32>(2)?;
    e.lower_bound(&s, &q, &mut o)
}

fn no_bins<E: Executor>(e: &E) -> Result<(), Error> {
    let v = e.upload(&[1u32, 2])?;
    let mut o = e.alloc::<u32>(0)?;
    e.histogram(&v, &mut o)
}

fn scan_no_offsets<E: Executor>(e: &E) -> Result<(), Error> {
    let v = e.upload(&[1u32, 2])?;
    let off = e.alloc::<u32>(0)?;
    let mut o = e.alloc::<u32>(2)?;
    e.segmented_scan(&v, &off, ScanKind::Exclusive, &mut o)
}

fn scan_short<E: Executor>(e: &E) -> Result<(), Error> {
    let v = e.upload(&[1u32, 2])?;
    let off = e.upload(&[0u32, 2])?;
    let mut o = e.alloc::<u32>(1)?;
    e.segmented_scan(&v, &off, ScanKind::Exclusive, &mut o)
}

fn reduce_short<E: Executor>(e: &E, segments: usize) -> Result<(), Error> {
    let v = e.upload(&[1i64, 2])?;
    let off = e.upload(&vec![0u32; segments + 1])?;
    let mut o = e.alloc::<i64>(segments + 1)?;
    e.segmented_reduce(&v, &off, ReduceOp::Max, &mut o)
}

fn reduce_no_offsets<E: Executor>(e: &E) -> Result<(), Error> {
    let v = e.upload(&[1f32, 2.0])?;
    let off = e.alloc::<u32>(0)?;
    let mut o = e.alloc::<f32>(0)?;
    e.segmented_reduce(&v, &off, ReduceOp::Sum, &mut o)
}

fn top_k<E: Executor>(e: &E, k: u32, slots: usize, key_slots: usize, offsets: usize) -> Result<(), Error> {
    let v = e.upload(&[1f64, 2.0])?;
    let off = e.upload(&vec![0u32; offsets])?;
    let mut i = e.alloc::<u32>(slots)?;
    let mut t = e.alloc::<f64>(key_slots)?;
    e.segmented_top_k(&v, &off, k, Order::Smallest, &mut i, &mut t)
}

#[test]
fn argument_errors_match_the_cpu() {
    each(|label, e| {
        let c = cpu();
        macro_rules! same {
            ($f:ident ( $($a:expr),* )) => {
                assert_eq!(err($f(e, $($a),*)), err($f(&c, $($a),*)), "{label}: {}", stringify!($f($($a),*)));
            };
        }
        same!(short_bounds());
        same!(no_bins());
        same!(scan_no_offsets());
        same!(scan_short());
        same!(reduce_short(0));
        same!(reduce_short(3));
        same!(reduce_no_offsets());
        same!(top_k(0, 0, 0, 2));
        same!(top_k(1025, 1025, 1025, 2));
        same!(top_k(2, 4, 4, 0));
        same!(top_k(2, 3, 4, 3));
        same!(top_k(2, 4, 3, 3));
    });
}

// ---- grids and recording --------------------------------------------------------------------

#[test]
fn more_segments_than_one_grid_dimension_holds() {
    // 70 000 segments: the one-workgroup-per-segment launches spread over a 2D grid.
    each(|label, e| {
        let c = cpu();
        let n = 100_000;
        let mut r = rng(4242);
        let offsets = csr(&mut r, n, 70_000);
        let input: Vec<u32> = (0..n).map(|_| r.random_range(0..1000)).collect();
        let g = run_scan(e, &input, &offsets, ScanKind::Inclusive).unwrap();
        assert!(g == run_scan(&c, &input, &offsets, ScanKind::Inclusive).unwrap(), "{label} scan");
        let g = run_reduce(e, &input, &offsets, ReduceOp::Max).unwrap();
        assert!(g == run_reduce(&c, &input, &offsets, ReduceOp::Max).unwrap(), "{label} reduce");
        let g = run_top_k(e, &input, &offsets, 2, Order::Largest).unwrap();
        assert!(g == run_top_k(&c, &input, &offsets, 2, Order::Largest).unwrap(), "{label} top-k");
    });
}

#[test]
fn recorded_primitives_replay_on_new_data() {
    each(|label, e| {
        if !e.limits().replay {
            eprintln!("skipped: {label} does not record");
            return;
        }
        let c = cpu();
        let n = 5000;
        let mut r = rng(77);
        let offsets = csr(&mut r, n, 40);
        let off = e.upload(&offsets).unwrap();
        let mut input = e.alloc::<u32>(n).unwrap();
        let mut hist = e.alloc::<u32>(100).unwrap();
        let mut scan = e.alloc::<u32>(n).unwrap();
        let mut sums = e.alloc::<u32>(40).unwrap();
        let mut idx = e.alloc::<u32>(40 * 8).unwrap();
        let mut top = e.alloc::<u32>(40 * 8).unwrap();
        let mut bounds = e.alloc::<u32>(n).unwrap();
        let recording = e
            .record(&mut || {
                e.histogram(&input, &mut hist)?;
                e.segmented_scan(&input, &off, ScanKind::Exclusive, &mut scan)?;
                e.segmented_reduce(&input, &off, ReduceOp::Sum, &mut sums)?;
                e.segmented_top_k(&input, &off, 8, Order::Smallest, &mut idx, &mut top)?;
                e.upper_bound(&off, &input, &mut bounds)
            })
            .unwrap();
        for round in 0..2 {
            let data: Vec<u32> = (0..n).map(|_| r.random_range(0..120)).collect();
            e.write(&mut input, 0, &data).unwrap();
            e.replay(&recording).unwrap();
            assert_eq!(e.download(&hist).unwrap(), run_histogram(&c, &data, 100).unwrap(), "{label} round {round}");
            assert_eq!(e.download(&scan).unwrap(), run_scan(&c, &data, &offsets, ScanKind::Exclusive).unwrap());
            assert_eq!(e.download(&sums).unwrap(), run_reduce(&c, &data, &offsets, ReduceOp::Sum).unwrap());
            let (i, t) = run_top_k(&c, &data, &offsets, 8, Order::Smallest).unwrap();
            assert_eq!((e.download(&idx).unwrap(), e.download(&top).unwrap()), (i, t), "{label} round {round}");
            assert_eq!(e.download(&bounds).unwrap(), run_bounds(&c, &offsets, &data, true).unwrap());
        }
    });
}
