//! The CPU executor's prefix sums and stream compaction, one pass over DRAM each.
//!
//! A chunk-parallel scan needs every chunk's sum before any chunk can be written, so the
//! plain form reads the input twice: once for the sums, once to write. Here the input is
//! processed in **super-blocks** of [`BLOCKS_PER_THREAD`] x threads blocks of [`BLOCK`]
//! elements (4 MiB per thread of u32 input at most): the threads sum the blocks of one
//! super-block, one thread turns the few block sums into block starts (carrying the
//! running total from the previous super-block), and the threads write the blocks. A
//! super-block is small enough to stay in the cache between its two parallel steps (in
//! the L2 of the core that summed a block when rayon gives it the same block again, in
//! the shared L3 otherwise), so DRAM sees each input element read once and each output
//! element written once.
//!
//! (The scans themselves now run as one super-block, the two-pass form, which measured
//! faster on the 16-core host: see `scan_with`.)
//!
//! Compaction works the same way on the flags: the first step counts set flags per
//! block (reading only the flags), the second reads flags (now cached) and values and
//! writes the selected values to the block's run of the output, in order, without a
//! branch per element (random flags would mispredict half of them).
//!
//! Measured on the development machine (2 shared cores, so only large effects show; the
//! `scan_timing` test interleaves the variants): the exclusive scan of 256M u32 on one
//! thread in 260 ms against 328 ms for the two-pass form (64% and 51% of a parallel copy
//! of the same bytes); the compaction of 64M u64 was as fast as before, with both at about
//! 60% of the copy. Writes still read each output line first (a read for ownership,
//! which a large `memcpy` avoids); non-temporal stores, which would not, gave nothing
//! measurable here and are left to a measurement on the 16-core host (ADR 0015).
//!
//! Arithmetic and results are exactly those of the two-pass form: u32 sums wrap, the
//! exclusive scan's last element is the total, a compaction writes only its selected
//! elements (the output past the count is left as it was) and returns their number.

use rayon::prelude::*;

/// Elements per block: a parallel task's unit (256 KiB of u32, in a core's L2 with its
/// output).
pub(crate) const BLOCK: usize = 1 << 16;

/// Blocks per thread in one super-block: enough tasks for rayon to balance threads that
/// run at different speeds, few enough that a super-block (16 MiB of u32 input on 16
/// threads) stays in L3 between its two steps.
pub(crate) const BLOCKS_PER_THREAD: usize = 4;

/// Elements per super-block in the current rayon pool.
fn super_block() -> usize {
    BLOCK * BLOCKS_PER_THREAD * rayon::current_num_threads().max(1)
}

/// Wrapping sum of a block.
#[inline]
fn sum(block: &[u32]) -> u32 {
    block.iter().fold(0u32, |a, &v| a.wrapping_add(v))
}

/// Block starts: `carry` plus the sums of the blocks before, wrapping; `carry` becomes
/// the total through the last block.
fn starts(sums: &[u32], carry: &mut u32) -> Vec<u32> {
    sums.iter()
        .map(|&s| {
            let start = *carry;
            *carry = carry.wrapping_add(s);
            start
        })
        .collect()
}

/// A scan of one super-block: block sums, block starts from `carry`, then each block
/// written by `write(output block, input block, start)`.
fn scan_super_block(
    input: &[u32],
    output: &mut [u32],
    carry: &mut u32,
    write: impl Fn(&mut [u32], &[u32], u32) + Sync,
) {
    let sums: Vec<u32> = input.par_chunks(BLOCK).map(sum).collect();
    let starts = starts(&sums, carry);
    output.par_chunks_mut(BLOCK).zip(input.par_chunks(BLOCK)).zip(starts).for_each(|((o, i), s)| write(o, i, s));
}

/// Writes one block of an exclusive (`INCLUSIVE = false`) or inclusive scan from `acc`.
#[inline]
fn write_block<const INCLUSIVE: bool>(out: &mut [u32], input: &[u32], mut acc: u32) {
    for (dst, &v) in out.iter_mut().zip(input) {
        let next = acc.wrapping_add(v);
        *dst = if INCLUSIVE { next } else { acc };
        acc = next;
    }
}

/// Scans `input` into `out` (same length) from 0, each block written by `write`, and
/// returns the total.
///
/// The scans run as ONE super-block over the whole input (the two-pass form: all block
/// sums, then all blocks written): on the H200 machine's 16 cores the super-block loop
/// was slower (256M u32: 46.1 ms against 39.5 ms for the two-pass scan in the same call,
/// docs/performance/primitives.md), although faster on the 2-core development machine.
/// Compaction keeps its super-blocks (no 16-core comparison yet).
fn scan_with(input: &[u32], out: &mut [u32], write: impl Fn(&mut [u32], &[u32], u32) + Sync) -> u32 {
    let mut carry = 0u32;
    scan_super_block(input, out, &mut carry, &write);
    carry
}

/// Scans `input` into `out` (same length) from 0 and returns the total.
fn scan<const INCLUSIVE: bool>(input: &[u32], out: &mut [u32]) -> u32 {
    scan_with(input, out, write_block::<INCLUSIVE>)
}

/// Exclusive scan into CSR-offsets form: `out.len() == input.len() + 1`, `out[0] = 0`,
/// `out[i + 1] = out[i] + input[i]` (wrapping), the total last.
pub(crate) fn exclusive_scan(input: &[u32], out: &mut [u32]) {
    debug_assert_eq!(out.len(), input.len() + 1);
    let (body, last) = out.split_at_mut(input.len());
    last[0] = scan::<false>(input, body);
}

/// Inclusive scan: `out[i] = input[0] + ... + input[i]` (wrapping), same lengths.
pub(crate) fn inclusive_scan(input: &[u32], out: &mut [u32]) {
    debug_assert_eq!(out.len(), input.len());
    scan::<true>(input, out);
}

/// Writes the `src[i]` with `f[i] != 0`, in order, to `dst`, which has room for exactly
/// those. Branch-free: every element up to the last selected one is stored at the next
/// free slot and the slot advances by its flag (an unselected element is overwritten by
/// the next one), so random flags cost no mispredictions; the elements after the last
/// selected one are not looked at, so no store goes past `dst`.
#[inline]
fn compact_block<T: Copy>(dst: &mut [T], src: &[T], f: &[u32]) {
    let Some(last) = f.iter().rposition(|&flag| flag != 0) else {
        return;
    };
    let mut k = 0;
    for (&v, &flag) in src[..last].iter().zip(&f[..last]) {
        // In bounds: fewer than `dst.len()` selected elements precede `last`.
        dst[k] = v;
        k += usize::from(flag != 0);
    }
    dst[k] = src[last];
}

/// Order-preserving compaction: the `input[i]` with `flags[i] != 0` go, in order, to
/// the front of `output` (as long as `input`); returns how many. Only those elements
/// of `output` are written.
pub(crate) fn compact<T: Copy + Send + Sync>(input: &[T], flags: &[u32], output: &mut [T]) -> u32 {
    debug_assert!(flags.len() == input.len() && output.len() >= input.len());
    let sb = super_block();
    let mut total = 0usize;
    let mut rest: &mut [T] = output;
    for (input, flags) in input.chunks(sb).zip(flags.chunks(sb)) {
        let counts: Vec<usize> = flags.par_chunks(BLOCK).map(|f| f.iter().filter(|&&f| f != 0).count()).collect();
        // Each block's run of the output, in order.
        let mut runs = Vec::with_capacity(counts.len());
        for &c in &counts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(c);
            runs.push(head);
            rest = tail;
            total += c;
        }
        runs.into_par_iter()
            .zip(input.par_chunks(BLOCK))
            .zip(flags.par_chunks(BLOCK))
            .for_each(|((dst, src), f)| compact_block(dst, src, f));
    }
    total as u32
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Sizes at and around the block and super-block boundaries of a pool of `threads`.
    fn sizes(threads: usize) -> Vec<usize> {
        let sb = BLOCK * BLOCKS_PER_THREAD * threads;
        vec![0, 1, 2, BLOCK - 1, BLOCK, BLOCK + 1, sb - 1, sb, sb + 1, 2 * sb + BLOCK + 3]
    }

    #[test]
    fn scans_match_a_sequential_wrapping_sum_across_super_blocks() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for n in sizes(threads) {
                let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
                // Large values, so the sums wrap many times.
                let input: Vec<u32> = (0..n).map(|_| rng.random()).collect();
                let mut want = vec![0u32; n + 1];
                for i in 0..n {
                    want[i + 1] = want[i].wrapping_add(input[i]);
                }
                let (mut ex, mut inc) = (vec![7u32; n + 1], vec![7u32; n]);
                pool.install(|| {
                    exclusive_scan(&input, &mut ex);
                    inclusive_scan(&input, &mut inc);
                });
                assert!(ex == want, "exclusive scan of {n} on {threads} threads");
                assert!(inc[..] == want[1..], "inclusive scan of {n} on {threads} threads");
            }
        }
    }

    #[test]
    fn compaction_matches_a_filter_across_super_blocks_and_writes_nothing_else() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for n in sizes(threads) {
                let mut rng = ChaCha8Rng::seed_from_u64(n as u64 + 1);
                let input: Vec<u64> = (0..n).map(|_| rng.random()).collect();
                for density in [0.0, 0.01, 0.5, 1.0] {
                    let flags: Vec<u32> = (0..n)
                        .map(|_| if rng.random_bool(density) { rng.random_range(1..=u32::MAX) } else { 0 })
                        .collect();
                    let want: Vec<u64> = input.iter().zip(&flags).filter(|&(_, &f)| f != 0).map(|(&v, _)| v).collect();
                    let mut out = vec![u64::MAX; n];
                    let count = pool.install(|| compact(&input, &flags, &mut out));
                    assert_eq!(count as usize, want.len(), "count of {n} at density {density}");
                    assert!(out[..want.len()] == want[..], "compaction of {n} at density {density}");
                    assert!(out[want.len()..].iter().all(|&v| v == u64::MAX), "wrote past the count");
                }
            }
        }
    }
}

#[cfg(test)]
mod timing {
    //! The super-block scan and compaction against the two-pass forms they replaced and
    //! against a parallel copy of the same bytes, interleaved run by run.

    use std::time::Instant;

    use rayon::prelude::*;

    use super::BLOCK;

    /// The previous exclusive scan: all chunk sums first, then every chunk written.
    fn two_pass_scan(input: &[u32], out: &mut [u32]) {
        let sums: Vec<u32> = input.par_chunks(BLOCK).map(super::sum).collect();
        let mut carry = 0u32;
        let starts = super::starts(&sums, &mut carry);
        let (body, last) = out.split_at_mut(input.len());
        last[0] = carry;
        body.par_chunks_mut(BLOCK).zip(input.par_chunks(BLOCK)).zip(starts).for_each(|((o, i), mut acc)| {
            for (dst, &v) in o.iter_mut().zip(i) {
                *dst = acc;
                acc = acc.wrapping_add(v);
            }
        });
    }

    /// The previous compaction: all flag counts first, then every chunk written.
    fn two_pass_compact(input: &[u64], flags: &[u32], output: &mut [u64]) -> u32 {
        let counts: Vec<usize> = flags.par_chunks(BLOCK).map(|c| c.iter().filter(|&&f| f != 0).count()).collect();
        let mut rest: &mut [u64] = output;
        let mut runs = Vec::new();
        for &c in &counts {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(c);
            runs.push(head);
            rest = tail;
        }
        runs.into_par_iter().zip(input.par_chunks(BLOCK)).zip(flags.par_chunks(BLOCK)).for_each(|((d, s), f)| {
            let selected = s.iter().zip(f).filter(|&(_, &flag)| flag != 0).map(|(&v, _)| v);
            for (o, v) in d.iter_mut().zip(selected) {
                *o = v;
            }
        });
        counts.iter().sum::<usize>() as u32
    }

    /// An exclusive-scan block written with non-temporal stores (`movnti`, x86-64
    /// baseline), which do not read the output lines before writing them: the
    /// alternative to measure on a host whose DRAM the scan saturates (ADR 0015).
    fn streaming_exclusive_block(out: &mut [u32], input: &[u32], mut acc: u32) {
        for (dst, &v) in out.iter_mut().zip(input) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `dst` is a valid, aligned, exclusively borrowed u32; `movnti` is in
            // the x86-64 baseline.
            unsafe {
                std::arch::x86_64::_mm_stream_si32(std::ptr::from_mut(dst).cast::<i32>(), acc.cast_signed());
            }
            #[cfg(not(target_arch = "x86_64"))]
            {
                *dst = acc;
            }
            acc = acc.wrapping_add(v);
        }
        // Non-temporal stores are weakly ordered: fence them before the task's end is
        // published to the joining thread.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` (SSE, x86-64 baseline) has no precondition.
        unsafe {
            std::arch::x86_64::_mm_sfence();
        }
    }

    /// Best of `reps` runs of each closure, interleaved.
    fn best(reps: usize, runs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
        let mut best = vec![f64::INFINITY; runs.len()];
        for _ in 0..reps {
            for (b, run) in best.iter_mut().zip(runs.iter_mut()) {
                let t = Instant::now();
                run();
                *b = b.min(t.elapsed().as_secs_f64());
            }
        }
        best
    }

    /// Run with `cargo test --release -p orrery-core --lib scan_timing -- --ignored
    /// --nocapture`; `SCAN_THREADS` (default all cores), `SCAN_N` (default 2^28).
    #[test]
    #[ignore = "timing, not a check"]
    fn scan_timing() {
        let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<usize>().ok());
        let n = env("SCAN_N").unwrap_or(1 << 28);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(env("SCAN_THREADS").unwrap_or(0)).build().unwrap();
        pool.install(|| {
            let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 28).collect();
            let (mut out, mut out2, mut out3) = (vec![0u32; n + 1], vec![0u32; n + 1], vec![0u32; n]);
            let mut copy_dst = vec![0u32; n];
            let gb = |bytes: usize, s: f64| bytes as f64 / s / 1e9;
            let t = best(7, &mut [
                &mut || copy_dst.par_chunks_mut(BLOCK).zip(input.par_chunks(BLOCK)).for_each(|(d, s)| d.copy_from_slice(s)),
                &mut || super::exclusive_scan(&input, &mut out),
                &mut || two_pass_scan(&input, &mut out2),
                &mut || {
                    super::scan_with(&input, &mut out3, streaming_exclusive_block);
                },
            ]);
            let copy = gb(n * 8, t[0]);
            println!(
                "{} threads, {n} u32: copy {:.2} ms ({copy:.1} GB/s); scan {:.2} ms ({:.0}% of copy); two-pass {:.2} ms ({:.0}%); \
                 super-blocks with non-temporal stores {:.2} ms ({:.0}%)",
                rayon::current_num_threads(),
                t[0] * 1e3,
                t[1] * 1e3,
                100.0 * gb(n * 8, t[1]) / copy,
                t[2] * 1e3,
                100.0 * gb(n * 8, t[2]) / copy,
                t[3] * 1e3,
                100.0 * gb(n * 8, t[3]) / copy,
            );
            assert!(out == out2);
            drop((input, out, out2, copy_dst));
            let m = n / 4;
            let values: Vec<u64> = (0..m as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
            let (mut out, mut out2) = (vec![0u64; m], vec![0u64; m]);
            let bytes = m * 12 + m / 2 * 8;
            let alternating: Vec<u32> = (0..m).map(|i| (i % 2) as u32).collect();
            let random: Vec<u32> = (0..m as u64).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 63) as u32).collect();
            for (what, flags) in [("every second", &alternating), ("random half", &random)] {
                let t2 = best(7, &mut [
                    &mut || {
                        super::compact(&values, flags, &mut out);
                    },
                    &mut || {
                        two_pass_compact(&values, flags, &mut out2);
                    },
                ]);
                println!(
                    "{} threads, {m} u64, {what} flagged: compact {:.2} ms ({:.0}% of copy); two-pass branchy {:.2} ms ({:.0}%)",
                    rayon::current_num_threads(),
                    t2[0] * 1e3,
                    100.0 * gb(bytes, t2[0]) / copy,
                    t2[1] * 1e3,
                    100.0 * gb(bytes, t2[1]) / copy,
                );
            }
        });
    }
}
