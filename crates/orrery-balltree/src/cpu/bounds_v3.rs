//! The bounds scan of the x86-64-v3 level for records of 32-bit keys with 4 to 16
//! coordinates (f32 points of 4 or more dimensions).
//!
//! Why it exists: the portable scan ([`Bounds::of`]) takes a minimum and a maximum per
//! lane and record. For records of up to four lanes LLVM makes each record one vector.
//! For wider records compiled with AVX2 its loop vectoriser instead works across
//! records: it gathers one lane of eight records element by element (`vpinsrd`) and
//! keeps two accumulators per lane (18 for 8D), more than AVX2's 16 registers, so every
//! step moves accumulators through the stack. That v3 build of f32 8D points ran 12%
//! fewer instructions than the baseline's scalar scan and took longer (16 x 1024: +2.6%
//! on the H200 host, +3 to +5% on the development machine).
//!
//! Here each record is read as two windows of `W` coordinate lanes, one register each:
//! lanes `0..W` and `D - W..D` for `D` coordinates, with `W = 8` for `D >= 8` and
//! `W = 4` for `4 <= D < 8`. Where the windows overlap, a lane enters both minima and
//! both maxima, which changes neither. The index lane is not scanned: no builder reads
//! its bounds.

use std::arch::x86_64::{
    __m128i, __m256i, _mm_max_epi32, _mm_min_epi32, _mm_set1_epi32, _mm256_max_epi32, _mm256_min_epi32,
    _mm256_set1_epi32,
};

use crate::split::{Bounds, Coord, Record};

/// The bounds of `records`, or `None` where this scan does not apply: keys that are not
/// 32 bits wide, or fewer than 4 or more than 16 coordinates.
///
/// Computes the same bounds as [`Bounds::of`] on every coordinate lane (the index
/// lane's bounds are left empty; no builder reads them).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn bounds<C: Coord, const N: usize>(records: &[Record<C::Key, N>]) -> Option<Bounds<C::Key, N>> {
    let dims = N - 1;
    // Checked here, not left to the casts below: a slice of 64-bit keys casts to twice
    // as many 32-bit ones.
    if size_of::<C::Key>() != size_of::<i32>() || !(4..=16).contains(&dims) {
        return None;
    }
    let rows: &[[C::Key; N]] = bytemuck::TransparentWrapper::peel_slice(records);
    let rows: &[[i32; N]] = bytemuck::try_cast_slice(rows).ok()?;
    let mut b = Bounds::<C::Key, N>::empty::<C>();
    let lo: &mut [i32] = bytemuck::try_cast_slice_mut(&mut b.lo).ok()?;
    let hi: &mut [i32] = bytemuck::try_cast_slice_mut(&mut b.hi).ok()?;
    if dims >= 8 {
        scan8::<N>(rows, lo, hi);
    } else {
        scan4::<N>(rows, lo, hi);
    }
    Some(b)
}

/// Lanes `at..at + W` of a record.
#[inline(always)]
fn window<const N: usize, const W: usize>(row: &[i32; N], at: usize) -> [i32; W] {
    *row[at..].first_chunk::<W>().expect("windows lie inside the record (W <= dims)")
}

/// Folds the minima and maxima of one window (starting at lane `at`) into `lo` and `hi`.
#[inline(always)]
fn fold_window<const W: usize>(lo: &mut [i32], hi: &mut [i32], at: usize, (wlo, whi): ([i32; W], [i32; W])) {
    for j in 0..W {
        lo[at + j] = lo[at + j].min(wlo[j]);
        hi[at + j] = hi[at + j].max(whi[j]);
    }
}

/// Generates the scan over windows of one register type: `$name` scans `W = $w` lanes
/// per window with the given vector type and intrinsics.
macro_rules! window_scan {
    ($name:ident, $w:literal, $vector:ty, $set1:ident, $min:ident, $max:ident) => {
        /// The bounds of every coordinate lane of `rows` into `lo` and `hi` (which start
        /// empty), by two windows of
        #[doc = concat!(stringify!($w), " lanes (see the module documentation).")]
        #[target_feature(enable = "avx2")]
        #[inline]
        fn $name<const N: usize>(rows: &[[i32; N]], lo: &mut [i32], hi: &mut [i32]) {
            let second = N - 1 - $w;
            let (mut lo0, mut hi0): ($vector, $vector) = ($set1(i32::MAX), $set1(i32::MIN));
            let (mut lo1, mut hi1) = (lo0, hi0);
            for row in rows {
                let first: $vector = bytemuck::cast(window::<N, $w>(row, 0));
                let last: $vector = bytemuck::cast(window::<N, $w>(row, second));
                lo0 = $min(lo0, first);
                hi0 = $max(hi0, first);
                lo1 = $min(lo1, last);
                hi1 = $max(hi1, last);
            }
            fold_window::<$w>(lo, hi, 0, (bytemuck::cast(lo0), bytemuck::cast(hi0)));
            fold_window::<$w>(lo, hi, second, (bytemuck::cast(lo1), bytemuck::cast(hi1)));
        }
    };
}

window_scan!(scan8, 8, __m256i, _mm256_set1_epi32, _mm256_min_epi32, _mm256_max_epi32);
window_scan!(scan4, 4, __m128i, _mm_set1_epi32, _mm_min_epi32, _mm_max_epi32);

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Records of `N - 1` random f32 coordinates (with ties and negative values).
    fn records<const N: usize>(rng: &mut ChaCha8Rng, m: usize) -> Vec<Record<i32, N>> {
        (0..m)
            .map(|i| {
                let coord = |_| (f32::from(rng.random_range(-40i8..40)) * 0.37).key();
                let coords: Vec<i32> = (0..N - 1).map(coord).collect();
                Record::new::<f32>(|d| coords[d], i as u32)
            })
            .collect()
    }

    /// Agrees with the portable scan on every coordinate lane, for every width the scan
    /// covers and for widths it leaves to the portable one.
    fn agrees<const N: usize>(rng: &mut ChaCha8Rng) {
        if !orrery_core::CpuIsa::X86_64V3.is_supported() {
            return;
        }
        for m in [0, 1, 2, 3, 7, 8, 33, 1000] {
            let records = records::<N>(rng, m);
            let want = Bounds::of::<f32>(&records);
            // SAFETY: the CPU has AVX2 (checked above).
            let got = unsafe { bounds::<f32, N>(&records) };
            if !(5..=17).contains(&N) {
                assert!(got.is_none(), "N = {N}: outside the scan's widths");
                continue;
            }
            let got = got.expect("the scan covers 4 to 16 coordinates");
            assert_eq!(
                (&got.lo[..N - 1], &got.hi[..N - 1]),
                (&want.lo[..N - 1], &want.hi[..N - 1]),
                "N = {N}, m = {m}"
            );
        }
    }

    #[test]
    fn matches_the_portable_scan() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        agrees::<2>(&mut rng);
        agrees::<4>(&mut rng);
        agrees::<5>(&mut rng);
        agrees::<6>(&mut rng);
        agrees::<8>(&mut rng);
        agrees::<9>(&mut rng);
        agrees::<10>(&mut rng);
        agrees::<13>(&mut rng);
        agrees::<16>(&mut rng);
        agrees::<17>(&mut rng);
    }

    /// Keys that are not 32 bits wide are left to the portable scan.
    #[test]
    fn leaves_64_bit_keys_alone() {
        if !orrery_core::CpuIsa::X86_64V3.is_supported() {
            return;
        }
        let records = vec![Record::<i64, 9>::new::<f64>(|d| (d as f64).key(), 0); 4];
        // SAFETY: the CPU has AVX2 (checked above).
        assert!(unsafe { bounds::<f64, 9>(&records) }.is_none());
    }
}
