//! Reductions: integers bit-identical to the CPU executor (wrapping sums), floats within
//! a stated tolerance, empty inputs give the identity, f64 follows the adapter.

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::{Element, Error, Executor, ReduceOp};
use rand::Rng;

use crate::common::{SIZES, cpu, each, executors, rng};

const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

fn sizes() -> impl Iterator<Item = usize> {
    SIZES.into_iter().chain([2048, 2049, 1 << 20])
}

fn gpu_reduce<T: Element>(e: &WgpuExecutor, input: &[T], op: ReduceOp) -> Result<T, Error> {
    let g = e.upload(input)?;
    let mut out = e.alloc::<T>(1)?;
    e.reduce(&g, op, &mut out)?;
    Ok(e.download(&out)?[0])
}

fn cpu_reduce<T: Element>(input: &[T], op: ReduceOp) -> T {
    let c = cpu();
    let g = c.upload(input).unwrap();
    let mut out = c.alloc::<T>(1).unwrap();
    c.reduce(&g, op, &mut out).unwrap();
    c.download(&out).unwrap()[0]
}

fn exact<T: Element + PartialEq>(make: impl Fn(&mut rand_chacha::ChaCha8Rng) -> T) {
    each(|label, e| {
        for n in sizes() {
            let mut r = rng(n as u64 * 31);
            let input: Vec<T> = (0..n).map(|_| make(&mut r)).collect();
            for op in OPS {
                let g = gpu_reduce(e, &input, op).unwrap();
                let c = cpu_reduce(&input, op);
                assert_eq!(bytemuck::bytes_of(&g), bytemuck::bytes_of(&c), "{label} {op:?} n={n}: {g:?} vs {c:?}");
            }
        }
    });
}

#[test]
fn integer_reductions_are_bit_identical_with_wrapping_sums() {
    exact::<u32>(rand::Rng::random);
    exact::<i32>(rand::Rng::random);
    exact::<u64>(rand::Rng::random);
    exact::<i64>(rand::Rng::random);
}

#[test]
fn u64_sum_carries_between_words() {
    // Low words that overflow when added: the carry must reach the high word.
    each(|label, e| {
        let input = vec![0xffff_ffffu64; 4097];
        assert_eq!(gpu_reduce(e, &input, ReduceOp::Sum).unwrap(), 4097 * 0xffff_ffff, "{label}");
        let signed = vec![-1i64, i64::MIN, 5, i64::MAX];
        assert_eq!(gpu_reduce(e, &signed, ReduceOp::Min).unwrap(), i64::MIN, "{label}");
        assert_eq!(gpu_reduce(e, &signed, ReduceOp::Max).unwrap(), i64::MAX, "{label}");
        assert_eq!(gpu_reduce(e, &signed, ReduceOp::Sum).unwrap(), cpu_reduce(&signed, ReduceOp::Sum), "{label}");
    });
}

/// Tolerance of a float sum: both executors sum in a fixed order whose rounding error is
/// at most (depth of the order) * eps * sum(|x|). The CPU folds tiles of 16384 left to
/// right, then the tiles left to right; the GPU folds 8 values per invocation, then
/// binary trees of depth 8 (a workgroup) and ceil(log2(tiles))-ish. So
/// |gpu - cpu| <= (min(n, 16384) + n / 16384 + 32) * eps * sum(|x|), times 2 for both.
fn sum_tolerance(n: usize, abs_sum: f64, eps: f64) -> f64 {
    2.0 * (n.min(16384) + n / 16384 + 32) as f64 * eps * abs_sum
}

#[test]
fn f32_reductions_agree_within_rounding_and_min_max_exactly() {
    each(|label, e| {
        for n in sizes() {
            let mut r = rng(n as u64 + 5);
            let input: Vec<f32> = (0..n).map(|_| r.random_range(-1.0f32..1.0)).collect();
            let abs: f64 = input.iter().map(|&x| f64::from(x.abs())).sum();
            let (g, c) = (gpu_reduce(e, &input, ReduceOp::Sum).unwrap(), cpu_reduce(&input, ReduceOp::Sum));
            let tol = sum_tolerance(n, abs, f64::from(f32::EPSILON));
            assert!(f64::from((g - c).abs()) <= tol, "{label} n={n}: {g} vs {c}, tolerance {tol}");
            for op in [ReduceOp::Min, ReduceOp::Max] {
                let (g, c) = (gpu_reduce(e, &input, op).unwrap(), cpu_reduce(&input, op));
                assert_eq!(g, c, "{label} {op:?} n={n}");
            }
        }
    });
}

#[test]
fn f32_sums_are_reproducible_across_runs_and_subgroup_paths() {
    let input: Vec<f32> = {
        let mut r = rng(99);
        (0..1_000_003).map(|_| r.random_range(-1e3f32..1e3)).collect()
    };
    let results: Vec<u32> = executors()
        .iter()
        .flat_map(|(_, e)| [0, 1].map(|_| gpu_reduce(e, &input, ReduceOp::Sum).unwrap().to_bits()))
        .collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]), "{results:x?}");
}

#[test]
fn empty_inputs_reduce_to_the_identity() {
    each(|label, e| {
        for op in OPS {
            assert_eq!(gpu_reduce::<u32>(e, &[], op).unwrap(), op.identity::<u32>(), "{label} {op:?}");
            assert_eq!(gpu_reduce::<i64>(e, &[], op).unwrap(), op.identity::<i64>(), "{label} {op:?}");
            assert_eq!(gpu_reduce::<f32>(e, &[], op).unwrap(), op.identity::<f32>(), "{label} {op:?}");
        }
    });
}

#[test]
fn f64_reductions_run_with_shader_f64_and_are_unsupported_without() {
    each(|label, e| {
        let mut r = rng(64);
        let input: Vec<f64> = (0..100_003).map(|_| r.random_range(-1.0..1.0)).collect();
        if e.capabilities().f64 {
            let abs: f64 = input.iter().map(|x| x.abs()).sum();
            let (g, c) = (gpu_reduce(e, &input, ReduceOp::Sum).unwrap(), cpu_reduce(&input, ReduceOp::Sum));
            assert!((g - c).abs() <= sum_tolerance(input.len(), abs, f64::EPSILON), "{label}: {g} vs {c}");
            for op in [ReduceOp::Min, ReduceOp::Max] {
                assert_eq!(gpu_reduce(e, &input, op).unwrap(), cpu_reduce(&input, op), "{label} {op:?}");
            }
            assert_eq!(gpu_reduce::<f64>(e, &[], ReduceOp::Min).unwrap(), f64::INFINITY, "{label}");
        } else {
            assert!(matches!(gpu_reduce(e, &input, ReduceOp::Sum), Err(Error::Unsupported { .. })), "{label}");
        }
    });
}
