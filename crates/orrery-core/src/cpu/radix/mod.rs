//! The CPU executor's radix sort of `(u64 key, u32 value)` pairs: stable, on the key
//! bits of a range, MSD in DRAM and then LSD or MSD in cache.
//!
//! # Contract
//! [`sort_pairs`] sorts the pairs `(keys[i], values[i])` by `key & mask(bits)`,
//! ascending and stable: pairs whose keys are equal on `bits` keep their input order,
//! and every key keeps all its bits (the bits outside the range travel with it). The
//! GPU executors compute the same permutation, and results are compared bit for bit.
//! Auxiliary memory: one scratch array of 12 bytes per pair ([`Scratch`], which the
//! executor keeps between sorts so that repeated sorts take no page faults).
//!
//! # Design
//! A sort that does one pass over DRAM per 8-bit digit (the previous one, kept as
//! `legacy` for the comparison in the tests) moves every pair eight times for 64-bit
//! keys. This one moves each pair about twice through DRAM:
//!
//! 1. **Varying bits.** A parallel OR and AND of the masked keys find the bits that
//!    differ between keys; digits are placed on those only. The same read counts the
//!    digit the level will use if the highest bit that may vary does (a wrong guess
//!    costs a second read).
//! 2. **One parallel MSD level** ([`msd::sort_parallel`]): the highest varying digit,
//!    `log2(n / bucket_target)` bits wide (within [`Policy::min_parallel_bits`] and
//!    [`Policy::max_parallel_bits`]), counted
//!    per chunk (each chunk its own histogram, no shared cache lines) and scattered from
//!    the caller's `keys`/`values` into the scratch, stable. Every bucket is then about
//!    [`Policy::bucket_target`] pairs: its own and its scratch fit in a core's L2.
//! 3. **Every bucket on its own**, in parallel, largest first. A bucket larger than
//!    [`Ctx::par_bucket`] (clustered keys such as a Plummer sphere's Hilbert keys put
//!    most pairs in a few buckets) gets another parallel MSD level; the others are
//!    sorted by one thread in cache ([`msd::sort_in_cache`]): an LSD sort on the
//!    bucket's own varying bits when that takes at most [`Policy::lsd_max_passes`]
//!    passes, else one more MSD pass and each sub-bucket again, and an insertion sort
//!    for buckets of at most [`Policy::insertion_max`] pairs. Random 64-bit keys thus
//!    take one DRAM pass, one cache pass and insertion sorts of a few pairs.
//!
//! Measured (docs/adr/0015; 2 busy cores, so the 16-core host is still to be measured):
//! 16M random pairs in 450-475 ms against 1746-1871 ms for the previous sort (3.9x),
//! 64M in 1.9-2.0 s against 6.7-7.2 s (3.5x); a Plummer sphere's Hilbert keys 2.2-3.2x.
//!
//! Passes alternate between the caller's two arrays ([`store::Split`]) and the scratch
//! of 12-byte pairs ([`store::Packed`]); each level is told on which side its result
//! must end, so the last pass writes the caller's arrays and nothing is copied in or
//! out (a bucket whose passes end on the wrong side is copied once, in cache).
//!
//! Stability holds at every step: the counting passes are stable (digit-major,
//! chunk-minor offsets), later steps sort each bucket by lower bits only, and the
//! insertion sort moves a pair past strictly greater keys only.

#[cfg(test)]
mod legacy;
mod lsd;
mod msd;
mod store;

use std::ops::Range;

pub(crate) use store::Scratch;
use store::{Packed, Split};

/// Tuning of the sort. The defaults were measured on the development machine (2 shared
/// cores of an Intel Xeon with AVX-512, 2 MiB L2 per core; one thread, variants
/// interleaved by `timing_against_legacy`), where measured it says so; see
/// docs/adr/0015.
#[derive(Debug, Clone, Copy)]
pub(super) struct Policy {
    /// Up to this many pairs, the whole sort runs on the calling thread (32K: a sort
    /// that fits L2; the parallel level's bookkeeping is not worth it below).
    pub seq_max: usize,
    /// Pairs per bucket that the parallel MSD level aims at: a bucket and its scratch
    /// (24 bytes a pair) stay in one core's L2. 8K: 16M random pairs 10-15% faster than
    /// with 32K (the in-cache pass then leaves sub-buckets of about 2, not 8).
    pub bucket_target: usize,
    /// Narrowest digit of a parallel MSD level: with clustered keys a level of a few
    /// buckets leaves most pairs in one, and every level is a pass over DRAM. 8: with 1
    /// (what `log2(n / bucket_target)` gives near `seq_max`), 100K clustered keys took
    /// 10.7 ms against 2.7 ms (2 threads).
    pub min_parallel_bits: u32,
    /// Widest digit of a parallel MSD level. 12: 64M random pairs 5% faster than with
    /// 11 and 11% faster than with 10 (4096 write streams per thread still combine).
    pub max_parallel_bits: u32,
    /// Smallest chunk of a parallel pass (not tuned).
    pub min_chunk: usize,
    /// Chunks per thread of a parallel pass: more balance, more counts to scan (not
    /// tuned).
    pub chunks_per_thread: usize,
    /// A bucket larger than `max(par_bucket_min, n / (par_split x threads))` gets a
    /// parallel level of its own instead of one thread (not tuned: a bucket a quarter
    /// of a thread's share would otherwise hold back the others).
    pub par_bucket_min: usize,
    /// See `par_bucket_min`.
    pub par_split: usize,
    /// Average sub-bucket an in-cache MSD pass aims at (its digit width follows). 4,
    /// with `max_cache_bits` 12: 4M random pairs 13% faster than 16 and 11.
    pub child_target: usize,
    /// Widest digit of an in-cache pass (12: 4096 counters, 16 KiB, in L1).
    pub max_cache_bits: u32,
    /// In cache, an LSD sort is used when it takes at most this many passes. 2; 0 (MSD
    /// only) and 4 measured within 5% on random, Plummer, clustered and low-bit keys.
    pub lsd_max_passes: u32,
    /// Buckets of at most this many pairs are insertion sorted (24; 12 and 40 measured
    /// within the noise).
    pub insertion_max: usize,
}

impl Policy {
    /// The defaults.
    pub(super) const DEFAULT: Self = Self {
        seq_max: 1 << 15,
        bucket_target: 1 << 13,
        min_parallel_bits: 8,
        max_parallel_bits: 12,
        min_chunk: 1 << 14,
        chunks_per_thread: 4,
        par_bucket_min: 1 << 16,
        par_split: 4,
        child_target: 4,
        max_cache_bits: 12,
        lsd_max_passes: 2,
        insertion_max: 24,
    };
}

/// What every level of one sort needs to know.
pub(super) struct Ctx {
    /// The bit range as a mask: `key & mask` is what is compared.
    pub mask: u64,
    /// The tuning.
    pub policy: Policy,
    /// Threads of the pool the sort runs in.
    pub threads: usize,
    /// Buckets larger than this get a parallel level of their own.
    pub par_bucket: usize,
}

/// The mask of key bits `bits` (`start <= end <= 64`).
fn range_mask(bits: &Range<u32>) -> u64 {
    match bits.end - bits.start {
        0 => 0,
        64 => u64::MAX,
        w => ((1u64 << w) - 1) << bits.start,
    }
}

/// Sorts pairs stably by key bits `bits` (validated by the caller: `start <= end <= 64`,
/// equal lengths), in the current rayon pool, with `scratch` grown to `n` pairs.
pub(crate) fn sort_pairs(keys: &mut [u64], values: &mut [u32], bits: Range<u32>, scratch: &mut Scratch) {
    sort_pairs_with(keys, values, &bits, Policy::DEFAULT, scratch);
}

/// [`sort_pairs`] with a given tuning (the tests shrink the thresholds to reach every
/// path on small inputs).
fn sort_pairs_with(keys: &mut [u64], values: &mut [u32], bits: &Range<u32>, policy: Policy, scratch: &mut Scratch) {
    let n = keys.len();
    let mask = range_mask(bits);
    if n < 2 || mask == 0 {
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    let par_bucket = policy.par_bucket_min.max(n / (policy.par_split * threads)).min(u32::MAX as usize);
    let ctx = Ctx { mask, policy, threads, par_bucket };
    let (x, y) = (Split::new(keys, values), Packed(scratch.pairs(n)));
    if n <= policy.seq_max {
        msd::sort_in_cache(x, y, false, bits.end - 1, &ctx);
    } else {
        msd::sort_parallel(x, y, false, bits.end - 1, &ctx);
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Thresholds shrunk so that a few hundred pairs reach every path: nested parallel
    /// levels, in-cache MSD passes, LSD sorts and insertion sorts.
    const TINY: Policy = Policy {
        seq_max: 8,
        bucket_target: 4,
        min_parallel_bits: 1,
        max_parallel_bits: 3,
        min_chunk: 5,
        chunks_per_thread: 3,
        par_bucket_min: 16,
        par_split: 1,
        child_target: 2,
        max_cache_bits: 3,
        lsd_max_passes: 2,
        insertion_max: 3,
    };
    /// In cache, MSD passes only.
    const NO_LSD: Policy = Policy { lsd_max_passes: 0, ..TINY };
    /// In cache, LSD whenever it applies (up to 64 one-bit passes).
    const ALL_LSD: Policy = Policy { lsd_max_passes: 64, insertion_max: 1, ..TINY };
    const POLICIES: [Policy; 4] = [Policy::DEFAULT, TINY, NO_LSD, ALL_LSD];

    /// The reference: `slice::sort_by_key` (stable) on the masked key.
    fn reference(keys: &[u64], bits: &Range<u32>) -> (Vec<u64>, Vec<u32>) {
        let mask = range_mask(bits);
        let mut pairs: Vec<(u64, u32)> = keys.iter().copied().zip(0u32..).collect();
        pairs.sort_by_key(|&(k, _)| k & mask);
        pairs.into_iter().unzip()
    }

    fn check(keys: &[u64], bits: &Range<u32>, policy: Policy, what: &str) {
        let (want_k, want_v) = reference(keys, bits);
        let mut k = keys.to_vec();
        let mut v: Vec<u32> = (0..keys.len() as u32).collect();
        sort_pairs_with(&mut k, &mut v, bits, policy, &mut Scratch::default());
        assert!(v == want_v, "{what}: {} pairs, bits {bits:?}, {policy:?}: values differ", keys.len());
        assert!(k == want_k, "{what}: {} pairs, bits {bits:?}: keys differ", keys.len());
    }

    /// Keys of the kinds that matter: random, all equal, few distinct, clustered (most
    /// keys share their high bits and spread over 20 octaves below, a few anywhere), keys
    /// differing in their low bits only, and a Plummer sphere's Hilbert keys.
    fn inputs(n: usize, seed: u64) -> Vec<(&'static str, Vec<u64>)> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let random: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let few: Vec<u64> = (0..n).map(|_| rng.random_range(0..5u64) * 0x0123_4567_89ab_cdef).collect();
        let clustered: Vec<u64> = (0..n)
            .map(|_| {
                if rng.random_range(0..10) == 0 {
                    rng.random()
                } else {
                    0x5a5a_0000_0000_0000 | (rng.random::<u64>() >> rng.random_range(20..40))
                }
            })
            .collect();
        let low: Vec<u64> = (0..n).map(|_| 0xffff_0000_0000_0000 | rng.random_range(0..64u64)).collect();
        // Hilbert keys of a Plummer sphere (scale radius 0.05 in [-1, 1]^3, radii cut at
        // 0.99: the tree suite's `plummer` set), 63-bit keys.
        let mapper = crate::sfc::KeyMapper::<f64, u64>::new(
            crate::Aabb::cube(-1.0, 1.0).expect("a valid cube"),
            crate::sfc::Curve::Hilbert,
        );
        let plummer: Vec<u64> = (0..n)
            .map(|_| {
                loop {
                    let m: f64 = rng.random_range(1e-9..1.0);
                    let r = 0.05 / (m.powf(-2.0 / 3.0) - 1.0).sqrt();
                    if r < 0.99 {
                        let (cz, phi): (f64, f64) =
                            (rng.random_range(-1.0..1.0), rng.random_range(0.0..std::f64::consts::TAU));
                        let s = (1.0 - cz * cz).sqrt();
                        break mapper.key_clamped(r * s * phi.cos(), r * s * phi.sin(), r * cz);
                    }
                }
            })
            .collect();
        vec![
            ("random", random),
            ("equal", vec![0xdead_beef_u64; n]),
            ("few", few),
            ("clustered", clustered),
            ("low", low),
            ("plummer", plummer),
        ]
    }

    const RANGES: [Range<u32>; 7] = [0..64, 0..63, 3..17, 60..64, 0..1, 63..64, 20..44];

    #[test]
    fn small_sizes_match_a_stable_std_sort_on_every_path() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        pool.install(|| {
            for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 25, 31, 32, 33, 100, 257, 1000] {
                for (what, keys) in inputs(n, n as u64) {
                    for bits in &RANGES {
                        for policy in POLICIES {
                            check(&keys, bits, policy, what);
                        }
                    }
                }
            }
        });
    }

    #[test]
    fn sizes_around_the_default_thresholds_match() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let d = Policy::DEFAULT;
        pool.install(|| {
            for n in [d.seq_max, d.seq_max + 1, d.par_bucket_min + 1, 3 * d.min_chunk + 7, 300_001] {
                for (what, keys) in inputs(n, 7 + n as u64) {
                    for bits in [0..64, 0..63, 3..17, 60..64] {
                        check(&keys, &bits, d, what);
                    }
                }
            }
        });
    }

    #[test]
    fn millions_of_pairs_match_in_one_and_several_threads() {
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                for (what, keys) in inputs(1 << 21, 99) {
                    for bits in [0..64, 0..63] {
                        check(&keys, &bits, Policy::DEFAULT, what);
                    }
                }
            });
        }
    }

    #[test]
    fn bits_outside_the_range_are_kept_and_ignored() {
        // Keys equal on bits 8..16 but random elsewhere: the order is the input order,
        // and every key keeps its random bits.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for n in [40, 5000, 100_000] {
            let keys: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & !0xff00 | 0x4200).collect();
            for policy in POLICIES {
                check(&keys, &(8..16), policy, "equal on the range");
                check(&keys, &(9..12), policy, "equal on the range");
            }
        }
    }

    #[test]
    fn gives_the_permutation_of_the_previous_sort() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        pool.install(|| {
            for (what, keys) in inputs(200_003, 11) {
                for bits in [0..64, 0..63, 3..17, 60..64, 0..1] {
                    let (mut k1, mut v1) = (keys.clone(), (0..keys.len() as u32).collect::<Vec<_>>());
                    let (mut k2, mut v2) = (k1.clone(), v1.clone());
                    sort_pairs(&mut k1, &mut v1, bits.clone(), &mut Scratch::default());
                    legacy::sort_pairs(&mut k2, &mut v2, bits.clone());
                    assert!(v1 == v2 && k1 == k2, "{what}, bits {bits:?}: differs from the previous sort");
                }
            }
        });
    }

    /// Parses `field=value` pairs (comma separated) over the default tuning.
    fn policy_from(settings: &str) -> Policy {
        let mut policy = Policy::DEFAULT;
        for setting in settings.split(',').filter(|s| !s.trim().is_empty() && s.trim() != "keep") {
            let (field, value) = setting.trim().split_once('=').expect("policy: field=value");
            let value: usize = value.parse().expect("policy: a number");
            match field {
                "seq_max" => policy.seq_max = value,
                "bucket_target" => policy.bucket_target = value,
                "min_parallel_bits" => policy.min_parallel_bits = value as u32,
                "max_parallel_bits" => policy.max_parallel_bits = value as u32,
                "min_chunk" => policy.min_chunk = value,
                "chunks_per_thread" => policy.chunks_per_thread = value,
                "par_bucket_min" => policy.par_bucket_min = value,
                "par_split" => policy.par_split = value,
                "child_target" => policy.child_target = value,
                "max_cache_bits" => policy.max_cache_bits = value as u32,
                "lsd_max_passes" => policy.lsd_max_passes = value as u32,
                "insertion_max" => policy.insertion_max = value,
                _ => panic!("policy: unknown field {field}"),
            }
        }
        policy
    }

    /// Times the new sort (with one or more tunings) against the previous one, the
    /// variants interleaved run by run so that a loaded machine slows all alike; prints
    /// the best run of each. Run with `cargo test --release -p orrery-core --lib
    /// timing_against_legacy -- --ignored --nocapture`; the environment picks:
    /// `SORT_THREADS` (default: all cores), `SORT_SIZES` and `SORT_KINDS` (comma
    /// separated), `SORT_POLICIES` (tunings separated by `;`, each `field=value,...`
    /// over the defaults; default: the defaults), `SORT_NO_LEGACY`, `SORT_REPS`.
    #[test]
    #[ignore = "timing, not a check"]
    fn timing_against_legacy() {
        use std::time::Instant;
        let env = |name: &str| std::env::var(name).ok();
        let threads: usize = env("SORT_THREADS").and_then(|t| t.parse().ok()).unwrap_or(0);
        let sizes: Vec<usize> = env("SORT_SIZES").map_or_else(
            || vec![100, 1000, 10_000, 30_000, 100_000, 1 << 20, 1 << 24],
            |s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        );
        let kinds = env("SORT_KINDS").unwrap_or_else(|| "random,few,clustered,plummer".into());
        let specs: Vec<String> =
            env("SORT_POLICIES").map_or_else(|| vec![String::new()], |s| s.split(';').map(str::to_owned).collect());
        let policies: Vec<Policy> = specs.iter().map(|s| policy_from(s)).collect();
        // A tuning with `keep` among its settings keeps its scratch from run to run.
        let mut kept: Vec<Scratch> = specs.iter().map(|_| Scratch::default()).collect();
        let legacy = env("SORT_NO_LEGACY").is_none();
        let reps_env: Option<usize> = env("SORT_REPS").and_then(|r| r.parse().ok());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            for &n in &sizes {
                for (what, keys) in inputs(n, 3) {
                    if !kinds.split(',').any(|k| k == what) {
                        continue;
                    }
                    for bits in [0..64, 0..63] {
                        let reps = reps_env.unwrap_or((20_000_000 / n).clamp(5, 2000));
                        let variants = policies.len() + usize::from(legacy);
                        let mut best = vec![f64::INFINITY; variants];
                        for _ in 0..reps {
                            for (s, best) in best.iter_mut().enumerate() {
                                let (mut k, mut v) = (keys.clone(), (0..n as u32).collect::<Vec<_>>());
                                let t = Instant::now();
                                if let Some(&policy) = policies.get(s) {
                                    if !specs[s].split(',').any(|t| t.trim() == "keep") {
                                        kept[s] = Scratch::default();
                                    }
                                    sort_pairs_with(&mut k, &mut v, &bits, policy, &mut kept[s]);
                                } else {
                                    legacy::sort_pairs(&mut k, &mut v, bits.clone());
                                }
                                *best = best.min(t.elapsed().as_secs_f64());
                            }
                        }
                        let base = *best.last().unwrap();
                        for (s, b) in best.iter().enumerate() {
                            let name = specs.get(s).map_or("legacy", |s| if s.is_empty() { "default" } else { s });
                            println!(
                                "{n:>9} {what:>9} {bits:?} {} threads: {:9.3} ms ({:.2}x of the last) {name}",
                                rayon::current_num_threads(),
                                b * 1e3,
                                base / b,
                            );
                        }
                    }
                }
            }
        });
    }
}
