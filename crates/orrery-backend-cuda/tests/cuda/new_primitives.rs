//! The CUDA lower / upper bounds, histogram, segmented reduction, segmented scan and
//! segmented top-k against the CPU reference executor, for every element type: integer
//! results (indices, counts, scans, integer reductions, float min / max, top-k positions
//! and keys) bit for bit, float sums within a stated tolerance. Inputs cover sizes 0, 1,
//! small and about a million, ties, NaN / -0.0 / infinities, empty, clamped and
//! non-monotone segments, k larger than segments, and views at offsets; every error path
//! is compared with the CPU's error. Without a device each GPU test prints "skipped:
//! <reason>" on stderr and passes, unless `ORRERY_REQUIRE_CUDA=1`. The entry points are
//! checked through NVRTC (no GPU needed). To be folded into the shared conformance suite.

use crate::common;

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_cuda::kernels::{HISTOGRAM, SEARCH, SEGMENTED};
use orrery_core::{CpuExecutor, Element, Error, Executor, Order, ReduceOp, ScanKind, Slice};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

fn cpu() -> CpuExecutor {
    CpuExecutor::new()
}

// ---- element generators ---------------------------------------------------------------

/// What the tests need of an element type beyond [`Element`].
trait TestElement: Element {
    /// A random value over the whole type (floats: finite, a wide range of magnitudes).
    fn random(rng: &mut ChaCha8Rng) -> Self;
    /// A value from a small integer (for inputs with many ties).
    fn small(v: i64) -> Self;
    /// Values that order or compare specially (extremes, signed zeros, NaN, infinities).
    fn specials() -> Vec<Self>;
    /// Whether float sums are compared with a tolerance (and its relative size).
    fn sum_tolerance() -> Option<f64>;
    /// As f64 (for tolerances).
    fn to_f64(self) -> f64;
    /// The largest finite value, as f64.
    fn max_finite() -> f64;
    /// The bits, for exact comparison (NaN payloads and signed zeros included).
    fn bits(self) -> u64;
}

macro_rules! int_test_element {
    ($t:ty) => {
        impl TestElement for $t {
            fn random(rng: &mut ChaCha8Rng) -> Self {
                rng.random::<$t>()
            }
            fn small(v: i64) -> Self {
                v as $t
            }
            fn specials() -> Vec<Self> {
                vec![<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t, (0 as $t).wrapping_sub(1)]
            }
            fn sum_tolerance() -> Option<f64> {
                None
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn max_finite() -> f64 {
                <$t>::MAX as f64
            }
            fn bits(self) -> u64 {
                self as u64
            }
        }
    };
}
int_test_element!(u32);
int_test_element!(i32);
int_test_element!(u64);
int_test_element!(i64);

macro_rules! float_test_element {
    ($t:ty, $tol:expr) => {
        impl TestElement for $t {
            fn random(rng: &mut ChaCha8Rng) -> Self {
                let m: $t = rng.random_range(-1.0..1.0);
                let e: i32 = rng.random_range(-20..20);
                m * (2.0 as $t).powi(e)
            }
            fn small(v: i64) -> Self {
                v as $t * 0.5
            }
            fn specials() -> Vec<Self> {
                vec![
                    <$t>::NAN,
                    -<$t>::NAN,
                    <$t>::from_bits(<$t>::NAN.to_bits() | 1),
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    <$t>::MIN_POSITIVE / 4.0,
                    -<$t>::MIN_POSITIVE / 4.0,
                    <$t>::MAX,
                    <$t>::MIN,
                ]
            }
            fn sum_tolerance() -> Option<f64> {
                Some($tol)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn max_finite() -> f64 {
                <$t>::MAX as f64
            }
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
        }
    };
}
float_test_element!(f32, 1e-5);
float_test_element!(f64, 1e-13);

/// `n` values: random, or (with `ties`) from a small range, with specials sprinkled in.
fn values<T: TestElement>(rng: &mut ChaCha8Rng, n: usize, ties: bool, specials: bool) -> Vec<T> {
    let sp = T::specials();
    (0..n)
        .map(|_| {
            if specials && rng.random_ratio(1, 16) {
                sp[rng.random_range(0..sp.len())]
            } else if ties {
                T::small(rng.random_range(-4..4))
            } else {
                T::random(rng)
            }
        })
        .collect()
}

fn assert_bits<T: TestElement>(what: &str, gpu: &[T], cpu: &[T]) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    for (i, (g, c)) in gpu.iter().zip(cpu).enumerate() {
        assert!(g.bits() == c.bits(), "{what}: element {i}: cuda {g:?} ({:#x}), cpu {c:?} ({:#x})", g.bits(), c.bits());
    }
}

/// CSR offsets of segments of random sizes up to `max_len` covering `n` elements.
fn csr(rng: &mut ChaCha8Rng, n: usize, max_len: usize) -> Vec<u32> {
    let mut o = vec![0u32];
    let mut at = 0usize;
    while at < n {
        let len = if rng.random_ratio(1, 8) { 0 } else { rng.random_range(1..=max_len.max(1)) };
        at = (at + len).min(n);
        o.push(at as u32);
    }
    o
}

/// Offset arrays for `n` elements: CSR ones of several shapes plus offsets that the
/// clamping rule has to make sense of (starting late, ending early, past the end,
/// decreasing, random).
fn offset_sets(rng: &mut ChaCha8Rng, n: usize) -> Vec<(String, Vec<u32>)> {
    let n32 = n as u32;
    let mut sets = vec![
        ("one segment".to_owned(), vec![0, n32]),
        ("no segments".to_owned(), vec![0]),
        ("small segments".to_owned(), csr(rng, n, 40)),
        ("tile-sized segments".to_owned(), csr(rng, n, 3000)),
        ("late start, early end".to_owned(), vec![n32 / 3, n32 / 2, n32 / 2, n32 - n32 / 5]),
        ("past the end".to_owned(), vec![0, n32 / 2, n32 + 7, u32::MAX, 5]),
        ("decreasing".to_owned(), vec![n32, n32 / 2, n32 / 4, 0, n32]),
        ("random".to_owned(), (0..9).map(|_| rng.random_range(0..=n32 + 3)).collect()),
    ];
    if n >= 100_000 {
        sets.push(("large segments".to_owned(), csr(rng, n, 200_000)));
    }
    sets
}

const SIZES: [usize; 7] = [0, 1, 31, 1000, 1025, 4097, 1 << 20];

/// `sizes` up to `ORRERY_TEST_MAX_N` (sanitizer runs cap the sizes).
fn capped(sizes: &[usize]) -> Vec<usize> {
    let max = std::env::var("ORRERY_TEST_MAX_N").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(usize::MAX);
    sizes.iter().copied().filter(|&n| n <= max).collect()
}

// ---- drivers: the same call on both executors ------------------------------------------

fn bounds_on<E: Executor, T: Element>(e: &E, sorted: &[T], queries: &[T], upper: bool, skip: usize) -> Vec<u32> {
    let s = e.upload(sorted).unwrap();
    let q = e.upload(queries).unwrap();
    let mut o = e.upload(&vec![0xdead_beefu32; queries.len() + skip]).unwrap();
    let sv = s.slice(skip.min(sorted.len())..sorted.len()).unwrap();
    let qv = q.slice(skip.min(queries.len())..queries.len()).unwrap();
    let ov = o.slice_mut(0..qv.len()).unwrap();
    if upper {
        e.upper_bound(sv, qv, ov).unwrap();
    } else {
        e.lower_bound(sv, qv, ov).unwrap();
    }
    let mut out = e.download(&o).unwrap();
    out.truncate(qv.len());
    out
}

fn histogram_on<E: Executor>(e: &E, values: &[u32], bins: usize, skip: usize) -> Vec<u32> {
    let v = e.upload(values).unwrap();
    let mut o = e.upload(&vec![0x5555_5555u32; bins + skip]).unwrap();
    e.histogram(v.slice(skip.min(values.len())..values.len()).unwrap(), o.slice_mut(skip..skip + bins).unwrap())
        .unwrap();
    e.download(&o).unwrap()
}

fn seg_reduce_on<E: Executor, T: Element>(e: &E, input: &[T], offsets: &[u32], op: ReduceOp) -> Vec<T> {
    let i = e.upload(input).unwrap();
    let o = e.upload(offsets).unwrap();
    let mut out = e.upload(&vec![T::ZERO; offsets.len().saturating_sub(1)]).unwrap();
    e.segmented_reduce(&i, &o, op, &mut out).unwrap();
    e.download(&out).unwrap()
}

fn seg_scan_on<E: Executor>(e: &E, input: &[u32], offsets: &[u32], kind: ScanKind) -> Vec<u32> {
    let i = e.upload(input).unwrap();
    let o = e.upload(offsets).unwrap();
    let mut out = e.upload(&vec![0xabad_1deau32; input.len()]).unwrap();
    e.segmented_scan(&i, &o, kind, &mut out).unwrap();
    e.download(&out).unwrap()
}

fn top_k_on<E: Executor, T: Element>(e: &E, keys: &[T], offsets: &[u32], k: u32, order: Order) -> (Vec<u32>, Vec<T>) {
    let kb = e.upload(keys).unwrap();
    let o = e.upload(offsets).unwrap();
    let slots = offsets.len().saturating_sub(1) * k as usize;
    let mut idx = e.upload(&vec![7u32; slots]).unwrap();
    let mut tk = e.upload(&vec![T::ZERO; slots]).unwrap();
    e.segmented_top_k(&kb, &o, k, order, &mut idx, &mut tk).unwrap();
    (e.download(&idx).unwrap(), e.download(&tk).unwrap())
}

// ---- bounds --------------------------------------------------------------------------------

fn bounds_case<T: TestElement>(exec: &CudaExecutor, test: u64) {
    let c = cpu();
    for n in capped(&SIZES) {
        let mut rng = common::rng(test, n);
        for ties in [false, true] {
            let unsorted: Vec<T> = values(&mut rng, n, ties, true);
            let mut sorted = unsorted.clone();
            sorted.sort_by_key(|v| v.order_key());
            let mut queries: Vec<T> = values(&mut rng, n.clamp(1, 100_000), ties, true);
            // Queries that hit elements exactly, including every special.
            queries.extend(sorted.iter().step_by((n / 64).max(1)).copied());
            queries.extend(T::specials());
            for (what, data) in [("sorted", &sorted), ("unsorted", &unsorted)] {
                for upper in [false, true] {
                    for skip in [0, 3] {
                        let g = bounds_on(exec, data, &queries, upper, skip);
                        let r = bounds_on(&c, data, &queries, upper, skip);
                        assert_eq!(g, r, "{:?} {what} n={n} ties={ties} upper={upper} skip={skip}", T::DTYPE);
                    }
                }
            }
        }
    }
}

#[test]
fn bounds_match_the_cpu_for_every_type() {
    let exec = cuda_or_skip!();
    bounds_case::<u32>(exec, 1);
    bounds_case::<i32>(exec, 2);
    bounds_case::<u64>(exec, 3);
    bounds_case::<i64>(exec, 4);
    bounds_case::<f32>(exec, 5);
    bounds_case::<f64>(exec, 6);
}

// ---- histogram -----------------------------------------------------------------------------

#[test]
fn histogram_matches_the_cpu() {
    let exec = cuda_or_skip!();
    let c = cpu();
    for n in capped(&SIZES) {
        for bins in [1usize, 7, 1024, 1025, 8192, 8193, 100_000] {
            let mut rng = common::rng(10 + bins as u64, n);
            let spread = (bins + bins / 5 + 2) as u32;
            let random: Vec<u32> = (0..n).map(|_| rng.random_range(0..spread)).collect();
            let skewed: Vec<u32> =
                (0..n).map(|i| if i % 5 == 0 { rng.random::<u32>() } else { (bins as u32) / 2 }).collect();
            for (what, v) in [("random", &random), ("skewed", &skewed)] {
                for skip in [0, 5] {
                    let g = histogram_on(exec, v, bins, skip);
                    let r = histogram_on(&c, v, bins, skip);
                    assert_eq!(g, r, "{what} n={n} bins={bins} skip={skip}");
                }
            }
        }
    }
}

// ---- segmented reduction -------------------------------------------------------------------

/// Whether two float sums agree: within `tol * (scale + 1)` (`scale` = the sum of the
/// finite magnitudes), the same infinity, or both NaN. Sums whose magnitudes add up past the
/// type's largest value may overflow in one order and not in another, so they are not
/// compared.
// `!(a <= b)` is also true for a NaN scale, which must not be compared either.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn close<T: TestElement>(g: T, r: T, scale: f64, tol: f64) -> bool {
    if scale > T::max_finite() {
        return true;
    }
    let (g, r) = (g.to_f64(), r.to_f64());
    if g.is_nan() || r.is_nan() {
        return g.is_nan() && r.is_nan();
    }
    if g.is_infinite() || r.is_infinite() {
        return g == r;
    }
    (g - r).abs() <= tol * (scale + 1.0)
}

fn seg_reduce_case<T: TestElement>(exec: &CudaExecutor, test: u64) {
    let c = cpu();
    for n in capped(&SIZES) {
        let mut rng = common::rng(test, n);
        for specials in [false, true] {
            let input: Vec<T> = values(&mut rng, n, specials, specials);
            for (what, offsets) in offset_sets(&mut rng, n) {
                for op in [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max] {
                    let g = seg_reduce_on(exec, &input, &offsets, op);
                    let r = seg_reduce_on(&c, &input, &offsets, op);
                    let label = format!("{:?} {op:?} n={n} specials={specials} offsets={what}", T::DTYPE);
                    match (op, T::sum_tolerance()) {
                        (ReduceOp::Sum, Some(tol)) => {
                            assert_eq!(g.len(), r.len(), "{label}");
                            for s in 0..g.len() {
                                let (a, b) = orrery_core::executor::segment_bounds(&offsets, s, n);
                                let scale: f64 =
                                    input[a..b].iter().map(|v| v.to_f64().abs()).filter(|m| m.is_finite()).sum();
                                assert!(
                                    close(g[s], r[s], scale, tol),
                                    "{label}: segment {s}: {:?} vs {:?}",
                                    g[s],
                                    r[s]
                                );
                            }
                        }
                        _ => assert_bits(&label, &g, &r),
                    }
                }
            }
        }
    }
}

#[test]
fn segmented_reduce_matches_the_cpu_for_every_type() {
    let exec = cuda_or_skip!();
    seg_reduce_case::<u32>(exec, 21);
    seg_reduce_case::<i32>(exec, 22);
    seg_reduce_case::<u64>(exec, 23);
    seg_reduce_case::<i64>(exec, 24);
    seg_reduce_case::<f32>(exec, 25);
    seg_reduce_case::<f64>(exec, 26);
}

#[test]
fn segmented_reduce_float_results_are_reproducible() {
    let exec = cuda_or_skip!();
    let mut rng = common::rng(27, 1 << 20);
    let input: Vec<f32> = values(&mut rng, 1 << 20, false, false);
    let offsets = csr(&mut rng, 1 << 20, 50_000);
    let first = seg_reduce_on(exec, &input, &offsets, ReduceOp::Sum);
    for _ in 0..3 {
        assert_bits("repeated f32 sums", &seg_reduce_on(exec, &input, &offsets, ReduceOp::Sum), &first);
    }
}

// ---- segmented scan ------------------------------------------------------------------------

#[test]
fn segmented_scan_matches_the_cpu() {
    let exec = cuda_or_skip!();
    let c = cpu();
    for n in capped(&SIZES) {
        let mut rng = common::rng(31, n);
        let input: Vec<u32> =
            (0..n).map(|_| if rng.random_ratio(1, 4) { rng.random() } else { rng.random_range(0..100) }).collect();
        let mut sets = offset_sets(&mut rng, n);
        // Many random, unsorted offsets: the search rule with its fallback search.
        sets.push(("many random".to_owned(), (0..200).map(|_| rng.random_range(0..=n as u32 + 2)).collect()));
        let mut nearly = csr(&mut rng, n, 500);
        if nearly.len() > 4 {
            let l = nearly.len();
            nearly.swap(l / 2, l / 3);
        }
        sets.push(("nearly sorted".to_owned(), nearly));
        for (what, offsets) in sets {
            for kind in [ScanKind::Exclusive, ScanKind::Inclusive] {
                let g = seg_scan_on(exec, &input, &offsets, kind);
                let r = seg_scan_on(&c, &input, &offsets, kind);
                assert_eq!(g, r, "{kind:?} n={n} offsets={what} ({} offsets)", offsets.len());
            }
        }
    }
}

// ---- segmented top-k -----------------------------------------------------------------------

fn top_k_case<T: TestElement>(exec: &CudaExecutor, test: u64) {
    let c = cpu();
    for n in capped(&[0, 1, 31, 1000, 5000, 300_000]) {
        let mut rng = common::rng(test, n);
        for (ties, specials) in [(false, false), (true, true)] {
            let keys: Vec<T> = values(&mut rng, n, ties, specials);
            let mut sets = offset_sets(&mut rng, n);
            sets.retain(|(w, _)| w != "tile-sized segments" || n <= 5000);
            for (what, offsets) in sets {
                for k in [1u32, 3, 32, 100, 1024] {
                    for order in [Order::Smallest, Order::Largest] {
                        let (gi, gk) = top_k_on(exec, &keys, &offsets, k, order);
                        let (ri, rk) = top_k_on(&c, &keys, &offsets, k, order);
                        let label = format!("{:?} {order:?} k={k} n={n} ties={ties} offsets={what}", T::DTYPE);
                        assert_eq!(gi, ri, "{label}: positions");
                        assert_bits(&label, &gk, &rk);
                    }
                }
            }
        }
    }
}

#[test]
fn segmented_top_k_matches_the_cpu_for_every_type() {
    let exec = cuda_or_skip!();
    top_k_case::<u32>(exec, 41);
    top_k_case::<i32>(exec, 42);
    top_k_case::<u64>(exec, 43);
    top_k_case::<i64>(exec, 44);
    top_k_case::<f32>(exec, 45);
    top_k_case::<f64>(exec, 46);
}

#[test]
fn segmented_top_k_of_one_large_segment_with_many_ties() {
    let exec = cuda_or_skip!();
    let c = cpu();
    let Some(&n) = capped(&[1 << 12, 1 << 20]).last() else { return };
    let mut rng = common::rng(47, n);
    // Keys where the k-th value is shared by many elements (ties cut by position), and
    // keys that are all equal.
    let few: Vec<u32> = (0..n).map(|_| rng.random_range(0..3)).collect();
    let equal = vec![-0.0f32; n];
    for k in [1u32, 777, 1024] {
        for order in [Order::Smallest, Order::Largest] {
            let offsets = [0, n as u32];
            assert_eq!(top_k_on(exec, &few, &offsets, k, order), top_k_on(&c, &few, &offsets, k, order), "few k={k}");
            let (gi, gk) = top_k_on(exec, &equal, &offsets, k, order);
            let (ri, rk) = top_k_on(&c, &equal, &offsets, k, order);
            assert_eq!(gi, ri, "equal k={k} {order:?}");
            assert_bits("equal keys", &gk, &rk);
        }
    }
}

// ---- errors --------------------------------------------------------------------------------

/// Every error path of the five primitives, compared with the CPU's error.
#[test]
#[allow(clippy::items_after_statements)] // the helper sits next to its only use
fn errors_match_the_cpu() {
    fn errors<E: Executor>(e: &E) -> Vec<Error> {
        let a = e.upload(&[1u32, 2, 3, 4]).unwrap();
        let f = e.upload(&[1.0f32, 2.0, 3.0]).unwrap();
        let empty = e.upload::<u32>(&[]).unwrap();
        let offsets = e.upload(&[0u32, 2, 4]).unwrap();
        let mut out3 = e.alloc::<u32>(3).unwrap();
        let mut out0 = e.alloc::<u32>(0).unwrap();
        let mut outf = e.alloc::<f32>(3).unwrap();
        let mut idx = e.alloc::<u32>(4).unwrap();
        let mut tk = e.alloc::<f32>(4).unwrap();
        let mut tk3 = e.alloc::<f32>(3).unwrap();
        vec![
            e.lower_bound(&a, &a, &mut out3).unwrap_err(),
            e.upper_bound(&f, &f, &mut idx).unwrap_err(),
            e.histogram(&a, &mut out0).unwrap_err(),
            e.segmented_scan(&a, &offsets, ScanKind::Exclusive, &mut out3).unwrap_err(),
            e.segmented_scan(&a, &empty, ScanKind::Inclusive, &mut idx).unwrap_err(),
            e.segmented_reduce(&f, &offsets, ReduceOp::Sum, &mut outf).unwrap_err(),
            e.segmented_reduce(&f, &empty, ReduceOp::Min, &mut outf).unwrap_err(),
            e.segmented_top_k(&f, &offsets, 0, Order::Smallest, &mut idx, &mut tk).unwrap_err(),
            e.segmented_top_k(&f, &offsets, 1025, Order::Largest, &mut idx, &mut tk).unwrap_err(),
            e.segmented_top_k(&f, &empty, 2, Order::Smallest, &mut idx, &mut tk).unwrap_err(),
            e.segmented_top_k(&f, &offsets, 3, Order::Smallest, &mut idx, &mut tk).unwrap_err(),
            e.segmented_top_k(&f, &offsets, 2, Order::Smallest, &mut idx, &mut tk3).unwrap_err(),
        ]
    }
    let exec = cuda_or_skip!();
    let c = cpu();
    assert_eq!(errors(exec), errors(&c));
}

// ---- entry points (NVRTC only) ---------------------------------------------------------------

/// The entry points the host launches exist in each module's PTX (needs NVRTC, not a
/// GPU; skipped without it unless `ORRERY_REQUIRE_NVRTC=1` or `ORRERY_REQUIRE_CUDA=1`).
#[test]
fn every_entry_point_compiles() {
    if let Err(e) = orrery_backend_cuda::check_nvrtc() {
        let required =
            ["ORRERY_REQUIRE_NVRTC", "ORRERY_REQUIRE_CUDA"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"));
        assert!(!required, "NVRTC is required but unavailable: {e}");
        eprintln!("skipped: {e}");
        return;
    }
    let types = ["u32", "i32", "u64", "i64", "f32", "f64"];
    let mut search = Vec::new();
    let mut segmented = vec!["segmented_scan_exclusive_u32".to_owned(), "segmented_scan_inclusive_u32".to_owned()];
    for t in types {
        search.push(format!("lower_bound_{t}"));
        search.push(format!("upper_bound_{t}"));
        for op in ["sum", "min", "max"] {
            segmented.push(format!("segmented_reduce_{op}_{t}"));
        }
        for order in ["smallest", "largest"] {
            segmented.push(format!("segmented_top_k_{order}_{t}"));
        }
    }
    let histogram: Vec<String> =
        ["histogram_shared_1k", "histogram_shared_8k", "histogram_global"].map(str::to_owned).to_vec();
    for (module, entries) in [(&SEARCH, search), (&SEGMENTED, segmented), (&HISTOGRAM, histogram)] {
        assert!(
            orrery_backend_cuda::CORE_MODULES.iter().any(|m| m.name == module.name),
            "{} in CORE_MODULES",
            module.name
        );
        let ptx = orrery_backend_cuda::compile_module_to_ptx(module, "compute_90").unwrap_or_else(|e| panic!("{e}"));
        for entry in entries {
            assert!(ptx.contains(&format!(".entry {entry}(")), "{} lacks entry {entry}", module.name);
        }
    }
}

// ---- timings (not a test of speed: prints device times; run with --ignored) ----------------

/// Median device time of `f` over 7 runs after one warm-up.
fn time_ms(exec: &CudaExecutor, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..7)
        .map(|_| {
            let a = exec.mark().unwrap();
            f();
            let b = exec.mark().unwrap();
            exec.elapsed(&a, &b).unwrap().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[3]
}

#[test]
#[ignore = "prints device timings"]
fn timings() {
    let exec = cuda_or_skip!();
    let mut rng = common::rng(99, 0);
    let n = 1 << 24;
    let mut sorted: Vec<u32> = (0..n).map(|_| rng.random()).collect();
    sorted.sort_unstable();
    let s = exec.upload(&sorted).unwrap();
    let q = exec.upload(&(0..n).map(|_| rng.random::<u32>()).collect::<Vec<_>>()).unwrap();
    let mut o = exec.alloc::<u32>(n).unwrap();
    eprintln!(
        "lower_bound 16M u32 queries in 16M: {:.3} ms",
        time_ms(exec, || exec.lower_bound(&s, &q, &mut o).unwrap())
    );

    let m = 1 << 26;
    for bins in [256usize, 4096, 65536] {
        let v = exec.upload(&(0..m).map(|_| rng.random_range(0..bins as u32)).collect::<Vec<_>>()).unwrap();
        let mut h = exec.alloc::<u32>(bins).unwrap();
        eprintln!(
            "histogram 64M u32 into {bins} bins: {:.3} ms",
            time_ms(exec, || exec.histogram(&v, &mut h).unwrap())
        );
    }

    let input = exec.upload(&(0..m).map(|_| rng.random::<f32>()).collect::<Vec<_>>()).unwrap();
    let ints = exec.upload(&(0..m).map(|_| rng.random_range(0..100u32)).collect::<Vec<_>>()).unwrap();
    let mut scanned = exec.alloc::<u32>(m).unwrap();
    for seg_len in [32usize, 1000, 100_000, m] {
        let offsets: Vec<u32> = (0..=m / seg_len).map(|i| (i * seg_len) as u32).collect();
        let ob = exec.upload(&offsets).unwrap();
        let mut out = exec.alloc::<f32>(offsets.len() - 1).unwrap();
        eprintln!(
            "segmented_reduce sum 64M f32, segments of {seg_len}: {:.3} ms",
            time_ms(exec, || exec.segmented_reduce(&input, &ob, ReduceOp::Sum, &mut out).unwrap())
        );
        eprintln!(
            "segmented_scan 64M u32, segments of {seg_len}: {:.3} ms",
            time_ms(exec, || exec.segmented_scan(&ints, &ob, ScanKind::Exclusive, &mut scanned).unwrap())
        );
    }
    for (seg_len, k) in [(100usize, 8u32), (1000, 16), (100_000, 64), (1 << 24, 32)] {
        let total = (1 << 24) / seg_len * seg_len;
        let offsets: Vec<u32> = (0..=total / seg_len).map(|i| (i * seg_len) as u32).collect();
        let ob = exec.upload(&offsets).unwrap();
        let slots = (offsets.len() - 1) * k as usize;
        let mut idx = exec.alloc::<u32>(slots).unwrap();
        let mut tk = exec.alloc::<f32>(slots).unwrap();
        let keys = input.slice(0..total).unwrap();
        eprintln!(
            "segmented_top_k f32 k={k}, 16M keys in segments of {seg_len}: {:.3} ms",
            time_ms(exec, || exec.segmented_top_k(keys, &ob, k, Order::Smallest, &mut idx, &mut tk).unwrap())
        );
    }
}
