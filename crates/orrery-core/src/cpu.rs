//! The CPU executor: rayon on the host's cores.
//!
//! It is the embedded default (no driver, no device) and the reference every GPU
//! kernel is tested against, so each primitive here is written for clarity of its
//! contract first and speed second — but it is a real product, benchmarked against the
//! CPU anchors, not a slow oracle:
//!
//! - the radix sort is a chunk-parallel LSD sort on 8-bit digits that skips digit
//!   passes whose digit is the same for every key (see [`radix`]);
//! - scans and compactions are two-pass chunk-parallel (count, scan the chunk sums,
//!   write), so each touches the data twice at most;
//! - floating-point reductions are reproducible: fixed tiles of [`REDUCE_TILE`]
//!   elements, each summed left to right, then the tile results left to right, so the
//!   result does not depend on the number of threads.

mod isa;
mod keep_warm;
mod radix;

pub use isa::{CpuIsa, MAX_CPU_ISA_ENV};
pub use keep_warm::DEFAULT_SPIN;

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::element::{Element, Real};
use crate::error::{Error, Result};
use crate::executor::{
    DeviceBuffer, Executor, ExecutorKind, ReduceOp, check_compact, check_len, check_range, check_sfc_keys,
    check_sort_pairs, grown_capacity,
};
use crate::sfc::KeyMapper;

/// Elements per tile of a reproducible reduction (independent of the thread count).
pub const REDUCE_TILE: usize = 1 << 14;

/// Elements per chunk of the chunk-parallel scan, compaction and sort passes. Large
/// enough that per-chunk bookkeeping is negligible, small enough to balance 16+ cores
/// on a million elements.
const CHUNK: usize = 1 << 16;

/// A host array owned by the CPU executor.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuBuffer<T: Element> {
    data: Vec<T>,
}

impl<T: Element> CpuBuffer<T> {
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

impl<T: Element> DeviceBuffer<T> for CpuBuffer<T> {
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
/// An executor with its own pool ([`CpuExecutor::with_threads`]) keeps the pool's
/// threads spinning for [`DEFAULT_SPIN`] after each outermost [`CpuExecutor::install`]
/// (as OpenMP's threads do between parallel regions), so a caller that runs many short
/// parallel calls in a row does not pay for waking sleeping threads each time; see
/// [`CpuExecutor::with_spin`] and ADR 0008. The global pool is shared with the rest of
/// the process and keeps rayon's own behaviour.
#[derive(Debug, Clone, Default)]
pub struct CpuExecutor {
    pool: Option<Arc<keep_warm::OwnedPool>>,
    spin: Duration,
}

impl CpuExecutor {
    /// An executor on rayon's global thread pool.
    pub fn new() -> Self {
        Self { pool: None, spin: Duration::ZERO }
    }

    /// An executor on its own pool of `threads` threads, which spin for
    /// [`DEFAULT_SPIN`] after each call (not when `threads` exceeds the machine's cores).
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
        Ok(Self { pool: Some(keep_warm::OwnedPool::new(pool)), spin: DEFAULT_SPIN })
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

    /// Runs `f` inside this executor's pool (on the calling thread for the global pool
    /// or when already on one of the pool's threads).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(pool) => pool.install(self.spin, f),
            None => f(),
        }
    }
}

fn zeroed_vec<T: Element>(len: usize) -> Vec<T> {
    // Pod types are valid when zeroed; `alloc_zeroed` lets the OS hand out fresh pages
    // lazily, which is the CPU's version of "do not initialise what the next kernel
    // overwrites".
    bytemuck::zeroed_vec(len)
}

impl Executor for CpuExecutor {
    type Buffer<T: Element> = CpuBuffer<T>;
    type Marker = Instant;

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

    fn alloc<T: Element>(&self, len: usize) -> Result<CpuBuffer<T>> {
        Ok(CpuBuffer { data: zeroed_vec(len) })
    }

    fn upload<T: Element>(&self, data: &[T]) -> Result<CpuBuffer<T>> {
        Ok(CpuBuffer { data: data.to_vec() })
    }

    fn write<T: Element>(&self, dst: &mut CpuBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        check_range("write destination", dst.len(), offset, data.len())?;
        dst.data[offset..offset + data.len()].copy_from_slice(data);
        Ok(())
    }

    fn read<T: Element>(&self, src: &CpuBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        check_range("read source", src.len(), offset, out.len())?;
        out.copy_from_slice(&src.data[offset..offset + out.len()]);
        Ok(())
    }

    fn resize<T: Element>(&self, buf: &mut CpuBuffer<T>, len: usize) -> Result<()> {
        if len > buf.data.capacity() {
            buf.data.reserve_exact(grown_capacity(len) - buf.data.len());
        }
        buf.data.resize(len, T::ZERO);
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

    fn copy<T: Element>(&self, src: &CpuBuffer<T>, dst: &mut CpuBuffer<T>) -> Result<()> {
        check_len("copy destination", src.len(), dst.len())?;
        self.install(|| {
            dst.data.par_chunks_mut(CHUNK).zip(src.data.par_chunks(CHUNK)).for_each(|(d, s)| d.copy_from_slice(s));
        });
        Ok(())
    }

    fn fill<T: Element>(&self, buf: &mut CpuBuffer<T>, value: T) -> Result<()> {
        self.install(|| buf.data.par_chunks_mut(CHUNK).for_each(|c| c.fill(value)));
        Ok(())
    }

    fn iota(&self, buf: &mut CpuBuffer<u32>, start: u32) -> Result<()> {
        self.install(|| {
            buf.data.par_iter_mut().enumerate().for_each(|(i, v)| *v = start.wrapping_add(i as u32));
        });
        Ok(())
    }

    fn sort_pairs(&self, keys: &mut CpuBuffer<u64>, values: &mut CpuBuffer<u32>, bits: Range<u32>) -> Result<()> {
        check_sort_pairs(keys.len(), values.len(), &bits)?;
        self.install(|| radix::sort_pairs(&mut keys.data, &mut values.data, bits));
        Ok(())
    }

    fn exclusive_scan(&self, input: &CpuBuffer<u32>, output: &mut CpuBuffer<u32>) -> Result<()> {
        check_len("scan output", input.len() + 1, output.len())?;
        self.install(|| exclusive_scan(&input.data, &mut output.data));
        Ok(())
    }

    fn reduce<T: Element>(&self, input: &CpuBuffer<T>, op: ReduceOp, output: &mut CpuBuffer<T>) -> Result<()> {
        check_len("reduction output", 1, output.len())?;
        output.data[0] = self.install(|| reduce(&input.data, op));
        Ok(())
    }

    fn compact<T: Element>(
        &self,
        input: &CpuBuffer<T>,
        flags: &CpuBuffer<u32>,
        output: &mut CpuBuffer<T>,
        count: &mut CpuBuffer<u32>,
    ) -> Result<()> {
        check_compact(input.len(), flags.len(), output.len(), count.len())?;
        count.data[0] = self.install(|| compact(&input.data, &flags.data, &mut output.data));
        Ok(())
    }

    fn gather<T: Element>(
        &self,
        input: &CpuBuffer<T>,
        indices: &CpuBuffer<u32>,
        output: &mut CpuBuffer<T>,
    ) -> Result<()> {
        check_len("gather output", indices.len(), output.len())?;
        crate::executor::check_indices("gather indices", &indices.data, input.len())?;
        self.install(|| {
            output.data.par_iter_mut().zip(indices.data.par_iter()).for_each(|(o, &i)| *o = input.data[i as usize]);
        });
        Ok(())
    }

    fn scatter<T: Element>(
        &self,
        input: &CpuBuffer<T>,
        indices: &CpuBuffer<u32>,
        output: &mut CpuBuffer<T>,
    ) -> Result<()> {
        check_len("scatter indices", input.len(), indices.len())?;
        crate::executor::check_indices("scatter indices", &indices.data, output.len())?;
        self.install(|| scatter(&input.data, &indices.data, &mut output.data));
        Ok(())
    }

    fn sfc_keys<T: Real>(
        &self,
        x: &CpuBuffer<T>,
        y: &CpuBuffer<T>,
        z: &CpuBuffer<T>,
        mapper: &KeyMapper<T, u64>,
        keys: &mut CpuBuffer<u64>,
    ) -> Result<()> {
        check_sfc_keys(x.len(), y.len(), z.len(), keys.len())?;
        self.install(|| {
            keys.data.par_chunks_mut(4096).enumerate().for_each(|(c, out)| {
                let base = c * 4096;
                for (j, k) in out.iter_mut().enumerate() {
                    let i = base + j;
                    *k = mapper.key_clamped(x.data[i], y.data[i], z.data[i]);
                }
            });
        });
        Ok(())
    }
}

/// Chunk-parallel exclusive scan into CSR-offsets form (`out.len() == input.len() + 1`).
fn exclusive_scan(input: &[u32], out: &mut [u32]) {
    let sums: Vec<u32> = input.par_chunks(CHUNK).map(|c| c.iter().fold(0u32, |a, &v| a.wrapping_add(v))).collect();
    let mut carry = 0u32;
    let starts: Vec<u32> = sums
        .iter()
        .map(|&s| {
            let start = carry;
            carry = carry.wrapping_add(s);
            start
        })
        .collect();
    let total = carry;
    let (body, last) = out.split_at_mut(input.len());
    last[0] = total;
    body.par_chunks_mut(CHUNK).zip(input.par_chunks(CHUNK)).zip(starts.par_iter()).for_each(|((o, i), &start)| {
        let mut acc = start;
        for (dst, &v) in o.iter_mut().zip(i) {
            *dst = acc;
            acc = acc.wrapping_add(v);
        }
    });
}

/// Reproducible reduction: fixed tiles reduced left to right, then the tile results.
fn reduce<T: Element>(input: &[T], op: ReduceOp) -> T {
    let tiles: Vec<T> = input
        .par_chunks(REDUCE_TILE)
        .map(|tile| tile.iter().fold(op.identity::<T>(), |a, &v| op.apply(a, v)))
        .collect();
    tiles.into_iter().fold(op.identity::<T>(), |a, v| op.apply(a, v))
}

/// Order-preserving compaction; returns the number of selected elements.
fn compact<T: Element>(input: &[T], flags: &[u32], output: &mut [T]) -> u32 {
    let counts: Vec<usize> = flags.par_chunks(CHUNK).map(|c| c.iter().filter(|&&f| f != 0).count()).collect();
    let mut total = 0usize;
    let mut rest: &mut [T] = output;
    let mut pieces = Vec::with_capacity(counts.len());
    for &c in &counts {
        let (head, tail) = rest.split_at_mut(c);
        pieces.push(head);
        rest = tail;
        total += c;
    }
    pieces.into_par_iter().zip(input.par_chunks(CHUNK)).zip(flags.par_chunks(CHUNK)).for_each(|((dst, src), f)| {
        let mut k = 0;
        for (&v, &flag) in src.iter().zip(f) {
            if flag != 0 {
                dst[k] = v;
                k += 1;
            }
        }
    });
    total as u32
}

/// `output[indices[i]] = input[i]` in parallel. Indices are in bounds (checked by the
/// caller). Duplicate indices are a caller error; they must not be undefined behaviour
/// here, so the stores go through atomics of the element's width (relaxed: plain
/// stores on x86-64 and AArch64, as fast as a non-atomic write).
fn scatter<T: Element>(input: &[T], indices: &[u32], output: &mut [T]) {
    if T::DTYPE.size() == 4 {
        let out = atomic_view_u32(bytemuck::cast_slice_mut(output));
        let src: &[u32] = bytemuck::cast_slice(input);
        src.par_iter().zip(indices.par_iter()).for_each(|(&v, &i)| out[i as usize].store(v, Ordering::Relaxed));
    } else {
        let out = atomic_view_u64(bytemuck::cast_slice_mut(output));
        let src: &[u64] = bytemuck::cast_slice(input);
        src.par_iter().zip(indices.par_iter()).for_each(|(&v, &i)| out[i as usize].store(v, Ordering::Relaxed));
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
