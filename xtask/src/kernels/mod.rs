//! `cargo xtask kernels`: every GPU kernel of the workspace checked on a machine without
//! a GPU, as CI runs it.
//!
//! Kernels are compiled at run time (NVRTC for CUDA, naga inside wgpu for WGSL), so a
//! kernel that does not compile, or a WGSL twin whose bindings drifted from its CUDA
//! entry, otherwise fails only on a GPU machine, in the first test that launches it. This
//! task finds those failures with nothing but libnvrtc:
//!
//! 1. **CUDA** ([`cuda`]): every module the crates compile (each crate's own list:
//!    `orrery_backend_cuda::CORE_MODULES`, the algorithm crates' `KERNEL_MODULES`,
//!    `orrery_conformance::TEST_KERNELS`), with its defines, compiled by
//!    `orrery_backend_cuda::compile_module_with_log` with exactly the executor's NVRTC
//!    options (`orrery_backend_cuda::module_options`: `-arch`, `--std=c++17`, the
//!    architecture's `Policy`, the module's defines): to PTX for each `--ptx` virtual
//!    architecture (default `compute_90,compute_80`) and, through ptxas with
//!    `--ptxas-options=-v`, to a CUBIN for each `--cubin` real architecture (default
//!    `sm_90,sm_80`), whose report gives the register table ([`ptxas`]). Warnings in
//!    NVRTC's logs are printed.
//! 2. **WGSL** ([`wgsl`]): every variant the wgpu executor may compile
//!    (`orrery_backend_wgpu::offline`: the core modules with each define set their
//!    primitives use, every module's WGSL with its defines, each with and without
//!    `SUBGROUP`), preprocessed and validated by naga as the executor does, with the
//!    capabilities of a device with the fewest features that variant is compiled with.
//! 3. **Twins** ([`twins`]): each module with both texts, entry for entry (below).
//! 4. **Coverage**: every `kernels/**/*.cu`, `*.cuh` and `shaders/**/*.wgsl` file is part
//!    of something compiled here; every `@compute` function of a WGSL file is in some
//!    validated variant; every entry the CUDA parser reads is in the PTX with the same
//!    parameter sizes.
//!
//! The task prints what it found and a summary, and exits non-zero on any compile or
//! validation error, twin mismatch or coverage gap. Without libnvrtc it still runs the
//! WGSL and twin checks, then fails saying how to get NVRTC.
//!
//! # The twin comparison
//! Both executors launch an entry point with the same argument list, buffers first, then
//! scalars (`orrery_core::gpu`). CUDA receives them as parameters: `const T*` for a
//! buffer the kernel only reads, `T*` for one it writes, scalars by value. wgpu binds
//! argument buffer `i` to `@group(0) @binding(i)` when the entry point uses that binding
//! (naga's reflection), and packs the scalars in order into the fields of the one
//! `var<uniform>` at binding `number of buffers`, skipping the `off_<binding variable>`
//! fields it fills itself. So for an entry name present in both languages, with `B` the
//! CUDA pointer parameters and `S` the scalar ones, and for every WGSL variant:
//!
//! - the CUDA parameters are `B` then `S` (no pointer after a scalar);
//! - every storage binding `i` the WGSL entry uses has `i < |B|`; it is `read` exactly
//!   when `B[i]` points to `const`, and its array element is `B[i]`'s type, where
//!   `atomic<T>` counts as `T` and a 64-bit CUDA type (u64, i64, f64) as `vec2<u32>`
//!   (the executor's convention for 64-bit data); `u32` words of another 4-byte type (a
//!   float compared or updated through its bits) need an exception;
//! - with scalars, the entry uses a parameter block at binding `|B|` whose non-`off_*`
//!   fields are `|S|` in number and, in order, of `S`'s types (u64 as `vec2<u32>`) and
//!   names (two swapped scalars of one type pass every type check; only the names tell);
//!   without scalars, it has no block or only `off_*` fields; `off_*` fields are `u32`.
//!
//! Not failures, printed with `--verbose` as notes: a CUDA buffer the WGSL entry does
//! not use (the executor binds only what an entry uses), a binding variable not named
//! `<prefix>_<CUDA name>` (WGSL globals are module-wide, so each entry's carry a
//! prefix, and some are shortened), an `off_*` field for a variable the entry does not
//! bind.
//!
//! An entry name in one language only is a mismatch unless [`twins::EXCEPTIONS`] lists
//! it with its reason (the f64 entries, CUDA only), and so are floats read as words; a
//! module with CUDA text only must be in [`twins::CUDA_ONLY_MODULES`] (the core
//! primitives, which the two executors decompose differently). A listed exception that
//! no longer matches is an error too. A module whose WGSL does not validate is reported
//! as such and not compared.

pub mod cuda;
pub mod ptxas;
pub mod twins;
pub mod wgsl;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

/// What `cargo xtask kernels` is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// Virtual architectures to compile PTX for.
    pub ptx: Vec<String>,
    /// Real architectures to compile CUBINs for (the register table).
    pub cubin: Vec<String>,
    /// Parallel NVRTC compilations.
    pub jobs: usize,
    /// Whether to print the register table.
    pub table: bool,
    /// Whether to print the twin check's notes.
    pub verbose: bool,
}

/// How to get NVRTC, for the error without it.
const NVRTC_HELP: &str = "No CUDA module was compiled. NVRTC without the toolkit: \
     `python3 -m pip install nvidia-cuda-nvrtc==13.0.88`, then `export LD_LIBRARY_PATH=$(python3 -c \
     \"import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))\")/nvidia/cu13/lib` \
     (.ci/run does this)";

/// What the sections found: problems (section, message) in the order they are printed,
/// and one summary line per section.
#[derive(Default)]
struct Report {
    problems: Vec<(String, String)>,
    summary: Vec<String>,
}

impl Report {
    fn problem(&mut self, section: &str, message: impl Into<String>) {
        self.problems.push((section.to_owned(), message.into()));
    }
}

/// What the CUDA section leaves for the others.
struct CudaResults {
    /// The entry points as written, per module.
    parsed: Vec<cuda::ParsedUnit>,
    /// The entries of each module's first PTX, where it compiled.
    ptx: Vec<Option<Vec<cuda::PtxEntry>>>,
    /// Every compilation.
    compilations: Vec<cuda::Compilation>,
    /// Whether NVRTC could be loaded.
    nvrtc: bool,
}

/// Runs the task (see the module documentation).
///
/// # Errors
/// Any compile error, validation error, twin mismatch or coverage gap (after printing
/// them all); NVRTC missing; a file of `kernels/` or `shaders/` that cannot be read.
pub fn run(opts: &Options) -> Result<()> {
    for a in &opts.ptx {
        if !a.starts_with("compute_") {
            bail!("--ptx takes virtual architectures (compute_90, ...), not {a:?}");
        }
    }
    for a in &opts.cubin {
        if !a.starts_with("sm_") {
            bail!("--cubin takes real architectures (sm_90, ...), not {a:?}");
        }
    }
    let mut report = Report::default();
    let modules = cuda::modules();
    let sources: Vec<orrery_core::KernelSource> = modules.iter().map(|m| m.source).collect();
    let results = compile_section(&mut report, &modules, opts)?;
    parser_section(&mut report, &modules, &results);
    let validations = wgsl::validate_all(wgsl::variants(&sources));
    wgsl_section(&mut report, &validations)?;
    twin_section(&mut report, &modules, &results.parsed, &validations, opts.verbose);
    let (files, uncovered) = coverage(&sources, &validations)?;
    for f in &uncovered {
        report.problem("coverage", format!("{f} is not part of any compiled module or validated variant"));
    }
    report
        .summary
        .push(format!("files: {} of {files} kernel and shader sources compiled or validated", files - uncovered.len()));
    register_section(&mut report, &modules, &results, opts);

    let mut section = "";
    for (s, message) in &report.problems {
        if s != section {
            println!("\n== {s} ==");
            section = s;
        }
        println!("error: {message}");
    }
    println!("\nsummary:");
    for line in &report.summary {
        println!("  {line}");
    }
    if !report.problems.is_empty() {
        bail!("cargo xtask kernels: {} problem(s)", report.problems.len());
    }
    println!("  all kernels compile, every shader validates, every twin matches");
    Ok(())
}

/// Parses every module's CUDA text and compiles it for every architecture.
fn compile_section(report: &mut Report, modules: &[cuda::Module], opts: &Options) -> Result<CudaResults> {
    let mut parsed = Vec::with_capacity(modules.len());
    for m in modules {
        match cuda::entries(m.source.cuda) {
            Ok(p) => parsed.push(p),
            Err(e) => {
                report.problem("CUDA source", format!("{}: {e:#}", m.label()));
                parsed.push(cuda::ParsedUnit::default());
            }
        }
    }
    let mut results = CudaResults { parsed, ptx: vec![None; modules.len()], compilations: Vec::new(), nvrtc: false };
    if let Err(e) = orrery_backend_cuda::check_nvrtc() {
        report.problem("NVRTC", format!("{e}.\n{NVRTC_HELP}"));
        report.summary.push("CUDA: not compiled (NVRTC could not be loaded)".into());
        return Ok(results);
    }
    results.nvrtc = true;
    let (major, minor) = orrery_backend_cuda::nvrtc_version().context("asking NVRTC its version")?;
    let archs: Vec<String> = opts.ptx.iter().chain(&opts.cubin).cloned().collect();
    println!(
        "NVRTC {major}.{minor}: compiling {} modules for {} on {} thread(s)",
        modules.len(),
        archs.join(", "),
        opts.jobs
    );
    let t = std::time::Instant::now();
    results.compilations = cuda::compile_all(modules, &archs, opts.jobs);
    let mut warnings = 0;
    for c in &results.compilations {
        let label = modules[c.module].label();
        match &c.result {
            Err(log) => report.problem(
                "CUDA compile",
                format!("{label} ({}) for {}:\n{}", modules[c.module].owner, c.arch, log.trim_end()),
            ),
            Ok(compiled) => {
                let w: Vec<&str> = compiled.log.lines().filter(|l| l.contains("warning")).collect();
                if !w.is_empty() {
                    warnings += w.len();
                    println!("warnings of {label} for {}:\n  {}", c.arch, w.join("\n  "));
                }
                if c.arch.starts_with("compute_") && results.ptx[c.module].is_none() {
                    results.ptx[c.module] = Some(cuda::ptx_entries(&String::from_utf8_lossy(&compiled.image)));
                }
            }
        }
    }
    let failed = results.compilations.iter().filter(|c| c.result.is_err()).count();
    let slowest = results.compilations.iter().max_by(|a, b| a.seconds.total_cmp(&b.seconds));
    report.summary.push(format!(
        "CUDA: {} compilations ({} modules x {}), {failed} failed, {warnings} warning line(s); {:.1} s{}",
        results.compilations.len(),
        modules.len(),
        archs.join(" "),
        t.elapsed().as_secs_f64(),
        slowest.map_or_else(String::new, |c| format!(
            " (slowest: {} for {}, {:.1} s)",
            modules[c.module].label(),
            c.arch,
            c.seconds
        ))
    ));
    Ok(results)
}

/// Checks the entries the CUDA parser read against the PTX.
fn parser_section(report: &mut Report, modules: &[cuda::Module], results: &CudaResults) {
    let (mut entries, mut from_macros) = (0, 0);
    for (i, m) in modules.iter().enumerate() {
        let unit = &results.parsed[i];
        let Some(ptx) = &results.ptx[i] else { continue };
        entries += ptx.len();
        let twinned = !m.source.wgsl.trim().is_empty();
        for e in unit.entries.iter().filter(|e| e.extern_c) {
            let at = cuda::location(m.source.cuda, e.offset, m.source.name);
            match ptx.iter().find(|p| p.name == e.name) {
                None => report.problem("CUDA parser", format!("{at}: {} is not an entry of the PTX", e.name)),
                Some(p) => {
                    if let Some(d) = cuda::disagreement(e, p) {
                        report.problem("CUDA parser", format!("{at}: {}: {d}", e.name));
                    }
                }
            }
        }
        for p in ptx.iter().filter(|p| !unit.entries.iter().any(|e| e.name == p.name)) {
            if unit.macro_templates > 0 && !twinned {
                from_macros += 1;
            } else {
                report.problem(
                    "CUDA parser",
                    format!(
                        "{}: the PTX entry {} was not found in the source (generated by a macro?)",
                        m.label(),
                        p.name
                    ),
                );
            }
        }
    }
    if results.nvrtc {
        report.summary.push(format!(
            "CUDA entries: {entries} in the PTX of {} modules ({from_macros} generated by macros in core modules)",
            modules.len()
        ));
    }
}

/// Reports failed variants, and `@compute` functions no variant validated.
fn wgsl_section(report: &mut Report, validations: &[wgsl::Validation]) -> Result<()> {
    let mut failed = 0;
    for v in validations {
        if let Err(message) = &v.result {
            failed += 1;
            report.problem(
                "WGSL",
                format!("{} ({}):\n{}", v.variant.label(), shader_files(v.variant.wgsl)?, message.trim_end()),
            );
        }
    }
    // Per module: the functions its text declares @compute, and those naga validated
    // (compared only where every variant validated: a failed one is reported above).
    let mut by_module: BTreeMap<&str, (BTreeSet<String>, BTreeSet<String>, bool)> = BTreeMap::new();
    for v in validations {
        let slot = by_module.entry(v.variant.module).or_insert_with(|| (BTreeSet::new(), BTreeSet::new(), true));
        slot.0.extend(wgsl::compute_entries(v.variant.wgsl).into_iter().map(|e| e.name));
        match &v.result {
            Ok(m) => slot.1.extend(m.entries.iter().map(|e| e.name.clone())),
            Err(_) => slot.2 = false,
        }
    }
    let mut entries = 0;
    for (module, (written, validated, all_valid)) in &by_module {
        entries += validated.len();
        if !all_valid {
            continue;
        }
        for e in written.difference(validated) {
            report.problem("WGSL coverage", format!("{module}: `fn {e}` is @compute but no validated variant has it"));
        }
        for e in validated.difference(written) {
            report.problem("WGSL parser", format!("{module}: naga found entry {e}, the text reader did not"));
        }
    }
    report.summary.push(format!(
        "WGSL: {} variants of {} modules validated with naga, {failed} failed; {entries} compute entry points",
        validations.len(),
        by_module.len()
    ));
    Ok(())
}

/// Compares every module with both texts entry for entry.
fn twin_section(
    report: &mut Report,
    modules: &[cuda::Module],
    parsed: &[cuda::ParsedUnit],
    validations: &[wgsl::Validation],
    verbose: bool,
) {
    let mut pairs = Vec::new();
    let mut cuda_only = Vec::new();
    let mut skipped = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        if m.source.wgsl.trim().is_empty() {
            cuda_only.push(m.source.name);
            continue;
        }
        let variants: Vec<&wgsl::Validation> = validations
            .iter()
            .filter(|v| v.variant.module == m.source.name && v.variant.consts == m.source.defines)
            .collect();
        // A module whose WGSL does not validate is reported as such, not as missing twins.
        let wgsl: Option<Vec<(String, &[orrery_backend_wgpu::offline::Entry])>> = variants
            .iter()
            .map(|v| v.result.as_ref().ok().map(|r| (v.variant.label(), r.entries.as_slice())))
            .collect();
        match wgsl {
            Some(wgsl) => {
                pairs.push(twins::Pair { module: m.source.name, label: m.label(), cuda: &parsed[i].entries, wgsl });
            }
            None => skipped.push((m.source.name, m.label())),
        }
    }
    let not_compared: Vec<&str> = skipped.iter().map(|(name, _)| *name).collect();
    let outcome = twins::check(&pairs, &cuda_only, &not_compared);
    for f in &outcome.mismatches {
        let at = if f.entry.is_empty() { f.module.clone() } else { format!("{} {}", f.module, f.entry) };
        report.problem("twins", format!("{at}: {}", f.message));
    }
    if verbose {
        for (f, reason) in &outcome.allowed {
            println!("allowed: {} {}: {} ({reason})", f.module, f.entry, f.message);
        }
        for f in &outcome.notes {
            println!("note: {} {}: {}", f.module, f.entry, f.message);
        }
    }
    report.summary.push(format!(
        "twins: {} modules with both texts, {} entry points compared, {} mismatch(es); {} difference(s) \
         allowed by EXCEPTIONS, {} CUDA-only modules (CUDA_ONLY_MODULES); {} note(s){}",
        outcome.modules,
        outcome.compared,
        outcome.mismatches.len(),
        outcome.allowed.len(),
        cuda_only.len(),
        outcome.notes.len(),
        if verbose { "" } else { " (--verbose prints them)" }
    ));
    if !skipped.is_empty() {
        let labels: Vec<&str> = skipped.iter().map(|(_, label)| label.as_str()).collect();
        report.summary.push(format!("twins: not compared (their WGSL does not validate): {}", labels.join(", ")));
    }
}

/// Prints the register table and summarises it (spills, the most registers).
fn register_section(report: &mut Report, modules: &[cuda::Module], results: &CudaResults, opts: &Options) {
    let (rows, unreported) = resource_rows(modules, &results.compilations, &results.ptx);
    if rows.is_empty() {
        if results.nvrtc && !opts.cubin.is_empty() {
            report.summary.push("registers: ptxas gave no report (NVRTC did not pass --ptxas-options=-v on)".into());
        }
        return;
    }
    if opts.table {
        println!("\nptxas resource use per entry point (registers per thread; spill and stack bytes per thread;");
        println!("static shared memory bytes per block; dynamic shared memory is set at launch and not shown):");
        print!("{}", ptxas::table(&rows));
    }
    let spilling: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let x = r.resources.as_ref()?;
            let (st, ld) = (x.spill_stores.unwrap_or(0), x.spill_loads.unwrap_or(0));
            (st + ld > 0).then(|| format!("{} {} {} ({st}/{ld} bytes)", r.module, r.entry, r.arch))
        })
        .collect();
    let most = rows.iter().filter_map(|r| Some((r.resources.as_ref()?.registers?, r))).max_by_key(|(n, _)| *n);
    let mut line = format!("registers: {} entry reports ({} arch(s))", rows.len(), opts.cubin.len());
    if let Some((n, r)) = most {
        let _ = write!(line, ", most registers: {} {} {} ({n})", r.module, r.entry, r.arch);
    }
    let _ = write!(line, "; {} spill", spilling.len());
    if !spilling.is_empty() {
        let _ = write!(line, ": {}", spilling.join(", "));
    }
    if unreported > 0 {
        let _ = write!(line, "; ptxas reported nothing for {unreported} entry point(s) (shown as -)");
    }
    report.summary.push(line);
}

/// The register-table rows of every CUBIN compilation (one per PTX entry), and how many
/// PTX entries ptxas reported nothing for.
fn resource_rows(
    modules: &[cuda::Module],
    compilations: &[cuda::Compilation],
    ptx_entries: &[Option<Vec<cuda::PtxEntry>>],
) -> (Vec<ptxas::Row>, usize) {
    let mut rows = Vec::new();
    let mut unreported = 0;
    for c in compilations.iter().filter(|c| c.arch.starts_with("sm_")) {
        let Ok(compiled) = &c.result else { continue };
        let reports = ptxas::parse(&compiled.log);
        let label = modules[c.module].label();
        let names: Vec<String> = match &ptx_entries[c.module] {
            Some(p) => p.iter().map(|e| e.name.clone()).collect(),
            None => reports.iter().map(|r| r.entry.clone()).collect(),
        };
        for name in names {
            let resources = reports.iter().find(|r| r.entry == name).cloned();
            unreported += usize::from(resources.is_none());
            rows.push(ptxas::Row { module: label.clone(), entry: name, arch: c.arch.clone(), resources });
        }
    }
    (rows, unreported)
}

/// The files under `dir` with one of `exts`, sorted, as `dir/...` paths.
fn source_files(dir: &str, exts: &[&str]) -> Result<Vec<String>> {
    fn walk(dir: &Path, exts: &[&str], out: &mut Vec<String>) -> Result<()> {
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, exts, out)?;
            } else if path.extension().is_some_and(|e| exts.iter().any(|x| e == *x)) {
                out.push(path.to_string_lossy().replace('\\', "/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(Path::new(dir), exts, &mut out)?;
    out.sort();
    Ok(out)
}

/// The files of `shaders/` whose text is part of `wgsl`, for error messages.
fn shader_files(wgsl: &str) -> Result<String> {
    let mut found = Vec::new();
    for f in source_files("shaders", &["wgsl"])? {
        let text = std::fs::read_to_string(&f).with_context(|| format!("reading {f}"))?;
        if !text.is_empty() && wgsl.contains(&text) {
            found.push(f);
        }
    }
    Ok(if found.is_empty() { "no file of shaders/".to_owned() } else { found.join(" + ") })
}

/// The kernel and shader sources on disk, and those not part of any compiled module
/// (CUDA: contained in a translation unit) or validated variant (WGSL: contained in a
/// variant's text, or a snippet one of them `//#include`s).
fn coverage(sources: &[orrery_core::KernelSource], validations: &[wgsl::Validation]) -> Result<(usize, Vec<String>)> {
    let mut uncovered = Vec::new();
    let cuda = source_files("kernels", &["cu", "cuh"])?;
    for f in &cuda {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?;
        if !sources.iter().any(|s| s.cuda.contains(&text)) {
            uncovered.push(f.clone());
        }
    }
    // The snippets reachable through //#include from any variant.
    let mut includes: BTreeSet<&str> = BTreeSet::new();
    let mut todo: Vec<&str> = validations.iter().flat_map(|v| wgsl::include_names(v.variant.wgsl)).collect();
    while let Some(name) = todo.pop() {
        if includes.insert(name)
            && let Some(snippet) = orrery_backend_wgpu::offline::include(name)
        {
            todo.extend(wgsl::include_names(snippet));
        }
    }
    let snippets: Vec<&str> = includes.iter().filter_map(|n| orrery_backend_wgpu::offline::include(n)).collect();
    let shaders = source_files("shaders", &["wgsl"])?;
    for f in &shaders {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?;
        let in_variant = validations.iter().any(|v| v.variant.wgsl.contains(&text));
        if !in_variant && !snippets.contains(&text.as_str()) {
            uncovered.push(f.clone());
        }
    }
    Ok((cuda.len() + shaders.len(), uncovered))
}
