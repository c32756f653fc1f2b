//! [`Executor::record`] / [`Executor::replay`] by stream capture, and
//! [`Executor::reserve`].
//!
//! `record` begins a capture of the executor's stream (`cuStreamBeginCapture_v2`,
//! thread-local mode: other threads' unsafe calls are not affected), runs the body, ends
//! the capture and instantiates the graph (`cuGraphInstantiateWithFlags`); `replay`
//! launches it (`cuGraphLaunch`) on the same stream. While the stream is captured, every
//! operation that cannot be part of a graph returns [`orrery_core::Error::Recording`]
//! before it reaches the driver: allocations (also a resize beyond the capacity and
//! scratch growth: "call reserve first"), host reads and writes, waits. Buffer frees
//! requested during the capture are deferred to its end.
//!
//! The recording holds an [`Arc`] of every allocation a captured operation touched and of
//! the executor's scratch regions; `replay` checks that each is still owned by someone
//! else (a buffer or the scratch), so a buffer dropped or reallocated after recording
//! gives [`orrery_core::Error::Recording`] instead of a graph that writes freed memory.
//! Look-back epochs live on the device, so a replayed scan or sort draws fresh ones.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUgraph, CUgraphExec, CUstreamCaptureMode};
use orrery_core::{Reserve, Result};

use crate::CudaExecutor;
use crate::buffer::Allocation;
use crate::device::Context;
use crate::error::DriverResultExt;
use crate::primitives::reduce_partial_bytes;
use crate::stream::{Stream, recording_error};

/// A captured launch sequence ([`orrery_core::Executor::Recording`]).
pub struct CudaRecording {
    exec: CUgraphExec,
    allocations: Vec<Arc<Allocation>>,
    stream: Arc<Stream>,
    ctx: Arc<Context>,
}

// SAFETY: a CUgraphExec is a handle usable from any thread with its context current
// (`bind` before each use); launching it is serialised on the recording stream.
unsafe impl Send for CudaRecording {}

impl std::fmt::Debug for CudaRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaRecording").field("allocations", &self.allocations.len()).finish_non_exhaustive()
    }
}

impl Drop for CudaRecording {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the executable graph is owned here and destroyed once; one still in
            // flight is freed by the driver when it completes. The allocations it uses are
            // released after this, in stream order on their streams.
            let _ = unsafe { sys::cuGraphExecDestroy(self.exec) };
        }
    }
}

impl CudaExecutor {
    pub(crate) fn reserve_impl(&self, reserve: &Reserve) -> Result<()> {
        self.stream.forbid_while_recording("reserve (it allocates)")?;
        // Kernels compile, load and resolve outside the recording, too.
        self.prepare_all()?;
        for (module, entries) in &crate::primitives::ENTRIES {
            for entry in *entries {
                self.modules.function(module, entry)?;
            }
        }
        let p = self.policy;
        let scan_words = reserve.scan.max(1).div_ceil(p.scan_tile() as usize);
        let sort_words = reserve.sort_pairs.div_ceil(p.sort_tile() as usize) * 256;
        let mut scratch = self.scratch();
        scratch.lookback(scan_words.max(sort_words))?;
        if reserve.sort_pairs > 1 {
            scratch.sort_buffers(reserve.sort_pairs)?;
        }
        scratch.reduce(reduce_partial_bytes(&p, reserve.reduce))?;
        // `segments` and `histogram` size the segmented primitives and the histogram,
        // which keep no scratch of their own on this executor.
        Ok(())
    }

    pub(crate) fn record_impl(&self, body: &mut dyn FnMut() -> Result<()>) -> Result<CudaRecording> {
        if self.stream.capturing() {
            return Err(recording_error("record inside a recording"));
        }
        self.stream.bind()?;
        *self.recording.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Vec::new());
        self.stream.set_capturing(true);
        // SAFETY: the stream is alive and not being captured; thread-local mode only
        // restricts this thread's unsafe calls while the capture lasts.
        let begin = unsafe {
            sys::cuStreamBeginCapture_v2(self.stream.raw(), CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        }
        .result();
        if let Err(e) = begin {
            self.stream.set_capturing(false);
            *self.recording.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            return Err(crate::error::device_error("cuStreamBeginCapture", e));
        }
        let outcome = body();
        let mut graph: CUgraph = std::ptr::null_mut();
        // SAFETY: the capture began above on this stream and this thread.
        let end = unsafe { sys::cuStreamEndCapture(self.stream.raw(), &raw mut graph) }.result();
        self.stream.set_capturing(false);
        let touched =
            self.recording.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take().unwrap_or_default();
        self.stream.flush_deferred_frees();
        let destroy_graph = |g: CUgraph| {
            if !g.is_null() {
                // SAFETY: the graph came from cuStreamEndCapture and is destroyed once.
                let _ = unsafe { sys::cuGraphDestroy(g) };
            }
        };
        if let Err(e) = outcome {
            destroy_graph(graph);
            return Err(e);
        }
        if let Err(e) = end {
            destroy_graph(graph);
            return Err(recording_error(format!(
                "the capture failed ({}); an operation of the body cannot be captured",
                crate::error::describe(e)
            )));
        }
        let mut exec: CUgraphExec = std::ptr::null_mut();
        // SAFETY: `graph` is a valid graph from the capture; `exec` is valid for one write.
        let inst = unsafe { sys::cuGraphInstantiateWithFlags(&raw mut exec, graph, 0) }.result();
        destroy_graph(graph);
        inst.during("cuGraphInstantiateWithFlags")?;
        let mut allocations = touched;
        for a in self.scratch().allocations() {
            if !allocations.iter().any(|b| Arc::ptr_eq(&a, b)) {
                allocations.push(a);
            }
        }
        Ok(CudaRecording { exec, allocations, stream: Arc::clone(&self.stream), ctx: Arc::clone(&self.ctx) })
    }

    pub(crate) fn replay_impl(&self, recording: &CudaRecording) -> Result<()> {
        self.stream.forbid_while_recording("replay")?;
        if !Arc::ptr_eq(&recording.stream, &self.stream) {
            return Err(recording_error(
                "a recording replays on the executor that recorded it (its scratch is that executor's)",
            ));
        }
        if recording.allocations.iter().any(|a| Arc::strong_count(a) <= 1) {
            return Err(recording_error("a buffer used by this recording was dropped or reallocated"));
        }
        self.stream.bind()?;
        // SAFETY: the executable graph is alive, belongs to this context, and every
        // allocation it names is alive (held by the recording) and still owned by a buffer
        // or the scratch (checked above).
        unsafe { sys::cuGraphLaunch(recording.exec, self.stream.raw()) }.result().during("cuGraphLaunch")
    }
}
