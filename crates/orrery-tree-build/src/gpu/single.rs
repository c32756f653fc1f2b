//! Single steps of a pass from host data: the kernels one at a time, uploaded and
//! downloaded, to compare each with its CPU reference (the tests, and the Cornerstone
//! golden example through the GPU decide).

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{Error, Result, Slice};

use super::buffers::LeafBuffers;
use super::kernels::{THREADS, nf_count as nk, passes as k};
use super::nf::{self, NfShape, geometry_words, hilbert_flag};
use super::passes::{DecideInput, decide};
use super::status;
use crate::build::{Criterion, check_sorted_keys};
use crate::leaves::Leaves;
use crate::nfcount::{KeyGeometry, check_threshold};
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
    let cap = leaf_capacity(n)?;
    let keys = exec.upload(leaves.keys())?;
    let counts = exec.upload(counts)?;
    let mut ops = exec.alloc::<u32>(n)?;
    let mut st = running_status(exec, n)?;
    let input = DecideInput::Counts(&counts);
    decide(exec, Criterion::leaf_count(bucket), &keys, input, &mut ops, &mut st, cap, leaves.layout())?;
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
    let mut bufs = LeafBuffers::<E>::new(exec, n, false)?;
    exec.write(&mut bufs.leaves[0], 0, leaves.keys())?;
    let sorted = exec.upload(keys)?;
    let st = running_status(exec, n)?;
    let config = LaunchConfig::per_item(n, THREADS);
    k::tb_leaf_counts(exec, &config, &sorted, &bufs.leaves[0], &st, &mut bufs.counts, keys.len() as u32, n as u32)?;
    let mut out = vec![0u32; n];
    exec.read(&bufs.counts, 0, &mut out)?;
    Ok(out)
}

/// `n` leaves as a `u32` capacity.
fn leaf_capacity(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::TooManyPoints { count: n, max: u32::MAX as usize, what: "leaves" })
}

/// Checks the particle keys of the NFCount single kernels: sorted, in range, at least
/// one, fitting 32-bit indices.
fn check_particles(keys: &[u64], leaves: &Leaves) -> Result<u32> {
    check_sorted_keys(keys, leaves.layout())?;
    if keys.is_empty() {
        return Err(Error::EmptyInput { what: "particle keys", min: 1 });
    }
    u32::try_from(keys.len()).map_err(|_| Error::TooManyPoints {
        count: keys.len(),
        max: u32::MAX as usize,
        what: "particles",
    })
}

/// `W` and the group value of every leaf of `leaves` for the sorted particle `keys`,
/// evaluated from scratch by the GPU NFCount kernels (`tb_nf_reset`, `tb_nf_counts`, the
/// counted scan, `tb_nf_eval`); equal to [`crate::nfcount::NfState::evaluate`]'s
/// [`nf`](crate::nfcount::NfState::nf) and [`group_nf`](crate::nfcount::NfState::group_nf).
///
/// # Errors
/// As [`crate::nfcount::NfState::evaluate`]; [`Error::EmptyInput`] for no particle;
/// device failures.
pub fn nf_values<E: GpuExecutor>(
    exec: &E,
    geometry: KeyGeometry,
    leaves: &Leaves,
    keys: &[u64],
) -> Result<(Vec<u64>, Vec<u64>)> {
    let lanes = leaf_capacity(leaves.len()).map(super::nf::eval_lanes)?;
    nf_values_with_lanes(exec, geometry, leaves, keys, lanes)
}

/// [`nf_values`] with `lanes` threads per leaf in the evaluation kernel (1, 2, 4, 8, 16
/// or 32; a tree build picks it from its leaf capacity), so that tests reach every lane
/// count on small trees.
///
/// # Errors
/// As [`nf_values`]; [`Error::InvalidArgument`] for another lane count.
pub fn nf_values_with_lanes<E: GpuExecutor>(
    exec: &E,
    geometry: KeyGeometry,
    leaves: &Leaves,
    keys: &[u64],
    lanes: u32,
) -> Result<(Vec<u64>, Vec<u64>)> {
    if !lanes.is_power_of_two() || lanes > 32 {
        return Err(Error::InvalidArgument {
            what: "lanes",
            reason: format!("{lanes}: expected 1, 2, 4, 8, 16 or 32"),
        });
    }
    geometry.check_layout(leaves.layout())?;
    let n = check_particles(keys, leaves)?;
    let l = leaves.len();
    let cap = leaf_capacity(l)?;
    let mut bufs = LeafBuffers::<E>::new(exec, l, true)?;
    exec.write(&mut bufs.leaves[0], 0, leaves.keys())?;
    let sorted = exec.upload(keys)?;
    let st = running_status(exec, l)?;
    let layout = leaves.layout();
    let shape = NfShape {
        n,
        capacity: cap,
        bits: layout.bits_per_level(),
        levels: layout.levels(),
        hilbert: hilbert_flag(geometry),
        eval_lanes: lanes,
    };
    let nfb = bufs.nf.as_mut().ok_or(Error::InvalidArgument { what: "NFCount buffers", reason: "missing".into() })?;
    exec.write(&mut nfb.geom, 0, &geometry_words(geometry))?;
    nf::starts(exec, &shape, true, &sorted, &bufs.leaves[0], nfb, 0, &st)?;
    nf::eval(exec, &shape, &sorted, &bufs.leaves[0], nfb, 0, &mut bufs.counts, &st)?;
    let mut vals = vec![0u64; 2 * l];
    exec.read(&nfb.vals, 0, &mut vals)?;
    let group = vals.split_off(l);
    Ok((vals, group))
}

/// The NFCount operations of every leaf of `leaves` from its `W` values `nf` and group
/// values `group`, computed by the GPU decide kernel (`tb_nf_ops`); equal to
/// [`crate::nfcount::NfState::decide`].
///
/// # Errors
/// [`Error::InvalidArgument`] for a zero threshold; [`Error::LengthMismatch`] unless
/// `nf` and `group` have one value per leaf; device failures.
pub fn nf_ops<E: GpuExecutor>(
    exec: &E,
    leaves: &Leaves,
    nf: &[u64],
    group: &[u64],
    threshold: u64,
) -> Result<Vec<u32>> {
    check_threshold(threshold)?;
    orrery_core::executor::check_len("NF values", leaves.len(), nf.len())?;
    orrery_core::executor::check_len("NF group values", leaves.len(), group.len())?;
    let l = leaves.len();
    let cap = leaf_capacity(l)?;
    let keys = exec.upload(leaves.keys())?;
    let vals: Vec<u64> = nf.iter().chain(group).copied().collect();
    let vals = exec.upload(&vals)?;
    let mut ops = exec.alloc::<u32>(l)?;
    let mut st = running_status(exec, l)?;
    // The geometry does not enter the decide; any geometry of this layout will do.
    let criterion = Criterion::NfCount { threshold, geometry: KeyGeometry::Octree(orrery_core::sfc::Curve::Morton) };
    decide(exec, criterion, &keys, DecideInput::NfValues(&vals, 0), &mut ops, &mut st, cap, leaves.layout())?;
    exec.download(&ops)
}

/// The stencil count ([`crate::nfcount::stencil_count`]) of each query `(key, level,
/// near)`: the particles of the 27 level-`level` cells around the one holding `key`,
/// located in the leaf array `leaves` by galloping from leaf `near`, computed by the GPU
/// kernel `tb_nf_stencil_counts` (the function `tb_nf_eval` runs); equal to
/// [`crate::nfcount::stencil_count_reference`].
///
/// # Errors
/// As [`nf_values`]; [`Error::InvalidArgument`] for a query key past the key range;
/// device failures.
pub fn stencil_counts<E: GpuExecutor>(
    exec: &E,
    geometry: KeyGeometry,
    leaves: &Leaves,
    keys: &[u64],
    queries: &[(u64, u32, u32)],
) -> Result<Vec<u64>> {
    geometry.check_layout(leaves.layout())?;
    let n = check_particles(keys, leaves)?;
    let layout = leaves.layout();
    if let Some(&(key, _, _)) = queries.iter().find(|q| q.0 >= layout.key_end::<u64>()) {
        return Err(Error::InvalidArgument {
            what: "stencil queries",
            reason: format!("key {key} is past the key range {}", layout.key_end::<u64>()),
        });
    }
    if queries.is_empty() {
        return Ok(Vec::new());
    }
    let q = leaf_capacity(queries.len())?;
    let live = leaf_capacity(leaves.len())?;
    let starts = crate::counts::leaf_starts(leaves.keys(), keys);
    let d_leaves = exec.upload(leaves.keys())?;
    let d_starts = exec.upload(&starts)?;
    let d_keys = exec.upload(keys)?;
    let geom = exec.upload(&geometry_words(geometry))?;
    let qkeys: Vec<u64> = queries.iter().map(|q| q.0).collect();
    let qmeta: Vec<u32> = queries.iter().flat_map(|q| [q.1, q.2]).collect();
    let (qkeys, qmeta) = (exec.upload(&qkeys)?, exec.upload(&qmeta)?);
    let mut out = exec.alloc::<u64>(queries.len())?;
    let config = LaunchConfig::per_item(queries.len(), THREADS);
    nk::tb_nf_stencil_counts(
        exec,
        &config,
        &d_leaves,
        &d_starts,
        &d_keys,
        &geom,
        &qkeys,
        &qmeta,
        out.slice_mut(0..queries.len())?,
        q,
        live,
        n,
        hilbert_flag(geometry),
        layout.bits_per_level(),
        layout.levels(),
    )?;
    exec.download(&out)
}
