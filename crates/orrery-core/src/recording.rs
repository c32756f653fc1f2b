//! [`RecordingExecutor`]: an executor that runs without a GPU and writes down what it is
//! asked to do, so a test can assert the launch sequence of a GPU orchestration (for
//! example: no host read inside a tree update, one status read per step).
//!
//! Memory and primitives run on the [`CpuExecutor`] it wraps, so data-dependent
//! orchestration behaves as on a device. Kernel launches are checked and logged but not
//! run (there is no CUDA or WGSL interpreter here): declarations of typed kernels are
//! checked against the module's CUDA text ([`crate::gpu::check_cuda_signature`]), so a
//! test catches a wrong declaration without a GPU. [`Executor::record`] runs its body,
//! logs it as a recording, and fails with [`Error::Recording`] when the body reads to the
//! host or synchronises, as a GPU executor would; [`Executor::replay`] logs a replay and
//! the recorded operations again (it does not recompute them).
//!
//! ```
//! use orrery_core::recording::{OpKind, RecordingExecutor};
//! use orrery_core::{DeviceCount, Executor};
//! let exec = RecordingExecutor::new();
//! let flags = exec.upload(&[1u32, 0, 1])?;
//! let count = exec.upload(&[3u32])?;
//! let mut offsets = exec.alloc::<u32>(4)?;
//! exec.take_ops();
//! let step = exec.record(&mut || exec.exclusive_scan_counted(&flags, DeviceCount::new(&count, 3)?, &mut offsets))?;
//! exec.replay(&step)?;
//! assert!(exec.take_ops().iter().all(|op| op.kind != OpKind::HostRead));
//! # Ok::<(), orrery_core::Error>(())
//! ```

use std::ops::Range;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::cpu::{CpuBuffer, CpuExecutor, CpuPending};
use crate::element::{Element, Real, Storage};
use crate::error::{Error, Result};
use crate::executor::{
    DeviceCount, DeviceLimits, Executor, ExecutorKind, Order, ReduceOp, Reserve, ScanKind, ViewMutOf, ViewOf,
};
use crate::gpu::{
    GpuExecutor, Grid, KernelArg, KernelSignature, KernelSource, LaunchConfig, check_cuda_signature, cuda_params,
};
use crate::sfc::KeyMapper;

/// What kind of operation an [`Op`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpKind {
    /// A buffer allocation (alloc, upload, a growing resize).
    Alloc,
    /// A host-to-device copy (write, upload).
    HostWrite,
    /// A blocking device-to-host copy or wait (read, download, wait, synchronize).
    HostRead,
    /// A non-blocking status read started ([`Executor::read_async`]).
    AsyncRead,
    /// A data-parallel primitive (its name is the method's).
    Primitive,
    /// A kernel launch (its name is the entry point).
    Launch,
    /// A recording was made (its detail counts the operations in it).
    Record,
    /// A recording was replayed.
    Replay,
}

/// One logged operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Its kind.
    pub kind: OpKind,
    /// The method or entry point.
    pub name: String,
    /// Sizes and the like (for messages).
    pub detail: String,
}

/// The recording executor's [`Executor::Recording`]: the operations of the body.
#[derive(Debug, Clone)]
pub struct Recorded {
    ops: Vec<Op>,
}

impl Recorded {
    /// The operations the body enqueued.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
}

/// Logs every operation and runs memory and primitives on a [`CpuExecutor`]; see the
/// module documentation.
#[derive(Debug, Default)]
pub struct RecordingExecutor {
    cpu: CpuExecutor,
    ops: Mutex<Vec<Op>>,
    recording: Mutex<Option<usize>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl RecordingExecutor {
    /// A recording executor on rayon's global pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Everything logged so far.
    pub fn ops(&self) -> Vec<Op> {
        lock(&self.ops).clone()
    }

    /// Everything logged so far, clearing the log.
    pub fn take_ops(&self) -> Vec<Op> {
        std::mem::take(&mut *lock(&self.ops))
    }

    fn log(&self, kind: OpKind, name: &str, detail: String) -> Result<()> {
        let recording = lock(&self.recording).is_some();
        if recording && matches!(kind, OpKind::HostRead | OpKind::AsyncRead | OpKind::Alloc) {
            return Err(Error::Recording {
                backend: "recording",
                reason: format!("{name} inside a recording ({kind:?} cannot be replayed)"),
            });
        }
        lock(&self.ops).push(Op { kind, name: name.to_owned(), detail });
        Ok(())
    }

    fn primitive(&self, name: &str, n: usize) -> Result<()> {
        self.log(OpKind::Primitive, name, format!("{n} elements"))
    }
}

impl Executor for RecordingExecutor {
    type Buffer<T: Storage> = CpuBuffer<T>;
    type Marker = Instant;
    type Pending<T: Storage> = CpuPending<T>;
    type Event = ();
    type Recording = Recorded;

    fn kind(&self) -> ExecutorKind {
        ExecutorKind::Cpu
    }

    fn name(&self) -> String {
        format!("recording over {}", self.cpu.name())
    }

    fn limits(&self) -> DeviceLimits {
        let mut limits = self.cpu.limits();
        limits.replay = true;
        limits.subgroup_size = Some(32);
        limits.max_threads_per_block = 1024;
        limits.max_shared_bytes_per_block = 48 * 1024;
        limits.max_blocks = u64::from(u32::MAX);
        limits
    }

    fn alloc<T: Storage>(&self, len: usize) -> Result<CpuBuffer<T>> {
        self.log(OpKind::Alloc, "alloc", format!("{len} x {}", std::any::type_name::<T>()))?;
        self.cpu.alloc(len)
    }

    fn upload<T: Storage>(&self, data: &[T]) -> Result<CpuBuffer<T>> {
        self.log(OpKind::Alloc, "upload", format!("{} elements", data.len()))?;
        self.cpu.upload(data)
    }

    fn write<T: Storage>(&self, dst: &mut CpuBuffer<T>, offset: usize, data: &[T]) -> Result<()> {
        self.log(OpKind::HostWrite, "write", format!("{} elements at {offset}", data.len()))?;
        self.cpu.write(dst, offset, data)
    }

    fn read<T: Storage>(&self, src: &CpuBuffer<T>, offset: usize, out: &mut [T]) -> Result<()> {
        self.log(OpKind::HostRead, "read", format!("{} elements at {offset}", out.len()))?;
        self.cpu.read(src, offset, out)
    }

    fn read_async<'a, T: Storage>(&self, src: impl Into<ViewOf<'a, Self, T>>) -> Result<CpuPending<T>> {
        let src = src.into();
        self.log(OpKind::AsyncRead, "read_async", format!("{} elements", src.len()))?;
        self.cpu.read_async(src)
    }

    fn wait<T: Storage>(&self, pending: CpuPending<T>) -> Result<Vec<T>> {
        self.log(OpKind::HostRead, "wait", String::new())?;
        self.cpu.wait(pending)
    }

    fn resize<T: Storage>(&self, buf: &mut CpuBuffer<T>, len: usize) -> Result<()> {
        use crate::executor::DeviceBuffer;
        if len > buf.capacity() {
            self.log(OpKind::Alloc, "resize", format!("{} -> {len}", buf.len()))?;
        }
        self.cpu.resize(buf, len)
    }

    fn synchronize(&self) -> Result<()> {
        self.log(OpKind::HostRead, "synchronize", String::new())
    }

    fn mark(&self) -> Result<Instant> {
        self.cpu.mark()
    }

    fn elapsed(&self, start: &Instant, end: &Instant) -> Result<Duration> {
        self.cpu.elapsed(start, end)
    }

    fn fork(&self) -> Result<Self> {
        Ok(Self { cpu: self.cpu.clone(), ..Self::default() })
    }

    fn signal(&self) -> Result<()> {
        Ok(())
    }

    fn wait_for(&self, _event: &()) -> Result<()> {
        Ok(())
    }

    fn reserve(&self, _reserve: &Reserve) -> Result<()> {
        Ok(())
    }

    fn record(&self, body: &mut dyn FnMut() -> Result<()>) -> Result<Recorded> {
        let start = {
            let mut rec = lock(&self.recording);
            if rec.is_some() {
                return Err(Error::Recording { backend: "recording", reason: "record inside a recording".into() });
            }
            let start = lock(&self.ops).len();
            *rec = Some(start);
            start
        };
        let outcome = body();
        *lock(&self.recording) = None;
        let ops: Vec<Op> = lock(&self.ops).drain(start..).collect();
        outcome?;
        self.log(OpKind::Record, "record", format!("{} operations", ops.len()))?;
        Ok(Recorded { ops })
    }

    fn replay(&self, recording: &Recorded) -> Result<()> {
        self.log(OpKind::Replay, "replay", format!("{} operations", recording.ops.len()))?;
        lock(&self.ops).extend(recording.ops.iter().cloned());
        Ok(())
    }

    fn copy<'a, T: Storage>(
        &self,
        src: impl Into<ViewOf<'a, Self, T>>,
        dst: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let src = src.into();
        self.primitive("copy", src.len())?;
        self.cpu.copy(src, dst)
    }

    fn fill<'a, T: Storage>(&self, dst: impl Into<ViewMutOf<'a, Self, T>>, value: T) -> Result<()> {
        let dst = dst.into();
        self.primitive("fill", dst.len())?;
        self.cpu.fill(dst, value)
    }

    fn iota<'a>(&self, dst: impl Into<ViewMutOf<'a, Self, u32>>, start: u32) -> Result<()> {
        let dst = dst.into();
        self.primitive("iota", dst.len())?;
        self.cpu.iota(dst, start)
    }

    fn gather<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let indices = indices.into();
        self.primitive("gather", indices.len())?;
        self.cpu.gather(input, indices, output)
    }

    fn scatter<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        indices: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let indices = indices.into();
        self.primitive("scatter", indices.len())?;
        self.cpu.scatter(input, indices, output)
    }

    fn sort_pairs<'a>(
        &self,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
        values: impl Into<ViewMutOf<'a, Self, u32>>,
        bits: Range<u32>,
    ) -> Result<()> {
        let keys = keys.into();
        self.primitive("sort_pairs", keys.len())?;
        self.cpu.sort_pairs(keys, values, bits)
    }

    fn lower_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let queries = queries.into();
        self.primitive("lower_bound", queries.len())?;
        self.cpu.lower_bound(sorted, queries, output)
    }

    fn upper_bound<'a, T: Element>(
        &self,
        sorted: impl Into<ViewOf<'a, Self, T>>,
        queries: impl Into<ViewOf<'a, Self, T>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let queries = queries.into();
        self.primitive("upper_bound", queries.len())?;
        self.cpu.upper_bound(sorted, queries, output)
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
        let keys = keys.into();
        self.primitive("segmented_top_k", keys.len())?;
        self.cpu.segmented_top_k(keys, offsets, k, order, indices, top_keys)
    }

    fn histogram<'a>(
        &self,
        values: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let values = values.into();
        self.primitive("histogram", values.len())?;
        self.cpu.histogram(values, output)
    }

    fn exclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("exclusive_scan", input.len())?;
        self.cpu.exclusive_scan(input, output)
    }

    fn exclusive_scan_counted<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        count: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.primitive("exclusive_scan_counted", count.bound())?;
        let count = DeviceCount::<CpuExecutor>::new(count.slot(), count.bound())?;
        self.cpu.exclusive_scan_counted(input, count, output)
    }

    fn inclusive_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("inclusive_scan", input.len())?;
        self.cpu.inclusive_scan(input, output)
    }

    fn segmented_scan<'a>(
        &self,
        input: impl Into<ViewOf<'a, Self, u32>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        kind: ScanKind,
        output: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("segmented_scan", input.len())?;
        self.cpu.segmented_scan(input, offsets, kind, output)
    }

    fn reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("reduce", input.len())?;
        self.cpu.reduce(input, op, output)
    }

    fn segmented_reduce<'a, T: Element>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        offsets: impl Into<ViewOf<'a, Self, u32>>,
        op: ReduceOp,
        output: impl Into<ViewMutOf<'a, Self, T>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("segmented_reduce", input.len())?;
        self.cpu.segmented_reduce(input, offsets, op, output)
    }

    fn compact<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let input = input.into();
        self.primitive("compact", input.len())?;
        self.cpu.compact(input, flags, output, count)
    }

    fn compact_counted<'a, T: Storage>(
        &self,
        input: impl Into<ViewOf<'a, Self, T>>,
        flags: impl Into<ViewOf<'a, Self, u32>>,
        live: DeviceCount<'a, Self>,
        output: impl Into<ViewMutOf<'a, Self, T>>,
        count: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        self.primitive("compact_counted", live.bound())?;
        let live = DeviceCount::<CpuExecutor>::new(live.slot(), live.bound())?;
        self.cpu.compact_counted(input, flags, live, output, count)
    }

    fn sfc_keys<'a, T: Real>(
        &self,
        x: impl Into<ViewOf<'a, Self, T>>,
        y: impl Into<ViewOf<'a, Self, T>>,
        z: impl Into<ViewOf<'a, Self, T>>,
        mapper: &KeyMapper<T, u64>,
        keys: impl Into<ViewMutOf<'a, Self, u64>>,
    ) -> Result<()> {
        let x = x.into();
        self.primitive("sfc_keys", x.len())?;
        self.cpu.sfc_keys(x, y, z, mapper, keys)
    }
}

impl GpuExecutor for RecordingExecutor {
    type RawBuffer = [u8];

    fn raw<T: Storage>(buf: &CpuBuffer<T>) -> &[u8] {
        bytemuck::cast_slice(buf.as_slice())
    }

    fn prepare(&self, _source: &KernelSource) -> Result<()> {
        Ok(())
    }

    fn launch_with(
        &self,
        source: &KernelSource,
        entry: &str,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        for (i, arg) in args.iter().enumerate() {
            if let KernelArg::Buffer(b) = arg
                && b.offset_bytes + b.len_bytes > b.raw.len() as u64
            {
                return Err(Error::KernelSignature {
                    module: source.name.to_owned(),
                    entry: entry.to_owned(),
                    reason: format!("argument {i} names bytes past the end of its buffer"),
                });
            }
        }
        let grid = match config.grid {
            Grid::Blocks(b) => format!("{b} blocks"),
            Grid::Indirect { max_blocks, .. } => format!("indirect, at most {max_blocks} blocks"),
        };
        self.log(
            OpKind::Launch,
            entry,
            format!(
                "{}: {grid} x {} threads, {} B shared, {} args",
                source.name,
                config.threads,
                config.shared_bytes,
                args.len()
            ),
        )
    }

    fn check_signature(&self, source: &KernelSource, signature: &'static KernelSignature) -> Result<()> {
        signature.check_order(source.name)?;
        match cuda_params(source.cuda, signature.entry) {
            Some(params) => check_cuda_signature(source.name, &params, signature),
            None if source.cuda.is_empty() => Ok(()),
            None => Err(Error::KernelSignature {
                module: source.name.to_owned(),
                entry: signature.entry.to_owned(),
                reason: "the CUDA source declares no such __global__ entry point".into(),
            }),
        }
    }

    fn indirect_args<'a>(
        &self,
        count: DeviceCount<'a, Self>,
        items_per_block: u32,
        args: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        if items_per_block == 0 {
            return Err(Error::InvalidArgument { what: "items per block", reason: "must be at least 1".into() });
        }
        let args = args.into();
        crate::executor::check_len("indirect launch arguments", crate::gpu::INDIRECT_ARGS_WORDS, args.len())?;
        self.primitive("indirect_args", 1)?;
        let live = (count.slot().buffer().as_slice()[count.slot().offset()] as usize).min(count.bound());
        let blocks = u32::try_from(live.div_ceil(items_per_block as usize)).unwrap_or(u32::MAX);
        let words = crate::gpu::indirect_words(blocks, 65535);
        let (buffer, range) = args.into_parts();
        buffer.as_mut_slice()[range].copy_from_slice(&words);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels;

    const MODULE: KernelSource = KernelSource::new(
        "test/recording",
        "extern \"C\" __global__ void twice(const float* in, float* out, unsigned int n) {}",
        "",
    );
    kernels! {
        module = MODULE;
        /// Matches the source.
        fn twice(read input: f32, write output: f32, scalar n: u32);
    }
    mod wrong {
        use super::{MODULE, kernels};
        kernels! {
            module = MODULE;
            /// `output` is declared read, the source writes it.
            pub fn twice(read input: f32, read output: f32, scalar n: u32);
        }
    }

    #[test]
    fn host_reads_and_allocations_inside_a_recording_are_errors() {
        let exec = RecordingExecutor::new();
        let b = exec.upload(&[1u32, 2]).unwrap();
        assert!(matches!(exec.record(&mut || exec.download(&b).map(|_| ())), Err(Error::Recording { .. })));
        assert!(matches!(exec.record(&mut || exec.alloc::<u32>(3).map(|_| ())), Err(Error::Recording { .. })));
        assert!(matches!(exec.record(&mut || exec.read_async(&b).map(|_| ())), Err(Error::Recording { .. })));
    }

    #[test]
    fn launches_are_logged_with_their_grid_and_declarations_are_checked() {
        let exec = RecordingExecutor::new();
        let input = exec.upload(&[1.0f32; 8]).unwrap();
        let mut output = exec.alloc::<f32>(8).unwrap();
        exec.take_ops();
        let config = LaunchConfig::blocks(1, 64);
        twice(&exec, &config, &input, &mut output, 8).unwrap();
        let ops = exec.take_ops();
        assert_eq!(ops.len(), 1);
        assert_eq!((ops[0].kind, ops[0].name.as_str()), (OpKind::Launch, "twice"));
        assert!(ops[0].detail.contains("1 blocks x 64 threads"), "{}", ops[0].detail);
        let err = wrong::twice(&exec, &config, &input, &output, 8).unwrap_err();
        assert!(matches!(err, Error::KernelSignature { .. }), "{err}");
    }

    #[test]
    fn a_replay_logs_the_recorded_sequence() {
        let exec = RecordingExecutor::new();
        let flags = exec.upload(&[1u32, 0, 1, 1]).unwrap();
        let mut out = exec.alloc::<u32>(4).unwrap();
        let mut count = exec.alloc::<u32>(1).unwrap();
        let rec = exec.record(&mut || exec.compact(&flags, &flags, &mut out, &mut count)).unwrap();
        assert_eq!(exec.download(&count).unwrap(), [3]);
        exec.take_ops();
        exec.replay(&rec).unwrap();
        let names: Vec<String> = exec.take_ops().into_iter().map(|op| op.name).collect();
        assert_eq!(names, ["replay", "compact"]);
    }
}
