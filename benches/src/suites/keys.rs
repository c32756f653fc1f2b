//! `keys`: space-filling-curve key generation and key/value sort, the first two steps
//! of every Cornerstone tree build, at 1M and 16M points (uniform in the unit cube,
//! f32 positions, 64-bit keys).

use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, Result};

use crate::data::{size_label, uniform_points};
use crate::report::Record;
use crate::stats::{measure, measure_with_setup};
use crate::suites::Config;

/// Runs the suite on `exec`.
///
/// # Errors
/// Executor failures.
pub fn run<E: Executor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let sizes: &[usize] = if cfg.quick { &[1 << 16, 1 << 20] } else { &[1 << 20, 1 << 24] };
    let mut records = Vec::new();
    for &n in sizes {
        let [x, y, z] = uniform_points(n, 42);
        let (bx, by, bz) = (exec.upload(&x)?, exec.upload(&y)?, exec.upload(&z)?);
        let mut keys = exec.alloc::<u64>(n)?;
        let bbox = Aabb::cube(0.0f32, 1.0)?;
        for curve in [Curve::Morton, Curve::Hilbert] {
            let mapper = KeyMapper::<f32, u64>::new(bbox, curve);
            let stats = measure(exec, cfg.warmup, cfg.repeats, || exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys))?;
            records.push(Record {
                suite: "keys".into(),
                workload: format!("{curve:?} keys f32 {}", size_label(n)),
                executor: exec.name(),
                elements: n as u64,
                bytes: (n * (12 + 8)) as u64,
                stats,
                info: String::new(),
            });
        }
        // `keys` now holds Hilbert keys: sort them with their indices, restoring the
        // unsorted keys (untimed) before every run.
        let pristine = exec.alloc::<u64>(n)?;
        let mut pristine = pristine;
        exec.copy(&keys, &mut pristine)?;
        let values = exec.alloc::<u32>(n)?;
        let stats = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            &mut (keys, values),
            |(k, v)| {
                exec.copy(&pristine, k)?;
                exec.iota(v, 0)
            },
            |(k, v)| exec.sort_pairs(k, v, 0..63),
        )?;
        records.push(Record {
            suite: "keys".into(),
            workload: format!("sort (key,u32) bits 0..63 {}", size_label(n)),
            executor: exec.name(),
            elements: n as u64,
            bytes: (n * 24) as u64,
            stats,
            info: String::new(),
        });
    }
    Ok(records)
}
