//! The twin check: a module's CUDA entry points against its WGSL ones (the comparison
//! is defined in the documentation of [`super`]), with the explicit list of exceptions.

use std::collections::{BTreeMap, BTreeSet};

use orrery_backend_wgpu::offline::{BindingUse, Entry, UniformMember};

use super::cuda::{CudaEntry, CudaParam, canonical};

/// What an exception allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// A CUDA entry point without a WGSL twin.
    CudaOnly,
    /// WGSL reads a 4-byte CUDA element type other than `u32` (a float) as `u32` words
    /// (plain or atomic): the same bytes, compared or updated as integers.
    Words,
}

/// One allowed difference, with its reason.
#[derive(Debug, Clone, Copy)]
pub struct Exception {
    /// Module name.
    pub module: &'static str,
    /// Entry point.
    pub entry: &'static str,
    /// What is allowed.
    pub side: Side,
    /// Why.
    pub reason: &'static str,
}

/// WGSL has no f64 on most adapters (and none in orrery's algorithm kernels, which are f32
/// only on wgpu); the host launches these only for f64 data, which the wgpu executor
/// refuses before any launch.
const F64: &str = "f64 arithmetic: the WGSL kernels are f32 only (the host refuses f64 on wgpu)";

/// Entry points that exist in one language only, on purpose. An exception that no longer
/// matches anything is an error, so the list stays exact.
pub const EXCEPTIONS: &[Exception] = &[
    // orrery-balltree: "The f64 entry points exist in CUDA only" (gpu/kernels.rs).
    Exception { module: "balltree/levels", entry: "bt_bounds_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/levels", entry: "bt_sbounds_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/levels", entry: "bt_choose_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/levels", entry: "bt_keys_f64", side: Side::CudaOnly, reason: F64 },
    Exception {
        module: "balltree/levels",
        entry: "bt_reset_bounds_u64",
        side: Side::CudaOnly,
        reason: "resets the u64 bounds of f64 codes (\"CUDA only\", gpu/levels.rs); f32 codes are u32",
    },
    Exception {
        module: "balltree/levels",
        entry: "bt_node_keys",
        side: Side::CudaOnly,
        reason: "the f64 LevelSort path only: f64 sorts the 64-bit codes first, then the node keys this \
                 writes (gpu/levels.rs); f32 sorts once over 32 + node bits",
    },
    Exception { module: "balltree/select", entry: "bt_transpose_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/select", entry: "bt_select_count_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/select", entry: "bt_select_find_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/select", entry: "bt_select_flags_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/select", entry: "bt_select_scatter_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "balltree/local", entry: "bt_local_f64", side: Side::CudaOnly, reason: F64 },
    // orrery-tree-build: `CUDA_ONLY` (gpu/kernels.rs) and `tv_boxes_f64` (gpu_view/kernels.rs).
    Exception { module: "tree/keys", entry: "tb_binary_keys_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "tree/view", entry: "tv_boxes_f64", side: Side::CudaOnly, reason: F64 },
    Exception {
        module: "tree/keys",
        entry: "tb_remove_outside_f32",
        side: Side::Words,
        reason: "x, y, z and bounds are compared as order-preserving codes of the f32 bits, so NaN is \
                 found from its bits whatever the WGSL compiler assumes about NaN (keys.wgsl); the f64 \
                 twin reads vec2<u32> words the same way",
    },
    // orrery-traverse: `CUDA_ONLY_ENTRIES` (gpu/mod.rs): the f64 reference direct sums.
    Exception { module: "traverse/direct", entry: "direct_f64", side: Side::CudaOnly, reason: F64 },
    Exception { module: "traverse/direct", entry: "direct_targets_f64", side: Side::CudaOnly, reason: F64 },
    Exception {
        module: "traverse/upward",
        entry: "tu_extents",
        side: Side::Words,
        reason: "WGSL has no f32 atomics: both languages atomicMax the f32 bits of d^2 as u32 (CUDA casts \
                 `extents` to u32*; non-negative floats order like their bits), so the bytes are the same",
    },
];

/// Modules with CUDA text only. The core primitives are launched by each executor's own
/// host code, and the two executors decompose them differently (CUDA: single-pass
/// decoupled look-back scans and a one-sweep radix sort; wgpu, where WebGPU promises no
/// forward progress between workgroups: reduce-then-scan and count/scatter digit
/// passes), so `kernels/core/*.cu` and `shaders/core/*.wgsl` have no entry-for-entry
/// twins; the WGSL core modules are validated on their own.
pub const CUDA_ONLY_MODULES: &[(&str, &str)] = &[
    ("core/scan", CORE),
    ("core/reduce", CORE),
    ("core/sort", CORE),
    ("core/movement", CORE),
    ("core/sfc", CORE),
    ("core/search", CORE),
    ("core/segmented", CORE),
    ("core/histogram", CORE),
    (
        "traverse/fmm",
        "the FMM's expansions are f64 (orders up to 16, errors down to 1e-10: out of f32's reach) and \
         WGSL has no f64 arithmetic, so wgpu has no expansion passes (the host returns \
         Error::Unsupported there: orrery-traverse gpu/fmm/mod.rs); the near field, traverse/fmm_p2p, \
         has both texts",
    ),
    (
        "clusters/probe",
        "the inverted file and the lattice score every candidate in f64 in the CPU's order (bit-equal \
         centroids, lists and neighbours); WGSL has no f64, so wgpu has neither (the host returns \
         Error::Unsupported there: orrery-clusters gpu/probe.rs)",
    ),
    (
        "clusters/knn",
        "exact k-NN rescores its candidates in f64 in the CPU's order, so that rows and scores equal \
         the CPU's bit for bit; WGSL has no f64, so wgpu has no exact search (the host returns \
         Error::Unsupported there: orrery-clusters gpu/knn.rs)",
    ),
];

const CORE: &str = "a core primitive: each executor has its own kernels (see CUDA_ONLY_MODULES)";

/// One difference found.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// Module label.
    pub module: String,
    /// Entry point (empty for the module as a whole).
    pub entry: String,
    /// What differs.
    pub message: String,
}

/// What the check found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Modules compared (both texts present).
    pub modules: usize,
    /// Entry points present in both languages and compared.
    pub compared: usize,
    /// Differences not in the exceptions: each fails the check.
    pub mismatches: Vec<Finding>,
    /// Differences an exception allows, with its reason.
    pub allowed: Vec<(Finding, &'static str)>,
    /// Observations that do not fail the check (a CUDA buffer the WGSL entry does not
    /// use or names differently, an `off_*` field for a variable it does not bind).
    pub notes: Vec<Finding>,
}

/// One module to compare: its name, label, CUDA entries, and the entries of each
/// validated WGSL variant (variant label, entries).
pub struct Pair<'a> {
    /// Module name (what exceptions name).
    pub module: &'a str,
    /// Module label (name and defines).
    pub label: String,
    /// The CUDA entry points.
    pub cuda: &'a [CudaEntry],
    /// The WGSL entry points of each variant.
    pub wgsl: Vec<(String, &'a [Entry])>,
}

/// Whether a CUDA buffer's element type and a WGSL storage array's element agree:
/// the same type (an `atomic<T>` is a `T`), or a 64-bit CUDA type against `vec2<u32>`
/// (WGSL reads u64, i64 and f64 as their two 32-bit words, low first).
pub fn buffer_compatible(cuda: &str, wgsl: &str) -> bool {
    let w = wgsl.strip_prefix("atomic<").and_then(|r| r.strip_suffix('>')).unwrap_or(wgsl);
    match canonical(cuda) {
        Some(c) => c == w || (matches!(c, "u64" | "i64" | "f64") && w == "vec2<u32>"),
        None => false,
    }
}

/// Whether a CUDA scalar parameter and a parameter-block field agree, as the executors
/// pass scalars: the same type, or a 64-bit integer as `vec2<u32>` (low word first).
pub fn scalar_compatible(cuda: &str, wgsl: &str) -> bool {
    match canonical(cuda) {
        Some(c @ ("u64" | "i64")) => wgsl == "vec2<u32>" || wgsl == c,
        Some(c) => c == wgsl,
        None => false,
    }
}

/// Whether WGSL's element `wgsl` is `u32` words (plain or atomic) of a 4-byte CUDA
/// type other than `u32`: the difference a [`Side::Words`] exception allows.
fn read_as_words(cuda: &str, wgsl: &str) -> bool {
    matches!(wgsl, "u32" | "atomic<u32>")
        && canonical(cuda).is_some_and(|c| c != "u32" && super::cuda::base_size(c) == Some(4))
}

/// Whether a WGSL binding variable is named after its CUDA parameter: the same name, or
/// the name after a prefix that keeps a module's globals apart (`su_count` for `count`).
fn same_buffer_name(cuda: &str, wgsl: &str) -> bool {
    wgsl == cuda || wgsl.strip_suffix(cuda).is_some_and(|prefix| prefix.ends_with('_'))
}

/// What [`compare_entry`] finds.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// Differences that fail the check.
    pub mismatches: Vec<String>,
    /// Buffers WGSL reads as `u32` words of another 4-byte type (fail unless a
    /// [`Side::Words`] exception allows them).
    pub words: Vec<String>,
    /// Observations.
    pub notes: Vec<String>,
}

/// Compares one CUDA entry with one WGSL entry of the same name.
pub fn compare_entry(cuda: &CudaEntry, wgsl: &Entry) -> Comparison {
    let mut found = Comparison::default();
    let split = cuda.params.iter().position(|p| !p.pointer).unwrap_or(cuda.params.len());
    let (buffers, scalars) = cuda.params.split_at(split);
    if let Some(k) = scalars.iter().position(|p| p.pointer) {
        found.mismatches.push(format!(
            "CUDA parameter {} ({}) is a pointer after a scalar: buffers come first",
            split + k,
            scalars[k].name
        ));
    }
    let mut used = BTreeSet::new();
    let mut storage_names = BTreeSet::new();
    let mut uniform = None;
    for b in &wgsl.bindings {
        match &b.kind {
            BindingUse::Storage { read_only, element, .. } => {
                storage_names.insert(b.name.as_str());
                if let Some(p) = buffers.get(b.binding as usize) {
                    used.insert(b.binding as usize);
                    compare_buffer(p, b.binding, &b.name, *read_only, element, &mut found);
                } else {
                    found.mismatches.push(format!(
                        "WGSL binding {} ({}) has no CUDA buffer: CUDA has {} buffer(s)",
                        b.binding,
                        b.name,
                        buffers.len()
                    ));
                }
            }
            BindingUse::Uniform { members } => uniform = Some((b, members)),
        }
    }
    for (i, p) in buffers.iter().enumerate().filter(|(i, _)| !used.contains(i)) {
        found.notes.push(format!("CUDA buffer {i} ({}) is not used by the WGSL entry", p.name));
    }
    match uniform {
        None if !scalars.is_empty() => found
            .mismatches
            .push(format!("CUDA has {} scalar(s), the WGSL entry uses no parameter block", scalars.len())),
        None => {}
        Some((b, members)) => {
            if b.binding as usize != buffers.len() {
                found.mismatches.push(format!(
                    "the WGSL parameter block {} is at binding {}, CUDA has {} buffer(s) (so it must be at {})",
                    b.name,
                    b.binding,
                    buffers.len(),
                    buffers.len()
                ));
            }
            compare_block(scalars, members, &storage_names, &mut found);
        }
    }
    found
}

/// One CUDA buffer parameter against the WGSL storage binding `binding` (`name`).
fn compare_buffer(p: &CudaParam, binding: u32, name: &str, read_only: bool, element: &str, found: &mut Comparison) {
    if !same_buffer_name(&p.name, name) {
        found.notes.push(format!("buffer {binding}: CUDA names it `{}`, WGSL `{name}`", p.name));
    }
    if p.constant != read_only {
        found.mismatches.push(format!(
            "buffer {binding} ({}): CUDA's pointer is {}, WGSL's {name} is var<storage, {}>",
            p.name,
            if p.constant { "const" } else { "not const" },
            if read_only { "read" } else { "read_write" }
        ));
    }
    if read_as_words(&p.base, element) {
        found.words.push(format!(
            "buffer {binding} ({}): CUDA `{}` elements, WGSL's {name} reads them as `{element}` words",
            p.name, p.base
        ));
    } else if !buffer_compatible(&p.base, element) {
        found.mismatches.push(format!(
            "buffer {binding} ({}): CUDA `{}` elements, WGSL's {name} holds `{element}`",
            p.name, p.base
        ));
    }
}

/// The CUDA scalars against the fields of the WGSL parameter block; `storage` are the
/// storage variables the entry binds (what `off_*` fields may name).
fn compare_block(scalars: &[CudaParam], members: &[UniformMember], storage: &BTreeSet<&str>, found: &mut Comparison) {
    let (offsets, fields): (Vec<_>, Vec<_>) = members.iter().partition(|m| m.name.starts_with("off_"));
    for m in offsets {
        if m.ty != "u32" {
            found.mismatches.push(format!("`{}` must be a u32 element offset, WGSL has `{}`", m.name, m.ty));
        }
        if !storage.contains(&m.name["off_".len()..]) {
            found.notes.push(format!("`{}` names no storage binding this entry uses (it stays 0)", m.name));
        }
    }
    if fields.len() != scalars.len() {
        let names = |v: &mut dyn Iterator<Item = &str>| v.collect::<Vec<_>>().join(", ");
        found.mismatches.push(format!(
            "CUDA has {} scalar(s) ({}), WGSL's parameter block {} field(s) ({})",
            scalars.len(),
            names(&mut scalars.iter().map(|p| p.name.as_str())),
            fields.len(),
            names(&mut fields.iter().map(|m| m.name.as_str()))
        ));
        return;
    }
    for (j, (p, m)) in scalars.iter().zip(&fields).enumerate() {
        if !scalar_compatible(&p.base, &m.ty) {
            found
                .mismatches
                .push(format!("scalar {j} ({}): CUDA `{}`, WGSL's field {} is `{}`", p.name, p.base, m.name, m.ty));
        } else if !p.name.is_empty() && p.name != m.name {
            // Two scalars of one type swapped pass every type check: only the names tell.
            found.mismatches.push(format!("scalar {j}: CUDA names it `{}`, WGSL's field is `{}`", p.name, m.name));
        }
    }
}

/// Runs the twin check over `pairs`; `cuda_only` are the modules with no WGSL text,
/// `not_compared` those left out (their WGSL does not validate: their exceptions are not
/// stale).
pub fn check(pairs: &[Pair<'_>], cuda_only: &[&str], not_compared: &[&str]) -> Outcome {
    let mut out = Outcome::default();
    let mut used = BTreeSet::new();
    let module_finding = |module: &str, message: &str| Finding {
        module: module.to_owned(),
        entry: String::new(),
        message: message.to_owned(),
    };
    for &module in cuda_only {
        if !CUDA_ONLY_MODULES.iter().any(|(m, _)| *m == module) {
            out.mismatches.push(module_finding(module, "has CUDA text but no WGSL, and is not in CUDA_ONLY_MODULES"));
        }
    }
    for (m, _) in CUDA_ONLY_MODULES {
        if !cuda_only.contains(m) {
            out.mismatches.push(module_finding(
                m,
                "is in CUDA_ONLY_MODULES but is not a CUDA-only module (any more): update the list",
            ));
        }
    }
    for pair in pairs {
        check_pair(pair, &mut out, &mut used);
    }
    for (_, x) in EXCEPTIONS.iter().enumerate().filter(|(i, x)| !used.contains(i) && !not_compared.contains(&x.module))
    {
        out.mismatches.push(Finding {
            module: x.module.to_owned(),
            entry: x.entry.to_owned(),
            message: "EXCEPTIONS lists it, but nothing it allows is found any more: remove the exception".into(),
        });
    }
    out.mismatches.sort();
    out.mismatches.dedup();
    out.notes.sort();
    out.notes.dedup();
    out
}

/// The index of the exception of `side` for `module`'s `entry`.
fn exception(module: &str, entry: &str, side: Side) -> Option<usize> {
    EXCEPTIONS.iter().position(|x| x.module == module && x.entry == entry && x.side == side)
}

/// One module of [`check`]; `used` collects the exceptions that applied.
fn check_pair(pair: &Pair<'_>, out: &mut Outcome, used: &mut BTreeSet<usize>) {
    out.modules += 1;
    let finding =
        |entry: &str, message: String| Finding { module: pair.label.clone(), entry: entry.to_owned(), message };
    let mut cuda: BTreeMap<&str, &CudaEntry> = BTreeMap::new();
    for e in pair.cuda {
        if !e.extern_c {
            out.mismatches.push(finding(&e.name, "CUDA entry is not `extern \"C\"` (its name is mangled)".into()));
        }
        cuda.insert(e.name.as_str(), e);
    }
    // Every entry name of any variant, and the variants that have it.
    let mut wgsl: BTreeMap<&str, Vec<(&str, &Entry)>> = BTreeMap::new();
    for (variant, entries) in &pair.wgsl {
        for e in *entries {
            wgsl.entry(e.name.as_str()).or_default().push((variant.as_str(), e));
        }
    }
    for (name, c) in &cuda {
        let Some(twins) = wgsl.get(name) else {
            if let Some(i) = exception(pair.module, name, Side::CudaOnly) {
                used.insert(i);
                out.allowed.push((finding(name, "CUDA only".into()), EXCEPTIONS[i].reason));
            } else {
                out.mismatches.push(finding(name, "CUDA entry without a WGSL twin".into()));
            }
            continue;
        };
        out.compared += 1;
        if twins.len() < pair.wgsl.len() {
            let missing: Vec<&str> =
                pair.wgsl.iter().map(|(v, _)| v.as_str()).filter(|v| !twins.iter().any(|(t, _)| t == v)).collect();
            out.mismatches.push(finding(name, format!("WGSL variant(s) {} lack this entry", missing.join(", "))));
        }
        // Each difference with the variants it occurs in: reported once, naming the
        // variants only when it is not in all of them.
        let mut bad: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        let mut notes = BTreeSet::new();
        let mut words = BTreeSet::new();
        for (variant, w) in twins {
            let found = compare_entry(c, w);
            for message in found.mismatches {
                bad.entry(message).or_default().push(variant);
            }
            notes.extend(found.notes);
            words.extend(found.words);
        }
        let words_allowed = exception(pair.module, name, Side::Words);
        for message in words {
            if let Some(i) = words_allowed {
                used.insert(i);
                out.allowed.push((finding(name, message), EXCEPTIONS[i].reason));
            } else {
                bad.entry(message).or_default().extend(twins.iter().map(|(v, _)| *v));
            }
        }
        for (message, variants) in bad {
            let text =
                if variants.len() >= twins.len() { message } else { format!("{message} (in {})", variants.join(", ")) };
            out.mismatches.push(finding(name, text));
        }
        out.notes.extend(notes.into_iter().map(|s| finding(name, s)));
    }
    for name in wgsl.keys().filter(|n| !cuda.contains_key(*n)) {
        out.mismatches.push(finding(name, "WGSL entry without a CUDA twin".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::cuda::entries;
    use orrery_backend_wgpu::offline::EntryBinding;

    fn storage(binding: u32, name: &str, read_only: bool, element: &str) -> EntryBinding {
        EntryBinding {
            binding,
            name: name.into(),
            kind: BindingUse::Storage { read_only, element: element.into(), stride: None },
        }
    }

    fn uniform(binding: u32, members: &[(&str, &str)]) -> EntryBinding {
        EntryBinding {
            binding,
            name: "p".into(),
            kind: BindingUse::Uniform {
                members: members
                    .iter()
                    .map(|(n, t)| UniformMember { name: (*n).into(), ty: (*t).into(), size: 4 })
                    .collect(),
            },
        }
    }

    fn cuda(text: &str) -> CudaEntry {
        entries(text).unwrap().entries.remove(0)
    }

    const K: &str = "extern \"C\" __global__ void k(const u64* keys, const float* x, u32* out, u32 n, float s) {}";

    fn twin() -> Entry {
        Entry {
            name: "k".into(),
            bindings: vec![
                storage(0, "k_keys", true, "vec2<u32>"),
                storage(1, "k_x", true, "f32"),
                storage(2, "k_out", false, "atomic<u32>"),
                uniform(3, &[("n", "u32"), ("off_k_x", "u32"), ("s", "f32")]),
            ],
        }
    }

    #[test]
    fn twins_following_the_convention_match() {
        assert_eq!(compare_entry(&cuda(K), &twin()), Comparison::default());
    }

    #[test]
    fn floats_read_as_words_are_told_apart() {
        let mut w = twin();
        w.bindings[1] = storage(1, "k_x", true, "u32");
        let found = compare_entry(&cuda(K), &w);
        assert!(found.mismatches.is_empty(), "{found:?}");
        assert_eq!(found.words.len(), 1);
        w.bindings[1] = storage(1, "k_x", true, "vec2<u32>");
        assert_eq!(compare_entry(&cuda(K), &w).mismatches.len(), 1);
    }

    #[test]
    fn every_kind_of_difference_is_named() {
        let c = cuda(K);
        let mut w = twin();
        w.bindings[1] = storage(1, "k_x", false, "f32");
        let bad = compare_entry(&c, &w).mismatches;
        assert!(bad.iter().any(|b| b.contains("const") && b.contains("read_write")), "{bad:?}");
        let mut w = twin();
        w.bindings[1] = storage(1, "k_x", true, "i32");
        assert!(compare_entry(&c, &w).mismatches.iter().any(|b| b.contains("`float`")));
        let mut w = twin();
        w.bindings[3] = uniform(3, &[("n", "u32")]);
        assert!(compare_entry(&c, &w).mismatches.iter().any(|b| b.contains("2 scalar(s)")));
        let mut w = twin();
        w.bindings[3] = uniform(4, &[("n", "u32"), ("s", "u32")]);
        let bad = compare_entry(&c, &w).mismatches;
        assert!(bad.iter().any(|b| b.contains("binding 4")) && bad.iter().any(|b| b.contains("field s")), "{bad:?}");
        let mut w = twin();
        w.bindings.push(storage(5, "extra", true, "u32"));
        assert!(compare_entry(&c, &w).mismatches.iter().any(|b| b.contains("no CUDA buffer")));
        let mut w = twin();
        w.bindings.remove(3);
        assert!(compare_entry(&c, &w).mismatches.iter().any(|b| b.contains("no parameter block")));
        let late = cuda("extern \"C\" __global__ void k(const u32* a, u32 n, u32* b) {}");
        assert!(compare_entry(&late, &twin()).mismatches.iter().any(|b| b.contains("pointer after a scalar")));
    }

    #[test]
    fn unused_or_renamed_buffers_and_stray_offsets_are_notes() {
        let c = cuda(K);
        let mut w = twin();
        w.bindings.remove(1);
        w.bindings[0].name = "keys_in".into();
        let found = compare_entry(&c, &w);
        assert!(found.mismatches.is_empty(), "{found:?}");
        assert_eq!(found.notes.len(), 3, "{found:?}");
        assert!(same_buffer_name("count", "su_count") && same_buffer_name("x", "x"));
        assert!(!same_buffer_name("count", "recount") && !same_buffer_name("levels_in", "nd_levels"));
    }

    #[test]
    fn swapped_scalars_of_one_type_are_caught_by_name() {
        let c = cuda("extern \"C\" __global__ void k(u32* out, u32 n, u32 capacity) {}");
        let w = Entry {
            name: "k".into(),
            bindings: vec![storage(0, "out", false, "u32"), uniform(1, &[("capacity", "u32"), ("n", "u32")])],
        };
        assert_eq!(compare_entry(&c, &w).mismatches.len(), 2);
    }

    #[test]
    fn module_level_differences_and_stale_exceptions_fail() {
        let c = entries(K).unwrap().entries;
        let w = [twin(), Entry { name: "only_wgsl".into(), bindings: vec![] }];
        let pair = Pair { module: "demo/k", label: "demo/k".into(), cuda: &c, wgsl: vec![("demo/k".into(), &w)] };
        let out = check(&[pair], &[], &[]);
        assert_eq!(out.compared, 1);
        assert!(out.mismatches.iter().any(|f| f.entry == "only_wgsl"));
        // Every exception of the real list is stale against this fake module, and every
        // CUDA-only module is missing.
        assert!(
            out.mismatches.iter().filter(|f| f.message.contains("remove the exception")).count() == EXCEPTIONS.len()
        );
        assert!(out.mismatches.iter().any(|f| f.message.contains("update the list")));
        let out = check(&[], &["core/new"], &["tree/keys"]);
        assert!(out.mismatches.iter().any(|f| f.module == "core/new"));
        assert!(!out.mismatches.iter().any(|f| f.module == "tree/keys"), "not compared: its exceptions stand");
    }

    #[test]
    fn element_types_follow_the_executors_conventions() {
        assert!(buffer_compatible("u64", "vec2<u32>"));
        assert!(buffer_compatible("double", "vec2<u32>"));
        assert!(buffer_compatible("unsigned int", "atomic<u32>"));
        assert!(!buffer_compatible("float", "u32"));
        assert!(!buffer_compatible("MyStruct", "MyStruct"));
        assert!(scalar_compatible("unsigned long long", "vec2<u32>"));
        assert!(!scalar_compatible("double", "vec2<u32>"));
        assert!(scalar_compatible("int", "i32"));
    }
}
