//! Compiled shader modules and compute pipelines, cached for the executor's lifetime.
//!
//! A module is keyed by its name and the preprocessor defines it was compiled with
//! (`SUBGROUP` and, for the typed primitives, the element type and operation); a
//! pipeline by (module, defines, entry point, workgroup size). The subgroup variant is
//! part of the defines, so a cache never hands out a pipeline of the other path.
//!
//! Compilation goes through naga twice: once here, to report errors with naga's
//! annotated source listing ([`orrery_core::Error::KernelCompile`]) and to reflect each
//! entry point's bindings (which buffers it reads or writes, and the size of its
//! parameter block), and once inside wgpu. The reflected bindings give every entry
//! point an explicit bind-group layout holding exactly the bindings it uses, so one
//! module can hold entry points with different buffer lists, and a launch can be
//! checked against its kernel before anything reaches the device.

use std::collections::HashMap;
use std::sync::Arc;

use orrery_core::{Error, Result};
use wgpu::naga;

use crate::preprocess::preprocess;
use crate::shaders;

/// What a binding of an entry point is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// `var<storage, read>` or `var<storage, read_write>`.
    Storage {
        /// Whether the kernel only reads it.
        read_only: bool,
    },
    /// `var<uniform>` of `size` bytes (the scalar parameter block).
    Uniform {
        /// Size of the uniform's type in bytes.
        size: u64,
        /// `(offset, size)` in bytes of each member when the type is a struct (of a
        /// scalar or vector type: one member at offset 0).
        members: Vec<(u32, u32)>,
    },
}

/// The bindings (group 0) one entry point uses, sorted by binding number.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryBindings {
    /// `(binding, kind)` for every resource the entry point statically uses.
    pub bindings: Vec<(u32, BindingKind)>,
}

/// A shader module compiled for this device.
pub(crate) struct CompiledModule {
    /// The wgpu module.
    module: wgpu::ShaderModule,
    /// Reflected bindings per compute entry point.
    entries: HashMap<String, Arc<EntryBindings>>,
    /// Whether the module declares `override WORKGROUP_SIZE`.
    has_workgroup_override: bool,
}

/// A compute pipeline with the layout of its bind group.
pub(crate) struct Pipeline {
    /// The pipeline.
    pub compute: wgpu::ComputePipeline,
    /// Layout of bind group 0.
    pub layout: wgpu::BindGroupLayout,
    /// The entry point's bindings.
    pub bindings: Arc<EntryBindings>,
    /// Module and entry point, for error messages.
    pub label: String,
}

type ModuleKey = (String, String);
type PipelineKey = (String, String, String, u32);

/// The cache.
#[derive(Default)]
pub(crate) struct PipelineCache {
    modules: HashMap<ModuleKey, Arc<CompiledModule>>,
    pipelines: HashMap<PipelineKey, Arc<Pipeline>>,
}

fn compile_error(module: &str, target: &str, log: String) -> Error {
    Error::KernelCompile { module: module.to_owned(), target: target.to_owned(), log }
}

/// naga capabilities matching the device's features.
fn capabilities(features: wgpu::Features) -> naga::valid::Capabilities {
    use naga::valid::Capabilities as C;
    let mut caps = C::all();
    if !features.contains(wgpu::Features::SUBGROUP) {
        caps -= C::SUBGROUP | C::SUBGROUP_BARRIER | C::SUBGROUP_VERTEX_STAGE;
    }
    if !features.contains(wgpu::Features::SHADER_F64) {
        caps -= C::FLOAT64;
    }
    if !features.contains(wgpu::Features::SHADER_INT64) {
        caps -= C::SHADER_INT64;
    }
    caps
}

/// Parses, validates and reflects a preprocessed WGSL source.
fn reflect(name: &str, text: &str, features: wgpu::Features) -> Result<(HashMap<String, Arc<EntryBindings>>, bool)> {
    let module = naga::front::wgsl::parse_str(text).map_err(|e| compile_error(name, "WGSL", e.emit_to_string(text)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(features))
        .validate(&module)
        .map_err(|e| compile_error(name, "WGSL", e.emit_to_string(text)))?;
    let mut entries = HashMap::new();
    for (index, ep) in module.entry_points.iter().enumerate() {
        if ep.stage != naga::ShaderStage::Compute {
            continue;
        }
        let uses = info.get_entry_point(index);
        let mut bindings = Vec::new();
        for (handle, var) in module.global_variables.iter() {
            let Some(binding) = &var.binding else { continue };
            if uses[handle].is_empty() {
                continue;
            }
            if binding.group != 0 {
                return Err(compile_error(
                    name,
                    "WGSL",
                    format!(
                        "entry point {} uses @group({}): orrery kernels bind everything in group 0",
                        ep.name, binding.group
                    ),
                ));
            }
            let kind = match var.space {
                naga::AddressSpace::Storage { access } => {
                    BindingKind::Storage { read_only: !access.contains(naga::StorageAccess::STORE) }
                }
                naga::AddressSpace::Uniform => {
                    let inner = &module.types[var.ty].inner;
                    let size = inner.size(module.to_ctx());
                    let members = match inner {
                        naga::TypeInner::Struct { members, .. } => {
                            members.iter().map(|m| (m.offset, module.types[m.ty].inner.size(module.to_ctx()))).collect()
                        }
                        _ => vec![(0, size)],
                    };
                    BindingKind::Uniform { size: u64::from(size), members }
                }
                other => {
                    return Err(compile_error(
                        name,
                        "WGSL",
                        format!(
                            "entry point {} binds a {other:?} resource: only storage buffers and one uniform are supported",
                            ep.name
                        ),
                    ));
                }
            };
            bindings.push((binding.binding, kind));
        }
        bindings.sort_by_key(|b| b.0);
        if let Some(pair) = bindings.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(compile_error(
                name,
                "WGSL",
                format!("entry point {} uses binding {} twice", ep.name, pair[0].0),
            ));
        }
        entries.insert(ep.name.clone(), Arc::new(EntryBindings { bindings }));
    }
    let has_override = module.overrides.iter().any(|(_, o)| o.name.as_deref() == Some("WORKGROUP_SIZE"));
    Ok((entries, has_override))
}

/// Runs `f` inside a validation error scope; a validation error becomes `on_error(message)`.
pub(crate) fn with_validation<R>(
    device: &wgpu::Device,
    f: impl FnOnce() -> R,
    on_error: impl FnOnce(String) -> Error,
) -> Result<R> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = f();
    match pollster::block_on(scope.pop()) {
        None => Ok(value),
        Some(e) => Err(on_error(e.to_string())),
    }
}

impl PipelineCache {
    /// The module `name` compiled from `wgsl` with `defines`, compiling it on first use.
    pub(crate) fn module(
        &mut self,
        device: &wgpu::Device,
        name: &str,
        wgsl: &str,
        defines: &[&str],
    ) -> Result<Arc<CompiledModule>> {
        let key = (name.to_owned(), defines.join(","));
        if let Some(m) = self.modules.get(&key) {
            return Ok(m.clone());
        }
        let text = preprocess(wgsl, defines, &shaders::include)
            .map_err(|log| compile_error(name, "WGSL preprocessor", log))?;
        let (entries, has_workgroup_override) = reflect(name, &text, device.features())?;
        let module = with_validation(
            device,
            || {
                device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(name),
                    source: wgpu::ShaderSource::Wgsl(text.as_str().into()),
                })
            },
            |log| compile_error(name, "WGSL", log),
        )?;
        let compiled = Arc::new(CompiledModule { module, entries, has_workgroup_override });
        self.modules.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// The pipeline of `entry` in module `name` with `WORKGROUP_SIZE = workgroup_size`.
    /// `zero_workgroup_memory: false` is only for kernels that never read shared memory
    /// before writing it (WGSL otherwise promises zeroes).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn pipeline(
        &mut self,
        device: &wgpu::Device,
        name: &str,
        wgsl: &str,
        defines: &[&str],
        entry: &str,
        workgroup_size: u32,
        zero_workgroup_memory: bool,
    ) -> Result<Arc<Pipeline>> {
        let key = (name.to_owned(), defines.join(","), entry.to_owned(), workgroup_size);
        if let Some(p) = self.pipelines.get(&key) {
            return Ok(p.clone());
        }
        let module = self.module(device, name, wgsl, defines)?;
        let bindings = module.entries.get(entry).cloned().ok_or_else(|| {
            let mut names: Vec<&str> = module.entries.keys().map(String::as_str).collect();
            names.sort_unstable();
            compile_error(
                name,
                "WGSL",
                format!("no compute entry point {entry:?}; the module has {}", names.join(", ")),
            )
        })?;
        let label = format!("{name}::{entry}");
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .bindings
            .iter()
            .map(|(binding, kind)| wgpu::BindGroupLayoutEntry {
                binding: *binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match kind {
                        BindingKind::Storage { read_only } => {
                            wgpu::BufferBindingType::Storage { read_only: *read_only }
                        }
                        BindingKind::Uniform { .. } => wgpu::BufferBindingType::Uniform,
                    },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let constants: Vec<(&str, f64)> = if module.has_workgroup_override {
            vec![("WORKGROUP_SIZE", f64::from(workgroup_size))]
        } else {
            Vec::new()
        };
        let (pipeline, layout) = with_validation(
            device,
            || {
                let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                    label: Some(&label),
                    entries: &layout_entries,
                });
                let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                    label: Some(&label),
                    bind_group_layouts: &[Some(&layout)],
                    immediate_size: 0,
                });
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&label),
                    layout: Some(&pipeline_layout),
                    module: &module.module,
                    entry_point: Some(entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        // WGSL promises zeroed workgroup memory; the core kernels write
                        // theirs before reading it and skip the cost.
                        zero_initialize_workgroup_memory: zero_workgroup_memory,
                    },
                    cache: None,
                });
                (pipeline, layout)
            },
            |log| compile_error(name, &format!("WGSL pipeline {entry} (workgroup size {workgroup_size})"), log),
        )?;
        let pipeline = Arc::new(Pipeline { compute: pipeline, layout, bindings, label });
        self.pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }
}
