//! `primitives`: the device primitives at GPU-filling sizes — sort of 16M and 64M
//! `(u64, u32)` pairs, exclusive scan of 256M u32, Hilbert keys of 64M points, and a
//! 1 GiB device-to-device copy as the bandwidth ceiling measured in the same run.

use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, Result};

use crate::data::{random_counts, random_keys, size_label, uniform_points};
use crate::report::Record;
use crate::stats::{measure, measure_with_setup};
use crate::suites::Config;

fn record<E: Executor>(exec: &E, workload: String, elements: usize, bytes: usize, stats: crate::stats::Stats) -> Record {
    Record { suite: "primitives".into(), workload, executor: exec.name(), elements: elements as u64, bytes: bytes as u64, stats }
}

/// Runs the suite on `exec`.
///
/// # Errors
/// Executor failures.
pub fn run<E: Executor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let scale = if cfg.quick { 16 } else { 1 };
    let mut records = Vec::new();

    // Copy ceiling: 1 GiB of u32, counted as read + write.
    let n = (256 << 20) / scale;
    let src = exec.upload(&random_counts(n, u32::MAX, 1))?;
    let mut dst = exec.alloc::<u32>(n)?;
    let stats = measure(exec, cfg.warmup, cfg.repeats, || exec.copy(&src, &mut dst))?;
    records.push(record(exec, format!("copy u32 {}", size_label(n)), n, n * 8, stats));
    drop(dst);

    // Exclusive scan of 256M u32 into n + 1 offsets: bytes = read n + write n + 1.
    let input = src;
    let mut offsets = exec.alloc::<u32>(n + 1)?;
    let stats = measure(exec, cfg.warmup, cfg.repeats, || exec.exclusive_scan(&input, &mut offsets))?;
    records.push(record(exec, format!("exclusive_scan u32 {}", size_label(n)), n, n * 8 + 4, stats));
    drop((input, offsets));

    // Hilbert keys of 64M f32 points: 12 bytes read + 8 written per point.
    let n = (64 << 20) / scale;
    let [x, y, z] = uniform_points(n, 7);
    let (bx, by, bz) = (exec.upload(&x)?, exec.upload(&y)?, exec.upload(&z)?);
    drop((x, y, z));
    let mut keys = exec.alloc::<u64>(n)?;
    let mapper = KeyMapper::<f32, u64>::new(Aabb::cube(0.0, 1.0)?, Curve::Hilbert);
    let stats = measure(exec, cfg.warmup, cfg.repeats, || exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys))?;
    records.push(record(exec, format!("hilbert keys f32 {}", size_label(n)), n, n * 20, stats));
    drop((bx, by, bz, keys));

    // Sort of (u64, u32) pairs, random 64-bit keys, full width (what torch.sort sorts)
    // and the 63 bits of a 3D key.
    for n in [(16 << 20) / scale, (64 << 20) / scale] {
        let pristine = exec.upload(&random_keys(n, 3))?;
        let mut state = (exec.alloc::<u64>(n)?, exec.alloc::<u32>(n)?);
        for bits in [0..64u32, 0..63] {
            let stats = measure_with_setup(
                exec,
                cfg.warmup,
                cfg.repeats,
                &mut state,
                |(k, v)| {
                    exec.copy(&pristine, k)?;
                    exec.iota(v, 0)
                },
                |(k, v)| exec.sort_pairs(k, v, bits.clone()),
            )?;
            records.push(record(exec, format!("sort_pairs {} bits {bits:?}", size_label(n)), n, n * 24, stats));
        }
    }
    Ok(records)
}
