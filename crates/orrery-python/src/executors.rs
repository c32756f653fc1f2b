//! Which executor runs a call, and the GPU executors kept alive between calls.
//!
//! Opening a CUDA executor retains the device's primary context and compiles (or loads
//! from the disk cache) its kernels; a wgpu executor opens an adapter. Both take far
//! longer than a build, so each is opened once per process (per CUDA device) and kept,
//! together with a [`GpuBallTreeBuilder`] whose plan and scratch buffers are reused by the
//! next build of the same batch layout. A mutex per executor serialises the Python
//! threads that share it; the GIL is released while they wait and while they run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;
use orrery_balltree::gpu::{GpuBallTreeBuilder, Strategy};
use orrery_core::{Error, ExecutorKind, Result};

/// An executor and the builder that reuses its buffers.
pub struct GpuState<E: orrery_core::GpuExecutor> {
    /// The executor.
    pub exec: E,
    /// The ball tree builder (fastest strategy for the executor).
    pub builder: GpuBallTreeBuilder<E>,
}

impl<E: orrery_core::GpuExecutor> GpuState<E> {
    fn new(exec: E) -> Self {
        let builder = GpuBallTreeBuilder::new(Strategy::fastest_for(exec.kind()));
        Self { exec, builder }
    }
}

/// Where a call runs, from the `executor=` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// rayon on the host.
    Cpu,
    /// The CUDA device with this ordinal.
    Cuda(usize),
    /// The wgpu adapter `WgpuOptions::from_env` picks.
    Wgpu,
}

impl Choice {
    /// Parses `"auto"`, `"cpu"`, `"cuda"`, `"cuda:N"` or `"wgpu"`. `"auto"` is the CPU for
    /// host data: a numpy array or a CPU tensor stays on the CPU (a CUDA tensor is routed
    /// to its own device by the Python layer before this).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for any other string.
    pub fn parse(executor: &str) -> Result<Self> {
        match executor {
            "auto" | "cpu" => Ok(Self::Cpu),
            "cuda" => Ok(Self::Cuda(0)),
            "wgpu" => Ok(Self::Wgpu),
            s => match s.strip_prefix("cuda:").map(str::parse::<usize>) {
                Some(Ok(n)) => Ok(Self::Cuda(n)),
                _ => Err(Error::InvalidArgument {
                    what: "executor",
                    reason: format!("{s:?}: expected \"auto\", \"cpu\", \"cuda\", \"cuda:N\" or \"wgpu\""),
                }),
            },
        }
    }

    /// The executor kind.
    pub fn kind(self) -> ExecutorKind {
        match self {
            Self::Cpu => ExecutorKind::Cpu,
            Self::Cuda(_) => ExecutorKind::Cuda,
            Self::Wgpu => ExecutorKind::Wgpu,
        }
    }
}

type Shared<E> = Arc<Mutex<GpuState<E>>>;

/// The CUDA executor of device `ordinal`, opened on first use.
///
/// # Errors
/// As [`CudaExecutor::new`] (no driver, no device `ordinal`: [`Error::DeviceUnavailable`]).
pub fn cuda(ordinal: usize) -> Result<Shared<CudaExecutor>> {
    static CUDA: OnceLock<Mutex<HashMap<usize, Shared<CudaExecutor>>>> = OnceLock::new();
    let mut map = lock(CUDA.get_or_init(Mutex::default));
    if let Some(s) = map.get(&ordinal) {
        return Ok(Arc::clone(s));
    }
    let state = Arc::new(Mutex::new(GpuState::new(CudaExecutor::new(ordinal)?)));
    map.insert(ordinal, Arc::clone(&state));
    Ok(state)
}

/// The wgpu executor, opened on first use (a failure is remembered: the adapter search
/// is not repeated on every call).
///
/// # Errors
/// As [`WgpuExecutor::new`].
pub fn wgpu() -> Result<Shared<WgpuExecutor>> {
    static WGPU: OnceLock<std::result::Result<Shared<WgpuExecutor>, Error>> = OnceLock::new();
    WGPU.get_or_init(|| WgpuExecutor::new().map(|e| Arc::new(Mutex::new(GpuState::new(e))))).clone()
}

/// Locks a mutex, taking the state over from a thread that panicked (a panic inside a
/// build leaves no half-written state that a later build reads: every build rewrites
/// its outputs).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
