//! Choosing an adapter and opening a device on it.
//!
//! The executor takes the best adapter wgpu finds (a discrete GPU before an integrated
//! one, before a virtual one, before a CPU rasteriser; Vulkan, Metal and DX12 before
//! OpenGL), unless the options or the environment say otherwise:
//!
//! | variable                 | meaning                                                   |
//! |--------------------------|-----------------------------------------------------------|
//! | `ORRERY_WGPU_ADAPTER`    | case-insensitive substring of the adapter name            |
//! | `ORRERY_WGPU_BACKEND`    | `vulkan`, `metal`, `dx12` or `gl`                         |
//! | `ORRERY_WGPU_SUBGROUPS`  | `0` runs the shared-memory paths even where subgroups exist |
//!
//! The device is opened with the adapter's own limits (not WebGPU's defaults: an H200
//! binds far more than 128 MiB; [`WgpuOptions::max_workgroup_storage`] may lower one)
//! and with the optional features the primitives use when they are there:
//! [`wgpu::Features::SUBGROUP`], [`wgpu::Features::TIMESTAMP_QUERY`] with
//! [`wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS`], and [`wgpu::Features::SHADER_F64`].

use std::fmt;

use orrery_core::{Error, Result};

/// The backend name in errors.
pub(crate) const BACKEND: &str = "wgpu";

/// How [`crate::WgpuExecutor`] picks its adapter and which optional features it uses.
///
/// Without a name filter the best adapter wins: a discrete GPU before an integrated one,
/// before a virtual one, before a CPU rasteriser; Vulkan, Metal and DX12 before OpenGL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Case-insensitive substring of the adapter name; `None` takes the best adapter.
    pub adapter: Option<String>,
    /// Backends to consider; `None` considers every backend compiled in.
    pub backends: Option<wgpu::Backends>,
    /// Use subgroup operations where the adapter has them (default `true`). `false`
    /// runs every primitive on its shared-memory path.
    pub subgroups: bool,
    /// Use timestamp queries for [`orrery_core::Executor::elapsed`] where the adapter
    /// has them (default `true`); otherwise markers wait for the device and read the
    /// host clock.
    pub timestamps: bool,
    /// Use f64 shaders where the adapter has them (default `true`); otherwise f64
    /// reductions and keys return [`Error::Unsupported`].
    pub f64: bool,
    /// Bind views at multiples of this many bytes instead of the adapter's
    /// `min_storage_buffer_offset_alignment` (rounded up to a multiple of it; `None`: the
    /// adapter's). Views in between reach kernels through their `off_*` fields, so a
    /// large value exercises that path on adapters whose alignment is small (lavapipe).
    pub view_alignment: Option<u32>,
    /// Open the device with at most this many bytes of workgroup memory per workgroup
    /// (`max_compute_workgroup_storage_size`; `None`: the adapter's limit). Kernels
    /// that size their workgroup memory from the limit then take their smaller paths,
    /// so a value such as WebGPU's minimum, 16384, exercises those paths (the one-level
    /// Hilbert keys of `core/sfc` below 24 KB) on adapters with more.
    pub max_workgroup_storage: Option<u32>,
}

impl Default for WgpuOptions {
    fn default() -> Self {
        Self {
            adapter: None,
            backends: None,
            subgroups: true,
            timestamps: true,
            f64: true,
            view_alignment: None,
            max_workgroup_storage: None,
        }
    }
}

impl WgpuOptions {
    /// The default options overridden by the environment:
    ///
    /// | variable                 | meaning                                                     |
    /// |--------------------------|-------------------------------------------------------------|
    /// | `ORRERY_WGPU_ADAPTER`    | case-insensitive substring of the adapter name              |
    /// | `ORRERY_WGPU_BACKEND`    | `vulkan`, `metal`, `dx12` or `gl`                           |
    /// | `ORRERY_WGPU_SUBGROUPS`  | `0` runs the shared-memory paths even where subgroups exist |
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an unknown backend name or subgroup setting.
    pub fn from_env() -> Result<Self> {
        let mut options = Self::default();
        if let Some(name) = env_var("ORRERY_WGPU_ADAPTER") {
            options.adapter = Some(name);
        }
        if let Some(backend) = env_var("ORRERY_WGPU_BACKEND") {
            options.backends = Some(parse_backend(&backend)?);
        }
        if let Some(value) = env_var("ORRERY_WGPU_SUBGROUPS") {
            options.subgroups = match value.as_str() {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => {
                    return Err(Error::InvalidArgument {
                        what: "ORRERY_WGPU_SUBGROUPS",
                        reason: format!("{value:?} is not one of 0, 1, true, false, on, off"),
                    });
                }
            };
        }
        Ok(options)
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// Parses a backend name: `vulkan`, `metal`, `dx12` or `gl` (case-insensitive).
///
/// # Errors
/// [`Error::InvalidArgument`] for any other name.
pub fn parse_backend(name: &str) -> Result<wgpu::Backends> {
    match name.to_ascii_lowercase().as_str() {
        "vulkan" | "vk" => Ok(wgpu::Backends::VULKAN),
        "metal" | "mtl" => Ok(wgpu::Backends::METAL),
        "dx12" | "d3d12" => Ok(wgpu::Backends::DX12),
        "gl" | "gles" | "opengl" => Ok(wgpu::Backends::GL),
        _ => Err(Error::InvalidArgument {
            what: "ORRERY_WGPU_BACKEND",
            reason: format!("{name:?} is not one of vulkan, metal, dx12, gl"),
        }),
    }
}

/// What the opened device can do, as the primitives use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// Adapter name (e.g. "NVIDIA H200", "llvmpipe (LLVM 15.0.6, 256 bits)").
    pub adapter: String,
    /// Backend (Vulkan, Metal, Dx12, Gl).
    pub backend: wgpu::Backend,
    /// Adapter type (discrete GPU, CPU, ...).
    pub device_type: wgpu::DeviceType,
    /// The subgroup size the primitives run with, or `None` when they run their
    /// shared-memory paths (no [`wgpu::Features::SUBGROUP`], disabled by the options,
    /// or subgroups that failed the start-up probe).
    pub subgroup_size: Option<u32>,
    /// Whether markers use timestamp queries.
    pub timestamps: bool,
    /// Whether f64 shaders are available.
    pub f64: bool,
    /// Largest buffer the device creates, in bytes.
    pub max_buffer_size: u64,
    /// Largest storage binding, in bytes (every executor buffer is bindable).
    pub max_storage_binding: u64,
    /// Most workgroups per dispatch dimension.
    pub max_workgroups_per_dimension: u32,
    /// Most invocations per workgroup.
    pub max_invocations_per_workgroup: u32,
}

impl fmt::Display for Capabilities {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?}, {:?}", self.adapter, self.backend, self.device_type)?;
        match self.subgroup_size {
            Some(size) => write!(f, ", subgroups of {size}")?,
            None => f.write_str(", no subgroups")?,
        }
        if self.f64 {
            f.write_str(", f64")?;
        }
        if self.timestamps {
            f.write_str(", timestamps")?;
        }
        f.write_str(")")
    }
}

/// The device and queue, with the features that were granted.
pub(crate) struct Opened {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
}

/// Preference of an adapter: lower is better.
fn rank(info: &wgpu::AdapterInfo) -> (u8, u8) {
    let device = match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    };
    let backend = match info.backend {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    };
    (device, backend)
}

/// Picks an adapter and opens a device on it.
pub(crate) fn open(options: &WgpuOptions) -> Result<Opened> {
    let backends = options.backends.unwrap_or(wgpu::Backends::all());
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
        backends,
        ..wgpu::InstanceDescriptor::new_without_display_handle()
    });
    let adapters = pollster::block_on(instance.enumerate_adapters(backends));
    let found: Vec<String> =
        adapters.iter().map(|a| format!("{} ({:?})", a.get_info().name, a.get_info().backend)).collect();
    let filter = options.adapter.as_ref().map(|s| s.to_lowercase());
    let adapter = adapters
        .into_iter()
        .filter(|a| filter.as_ref().is_none_or(|f| a.get_info().name.to_lowercase().contains(f)))
        .min_by_key(|a| rank(&a.get_info()))
        .ok_or_else(|| Error::DeviceUnavailable {
            backend: BACKEND,
            reason: match (&options.adapter, found.is_empty()) {
                (_, true) => format!("no adapter found for backends {backends:?} (is a Vulkan driver installed?)"),
                (Some(name), false) => format!("no adapter name contains {name:?}; found: {}", found.join(", ")),
                (None, false) => format!("no usable adapter among: {}", found.join(", ")),
            },
        })?;

    let available = adapter.features();
    let mut wanted = wgpu::Features::empty();
    if options.subgroups {
        wanted |= wgpu::Features::SUBGROUP;
    }
    if options.timestamps {
        wanted |= wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    }
    if options.f64 {
        wanted |= wgpu::Features::SHADER_F64;
    }
    let mut features = available & wanted;
    // Timestamps are only useful with both halves.
    if !features.contains(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS) {
        features.remove(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
    }
    let info = adapter.get_info();
    let mut limits = adapter.limits();
    if let Some(bytes) = options.max_workgroup_storage {
        limits.max_compute_workgroup_storage_size = limits.max_compute_workgroup_storage_size.min(bytes);
    }
    let descriptor = wgpu::DeviceDescriptor {
        label: Some("orrery"),
        required_features: features,
        required_limits: limits.clone(),
        experimental_features: wgpu::ExperimentalFeatures::disabled(),
        memory_hints: wgpu::MemoryHints::Performance,
        trace: wgpu::Trace::Off,
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| {
        Error::DeviceUnavailable { backend: BACKEND, reason: format!("adapter {} refused a device: {e}", info.name) }
    })?;
    Ok(Opened { device, queue, info, features, limits })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_parse_case_insensitively() {
        assert_eq!(parse_backend("Vulkan").unwrap(), wgpu::Backends::VULKAN);
        assert_eq!(parse_backend("gl").unwrap(), wgpu::Backends::GL);
        assert_eq!(parse_backend("DX12").unwrap(), wgpu::Backends::DX12);
        assert_eq!(parse_backend("metal").unwrap(), wgpu::Backends::METAL);
        assert!(matches!(parse_backend("webgpu"), Err(Error::InvalidArgument { .. })));
    }
}
