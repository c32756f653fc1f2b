//! The build recursion compiled once per instruction-set level ([`CpuIsa`]).
//!
//! The crate is compiled for the target's baseline (x86-64: SSE2), where the bounds
//! scan of f64 records is scalar (SSE2 has no 64-bit integer comparison) and a record
//! of 32 bytes moves in two halves. A [`Level`] is a zero-sized proof that the running
//! CPU has a level's features; its `build_node` runs [`recurse::build_node`] inside a
//! function compiled with those features. Everything the recursion calls on its hot
//! path is `#[inline(always)]`, so it is compiled into that function with the same
//! features, and each recursive call goes through the level again, so a whole subtree
//! runs at one level. Rare paths (the parallel selection of huge nodes, a median's
//! bucket split again) stay ordinary baseline functions.
//!
//! Two levels are compiled: the baseline and x86-64-v3 (AVX2, BMI2, LZCNT); a CPU with
//! AVX-512 runs the v3 copy (see [`with_level`]).
//!
//! Every level computes the same integers (the levels differ in instruction selection,
//! not in arithmetic), which `tests::every_level_builds_the_same_tree` checks on every
//! level the test machine has.

use orrery_core::CpuIsa;

#[cfg(target_arch = "x86_64")]
use super::bounds_v3;
use super::recurse::{self, Node};
use super::select;
use crate::split::{Bounds, Coord, Record};

/// An instruction-set level the recursion runs at; a value exists only where the running
/// CPU supports the level.
pub(crate) trait Level: Copy + Send + Sync {
    /// The level.
    const ISA: CpuIsa;

    /// [`recurse::build_node`] at this level.
    fn build_node<C: Coord, const N: usize>(self, node: Node<'_, C::Key, N>, bounds: &Bounds<C::Key, N>);

    /// [`recurse::build_batch`] at this level.
    fn build_batch<C: Coord, const N: usize>(self, node: Node<'_, C::Key, N>, points: &[C], first: u32);

    /// The bounds of `records` ([`select::bounds`]), by this level's scan: called from
    /// inside the recursion, so it runs with the level's features.
    fn bounds<C: Coord, const N: usize>(self, records: &[Record<C::Key, N>]) -> Bounds<C::Key, N>;
}

/// Implements [`Level`] for `$name`: each build method runs the recursion in a function
/// of its own, compiled with `$features` when given. That function takes the node's
/// parts one by one (in registers: a [`Node`] passed by value went through memory at
/// every call, +1 to +3% instructions). `bounds` calls `$bounds(level, records)`.
macro_rules! level_impl {
    ($name:ident, $isa:expr, $bounds:ident $(, $features:literal)?) => {
        impl Level for $name {
            const ISA: CpuIsa = $isa;

            #[inline(always)]
            fn bounds<C: Coord, const N: usize>(self, records: &[Record<C::Key, N>]) -> Bounds<C::Key, N> {
                $bounds::<C, N>(self, records)
            }

            #[inline(always)]
            #[allow(unused_unsafe, reason = "the baseline's `run` is a safe function")]
            fn build_node<C: Coord, const N: usize>(self, node: Node<'_, C::Key, N>, bounds: &Bounds<C::Key, N>) {
                $(#[target_feature(enable = $features)])?
                fn run<C: Coord, const N: usize>(
                    level: $name,
                    records: &mut [Record<C::Key, N>],
                    spare: &mut [Record<C::Key, N>],
                    bounds: &Bounds<C::Key, N>,
                    indices: &mut [u32],
                    mask: &mut [bool],
                    levels: u32,
                ) {
                    let node = Node { records, spare, indices, mask, levels };
                    recurse::build_node::<C, N, $name>(level, node, bounds);
                }
                let Node { records, spare, indices, mask, levels } = node;
                // SAFETY: a value of `$name` exists only where the CPU has its features.
                unsafe { run::<C, N>(self, records, spare, bounds, indices, mask, levels) }
            }

            #[inline(always)]
            #[allow(unused_unsafe, reason = "the baseline's `run` is a safe function")]
            fn build_batch<C: Coord, const N: usize>(self, node: Node<'_, C::Key, N>, points: &[C], first: u32) {
                $(#[target_feature(enable = $features)])?
                fn run<C: Coord, const N: usize>(level: $name, node: Node<'_, C::Key, N>, points: &[C], first: u32) {
                    recurse::build_batch::<C, N, $name>(level, node, points, first);
                }
                // SAFETY: as in `build_node`.
                unsafe { run::<C, N>(self, node, points, first) }
            }
        }
    };
}

/// The target's baseline: no features beyond the compilation target's.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Baseline;

level_impl!(Baseline, CpuIsa::Baseline, baseline_bounds);

/// The baseline's bounds: the portable scan.
#[inline(always)]
fn baseline_bounds<C: Coord, const N: usize>(_: Baseline, records: &[Record<C::Key, N>]) -> Bounds<C::Key, N> {
    select::bounds::<C, N>(records)
}

/// x86-64-v3: AVX2 (four 64-bit lanes compared at once), BMI2 (shifts by a register
/// without the `cl` constraint), LZCNT. Made only where the CPU has them ([`V3::detect`]).
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub(crate) struct V3(());

#[cfg(target_arch = "x86_64")]
impl V3 {
    /// The level, if the running CPU supports it.
    pub(crate) fn detect() -> Option<Self> {
        CpuIsa::X86_64V3.is_supported().then_some(Self(()))
    }
}

#[cfg(target_arch = "x86_64")]
level_impl!(V3, CpuIsa::X86_64V3, v3_bounds, "avx2,bmi1,bmi2,lzcnt,popcnt,fma");

/// The v3 level's bounds: [`bounds_v3`] for records of f32 points with 4 to 16
/// coordinates (where the portable scan compiled with AVX2 is slower than the
/// baseline's), the portable scan otherwise and for nodes scanned in parallel.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn v3_bounds<C: Coord, const N: usize>(_: V3, records: &[Record<C::Key, N>]) -> Bounds<C::Key, N> {
    if records.len() < select::PAR_SELECT_MIN {
        // SAFETY: a `V3` exists only where the CPU has AVX2.
        if let Some(bounds) = unsafe { bounds_v3::bounds::<C, N>(records) } {
            return bounds;
        }
    }
    select::bounds::<C, N>(records)
}

/// Evaluates `$run` with `$level` bound to the [`Level`] value of `$isa` (a
/// [`CpuIsa`]), or of the most capable supported level below it; [`Baseline`] where
/// this architecture has no other.
///
/// x86-64-v4 runs the v3 build: AVX-512 made it slower, not faster (interleaved builds,
/// one thread, 16 x 1024 3D: f64 +1-3% and f32 +2-5% against v3; see ADR 0009), so the
/// crate carries no AVX-512 copy of the recursion.
macro_rules! with_level {
    ($isa:expr, |$level:ident| $run:expr) => {{
        #[allow(unused_imports)]
        use $crate::cpu::level::*;
        let isa: orrery_core::CpuIsa = $isa;
        'dispatch: {
            #[cfg(target_arch = "x86_64")]
            if let Some($level) = V3::detect().filter(|_| isa >= orrery_core::CpuIsa::X86_64V3) {
                break 'dispatch $run;
            }
            let $level = Baseline;
            $run
        }
    }};
}
pub(crate) use with_level;

#[cfg(test)]
mod tests {
    use orrery_core::{CpuIsa, Real};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use crate::cpu::build_at;
    use crate::{Batches, PointCloud};

    /// Points of one of four kinds: uniform, clustered, on a coarse grid (many coordinate
    /// ties), spanning many binades (crowded histogram buckets).
    fn points(rng: &mut ChaCha8Rng, n: usize, dim: usize, kind: usize) -> Vec<f64> {
        let centres: Vec<f64> = (0..4 * dim).map(|_| rng.random_range(-100.0..100.0)).collect();
        (0..n * dim)
            .map(|i| match kind {
                0 => rng.random_range(-1.0..1.0),
                1 => centres[(i / dim % 4) * dim + i % dim] + rng.random_range(-0.01..0.01),
                2 => f64::from(rng.random_range(-3i32..=3)),
                _ => rng.random_range(-1.0f64..1.0) * 10f64.powi(rng.random_range(-30..30)),
            })
            .collect()
    }

    fn assert_levels_agree<T: Real>(points: &[T], dim: usize, offsets: &[usize]) {
        let cloud = PointCloud::new(points, dim, Batches::from_offsets(offsets).unwrap()).unwrap();
        let reference = build_at(&cloud, CpuIsa::Baseline).unwrap();
        for isa in CpuIsa::ALL.into_iter().filter(|isa| isa.is_supported()) {
            let tree = build_at(&cloud, isa).unwrap();
            assert_eq!(tree.indices(), reference.indices(), "{isa}, dim {dim}, offsets {offsets:?}");
            assert_eq!(tree.mask(), reference.mask(), "{isa}, dim {dim}, offsets {offsets:?}");
        }
    }

    /// Every level this machine supports builds the baseline's tree, bit for bit: f32 and
    /// f64, dims 1 to 16, one batch (subtrees in parallel) and many (a batch per task),
    /// sizes that are and are not powers of two, ties and crowded buckets.
    #[test]
    fn every_level_builds_the_same_tree() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let shapes: [&[usize]; 4] =
            [&[0, 3000], &[0, 1, 2, 5, 37, 64, 1000, 1025], &(0..=40).map(|b| b * 97).collect::<Vec<_>>(), &[0, 8193]];
        for dim in [1, 2, 3, 4, 5, 8, 13, 16] {
            for (s, offsets) in shapes.iter().enumerate() {
                let n = offsets[offsets.len() - 1];
                let wide = points(&mut rng, n, dim, (dim + s) % 4);
                assert_levels_agree(&wide, dim, offsets);
                let narrow: Vec<f32> = wide.iter().map(|&v| v as f32).collect();
                assert_levels_agree(&narrow, dim, offsets);
            }
        }
    }

    /// The level a build runs at never exceeds the level asked for or the CPU's, and
    /// x86-64-v4 runs the v3 build (the crate compiles no AVX-512 copy).
    #[test]
    fn builds_run_at_a_supported_level_no_higher_than_asked() {
        for isa in CpuIsa::ALL {
            let level = crate::cpu::build_level(isa);
            assert!(level <= isa && level.is_supported() && level <= CpuIsa::X86_64V3, "{isa} -> {level}");
        }
        assert_eq!(crate::cpu::build_level(CpuIsa::Baseline), CpuIsa::Baseline);
        let v3 = CpuIsa::X86_64V3.is_supported();
        assert_eq!(crate::cpu::build_level(CpuIsa::X86_64V4) == CpuIsa::X86_64V3, v3);
    }

    /// A node large enough for the parallel selection and bounds (which stay baseline
    /// functions called from the level's code).
    #[test]
    fn every_level_agrees_on_nodes_that_select_in_parallel() {
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let n = super::super::select::PAR_SELECT_MIN * 2 + 3;
        let wide = points(&mut rng, n, 3, 1);
        assert_levels_agree(&wide, 3, &[0, n]);
        let narrow: Vec<f32> = points(&mut rng, n, 3, 3).iter().map(|&v| v as f32).collect();
        assert_levels_agree(&narrow, 3, &[0, n]);
    }
}
