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
//!
//! # Runtime checks
//! orrery's own modules (the core primitives, and the algorithm crates' modules whose
//! text is orrery's: [`crate::shaders::is_orrery_module`]) compile with
//! [`ORRERY_CHECKS`]: wgpu's default runtime checks without loop bounding, whose
//! per-iteration counter made a 21-iteration bit loop 1.5x as slow on the H200 (4.27 ms
//! against 2.81 ms, `examples/wgpu_probe.rs`). Bounds checks stay on: they cost nothing
//! measurable there (NVIDIA's robust buffer access does them) and keep a wrong index
//! inside its binding. Every other module, i.e. a user's kernel, keeps all of wgpu's
//! checks. See `docs/adr/0015-wgpu-pass-batching-and-trusted-shaders.md`.

use std::collections::HashMap;
use std::fmt::Write as _;
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
        /// Byte stride of the array the binding holds (`array<T>`), when it is one:
        /// the unit of its `off_<name>` field.
        stride: Option<u32>,
    },
    /// `var<uniform>` of `size` bytes (the scalar parameter block).
    Uniform {
        /// Size of the uniform's type in bytes.
        size: u64,
        /// The members when the type is a struct (a scalar or vector type: one unnamed
        /// member at offset 0).
        members: Vec<Member>,
    },
}

/// The WGSL type of a parameter-block member, as far as launches check it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MemberType {
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `vec2<u32>` or `u64`: a 64-bit integer, low word first.
    U64,
    /// Anything else (arrays, other vectors): checked by size only.
    Other,
}

/// One member of a kernel's parameter block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Member {
    /// Its name (`off_<binding variable>` members are filled by the executor).
    pub name: String,
    /// Byte offset.
    pub offset: u32,
    /// Byte size.
    pub size: u32,
    /// Its type.
    pub ty: MemberType,
}

impl Member {
    /// The binding variable whose element offset this member receives, for `off_<name>`.
    pub(crate) fn offset_of(&self) -> Option<&str> {
        self.name.strip_prefix("off_")
    }
}

/// One binding an entry point uses.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::struct_field_names)]
pub(crate) struct Binding {
    /// The binding number (group 0).
    pub binding: u32,
    /// The variable's name.
    pub name: String,
    /// What it is.
    pub kind: BindingKind,
}

/// The bindings (group 0) one entry point uses, sorted by binding number.
#[derive(Debug, Clone, Default)]
pub(crate) struct EntryBindings {
    /// Every resource the entry point statically uses.
    pub bindings: Vec<Binding>,
}

impl EntryBindings {
    /// The uniform parameter block: its binding, size and members.
    pub(crate) fn uniform(&self) -> Option<(u32, u64, &[Member])> {
        self.bindings.iter().find_map(|b| match &b.kind {
            BindingKind::Uniform { size, members } => Some((b.binding, *size, members.as_slice())),
            BindingKind::Storage { .. } => None,
        })
    }

    /// The storage bindings.
    pub(crate) fn storage(&self) -> impl Iterator<Item = (&Binding, bool, Option<u32>)> {
        self.bindings.iter().filter_map(|b| match b.kind {
            BindingKind::Storage { read_only, stride } => Some((b, read_only, stride)),
            BindingKind::Uniform { .. } => None,
        })
    }
}

/// A shader module compiled for this device.
pub(crate) struct CompiledModule {
    /// The wgpu module.
    module: wgpu::ShaderModule,
    /// Reflected bindings per compute entry point.
    entries: HashMap<String, Arc<EntryBindings>>,
    /// Whether the module declares `override WORKGROUP_SIZE`.
    has_workgroup_override: bool,
    /// Whether the module declares `override DYNAMIC_SHARED_WORDS`.
    has_shared_override: bool,
}

impl CompiledModule {
    /// The reflected bindings of `entry`.
    pub(crate) fn entry(&self, entry: &str) -> Option<&Arc<EntryBindings>> {
        self.entries.get(entry)
    }
}

/// A compute pipeline with the layout of its bind group.
pub(crate) struct Pipeline {
    /// The pipeline.
    pub compute: wgpu::ComputePipeline,
    /// Layout of bind group 0.
    pub layout: wgpu::BindGroupLayout,
    /// The entry point's bindings.
    pub bindings: Arc<EntryBindings>,
    /// Module name and entry point, for [`orrery_core::Error::KernelSignature`].
    pub module: String,
    /// The entry point.
    pub entry: String,
}

/// What a module is compiled from: its name, source, preprocessor defines (sorted; they
/// include `SUBGROUP` when the executor runs subgroups), the `const` defines of a
/// [`orrery_core::gpu::KernelSource`] (prepended as `const NAME = VALUE;` lines), and
/// whether it is orrery's own.
#[derive(Clone, Copy)]
pub(crate) struct ModuleSpec<'a> {
    /// Module name.
    pub name: &'a str,
    /// WGSL before preprocessing.
    pub wgsl: &'a str,
    /// Preprocessor names.
    pub defines: &'a [&'a str],
    /// The source's defines (with or without values).
    pub consts: &'a [orrery_core::gpu::Define],
    /// Whether the source is orrery's own (compiled with [`ORRERY_CHECKS`]); only for the
    /// sources the SAFETY comment of `create_module` covers.
    pub trusted: bool,
}

impl ModuleSpec<'_> {
    /// The text naga compiles: [`ModuleSpec::text`] through the preprocessor, with the
    /// preprocessor names and every define's name (valued or not) defined.
    pub(crate) fn preprocessed(&self) -> Result<String> {
        let mut names: Vec<&str> = self.defines.to_vec();
        names.extend(self.consts.iter().map(|d| d.name));
        preprocess(&self.text(), &names, &shaders::include)
            .map_err(|log| compile_error(self.name, "WGSL preprocessor", log))
    }

    /// The cache key: name, preprocessor names, the valued defines, and the checks.
    fn key(&self) -> ModuleKey {
        let mut consts: Vec<String> = self.consts.iter().map(|d| format!("{}={}", d.name, d.value)).collect();
        consts.sort_unstable();
        let checks = if self.trusted { "orrery" } else { "checked" };
        (self.name.to_owned(), format!("{}|{}|{checks}", self.defines.join(","), consts.join(",")))
    }

    /// The text compiled: the valued defines as `const` lines, then the source.
    fn text(&self) -> String {
        let mut out = String::new();
        for d in self.consts.iter().filter(|d| !d.value.is_empty()) {
            // Writing to a String cannot fail.
            let _ = writeln!(out, "const {} = {};", d.name, d.value);
        }
        out.push_str(self.wgsl);
        out
    }
}

type ModuleKey = (String, String);
type PipelineKey = (ModuleKey, String, u32, u32);

/// The runtime checks of orrery's own modules: all of wgpu's checks except loop
/// bounding (see the module docs and the SAFETY comment in `create_module`).
pub(crate) const ORRERY_CHECKS: wgpu::ShaderRuntimeChecks =
    wgpu::ShaderRuntimeChecks { force_loop_bounding: false, ..wgpu::ShaderRuntimeChecks::checked() };

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

/// What [`reflect`] finds.
pub(crate) struct Reflected {
    /// The bindings of each compute entry point, by name.
    pub entries: HashMap<String, Arc<EntryBindings>>,
    /// Whether the module declares `override WORKGROUP_SIZE`.
    pub workgroup_override: bool,
    /// Whether the module declares `override DYNAMIC_SHARED_WORDS`.
    pub shared_override: bool,
}

/// The checked type of a uniform member.
fn member_type(inner: &naga::TypeInner) -> MemberType {
    use naga::{ScalarKind as K, TypeInner as T, VectorSize};
    match inner {
        T::Scalar(s) => match (s.kind, s.width) {
            (K::Uint, 4) => MemberType::U32,
            (K::Sint, 4) => MemberType::I32,
            (K::Float, 4) => MemberType::F32,
            (K::Float, 8) => MemberType::F64,
            (K::Uint, 8) => MemberType::U64,
            _ => MemberType::Other,
        },
        T::Vector { size: VectorSize::Bi, scalar } if scalar.kind == K::Uint && scalar.width == 4 => MemberType::U64,
        _ => MemberType::Other,
    }
}

/// Parses and validates a preprocessed WGSL source with the capabilities of a device with
/// `features`, as the executor does before handing the source to wgpu.
pub(crate) fn parse_and_validate(
    name: &str,
    text: &str,
    features: wgpu::Features,
) -> Result<(naga::Module, naga::valid::ModuleInfo)> {
    let module = naga::front::wgsl::parse_str(text).map_err(|e| compile_error(name, "WGSL", e.emit_to_string(text)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), capabilities(features))
        .validate(&module)
        .map_err(|e| compile_error(name, "WGSL", e.emit_to_string(text)))?;
    Ok((module, info))
}

/// Parses, validates and reflects a preprocessed WGSL source.
fn reflect(name: &str, text: &str, features: wgpu::Features) -> Result<Reflected> {
    let (module, info) = parse_and_validate(name, text, features)?;
    reflect_module(name, &module, &info)
}

/// The compute entry points of a validated module with the bindings each uses, and
/// whether it declares the `WORKGROUP_SIZE` and `DYNAMIC_SHARED_WORDS` overrides.
pub(crate) fn reflect_module(name: &str, module: &naga::Module, info: &naga::valid::ModuleInfo) -> Result<Reflected> {
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
                    let stride = match &module.types[var.ty].inner {
                        naga::TypeInner::Array { stride, .. } => Some(*stride),
                        _ => None,
                    };
                    BindingKind::Storage { read_only: !access.contains(naga::StorageAccess::STORE), stride }
                }
                naga::AddressSpace::Uniform => {
                    let inner = &module.types[var.ty].inner;
                    let size = inner.size(module.to_ctx());
                    let members = match inner {
                        naga::TypeInner::Struct { members, .. } => members
                            .iter()
                            .map(|m| {
                                let inner = &module.types[m.ty].inner;
                                Member {
                                    name: m.name.clone().unwrap_or_default(),
                                    offset: m.offset,
                                    size: inner.size(module.to_ctx()),
                                    ty: member_type(inner),
                                }
                            })
                            .collect(),
                        other => vec![Member { name: String::new(), offset: 0, size, ty: member_type(other) }],
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
            bindings.push(Binding { binding: binding.binding, name: var.name.clone().unwrap_or_default(), kind });
        }
        bindings.sort_by_key(|b| b.binding);
        if let Some(pair) = bindings.windows(2).find(|w| w[0].binding == w[1].binding) {
            return Err(compile_error(
                name,
                "WGSL",
                format!("entry point {} uses binding {} twice", ep.name, pair[0].binding),
            ));
        }
        if bindings.iter().filter(|b| matches!(b.kind, BindingKind::Uniform { .. })).count() > 1 {
            return Err(compile_error(
                name,
                "WGSL",
                format!("entry point {} uses more than one uniform: the scalars are one struct", ep.name),
            ));
        }
        entries.insert(ep.name.clone(), Arc::new(EntryBindings { bindings }));
    }
    let has = |n: &str| module.overrides.iter().any(|(_, o)| o.name.as_deref() == Some(n));
    Ok(Reflected { entries, workgroup_override: has("WORKGROUP_SIZE"), shared_override: has("DYNAMIC_SHARED_WORDS") })
}

/// Compiles `desc` with [`ORRERY_CHECKS`] when `trusted` (orrery's own source), else
/// with all of wgpu's runtime checks.
fn create_module(device: &wgpu::Device, desc: wgpu::ShaderModuleDescriptor<'_>, trusted: bool) -> wgpu::ShaderModule {
    if !trusted {
        return device.create_shader_module(desc);
    }
    // SAFETY: `create_shader_module_trusted` makes the caller answer for the checks it turns
    // off; ORRERY_CHECKS turns off only loop bounding (bounds checks, integer-division checks
    // and the rest stay on), and only for orrery's own sources (`trusted`: a core module, or a
    // source whose text is orrery's, `shaders::is_orrery_module`).
    //
    // What loop bounding protects against: naga gives every loop a 64-bit iteration counter
    // that leaves it after 2^64 iterations, so that no loop is infinite. The driver's compiler
    // (LLVM in lavapipe and under Metal, NVIDIA's in its Vulkan driver) may assume that a loop
    // without side effects ends, treat one that cannot as unreachable and optimise other code
    // on that assumption: undefined behaviour that a browser must not allow any web page. The
    // counter costs a few integer operations per iteration (a 21-iteration bit loop on the H200:
    // 4.27 ms with it, 2.81 ms without, examples/wgpu_probe.rs).
    //
    // Why every loop of shaders/ ends, for the parameters and buffers orrery's host code passes
    // (the cases, each with its files):
    // - Counted loops, `for (i = a; i < b; i += s)` or counting down to a bound (`l > 0u; l--`,
    //   `j >= 1u; j--`): s >= 1 (a literal, WORKGROUP_SIZE >= 1 (the launch checks threads >=
    //   1), or balltree's LOCAL_THREADS, which cannot be 0: `LOCAL_ITEMS = LOCAL_CAPACITY /
    //   LOCAL_THREADS` would not compile), b a literal, a parameter or a buffer length, far
    //   from 2^32 - s, so i never wraps past b. The two counted `<=` bounds are small:
    //   sim_wanted_rung's `r <= levels` with levels <= orrery-sim's MAX_LEVELS = 20
    //   (TimeSteps::check), tree/view's `lv <= top` with top <= the key's levels (21 or 63).
    //   (Only levels = u32::MAX would make either endless; a caller who launches these modules
    //   by hand with it hangs the device with loop bounding as well: 2^64 iterations.)
    // - Doubling and halving loops: bitonic `k <<= 1u` to S <= 2048 (balltree/local), `span <<=
    //   1u` and `while size < count` to count <= MAX_TOP_K = 1024 (core/segmented); `w >>= 1u`,
    //   `stride >>= 1u` down to 0.
    // - Binary searches `while count > 0u` (core/search, core/segment, core/segmented,
    //   tree/passes, tree/nf_count, tree/view): count strictly decreases every iteration. The
    //   galloping searches of tree/nf_count (`loop` in nf_leaf_holding) double a step that
    //   saturates at 0xffffffff and stop once it passes either end: at most 33 iterations.
    // - Linear scans whose index grows to a bound in the condition: `while s + 1u < segments &&
    //   ..` (balltree/levels, select), `while last < nodes && ..` (traverse/upward), `while r <
    //   rung && ..` (sim/integrate); the extents loop of traverse/upward stops at MAX_LEVELS =
    //   64 steps.
    // - Tree walks (traverse/walk: `while node != NONE` in the walks, and the `loop` that
    //   breaks at NONE in the coherent walk without subgroups): they follow first-child and escape links, which the
    //   TreeView builds as a forward preorder (WalkNodes::check verifies that on the host), so
    //   a walk visits each node at most once. These are the only loops whose end depends on
    //   buffer contents: links that are not a forward preorder (memory corrupted by other code)
    //   could make a walk run on; it would hang with loop bounding too (2^64 iterations), and
    //   the bounds checks still keep every access inside its binding.
    // - Spin loops, waiting for a flag another workgroup sets (decoupled look-back): none.
    //   WebGPU promises no forward progress between workgroups, so the scans are
    //   reduce-then-scan (core/scan) and no kernel waits on another invocation except at
    //   barriers.
    unsafe { device.create_shader_module_trusted(desc, ORRERY_CHECKS) }
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
    /// The module of `spec`, compiling it on first use.
    pub(crate) fn module(&mut self, device: &wgpu::Device, spec: &ModuleSpec<'_>) -> Result<Arc<CompiledModule>> {
        let key = spec.key();
        if let Some(m) = self.modules.get(&key) {
            return Ok(m.clone());
        }
        let name = spec.name;
        let text = spec.preprocessed()?;
        let reflected = reflect(name, &text, device.features())?;
        let desc =
            wgpu::ShaderModuleDescriptor { label: Some(name), source: wgpu::ShaderSource::Wgsl(text.as_str().into()) };
        let module = with_validation(
            device,
            || create_module(device, desc, spec.trusted),
            |log| compile_error(name, "WGSL", log),
        )?;
        let compiled = Arc::new(CompiledModule {
            module,
            entries: reflected.entries,
            has_workgroup_override: reflected.workgroup_override,
            has_shared_override: reflected.shared_override,
        });
        self.modules.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// The pipeline of `entry` in the module of `spec` with `WORKGROUP_SIZE =
    /// workgroup_size` and, when the module declares it, `DYNAMIC_SHARED_WORDS =
    /// shared_words` (at least 1). `zero_workgroup_memory: false` is only for kernels
    /// that never read shared memory before writing it (WGSL otherwise promises zeroes).
    ///
    /// # Errors
    /// Compile errors; [`Error::KernelSignature`] for dynamic shared memory asked of a
    /// module without the override.
    pub(crate) fn pipeline(
        &mut self,
        device: &wgpu::Device,
        spec: &ModuleSpec<'_>,
        entry: &str,
        workgroup_size: u32,
        shared_words: u32,
        zero_workgroup_memory: bool,
    ) -> Result<Arc<Pipeline>> {
        let key = (spec.key(), entry.to_owned(), workgroup_size, shared_words);
        if let Some(p) = self.pipelines.get(&key) {
            return Ok(p.clone());
        }
        let name = spec.name;
        let module = self.module(device, spec)?;
        let bindings = module.entries.get(entry).cloned().ok_or_else(|| {
            let mut names: Vec<&str> = module.entries.keys().map(String::as_str).collect();
            names.sort_unstable();
            compile_error(
                name,
                "WGSL",
                format!("no compute entry point {entry:?}; the module has {}", names.join(", ")),
            )
        })?;
        if shared_words > 0 && !module.has_shared_override {
            return Err(Error::KernelSignature {
                module: name.to_owned(),
                entry: entry.to_owned(),
                reason: format!(
                    "the launch asks for {} bytes of dynamic shared memory but the module declares no \
                     `override DYNAMIC_SHARED_WORDS: u32;`",
                    u64::from(shared_words) * 4
                ),
            });
        }
        let label = format!("{name}::{entry}");
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .bindings
            .iter()
            .map(|b| wgpu::BindGroupLayoutEntry {
                binding: b.binding,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: match &b.kind {
                        BindingKind::Storage { read_only, .. } => {
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
        let mut constants: Vec<(&str, f64)> = Vec::new();
        if module.has_workgroup_override {
            constants.push(("WORKGROUP_SIZE", f64::from(workgroup_size)));
        }
        if module.has_shared_override {
            constants.push(("DYNAMIC_SHARED_WORDS", f64::from(shared_words.max(1))));
        }
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
        let pipeline = Arc::new(Pipeline {
            compute: pipeline,
            layout,
            bindings,
            module: name.to_owned(),
            entry: entry.to_owned(),
        });
        self.pipelines.insert(key, pipeline.clone());
        Ok(pipeline)
    }
}

#[cfg(test)]
mod tests {
    use super::{ModuleSpec, ORRERY_CHECKS};

    /// orrery's modules drop loop bounding only: every other runtime check stays on.
    #[test]
    fn orrery_modules_keep_every_check_but_loop_bounding() {
        let c = ORRERY_CHECKS;
        assert!(!c.force_loop_bounding);
        assert!(c.bounds_checks && c.int_div_checks && c.ray_query_initialization_tracking);
        assert!(c.task_shader_dispatch_tracking && c.mesh_shader_primitive_indices_clamp);
    }

    /// The same source compiled trusted and checked are two cache entries.
    #[test]
    fn the_checks_are_part_of_the_module_key() {
        let spec = ModuleSpec { name: "m", wgsl: "", defines: &[], consts: &[], trusted: true };
        assert_ne!(spec.key(), ModuleSpec { trusted: false, ..spec }.key());
    }
}
