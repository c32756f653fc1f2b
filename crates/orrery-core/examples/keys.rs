//! Builds 64-bit Hilbert keys for a million random points on the CPU executor, sorts
//! the points along the curve, and reports what it did and how long each step took.
//!
//! `cargo run --release -p orrery-core --example keys [N]`

use std::time::Instant;

use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{CpuExecutor, Executor, PositionsView};
use rand::{Rng, SeedableRng};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1_000_000), |s| s.parse())?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let mut axis = || (0..n).map(|_| rng.random::<f32>() * 100.0 - 50.0).collect::<Vec<f32>>();
    let (x, y, z) = (axis(), axis(), axis());

    let t = Instant::now();
    let points = PositionsView::new(&x, &y, &z)?;
    let bbox = points.bounding_box()?;
    let validate = t.elapsed();

    let exec = CpuExecutor::new();
    let (bx, by, bz) = (exec.upload(&x)?, exec.upload(&y)?, exec.upload(&z)?);
    let mapper = KeyMapper::<f32, u64>::new(bbox, Curve::Hilbert);
    let mut keys = exec.alloc::<u64>(n)?;
    let t = Instant::now();
    exec.sfc_keys(&bx, &by, &bz, &mapper, &mut keys)?;
    let keygen = t.elapsed();

    let mut order = exec.alloc::<u32>(n)?;
    exec.iota(&mut order, 0)?;
    let t = Instant::now();
    exec.sort_pairs(&mut keys, &mut order, 0..63)?;
    let sort = t.elapsed();

    let keys = exec.download(&keys)?;
    let order = exec.download(&order)?;
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "keys must come out sorted");
    let first = order[0] as usize;
    println!("{} on {} points in the box {:?} .. {:?}", exec.name(), n, bbox.min().as_slice(), bbox.max().as_slice());
    println!("  validate + bounding box  {:>9.2} ms", validate.as_secs_f64() * 1e3);
    println!(
        "  64-bit Hilbert keys      {:>9.2} ms  ({:.0} M keys/s)",
        keygen.as_secs_f64() * 1e3,
        n as f64 / keygen.as_secs_f64() / 1e6
    );
    println!(
        "  sort (key, index) pairs  {:>9.2} ms  ({:.0} M pairs/s)",
        sort.as_secs_f64() * 1e3,
        n as f64 / sort.as_secs_f64() / 1e6
    );
    println!(
        "  first point on the curve: #{first} at ({:.3}, {:.3}, {:.3}), key {:#018x}",
        x[first], y[first], z[first], keys[0]
    );
    println!(
        "  last key {:#018x}; distinct keys: {}",
        keys[n - 1],
        1 + keys.windows(2).filter(|w| w[0] != w[1]).count()
    );
    Ok(())
}
