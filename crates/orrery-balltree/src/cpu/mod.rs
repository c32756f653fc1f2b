//! The CPU executor of the ball tree: a parallel recursive build on rayon.
//!
//! The CPU favours recursion over the level loop a GPU runs: each node splits its
//! contiguous slice of records at the exact median of the total order (coordinate,
//! index), never by sorting, and the recursion hands whole subtrees to cores. A node of
//! more than 8 records splits out of place by a histogram of its split key
//! (`histogram`: one counting pass, one branch-free scatter into a second buffer, an
//! exact selection inside the median's bucket) and computes its children's bounds, so
//! every child starts with its bounds known; smaller nodes and the parallel top levels
//! of large clouds select in place (`select`). See `recurse` for where the
//! parallelism comes from, and ADR 0007.
//!
//! Points are copied once into records of `D` coordinates plus their index
//! (`D = 1..=16`, monomorphised), so every scan and swap streams through memory.
//!
//! The output is the executor-independent [`BallTree`] / [`Partition`] /
//! [`crate::RotatedPartition`]; a GPU executor produces the same types (bit-identical
//! indices) from its level loop.

#[cfg(target_arch = "x86_64")]
mod bounds_v3;
mod histogram;
pub(crate) mod level;
mod recurse;
mod rotate;
mod select;

use orrery_core::{CpuIsa, DType, Real, Result};
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use bytemuck::TransparentWrapper;
use rayon::prelude::*;

pub use rotate::rotated_partitions;

use recurse::Node;
pub(crate) use recurse::cut;

use crate::cpu::level::{Level, with_level};
use crate::input::PointCloud;
use crate::layout::TreeLayout;
use crate::partition::Partition;
use crate::split::{Coord, Record};
use crate::tree::BallTree;

/// Calls `$f::<C, N>($args)` (or `$f::<C, N, G>`) with the record width `N`
/// (coordinates plus the index lane) equal to the runtime `$dim + 1` (`dim` in 1..=16).
macro_rules! with_dim {
    ($dim:expr, $f:ident::<$t:ty $(, $g:ty)?>($($arg:expr),* $(,)?)) => {
        match $dim {
            1 => $f::<$t, 2 $(, $g)?>($($arg),*),
            2 => $f::<$t, 3 $(, $g)?>($($arg),*),
            3 => $f::<$t, 4 $(, $g)?>($($arg),*),
            4 => $f::<$t, 5 $(, $g)?>($($arg),*),
            5 => $f::<$t, 6 $(, $g)?>($($arg),*),
            6 => $f::<$t, 7 $(, $g)?>($($arg),*),
            7 => $f::<$t, 8 $(, $g)?>($($arg),*),
            8 => $f::<$t, 9 $(, $g)?>($($arg),*),
            9 => $f::<$t, 10 $(, $g)?>($($arg),*),
            10 => $f::<$t, 11 $(, $g)?>($($arg),*),
            11 => $f::<$t, 12 $(, $g)?>($($arg),*),
            12 => $f::<$t, 13 $(, $g)?>($($arg),*),
            13 => $f::<$t, 14 $(, $g)?>($($arg),*),
            14 => $f::<$t, 15 $(, $g)?>($($arg),*),
            15 => $f::<$t, 16 $(, $g)?>($($arg),*),
            16 => $f::<$t, 17 $(, $g)?>($($arg),*),
            _ => unreachable!("dim is validated to 1..=16"),
        }
    };
}

/// Builds the ball tree of every batch of `cloud` on the CPU, at the instruction-set
/// level [`CpuIsa::active`] picks (every level builds the same tree).
///
/// # Errors
/// [`orrery_core::Error::TooManyPoints`] when the slots exceed `u32::MAX` (more than
/// 2^31 points); [`orrery_core::Error::InvalidArgument`] when `ORRERY_MAX_CPU_ISA` names
/// no level. The cloud itself is validated at construction.
pub fn build<T: Real>(cloud: &PointCloud<'_, T>) -> Result<BallTree> {
    build_at(cloud, CpuIsa::active()?)
}

/// The instruction-set level [`build_at`] runs at when asked for `isa`: the most capable
/// level up to `isa` that the running CPU supports and this crate compiles.
pub fn build_level(isa: CpuIsa) -> CpuIsa {
    with_level!(isa, |level| level_isa(level))
}

fn level_isa<L: Level>(_: L) -> CpuIsa {
    L::ISA
}

/// [`build`] at the instruction-set level `isa`, or at the most capable level below it
/// that the running CPU supports and this crate compiles (the baseline and x86-64-v3;
/// x86-64-v4 runs the v3 build). Every level builds the same tree; this is for
/// comparing their speed in one process (`examples/isa_levels.rs`) or pinning one.
///
/// # Errors
/// As [`build`], but `ORRERY_MAX_CPU_ISA` is not read.
pub fn build_at<T: Real>(cloud: &PointCloud<'_, T>, isa: CpuIsa) -> Result<BallTree> {
    let layout = TreeLayout::new(cloud.batches())?;
    let mut indices = vec![0u32; layout.num_slots()];
    let mut mask = vec![false; layout.num_slots()];
    let (points, dim) = (cloud.points(), cloud.dim());
    let (idx, msk) = (&mut indices[..], &mut mask[..]);
    with_level!(isa, |level| match T::DTYPE {
        DType::F32 => with_dim!(dim, build_batches::<f32, _>(level, bytemuck::cast_slice(points), &layout, idx, msk)),
        DType::F64 => with_dim!(dim, build_batches::<f64, _>(level, bytemuck::cast_slice(points), &layout, idx, msk)),
        _ => unreachable!("Real is f32 or f64"),
    });
    Ok(BallTree::from_built_parts(layout, indices, mask))
}

/// Erwin's `partition_balltree`: splits every batch of `cloud` `target_level` times (a
/// node of one point is not split) and lists the points group by group, without
/// padding. See [`crate::partition`].
///
/// # Errors
/// None beyond the cloud's own validation; the `Result` leaves room for executors.
pub fn partition<T: Real>(cloud: &PointCloud<'_, T>, target_level: u32) -> Result<Partition> {
    let batches = cloud.batches();
    let levels = vec![target_level; batches.len()];
    let order = partition_rows(cloud.points(), cloud.dim(), batches.offsets(), &levels);
    Ok(Partition::new(order, batches, target_level))
}

/// Partitions row-major `points` of `dim` coordinates, batch `b` (points
/// `offsets[b]..offsets[b + 1]`) `levels[b]` times; returns the global point order.
pub(crate) fn partition_rows<T: Real>(points: &[T], dim: usize, offsets: &[u32], levels: &[u32]) -> Vec<u32> {
    let n = offsets[offsets.len() - 1] as usize;
    let mut order = vec![0u32; n];
    match T::DTYPE {
        DType::F32 => {
            with_dim!(dim, partition_batches::<f32>(bytemuck::cast_slice(points), offsets, levels, &mut order));
        }
        DType::F64 => {
            with_dim!(dim, partition_batches::<f64>(bytemuck::cast_slice(points), offsets, levels, &mut order));
        }
        _ => unreachable!("Real is f32 or f64"),
    }
    order
}

fn build_batches<C: Coord, const N: usize, L: Level>(
    level: L,
    points: &[C],
    layout: &TreeLayout,
    indices: &mut [u32],
    mask: &mut [bool],
) {
    let slots = || layout.slot_offsets().windows(2).map(|w| (w[1] - w[0]) as usize);
    let idx = cut(indices, slots());
    let msk = cut(mask, slots());
    if layout.depths().len() >= rayon::current_num_threads() {
        build_each_batch::<C, N, L>(level, points, layout, idx, msk);
        return;
    }
    let mut records = recurse::records::<C, N>(points, 0);
    let mut spare = recurse::spare::<C, N>(records.len());
    let sizes = layout.sizes();
    let sizes = || sizes.iter().map(|&s| s as usize);
    let recs = cut(&mut records, sizes());
    let spares = cut(&mut spare, sizes());
    recs.into_par_iter().zip(spares).zip(idx).zip(msk).zip(layout.depths().par_iter()).for_each(
        |((((r, s), i), m), &depth)| {
            let bounds = select::bounds::<C, N>(r);
            level.build_node::<C, N>(Node { records: r, spare: s, indices: i, mask: m, levels: depth }, &bounds);
        },
    );
}

/// Builds every batch as one task on one thread (with a batch per thread or more). All
/// threads of the pool start at once (`rayon::broadcast`) and take batches in order from
/// a shared counter, as an OpenMP dynamic schedule does; splitting a parallel iterator
/// instead wakes the threads in a cascade of `log2(threads)` wake-ups, which was most
/// of a 16 x 1024 build on 16 cores. Batches still share their subtrees (from 256
/// records) through `rayon::join`, so a thread out of batches helps the slowest.
fn build_each_batch<C: Coord, const N: usize, L: Level>(
    level: L,
    points: &[C],
    layout: &TreeLayout,
    idx: Vec<&mut [u32]>,
    msk: Vec<&mut [bool]>,
) {
    let outputs: Vec<_> = idx.into_iter().zip(msk).map(|out| Mutex::new(Some(out))).collect();
    let next = AtomicUsize::new(0);
    let offsets = layout.batches().offsets();
    rayon::broadcast(|_| {
        loop {
            let b = next.fetch_add(1, Ordering::Relaxed);
            let Some(output) = outputs.get(b) else { return };
            let taken = output.lock().unwrap_or_else(PoisonError::into_inner).take();
            let (i, m) = taken.expect("the counter hands out each batch once");
            let (start, end) = (offsets[b] as usize, offsets[b + 1] as usize);
            with_scratch::<C::Key, N>(2 * (end - start), |scratch| {
                let (records, spare) = scratch.split_at_mut(end - start);
                let node = Node { records, spare, indices: i, mask: m, levels: layout.depths()[b] };
                level.build_batch::<C, N>(node, &points[start * (N - 1)..end * (N - 1)], start as u32);
            });
        }
    });
}

thread_local! {
    /// Each thread's scratch for batch builds, kept between builds: allocating and
    /// freeing it per batch made glibc return the memory to the kernel and fault it back
    /// in, which on a virtual machine cost as much as building a batch of 1024 points.
    /// Grows to the largest batch a thread has built (two records per point), up to
    /// [`SCRATCH_KEPT_MAX`].
    static SCRATCH: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// The most scratch a thread keeps between builds: 64 MiB (a batch of a million 3D f64
/// points). Larger batches get a buffer of their own, freed after their build, whose
/// allocation is small next to their work.
const SCRATCH_KEPT_MAX: usize = 64 << 20;

/// Runs `f` on `len` records of scratch: this thread's [`SCRATCH`], or a fresh buffer
/// for a batch above [`SCRATCH_KEPT_MAX`] or when [`SCRATCH`] is in use further up this
/// thread's stack (a build nested in a build, where a thread waiting in `rayon::join`
/// runs another build's task).
fn with_scratch<K: bytemuck::Pod, const N: usize>(len: usize, f: impl FnOnce(&mut [Record<K, N>])) {
    let words = (len * size_of::<Record<K, N>>()).div_ceil(size_of::<u64>());
    let run = |buf: &mut Vec<u64>| {
        if buf.len() < words {
            buf.resize(words, 0);
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf[..words]);
        let lanes: &mut [[K; N]] = bytemuck::cast_slice_mut(&mut bytes[..len * size_of::<Record<K, N>>()]);
        f(Record::wrap_slice_mut(lanes));
    };
    if words * size_of::<u64>() > SCRATCH_KEPT_MAX {
        return run(&mut Vec::new());
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => run(&mut buf),
        Err(_) => run(&mut Vec::new()),
    });
}

fn partition_batches<C: Coord, const N: usize>(points: &[C], offsets: &[u32], levels: &[u32], order: &mut [u32]) {
    let mut records = recurse::records::<C, N>(points, 0);
    let sizes = || offsets.windows(2).map(|w| (w[1] - w[0]) as usize);
    let recs = cut(&mut records, sizes());
    let outs = cut(order, sizes());
    recs.into_par_iter().zip(outs).zip(levels.par_iter()).for_each(|((r, o), &level)| {
        recurse::partition_node::<C, N>(r, o, level);
    });
}
