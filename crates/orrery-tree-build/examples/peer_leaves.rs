//! Builds our leaf array from a peer particle file and writes it in the peer's format, so
//! `cmp` against `cstone_cpu_leaves` / `cstone_octree_driver --out` checks the tree bit
//! for bit (../shared/peers/README.md).
//!
//! ```text
//! cargo run --release -p orrery-tree-build --example peer_leaves -- FILE --box LO HI \
//!     [--sfc hilbert|morton] [--bucket 16] --out leaves.bin
//! ```
//! FILE: `u64 n`, then n records of `f64 x, y, z, m`, little-endian. Output: `u64 L + 1`,
//! then the L + 1 boundaries as u64. The box must be given: the peer's default box (the
//! padded bounding cube) quantises differently from ours unless its corners and extent
//! are powers of two (ADR 0005 and docs/performance/tree.md say why).

use std::time::Instant;

use orrery_core::sfc::Curve;
use orrery_core::{Aabb, PositionsView};
use orrery_tree_build::{Criterion, Rebalance, Shape, build, input};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let get = |flag: &str| args.iter().position(|a| a == flag).map(|i| args[i + 1].clone());
    let file = args.get(1).ok_or("usage: peer_leaves FILE --box LO HI [--sfc hilbert|morton] [--bucket 16] --out F")?;
    let i = args.iter().position(|a| a == "--box").ok_or("--box LO HI is required")?;
    let (lo, hi): (f64, f64) = (args[i + 1].parse()?, args[i + 2].parse()?);
    let curve = match get("--sfc").as_deref() {
        Some("morton") => Curve::Morton,
        _ => Curve::Hilbert,
    };
    let bucket: u32 = get("--bucket").map_or(Ok(16), |b| b.parse())?;
    let bytes = std::fs::read(file)?;
    let n = u64::from_le_bytes(bytes[..8].try_into()?) as usize;
    let rec: &[f64] = bytemuck::try_cast_slice(&bytes[8..8 + 32 * n]).map_err(|e| format!("{e:?}"))?;
    let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        rec.chunks(4).map(|r| r[0]).collect(),
        rec.chunks(4).map(|r| r[1]).collect(),
        rec.chunks(4).map(|r| r[2]).collect(),
    );
    let t0 = Instant::now();
    let sorted =
        input::sort_particles(PositionsView::new(&x, &y, &z)?, Some(Aabb::cube(lo, hi)?), Shape::Octree(curve))?;
    let t1 = Instant::now();
    let options = Rebalance::new(Criterion::leaf_count(bucket));
    let (tree, run) = build(&sorted.keys, sorted.layout, &options)?;
    let t2 = Instant::now();
    // Warm repeats: the first build also pays for first-touch page faults.
    let warm = (0..5)
        .map(|_| {
            let t = Instant::now();
            build(&sorted.keys, sorted.layout, &options).map(|_| t.elapsed().as_secs_f64() * 1e3)
        })
        .collect::<Result<Vec<f64>, _>>()?;
    println!("warm builds (ms): {warm:.2?}");
    println!(
        "n {n}, {curve:?}, bucket {bucket}, box [{lo}, {hi}]^3: {} leaves in {} passes (converged {}); keys+sort {:.1} ms, build {:.1} ms",
        tree.leaves().len(),
        run.passes,
        run.converged,
        (t1 - t0).as_secs_f64() * 1e3,
        (t2 - t1).as_secs_f64() * 1e3
    );
    if let Some(out) = get("--out") {
        let keys = tree.leaves().keys();
        let mut data = Vec::with_capacity(8 * (keys.len() + 1));
        data.extend_from_slice(&(keys.len() as u64).to_le_bytes());
        data.extend_from_slice(bytemuck::cast_slice(keys));
        std::fs::write(out, data)?;
    }
    Ok(())
}
