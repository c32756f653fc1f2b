//! The executor's WGSL compilation without a device, for tools.
//!
//! A WGSL error otherwise shows up only when a pipeline is first built on an adapter, and
//! only for the variant that adapter compiles (with or without subgroups, with or without
//! `SHADER_F64`). `cargo xtask kernels` validates every variant on a machine without a
//! GPU through this module, which reuses the executor's own steps:
//!
//! - [`core_variants`]: every core module (`shaders/core/*.wgsl`) with every set of
//!   preprocessor names its primitives compile it with (the same helpers build them), and
//!   [`source_variants`]: a [`KernelSource`]'s WGSL as [`crate::WgpuExecutor`] compiles it.
//!   Each variant is listed with and without `SUBGROUP`, as the executor adds it when the
//!   subgroup paths are on.
//! - [`validate`]: the preprocessor (`//#if`, `//#include` of the core snippets, the
//!   source's defines as `const` lines), naga's validation with the capabilities of a
//!   device with the variant's [`ShaderVariant::features`] (the fewest under which the
//!   executor compiles it, so a variant that validates here validates on every adapter
//!   that runs it), and the reflection the executor checks launches with: the bindings
//!   each compute entry point uses, with their element and member types.

use orrery_core::{DType, Define, KernelSource, ReduceOp, Result};
use wgpu::naga;

use crate::context::with_subgroup;
use crate::pipeline_cache::{self, BindingKind, ModuleSpec};
use crate::primitives::keys::{Variant as SfcVariant, sfc_defines};
use crate::primitives::reduce::reduce_defines;
use crate::primitives::segmented::{dtype_defines, segmented_reduce_defines};
use crate::shaders::{self, CoreModule};

/// One WGSL module as the executor may compile it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShaderVariant {
    /// Module name (e.g. `core/reduce`, `tree/view`).
    pub module: &'static str,
    /// The WGSL source before preprocessing.
    pub wgsl: &'static str,
    /// Preprocessor names, sorted (`SUBGROUP` among them when the subgroup paths are on).
    pub defines: Vec<&'static str>,
    /// The [`KernelSource`]'s defines (valued ones become `const` lines); empty for core
    /// modules.
    pub consts: &'static [Define],
    /// The device features the executor compiles this variant with at least: `SUBGROUP`
    /// for the subgroup paths, `SHADER_F64` for f64 arithmetic.
    pub features: wgpu::Features,
}

impl ShaderVariant {
    /// `module [NAME NAME=VALUE ...]`: the module and everything it is compiled with.
    pub fn label(&self) -> String {
        let mut parts: Vec<String> = self.defines.iter().map(|d| (*d).to_owned()).collect();
        parts.extend(
            self.consts
                .iter()
                .map(|d| if d.value.is_empty() { d.name.to_owned() } else { format!("{}={}", d.name, d.value) }),
        );
        if parts.is_empty() { self.module.to_owned() } else { format!("{} [{}]", self.module, parts.join(" ")) }
    }
}

/// A core module's variant with `defines`, with and without the subgroup paths; `f64`
/// when it needs `SHADER_F64`.
fn core_pair(out: &mut Vec<ShaderVariant>, module: CoreModule, defines: &[&'static str], f64: bool) {
    for subgroups in [false, true] {
        let mut features = wgpu::Features::empty();
        if subgroups {
            features |= wgpu::Features::SUBGROUP;
        }
        if f64 {
            features |= wgpu::Features::SHADER_F64;
        }
        let variant = ShaderVariant {
            module: module.name,
            wgsl: module.wgsl,
            defines: with_subgroup(defines, subgroups),
            consts: &[],
            features,
        };
        if !out.contains(&variant) {
            out.push(variant);
        }
    }
}

/// Every element type of the typed primitives.
const DTYPES: [DType; 6] = [DType::U32, DType::I32, DType::F32, DType::U64, DType::I64, DType::F64];
/// Every reduction.
const OPS: [ReduceOp; 3] = [ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];

/// Every core module with every set of preprocessor names the primitives compile it
/// with, with and without `SUBGROUP` (the subgroup probe only with it, as it runs).
pub fn core_variants() -> Vec<ShaderVariant> {
    let mut out = Vec::new();
    for module in [shaders::DATA, shaders::SCAN, shaders::RADIX_SORT, shaders::HISTOGRAM] {
        core_pair(&mut out, module, &[], false);
    }
    // `reduce` refuses f64 without SHADER_F64.
    for dtype in DTYPES {
        for op in OPS {
            for subgroups in [false, true] {
                let defines = reduce_defines(dtype, op, subgroups);
                let mut features = wgpu::Features::empty();
                if subgroups {
                    features |= wgpu::Features::SUBGROUP;
                }
                if dtype == DType::F64 {
                    features |= wgpu::Features::SHADER_F64;
                }
                let variant = ShaderVariant {
                    module: shaders::REDUCE.name,
                    wgsl: shaders::REDUCE.wgsl,
                    defines: with_subgroup(&defines, subgroups),
                    consts: &[],
                    features,
                };
                if !out.contains(&variant) {
                    out.push(variant);
                }
            }
        }
    }
    // `sfc_keys` compiles one variant per curve and Hilbert table (Morton, the three-level
    // table, its one-level fallback) and defines F64 exactly where the adapter has
    // SHADER_F64.
    for variant in SfcVariant::ALL {
        core_pair(&mut out, shaders::SFC, &sfc_defines(variant, false), false);
        core_pair(&mut out, shaders::SFC, &sfc_defines(variant, true), true);
    }
    // Bounds compare order keys of the raw words: every type, no SHADER_F64.
    for dtype in DTYPES {
        core_pair(&mut out, shaders::SEARCH, dtype_defines(dtype), false);
    }
    // Segmented scans are u32; top-k compares raw words (every type); reductions sum
    // f64 only with SHADER_F64 (min and max compare words).
    core_pair(&mut out, shaders::SEGMENTED, &["T_U32"], false);
    for dtype in DTYPES {
        core_pair(&mut out, shaders::SEGMENTED, dtype_defines(dtype), false);
        for op in OPS {
            let f64 = dtype == DType::F64 && op == ReduceOp::Sum;
            core_pair(&mut out, shaders::SEGMENTED, &segmented_reduce_defines(dtype, op), f64);
        }
    }
    out.push(ShaderVariant {
        module: shaders::PROBE.name,
        wgsl: shaders::PROBE.wgsl,
        defines: vec!["SUBGROUP"],
        consts: &[],
        features: wgpu::Features::SUBGROUP,
    });
    out
}

/// `source`'s WGSL as [`crate::WgpuExecutor`] compiles it: its defines, without and
/// with `SUBGROUP`. Algorithm kernels are f32 only, so no variant needs `SHADER_F64`.
pub fn source_variants(source: &KernelSource) -> Vec<ShaderVariant> {
    [false, true]
        .into_iter()
        .map(|subgroups| ShaderVariant {
            module: source.name,
            wgsl: source.wgsl,
            defines: with_subgroup(&[], subgroups),
            consts: source.defines,
            features: if subgroups { wgpu::Features::SUBGROUP } else { wgpu::Features::empty() },
        })
        .collect()
}

/// The text of a core `//#include` snippet (`core/common`, `core/wg_scan`,
/// `core/segment`), as the preprocessor splices it.
pub fn include(name: &str) -> Option<&'static str> {
    shaders::include(name)
}

/// A variant that passed validation, with its reflection.
#[derive(Debug, Clone)]
pub struct ValidatedModule {
    /// The text naga validated (after preprocessing).
    pub text: String,
    /// Every compute entry point, in the module's order.
    pub entries: Vec<Entry>,
}

/// One compute entry point and the bindings it statically uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Its bindings (all in group 0), by binding number.
    pub bindings: Vec<EntryBinding>,
}

/// One binding an entry point uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryBinding {
    /// The binding number.
    pub binding: u32,
    /// The variable's name.
    pub name: String,
    /// What it is.
    pub kind: BindingUse,
}

/// A storage buffer or the parameter block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingUse {
    /// `var<storage, read>` or `var<storage, read_write>`.
    Storage {
        /// Whether the entry point only reads it.
        read_only: bool,
        /// The element type of the runtime-sized array it holds (`u32`, `vec2<u32>`,
        /// `atomic<u32>`, ...), or the variable's type when it is not an array.
        element: String,
        /// The array's byte stride.
        stride: Option<u32>,
    },
    /// The `var<uniform>` parameter block.
    Uniform {
        /// Its members in order (one unnamed member when the type is not a struct).
        members: Vec<UniformMember>,
    },
}

/// One member of a parameter block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UniformMember {
    /// Its name (`off_<binding variable>` members receive a view's element offset).
    pub name: String,
    /// Its WGSL type (`u32`, `f32`, `vec2<u32>`, ...).
    pub ty: String,
    /// Byte size.
    pub size: u32,
}

/// A scalar's WGSL name.
fn scalar_name(s: naga::Scalar) -> String {
    let kind = match s.kind {
        naga::ScalarKind::Uint => "u",
        naga::ScalarKind::Sint => "i",
        naga::ScalarKind::Float => "f",
        naga::ScalarKind::Bool => return "bool".to_owned(),
        naga::ScalarKind::AbstractInt => return "abstract-int".to_owned(),
        naga::ScalarKind::AbstractFloat => return "abstract-float".to_owned(),
    };
    format!("{kind}{}", u32::from(s.width) * 8)
}

/// A type's WGSL name, as far as kernel arguments use types.
fn type_name(module: &naga::Module, ty: naga::Handle<naga::Type>) -> String {
    let t = &module.types[ty];
    match &t.inner {
        naga::TypeInner::Scalar(s) => scalar_name(*s),
        naga::TypeInner::Vector { size, scalar } => format!("vec{}<{}>", *size as u8, scalar_name(*scalar)),
        naga::TypeInner::Atomic(s) => format!("atomic<{}>", scalar_name(*s)),
        naga::TypeInner::Array { base, size, .. } => match size {
            naga::ArraySize::Constant(n) => format!("array<{}, {n}>", type_name(module, *base)),
            _ => format!("array<{}>", type_name(module, *base)),
        },
        naga::TypeInner::Struct { .. } => t.name.clone().unwrap_or_else(|| "struct".to_owned()),
        other => format!("{other:?}"),
    }
}

/// Preprocesses, validates and reflects `variant` exactly as the executor does before
/// creating its shader module, without a device.
///
/// # Errors
/// [`orrery_core::Error::KernelCompile`] with the preprocessor's message or naga's
/// annotated listing (target `WGSL preprocessor` or `WGSL`).
pub fn validate(variant: &ShaderVariant) -> Result<ValidatedModule> {
    // Validation creates no module, so the runtime checks (`trusted`) do not matter here.
    let spec = ModuleSpec {
        name: variant.module,
        wgsl: variant.wgsl,
        defines: &variant.defines,
        consts: variant.consts,
        trusted: true,
    };
    let text = spec.preprocessed()?;
    let (module, info) = pipeline_cache::parse_and_validate(variant.module, &text, variant.features)?;
    let reflected = pipeline_cache::reflect_module(variant.module, &module, &info)?;
    let global_type = |binding: u32, name: &str| {
        module
            .global_variables
            .iter()
            .find(|(_, v)| {
                v.binding.as_ref().is_some_and(|b| b.group == 0 && b.binding == binding)
                    && v.name.as_deref() == Some(name)
            })
            .map(|(_, v)| v.ty)
    };
    let mut entries = Vec::new();
    for ep in module.entry_points.iter().filter(|ep| ep.stage == naga::ShaderStage::Compute) {
        let Some(bindings) = reflected.entries.get(&ep.name) else { continue };
        let bindings = bindings
            .bindings
            .iter()
            .map(|b| {
                let ty = global_type(b.binding, &b.name);
                let kind = match &b.kind {
                    BindingKind::Storage { read_only, stride } => {
                        let element = ty.map_or_else(String::new, |ty| match &module.types[ty].inner {
                            naga::TypeInner::Array { base, .. } => type_name(&module, *base),
                            _ => type_name(&module, ty),
                        });
                        BindingUse::Storage { read_only: *read_only, element, stride: *stride }
                    }
                    BindingKind::Uniform { members, .. } => {
                        let struct_members = ty.and_then(|ty| match &module.types[ty].inner {
                            naga::TypeInner::Struct { members, .. } => Some(members.clone()),
                            _ => None,
                        });
                        let members = members
                            .iter()
                            .enumerate()
                            .map(|(i, m)| UniformMember {
                                name: m.name.clone(),
                                ty: match (&struct_members, ty) {
                                    (Some(s), _) => s.get(i).map_or_else(String::new, |sm| type_name(&module, sm.ty)),
                                    (None, Some(ty)) => type_name(&module, ty),
                                    (None, None) => String::new(),
                                },
                                size: m.size,
                            })
                            .collect();
                        BindingUse::Uniform { members }
                    }
                };
                EntryBinding { binding: b.binding, name: b.name.clone(), kind }
            })
            .collect();
        entries.push(Entry { name: ep.name.clone(), bindings });
    }
    Ok(ValidatedModule { text, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every core module is listed, and every listed variant validates.
    #[test]
    fn every_core_variant_validates() {
        let variants = core_variants();
        for module in [
            shaders::DATA,
            shaders::SCAN,
            shaders::REDUCE,
            shaders::RADIX_SORT,
            shaders::SFC,
            shaders::PROBE,
            shaders::SEARCH,
            shaders::SEGMENTED,
            shaders::HISTOGRAM,
        ] {
            assert!(variants.iter().any(|v| v.module == module.name), "{} has no variant", module.name);
        }
        for v in &variants {
            assert_eq!(v.defines.contains(&"SUBGROUP"), v.features.contains(wgpu::Features::SUBGROUP), "{}", v.label());
            let m = validate(v).unwrap_or_else(|e| panic!("{}: {e}", v.label()));
            assert!(!m.entries.is_empty(), "{}", v.label());
        }
    }

    /// The reflection names element and member types the way WGSL writes them.
    #[test]
    fn reflection_names_types() {
        static SOURCE: KernelSource = KernelSource::new(
            "test/types",
            "",
            "struct P { n: u32, k: vec2<u32>, off_b: u32 }\n\
             @group(0) @binding(0) var<storage, read> a: array<vec2<u32>>;\n\
             @group(0) @binding(1) var<storage, read_write> b: array<atomic<u32>>;\n\
             @group(0) @binding(2) var<uniform> p: P;\n\
             @compute @workgroup_size(64) fn k(@builtin(global_invocation_id) g: vec3<u32>) {\n\
                 if g.x < p.n { atomicAdd(&b[p.off_b + g.x], a[g.x].x + p.k.y); }\n\
             }\n",
        );
        let m = validate(&source_variants(&SOURCE)[0]).unwrap();
        assert_eq!(m.entries.len(), 1);
        let b = &m.entries[0].bindings;
        assert_eq!(b[0].kind, BindingUse::Storage { read_only: true, element: "vec2<u32>".into(), stride: Some(8) });
        assert_eq!(b[1].kind, BindingUse::Storage { read_only: false, element: "atomic<u32>".into(), stride: Some(4) });
        let BindingUse::Uniform { members } = &b[2].kind else { panic!("{:?}", b[2]) };
        let names: Vec<(&str, &str)> = members.iter().map(|m| (m.name.as_str(), m.ty.as_str())).collect();
        assert_eq!(names, [("n", "u32"), ("k", "vec2<u32>"), ("off_b", "u32")]);
    }
}
