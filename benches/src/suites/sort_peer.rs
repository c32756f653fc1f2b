//! `sort-peer`: the executors' sort of `(u64 Hilbert key, u32 index)` pairs on the same
//! keys as CUB's `DeviceRadixSort::SortPairs` inside Cornerstone, so the two are
//! compared on one input in one device call (issue 18: "CUDA sort at CUB's speed").
//!
//! The particles are uniform in `[-1, 1)^3` (f64, seeded); with `--peer-files DIR` each
//! set is also written as `DIR/sort-uniform-<N>.bin` in the peer drivers' format, and
//! `benches/device/sort_peer.sh` runs `cstone_octree_driver FILE --box -1 1 --sfc hilbert`
//! on it, whose "sort keys" phase is CUB's sort of the same Hilbert keys (computed from the
//! same coordinates in the same order, box and curve: our converged trees equal its leaf
//! arrays byte for byte, docs/performance/tree.md). The keys are computed here on the host
//! (`KeyMapper<f64, u64>`, the same keys every executor computes) and uploaded once; every
//! timed run restores them and the identity values untimed, then sorts key bits 0..64, as
//! Cornerstone's call does (all 64 bits: 8 digit passes), and 0..63, the bits a 63-bit
//! Hilbert key uses.

use std::path::Path;

use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{Aabb, Executor, Result};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::data::write_peer_file;
use crate::report::Record;
use crate::suites::Config;
use crate::suites::primitives::time_sort;

/// The set sizes: Cornerstone's tree sizes of ../shared/peers/README.md (2M and 25.6M),
/// or a sixteenth of them with `--quick`.
fn sizes(cfg: &Config) -> [usize; 2] {
    let scale = if cfg.quick { 16 } else { 1 };
    [2_000_000 / scale, 25_600_000 / scale]
}

/// Uniform particles in `[-1, 1)^3`, structure of arrays (seeded per size).
fn particles(n: usize) -> [Vec<f64>; 3] {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5027 ^ n as u64);
    let mut axis = || (0..n).map(|_| rng.random_range(-1.0..1.0)).collect::<Vec<f64>>();
    [axis(), axis(), axis()]
}

/// A set's size in millions, as the peers' README writes it (`2M`, `25.6M`).
fn label(n: usize) -> String {
    format!("{}M", n as f64 / 1e6)
}

/// The file name of a set in the peer format.
pub fn peer_file_name(n: usize) -> String {
    format!("sort-uniform-{}.bin", label(n))
}

/// Hilbert keys of the particles in the box `[-1, 1]^3`, in particle order.
fn hilbert_keys(points: &[Vec<f64>; 3]) -> Result<Vec<u64>> {
    let mapper = KeyMapper::<f64, u64>::new(Aabb::cube(-1.0, 1.0)?, Curve::Hilbert);
    Ok((0..points[0].len())
        .into_par_iter()
        .map(|i| mapper.key_clamped(points[0][i], points[1][i], points[2][i]))
        .collect())
}

/// Writes every set in the peer drivers' format into `dir` (before any executor runs).
///
/// # Errors
/// I/O errors.
pub fn write_peer_files(cfg: &Config, dir: &Path) -> Result<()> {
    let io = |e: std::io::Error| orrery_core::Error::InvalidArgument { what: "--peer-files", reason: e.to_string() };
    std::fs::create_dir_all(dir).map_err(io)?;
    for n in sizes(cfg) {
        write_peer_file(&dir.join(peer_file_name(n)), &particles(n), None).map_err(io)?;
    }
    Ok(())
}

/// Runs the suite on `exec`.
///
/// # Errors
/// Executor failures.
pub fn run<E: Executor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let mut records = Vec::new();
    for n in sizes(cfg) {
        let pristine = exec.upload(&hilbert_keys(&particles(n))?)?;
        for bits in [0..64u32, 0..63] {
            let stats = time_sort(exec, cfg, &pristine, bits.clone())?;
            records.push(Record {
                suite: "sort-peer".into(),
                workload: format!("sort_pairs Hilbert keys of {} uniform particles, bits {bits:?}", label(n)),
                executor: exec.name(),
                elements: n as u64,
                bytes: n as u64 * 24,
                stats,
                info: format!("peer file {}", peer_file_name(n)),
            });
        }
    }
    Ok(records)
}
