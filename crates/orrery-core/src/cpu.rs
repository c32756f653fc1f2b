//! The CPU executor: rayon on the host's cores.
//!
//! It is the embedded default (no driver, no device) and the reference every GPU
//! kernel is tested against, so each primitive here is written for clarity of its
//! contract first and speed second — but it is a real product, benchmarked against the
//! CPU anchors, not a slow oracle:
//!
//! - the radix sort finds the key bits that vary, splits the pairs in one parallel MSD
//!   pass over DRAM into buckets that fit a core's cache, and sorts each bucket on one
//!   thread in cache (LSD on its own varying bits, another MSD pass, or an insertion
//!   sort for tiny buckets), so each pair crosses DRAM about twice (see
//!   `cpu/radix/mod.rs` and ADR 0015);
//! - scans and compactions run in cache-sized super-blocks (sum or count every block,
//!   scan the block sums, write every block while it is still cached), so DRAM sees
//!   each input read once and each output written once (see `cpu/scan.rs`);
//! - floating-point reductions are reproducible: fixed tiles of [`REDUCE_TILE`]
//!   elements, each summed left to right, then the tile results left to right, so the
//!   result does not depend on the number of threads.
//!
//! The CPU executor runs every operation when it is called (its "stream" is the calling
//! thread): events and forks are trivial, [`Executor::read_async`] copies at once, and
//! [`Executor::record`] is unsupported (a CPU algorithm is the replay).

mod isa;
mod keep_warm;
mod radix;
mod scan;
mod segmented;

pub use isa::{CpuIsa, MAX_CPU_ISA_ENV};
pub use keep_warm::DEFAULT_SPIN;

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::element::{Element, Real, Storage};
use crate::error::{Error, Result};
use crate::executor::{
    DeviceBuffer, DeviceCount, DeviceLimits, Executor, ExecutorKind, Order, ReduceOp, Reserve, ScanKind, ViewMutOf,
    ViewOf, check_compact, check_len, check_range, check_sfc_keys, check_sort_pairs, grown_capacity,
};
use crate::sfc::KeyMapper;
use crate::view::{View, ViewMut};

/// Elements per tile of a reproducible reduction (independent of the thread count).
pub const REDUCE_TILE: usize = 1 << 14;

/// Elements per chunk of the chunk-parallel copy, fill and histogram. Large enough that
/// per-chunk bookkeeping is negligible, small enough to balance 16+ cores on a million
/// elements.
const CHUNK: usize = 1 << 16;

/// A host array owned by the CPU executor.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuBuffer<T: Storage> {
    data: Vec<T>,
}

impl<T: Storage> CpuBuffer<T> {
    /// Wraps a vector without copying.
    pub fn from_vec(data: Vec<T>) -> Self {
        Self { data }
    }

    /// The elements.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements, mutably (CPU algorithms work on them directly).
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// Unwraps the vector.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
}

impl<T: Storage> DeviceBuffer<T> for CpuBuffer<T> {
    fn len(&self) -> usize {
        self.data.len()
    }

    fn capacity(&self) -> usize {
        self.data.capacity()
    }
}

/// The rayon executor. Cheap to clone (clones share the pool); by default it runs on
/// rayon's global pool.
///
/// An executor with its own pool ([`CpuExecutor::with_threads`]) can keep the pool's
/// threads spinning after each outermost [`CpuExecutor::install`] (as OpenMP's threads
/// do between parallel regions), so a caller that runs many short parallel calls in a
/// row does not pay for waking sleeping threads each time. It is opt-in
/// ([`CpuExecutor::with_spin`], e.g. with [`DEFAULT_SPIN`]): a spinning pool costs idle
/// CPU time in the user's process (ADR 0008). The global pool is shared with the rest of
/// the process and keeps rayon's own behaviour.
///
/// The sort keeps its scratch (12 bytes per pair of the largest sort so far) between
/// calls, as the GPU executors keep theirs, so that repeated sorts (a tree rebuilt every
/// step) take no page faults; [`Executor::reserve`] grows it ahead. Clones share it,
/// and it is freed with the last clone. A sort that finds it in use by a concurrent
/// sort on another thread takes a fresh scratch for that call.
#[derive(Debug, Clone, Default)]
pub struct CpuExecutor {
    pool: Option<Arc<keep_warm::OwnedPool>>,
    spin: Duration,
    sort_scratch: Arc<Mutex<radix::Scratch>>,
}

impl CpuExecutor {
    /// An executor on rayon's global thread pool.
    pub fn new() -> Self {
        Self { pool: None, spin: Duration::ZERO, sort_scratch: Arc::default() }
    }

    /// An executor on its own pool of `threads` threads. Its threads sleep when idle, as
    /// rayon's do; [`CpuExecutor::with_spin`] keeps them spinning after each call.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `threads` is 0 or the pool cannot be created.
    pub fn with_threads(threads: usize) -> Result<Self> {
        if threads == 0 {
            return Err(Error::InvalidArgument { what: "threads", reason: "must be at least 1".into() });
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::InvalidArgument { what: "threads", reason: e.to_string() })?;
        Ok(Self { pool: Some(keep_warm::OwnedPool::new(pool)), spin: Duration::ZERO, sort_scratch: Arc::default() })
    }

    /// The same pool, its threads spinning for `spin` after each outermost
    /// [`CpuExecutor::install`] through this executor (`Duration::ZERO`: they sleep as
    /// soon as rayon lets them). Clones share the pool and keep their own setting; a
    /// pool with more threads than the machine has cores never spins.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `spin` is not zero for an executor on the global
    /// pool, which is shared with the rest of the process (spinning needs a pool of its
    /// own, [`CpuExecutor::with_threads`]).
    pub fn with_spin(self, spin: Duration) -> Result<Self> {
        if self.pool.is_none() && !spin.is_zero() {
            return Err(Error::InvalidArgument {
                what: "spin",
                reason: "the global rayon pool is shared; spinning needs an executor with its own pool \
                         (CpuExecutor::with_threads)"
                    .into(),
            });
        }
        Ok(Self { spin, ..self })
    }

    /// How long the pool's threads spin after each call through this executor (zero
    /// when they do not).
    pub fn spin(&self) -> Duration {
        self.pool.as_ref().map_or(Duration::ZERO, |p| p.effective_spin(self.spin))
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.as_ref().map_or_else(rayon::current_num_threads, |p| p.threads())
    }

    /// The kept sort scratch, or `None` while a concurrent sort holds it (a sort that
    /// panicked leaves only scratch behind, so a poisoned lock is taken as it is).
    fn sort_scratch(&self) -> Option<MutexGuard<'_, radix::Scratch>> {
        match self.sort_scratch.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Runs `f` inside this executor's pool (on the calling thread for the global pool
    /// or when already on one of the pool's threads).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(self.spin, f),
            None => f(),
        }
    }
}

fn zeroed_vec<T: Storage>(len: usize) -> Vec<T> {
    // Pod types are valid when zeroed; `alloc_zeroed` lets the OS hand out fresh pages
    // lazily, which is the CPU's version of "do not initialise what the next kernel
    // overwrites".
    bytemuck::zeroed_vec(len)
}

/// The slice a view names.
fn host<T: Storage>(view: View<'_, T, CpuBuffer<T>>) -> &[T] {
    &view.buffer().data[view.range()]
}

/// The slice a writable view names.
fn host_mut<T: Storage>(view: ViewMut<'_, T, CpuBuffer<T>>) -> &mut [T] {
    let (buffer, range) = view.into_parts();
    &mut buffer.data[range]
}

/// The live length of a device count: `min(slot, bound)`.
fn live(count: &DeviceCount<'_, CpuExecutor>) -> usize {
    (host(count.slot())[0] as usize).min(count.bound())
}

/// A copy already made: the CPU's [`Executor::Pending`].
#[derive(Debug)]
pub struct CpuPending<T>(Vec<T>);

impl Executor for CpuExecutor {
    type Buffer<T: Storage> = CpuBuffer<T>;
    type Marker = Instant;
    type Pending<T: Storage> = CpuPending<T>;
    type Event = ();
    type Recording = ();

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Cpu
    }

    /// `cpu:rayon (T threads, ISA[, spin S us])`: the pool, the instruction-set level
    /// CPU kernels run at ([`CpuIsa::active`]), and the keep-warm spin when not zero.
    fn name(&self) -> String {
        let isa = CpuIsa::active().map_or_else(|_| format!("invalid {MAX_CPU_ISA_ENV}"), |isa| isa.to_string());
        match self.spin().as_micros() {
            0 => format!("cpu:rayon ({} threads, {isa})", self.threads()),
            us => format!("cpu:rayon ({} threads, {isa}, spin {us} us)", self.threads()),
        }
    }

    fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            subgroup_size: None,
            max_threads_per_block: 1,
            max_shared_bytes_per_block: 0,
            compute_units: self.threads() as u32,
            f64: true,
            max_buffer_bytes: isize::MAX as u64,
            view_alignment: 1,
            max_blocks: 0,
            replay: false,
        }
    }

    fn alloc<T: Storage>(&self, len: usize) -> Result<CpuBuffer<T>> {
        Ok(CpuBuffer { data: zeroed_vec(len) })
    }

    fn upload<T: Storage>(&self, data: &[T]) -> Result<CpuBuffer<T>> {
        Ok(CpuBuffer { data: data.to_vec() })
    }

    fn write<T: Storage>(&self, dst: &mut CpuBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        check_range("write destination", dst.len(), offset, data.len())?;
        dst.data[offset..offset + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn read<T: Storage>(&self, src: &CpuBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        check_range("read source", src.len(), offset, out.len())?;
        out.copy_from_slice(&src.data[offset..offset + out.len()]);
        Ok(())
    }

    fn read_async<'a, T: Storage>(&self, src: impl Into<ViewOf<'a, Self, T>>) -> Result<CpuPending<T>> {
        Ok(CpuPending(host(src.into()).to_vec()))
    }

    fn wait<T: Storage>(&self, pending: CpuPending<T>) -> Result<Vec<T>> {
        Ok(pending.0)
    }

    fn resize<T: Storage>(&self, buf: &mut CpuBuffer<T>, len: usize) -> Result<()> {
        if len > buf.data.capacity() {
            buf.data.reserve_exact(grown_capacity(len) - buf.data.len());
        }
        buf.data.resize(len, T::zeroed());
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn mark(&self) -> Result<Instant> {
        Ok(Instant::now())
    }

    fn elapsed(&self, start: &Instant, end: &Instant) -> Result<Duration> {
        Ok(end.saturating_duration_since(*start))
    }

    fn fork(&self) -> Result<Self> {
        Ok(self.clone())
    }

    fn signal(&self) -> Result<()> {
        Ok(())
    }

    fn wait_for(&self, _event: &()) -> Result<()> {
        Ok(())
    }

    /// Grows the kept sort scratch to `reserve.sort_pairs` pairs and writes its pages
    /// (the other primitives keep no scratch).
    fn reserve(&self, reserve: &Reserve) -> Result<()> {
        if reserve.sort_pairs > 1 {
            self.install(|| {
                if let Some(mut scratch) = self.sort_scratch() {
                    scratch.reserve(reserve.sort_pairs);
                }
            });
        }
        Ok(())
    }

    fn record(&self, _body: &mut dyn FnMut() -> Result<()>) -> Result<()> {
        Err(crate::executor::unsupported(
            &self.name(),
            "record",
            "the CPU executor runs each call at once; CPU algorithms call their passes directly",
        ))
    }

    fn replay(&self, _recording: &()) -> Result<()> {
        Err(crate::executor::unsupported(&self.name(), "replay", "the CPU executor records nothing"))
    }

    fn copy<'a, T: Storage>(
        &self,
        src: impl Into<ViewOf<'a, Self, T>>,
        dst: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (src, dst) = (host(src.into()), host_mut(dst.into()));
        check_len("copy destination", src.len(), dst.len())?;
        self.install(|| {
            dst.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
        });
        Ok(())
    }

    fn fill<'a, T: Storage>(&self, dst: impl Into<ViewMutOf<'a, Self, T>>, value: T) -> Result<()> {
        let dst = host_mut(dst.into());
        self.install(|| dst.par_chunks_mut(CHUNK).for_each(|c| c.fill(value)));
        Ok(())
    }

    fn iota<'a>(&self, dst: impl Into<ViewMutOf<'a, Self, u32>>, start: u32) -> Result<()> {
        let dst = host_mut(dst.into());
        self.install(|| {
            dst.par_iter_mut().enumerate().for_each(|(i, v)| *v = start.wrapping_add(i as u32));
        });
        Ok(())
    }

    fn gather<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, indices, output) = (host(input.into()), host(indices.into()), host_mut(output.into()));
        check_len("gather output", indices.len(), output.len())?;
        crate::executor::check_indices("gather indices", indices, input.len())?;
        self.install(|| {
            output.par_iter_mut().zip(indices.par_iter()).for_each(|(o, &i)| *o = input[i as usize]);
        });
        Ok(())
    }

    fn scatter<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, indices, output) = (host(input.into()), host(indices.into()), host_mut(output.into()));
        check_len("scatter indices", input.len(), indices.len())?;
        crate::executor::check_indices("scatter indices", indices, output.len())?;
        self.install(|| scatter(input, indices, output));
        Ok(())
    }

    fn sort_pairs<'a>(
        &self,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
        values: impl Into<ViewMutOf<'a, Self, u32>>,
        bits: Range<u32>,
    ) -> Result<()> {
        let (keys, values) = (host_mut(keys.into()), host_mut(values.into()));
        check_sort_pairs(keys.len(), values.len(), &bits)?;
        self.install(|| match self.sort_scratch() {
            Some(mut scratch) => radix::sort_pairs(keys, values, bits, &mut scratch),
            None => radix::sort_pairs(keys, values, bits, &mut radix::Scratch::default()),
        });
        Ok(())
    }

    fn lower_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (sorted, queries, output) = (host(sorted.into()), host(queries.into()), host_mut(output.into()));
        segmented::bounds(self, sorted, queries, output, crate::executor::lower_bound_one)
    }

    fn upper_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (sorted, queries, output) = (host(sorted.into()), host(queries.into()), host_mut(output.into()));
        segmented::bounds(self, sorted, queries, output, crate::executor::upper_bound_one)
    }

    fn segmented_top_k<'a, T: Element>(
        &self,
        keys: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        k: u32,
        order: Order,
        indices: impl Into<ViewMutOf<'a, Self, u32>>,
        top_keys: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (keys, offsets) = (host(keys.into()), host(offsets.into()));
        let (indices, top_keys) = (host_mut(indices.into()), host_mut(top_keys.into()));
        segmented::top_k(self, keys, offsets, k, order, indices, top_keys)
    }

    fn histogram<'a>(
        &self,
        values: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        segmented::histogram(self, host(values.into()), host_mut(output.into()))
    }

    fn exclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, output) = (host(input.into()), host_mut(output.into()));
        check_len("scan output", input.len() + 1, output.len())?;
        self.install(|| scan::exclusive_scan(input, output));
        Ok(())
    }

    fn exclusive_scan_counted<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, output) = (host(input.into()), host_mut(output.into()));
        check_len("counted scan input", count.bound(), input.len())?;
        check_len("counted scan output", count.bound() + 1, output.len())?;
        let n = live(&count);
        self.install(|| scan::exclusive_scan(&input[..n], &mut output[..=n]));
        Ok(())
    }

    fn inclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, output) = (host(input.into()), host_mut(output.into()));
        check_len("inclusive scan output", input.len(), output.len())?;
        self.install(|| scan::inclusive_scan(input, output));
        Ok(())
    }

    fn segmented_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        kind: ScanKind,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, offsets, output) = (host(input.into()), host(offsets.into()), host_mut(output.into()));
        segmented::scan(self, input, offsets, kind, output)
    }

    fn reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, output) = (host(input.into()), host_mut(output.into()));
        check_len("reduction output", 1, output.len())?;
        output[0] = self.install(|| reduce(input, op));
        Ok(())
    }

    fn segmented_reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let (input, offsets, output) = (host(input.into()), host(offsets.into()), host_mut(output.into()));
        segmented::reduce(self, input, offsets, op, output)
    }

    fn compact<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, flags) = (host(input.into()), host(flags.into()));
        let (output, count) = (host_mut(output.into()), host_mut(count.into()));
        check_compact(input.len(), flags.len(), output.len(), count.len())?;
        count[0] = self.install(|| scan::compact(input, flags, output));
        Ok(())
    }

    fn compact_counted<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        live_count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let (input, flags) = (host(input.into()), host(flags.into()));
        let (output, count) = (host_mut(output.into()), host_mut(count.into()));
        check_len("counted compaction input", live_count.bound(), input.len())?;
        check_compact(input.len(), flags.len(), output.len(), count.len())?;
        let n = live(&live_count);
        count[0] = self.install(|| scan::compact(&input[..n], &flags[..n], &mut output[..n]));
        Ok(())
    }

    fn sfc_keys<'a, T: Real>(
        &self,
        x: impl Into<ViewOf<'a, Self, T>>,
        y: impl Into<ViewOf<'a, Self, T>>,
        z: impl Into<ViewOf<'a, Self, T>>,
        mapper: &KeyMapper<T, u64>,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
    ) -> Result<()> {
        let (x, y, z, keys) = (host(x.into()), host(y.into()), host(z.into()), host_mut(keys.into()));
        check_sfc_keys(x.len(), y.len(), z.len(), keys.len())?;
        self.install(|| {
            keys.par_chunks_mut(4096).enumerate().for_each(|(c, out)| {
                let base = c * 4096;
                for (j, k) in out.iter_mut().enumerate() {
                    let i = base + j;
                    *k = mapper.key_clamped(x[i], y[i], z[i]);
                }
            });
        });
        Ok(())
    }
}

/// Reproducible reduction: fixed tiles reduced left to right, then the tile results.
pub(crate) fn reduce<T: Element>(input: &[T], op: ReduceOp) -> T {
    let tiles: Vec<T> = input
        .par_chunks(REDUCE_TILE)
        .map(|tile| tile.iter().fold(op.identity::<T>(), |a, &v| op.apply(a, v)))
        .collect();
    tiles.into_iter().fold(op.identity::<T>(), |a, v| op.apply(a, v))
}

/// `output[indices[i]] = input[i]` in parallel. Indices are in bounds (checked by the
/// caller). Duplicate indices are a caller error; they must not be undefined behaviour
/// here, so the stores go through atomics (relaxed: plain stores on x86-64 and AArch64,
/// as fast as a non-atomic write): of the element's width for 4- and 8-byte elements,
/// word by word for other multiples of 4 bytes with 4-byte alignment (a duplicate then
/// leaves some mixture of the candidates' words, still no UB), and sequentially for the
/// rest.
fn scatter<T: Storage>(input: &[T], indices: &[u32], output: &mut [T]) {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    if size == 4 && align >= 4 {
        let out = atomic_view_u32(bytemuck::cast_slice_mut(output));
        let src: &[u32] = bytemuck::cast_slice(input);
        src.par_iter().zip(indices.par_iter()).for_each(|(&v, &i)| out[i as usize].store(v, Ordering::Relaxed));
    } else if size == 8 && align >= 8 {
        let out = atomic_view_u64(bytemuck::cast_slice_mut(output));
        let src: &[u64] = bytemuck::cast_slice(input);
        src.par_iter().zip(indices.par_iter()).for_each(|(&v, &i)| out[i as usize].store(v, Ordering::Relaxed));
    } else if size.is_multiple_of(4) && align >= 4 && size > 0 {
        let words = size / 4;
        let out = atomic_view_u32(bytemuck::cast_slice_mut(output));
        let src: &[u32] = bytemuck::cast_slice(input);
        src.par_chunks(words).zip(indices.par_iter()).for_each(|(v, &i)| {
            for (w, &word) in v.iter().enumerate() {
                out[i as usize * words + w].store(word, Ordering::Relaxed);
            }
        });
    } else {
        for (&v, &i) in input.iter().zip(indices) {
            output[i as usize] = v;
        }
    }
}

fn atomic_view_u32(s: &mut [u32]) -> &[AtomicU32] {
    // SAFETY: AtomicU32 has the same size and alignment as u32, and the exclusive
    // borrow guarantees no non-atomic access for the returned lifetime.
    unsafe { &*(std::ptr::from_mut::<[u32]>(s) as *const [AtomicU32]) }
}

fn atomic_view_u64(s: &mut [u64]) -> &[AtomicU64] {
    // SAFETY: AtomicU64 has the same size as u64; on the 64-bit targets orrery supports
    // its alignment is also 8, and the exclusive borrow rules out non-atomic access.
    unsafe { &*(std::ptr::from_mut::<[u64]>(s) as *const [AtomicU64]) }
}
