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
//! Compaction works the same way on the flags: the first step counts set flags per
//! block (reading only the flags), the second reads flags (now cached) and values and
//! writes the selected values to the block's run of the output, in order.
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

/// Exclusive scan into CSR-offsets form: `out.len() == input.len() + 1`, `out[0] = 0`,
/// `out[i + 1] = out[i] + input[i]` (wrapping), the total last.
pub(crate) fn exclusive_scan(input: &[u32], out: &mut [u32]) {
    debug_assert_eq!(out.len(), input.len() + 1);
    let (body, last) = out.split_at_mut(input.len());
    let sb = super_block();
    let mut carry = 0u32;
    for (i, o) in input.chunks(sb).zip(body.chunks_mut(sb)) {
        scan_super_block(i, o, &mut carry, |o, i, mut acc| {
            for (dst, &v) in o.iter_mut().zip(i) {
                *dst = acc;
                acc = acc.wrapping_add(v);
            }
        });
    }
    last[0] = carry;
}

/// Inclusive scan: `out[i] = input[0] + ... + input[i]` (wrapping), same lengths.
pub(crate) fn inclusive_scan(input: &[u32], out: &mut [u32]) {
    debug_assert_eq!(out.len(), input.len());
    let sb = super_block();
    let mut carry = 0u32;
    for (i, o) in input.chunks(sb).zip(out.chunks_mut(sb)) {
        scan_super_block(i, o, &mut carry, |o, i, mut acc| {
            for (dst, &v) in o.iter_mut().zip(i) {
                acc = acc.wrapping_add(v);
                *dst = acc;
            }
        });
    }
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
        runs.into_par_iter().zip(input.par_chunks(BLOCK)).zip(flags.par_chunks(BLOCK)).for_each(|((dst, src), f)| {
            // `dst` holds exactly the block's count: every selected value has a slot.
            let selected = src.iter().zip(f).filter(|&(_, &flag)| flag != 0).map(|(&v, _)| v);
            for (d, v) in dst.iter_mut().zip(selected) {
                *d = v;
            }
        });
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
