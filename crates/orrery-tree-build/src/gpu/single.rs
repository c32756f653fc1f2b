//! Single steps of a pass from host data: the kernels one at a time, uploaded and
//! downloaded, to compare each with its CPU reference (the tests, and the Cornerstone
//! golden example through the GPU decide).

use orrery_core::Result;
use orrery_core::gpu::{GpuExecutor, LaunchConfig};

use super::buffers::LeafBuffers;
use super::kernels::{THREADS, passes as k};
use super::passes::decide;
use super::status;
use crate::build::{Criterion, check_sorted_keys};
use crate::leaves::Leaves;
use crate::rebalance::check_bucket;

/// A status block for `leaves` leaves in state `RUN`, on the device.
fn running_status<E: GpuExecutor>(exec: &E, leaves: usize) -> Result<E::Buffer<u32>> {
    let mut words = [0u32; status::WORDS];
    words[status::LEAF_COUNT] = u32::try_from(leaves).unwrap_or(u32::MAX);
    words[status::SCAN_COUNT] = words[status::LEAF_COUNT];
    words[status::STATE] = status::RUN;
    exec.upload(&words)
}

/// The LeafCount operations of every leaf of `leaves` with particle `counts`, computed by
/// the GPU decide kernel (`tb_leaf_count_ops`); equal to
/// [`crate::rebalance::leaf_count_ops`].
///
/// # Errors
/// As [`crate::rebalance::leaf_count_ops`]; device failures.
pub fn leaf_count_ops<E: GpuExecutor>(exec: &E, leaves: &Leaves, counts: &[u32], bucket: u32) -> Result<Vec<u32>> {
    check_bucket(bucket)?;
    orrery_core::executor::check_len("leaf counts", leaves.len(), counts.len())?;
    let n = leaves.len();
    let cap = u32::try_from(n).map_err(|_| orrery_core::Error::TooManyPoints {
        count: n,
        max: u32::MAX as usize,
        what: "leaves",
    })?;
    let keys = exec.upload(leaves.keys())?;
    let counts = exec.upload(counts)?;
    let mut ops = exec.alloc::<u32>(n)?;
    let mut st = running_status(exec, n)?;
    decide(exec, Criterion::leaf_count(bucket), &keys, &counts, &mut ops, &mut st, cap, leaves.layout())?;
    exec.download(&ops)
}

/// The particle count of every leaf of `leaves` in the sorted particle `keys`, computed by
/// the GPU counts kernel (`tb_leaf_counts`); equal to [`crate::counts::leaf_counts`].
///
/// # Errors
/// [`orrery_core::Error::InvalidArgument`] for unsorted keys, [`orrery_core::Error::EmptyInput`]
/// for none; device failures.
pub fn leaf_counts<E: GpuExecutor>(exec: &E, leaves: &Leaves, keys: &[u64]) -> Result<Vec<u32>> {
    check_sorted_keys(keys, leaves.layout())?;
    if keys.is_empty() {
        return Err(orrery_core::Error::EmptyInput { what: "particle keys", min: 1 });
    }
    let n = leaves.len();
    let mut bufs = LeafBuffers::<E>::new(exec, n)?;
    exec.write(&mut bufs.leaves[0], 0, leaves.keys())?;
    let sorted = exec.upload(keys)?;
    let st = running_status(exec, n)?;
    let config = LaunchConfig::per_item(n, THREADS);
    k::tb_leaf_counts(exec, &config, &sorted, &bufs.leaves[0], &st, &mut bufs.counts, keys.len() as u32, n as u32)?;
    let mut out = vec![0u32; n];
    exec.read(&bufs.counts, 0, &mut out)?;
    Ok(out)
}
