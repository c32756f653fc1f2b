//! Choosing the executor a command runs on: `--executor auto|cpu|cuda|wgpu`.
//!
//! `auto` takes CUDA when a device opens, else a *hardware* wgpu adapter (a discrete,
//! integrated or virtual GPU; never a software rasteriser such as lavapipe or llvmpipe,
//! which wgpu reports as [`wgpu::DeviceType::Cpu`]), else the CPU, and says in one line
//! which it took and why it passed over the others ([`Selection::report`]). An explicit
//! choice that cannot be opened is an error, not a fallback.
//!
//! Commands run their code on the chosen executor through [`Chosen::run`] (code generic
//! over any [`Executor`]), [`Chosen::run_split`] (one path for the CPU, one generic over
//! any [`GpuExecutor`]), or the [`with_executor!`](crate::with_executor) macro.

use std::num::NonZeroUsize;

use anyhow::{Context, bail};
use clap::ValueEnum;
use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions, wgpu};
use orrery_core::{CpuExecutor, Executor, ExecutorKind, GpuExecutor};

/// Which executor `--executor` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ExecutorChoice {
    /// CUDA if a device opens, else a hardware wgpu adapter, else the CPU.
    #[default]
    Auto,
    /// The CPU (rayon).
    Cpu,
    /// CUDA (device from `ORRERY_CUDA_DEVICE`, default 0).
    Cuda,
    /// wgpu (adapter from `ORRERY_WGPU_ADAPTER` / `ORRERY_WGPU_BACKEND`, else the best one,
    /// software adapters included when asked for explicitly).
    Wgpu,
}

/// The executor options every command that computes shares.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExecutorArgs {
    /// Executor to run on.
    #[arg(long, value_enum, default_value_t = ExecutorChoice::Auto)]
    pub executor: ExecutorChoice,
    /// Worker threads of the CPU executor (default: one per core, rayon's global pool).
    #[arg(long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
}

/// An opened executor of one of the three families.
#[derive(Debug)]
pub enum Chosen {
    /// The CPU (rayon) executor.
    Cpu(CpuExecutor),
    /// A CUDA device.
    Cuda(CudaExecutor),
    /// A wgpu adapter.
    Wgpu(WgpuExecutor),
}

/// The chosen executor and the line that says why.
#[derive(Debug)]
pub struct Selection {
    /// The executor.
    pub chosen: Chosen,
    /// One line: what was taken and why the others were not (for stderr).
    pub report: String,
}

/// Code generic over any executor, run by [`Chosen::run`].
///
/// ```
/// use orrery_cli::executor::{Chosen, OnExecutor};
/// use orrery_core::{CpuExecutor, Executor, ReduceOp};
///
/// /// Sums values on whatever executor was chosen.
/// struct Sum<'a>(&'a [u32]);
///
/// impl OnExecutor for Sum<'_> {
///     type Output = orrery_core::Result<u32>;
///     fn run<E: Executor>(self, exec: &E) -> Self::Output {
///         let data = exec.upload(self.0)?;
///         let mut total = exec.alloc::<u32>(1)?;
///         exec.reduce(&data, ReduceOp::Sum, &mut total)?;
///         Ok(exec.download(&total)?[0])
///     }
/// }
///
/// let chosen = Chosen::Cpu(CpuExecutor::new());
/// assert_eq!(chosen.run(Sum(&[1, 2, 3]))?, 6);
/// # Ok::<(), orrery_core::Error>(())
/// ```
pub trait OnExecutor {
    /// What the code returns.
    type Output;
    /// Runs on `exec`.
    fn run<E: Executor>(self, exec: &E) -> Self::Output;
}

/// Code with a CPU path and a path generic over GPU executors, run by
/// [`Chosen::run_split`] (the tree builds of the libraries are shaped this way: a host
/// function for the CPU, a device orchestration for CUDA and wgpu).
pub trait OnCpuOrGpu {
    /// What the code returns.
    type Output;
    /// Runs on the CPU executor.
    fn cpu(self, exec: &CpuExecutor) -> Self::Output;
    /// Runs on a GPU executor (CUDA or wgpu).
    fn gpu<E: GpuExecutor>(self, exec: &E) -> Self::Output;
}

/// Runs an expression on the executor inside a [`Chosen`], binding it to a name: the
/// expression is compiled once per executor type, so it may call generic code.
///
/// ```
/// use orrery_cli::executor::Chosen;
/// use orrery_cli::with_executor;
/// use orrery_core::{CpuExecutor, Executor};
///
/// let chosen = Chosen::Cpu(CpuExecutor::new());
/// let name = with_executor!(&chosen, exec => exec.name());
/// assert!(name.starts_with("cpu"));
/// ```
#[macro_export]
macro_rules! with_executor {
    ($chosen:expr, $exec:ident => $body:expr) => {
        match $chosen {
            $crate::executor::Chosen::Cpu($exec) => $body,
            $crate::executor::Chosen::Cuda($exec) => $body,
            $crate::executor::Chosen::Wgpu($exec) => $body,
        }
    };
}

impl Chosen {
    /// The executor family.
    pub fn kind(&self) -> ExecutorKind {
        with_executor!(self, e => e.kind())
    }

    /// The executor's name (with its device).
    pub fn name(&self) -> String {
        with_executor!(self, e => e.name())
    }

    /// Runs `task` on the executor.
    pub fn run<T: OnExecutor>(&self, task: T) -> T::Output {
        with_executor!(self, e => task.run(e))
    }

    /// Runs `task`'s CPU path on the CPU and its GPU path on CUDA or wgpu.
    pub fn run_split<T: OnCpuOrGpu>(&self, task: T) -> T::Output {
        match self {
            Chosen::Cpu(e) => task.cpu(e),
            Chosen::Cuda(e) => task.gpu(e),
            Chosen::Wgpu(e) => task.gpu(e),
        }
    }
}

impl ExecutorArgs {
    /// Opens the executor these options ask for.
    ///
    /// # Errors
    /// An explicit `cuda` or `wgpu` that cannot be opened; a CPU pool that cannot be
    /// created.
    pub fn open(&self) -> anyhow::Result<Selection> {
        match self.executor {
            ExecutorChoice::Cpu => {
                let cpu = self.cpu()?;
                let report = format!("executor: {} (requested)", cpu.name());
                Ok(Selection { chosen: Chosen::Cpu(cpu), report })
            }
            ExecutorChoice::Cuda => {
                let cuda = CudaExecutor::from_env().context("--executor cuda")?;
                let report = format!("executor: {} (requested)", cuda.name());
                Ok(Selection { chosen: Chosen::Cuda(cuda), report })
            }
            ExecutorChoice::Wgpu => {
                let wgpu = WgpuExecutor::new().context("--executor wgpu")?;
                let software = wgpu.capabilities().device_type == wgpu::DeviceType::Cpu;
                let note = if software { "requested; a software adapter" } else { "requested" };
                let report = format!("executor: {} ({note})", wgpu.name());
                Ok(Selection { chosen: Chosen::Wgpu(wgpu), report })
            }
            ExecutorChoice::Auto => self.auto(),
        }
    }

    /// The CPU executor: the global pool, or a pool of `--threads`.
    fn cpu(&self) -> anyhow::Result<CpuExecutor> {
        match self.threads {
            None => Ok(CpuExecutor::new()),
            Some(n) => CpuExecutor::with_threads(n.get()).context("--threads"),
        }
    }

    /// CUDA, then a hardware wgpu adapter, then the CPU.
    fn auto(&self) -> anyhow::Result<Selection> {
        let cuda_reason = match CudaExecutor::from_env() {
            Ok(cuda) => {
                let report = format!("executor: {} (auto: a CUDA device opened)", cuda.name());
                return Ok(Selection { chosen: Chosen::Cuda(cuda), report });
            }
            Err(e) => one_line(&e.to_string()),
        };
        let wgpu_reason = match open_hardware_wgpu() {
            Ok(wgpu) => {
                let report =
                    format!("executor: {} (auto: hardware wgpu adapter; cuda not taken: {cuda_reason})", wgpu.name());
                return Ok(Selection { chosen: Chosen::Wgpu(wgpu), report });
            }
            Err(e) => one_line(&format!("{e:#}")),
        };
        let cpu = self.cpu()?;
        let report =
            format!("executor: {} (auto; cuda not taken: {cuda_reason}; wgpu not taken: {wgpu_reason})", cpu.name());
        Ok(Selection { chosen: Chosen::Cpu(cpu), report })
    }
}

/// Whether wgpu's adapter type is real hardware (not a CPU rasteriser, not unknown).
pub fn is_hardware(device_type: wgpu::DeviceType) -> bool {
    matches!(
        device_type,
        wgpu::DeviceType::DiscreteGpu | wgpu::DeviceType::IntegratedGpu | wgpu::DeviceType::VirtualGpu
    )
}

/// Every wgpu adapter of the backends `options` allow (all compiled-in backends when
/// none are named), with its info and features.
pub fn enumerate_adapters(options: &WgpuOptions) -> Vec<(wgpu::AdapterInfo, wgpu::Features)> {
    let backends = options.backends.unwrap_or(wgpu::Backends::all());
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    pollster::block_on(instance.enumerate_adapters(backends))
        .into_iter()
        .map(|a| (a.get_info(), a.features()))
        .collect()
}

/// Opens the best hardware adapter (the environment's name and backend filters apply).
/// Without a backend filter it looks at wgpu's primary backends only (Vulkan, Metal,
/// DX12): probing OpenGL starts EGL, which prints errors of its own on machines without a
/// display, and a GL adapter would be passed over for a primary one anyway.
fn open_hardware_wgpu() -> anyhow::Result<WgpuExecutor> {
    let options = WgpuOptions::from_env()?;
    let options = WgpuOptions { backends: options.backends.or(Some(wgpu::Backends::PRIMARY)), ..options };
    let adapters = enumerate_adapters(&options);
    let filter = options.adapter.as_ref().map(|s| s.to_lowercase());
    let matching: Vec<_> = adapters
        .iter()
        .filter(|(info, _)| filter.as_ref().is_none_or(|f| info.name.to_lowercase().contains(f)))
        .collect();
    if matching.is_empty() {
        bail!("no wgpu adapter found");
    }
    let Some((best, _)) = matching.iter().filter(|(info, _)| is_hardware(info.device_type)).min_by_key(|(info, _)| {
        (
            info.device_type != wgpu::DeviceType::DiscreteGpu,
            !matches!(info.backend, wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12),
        )
    }) else {
        let software: Vec<String> =
            matching.iter().map(|(info, _)| format!("{} ({:?})", info.name, info.device_type)).collect();
        bail!("only software adapters: {}", software.join(", "));
    };
    let options = WgpuOptions { adapter: Some(best.name.clone()), backends: Some(best.backend.into()), ..options };
    let exec = WgpuExecutor::with_options(&options)?;
    if !is_hardware(exec.capabilities().device_type) {
        bail!("adapter {} opened as a software adapter", exec.capabilities().adapter);
    }
    Ok(exec)
}

/// `text` on one line (multi-line library messages, such as compiler logs, joined).
pub fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ")
}

/// Whether `exec` runs the tree and ball-tree kernels in f64: the device must do f64
/// arithmetic, and WGSL has neither f64 binary keys, f64 tree views nor f64 ball-tree
/// kernels (orrery-tree-build and orrery-balltree document this), so wgpu runs f32.
pub fn runs_f64<E: Executor>(exec: &E) -> bool {
    exec.limits().f64 && exec.kind() != ExecutorKind::Wgpu
}
