//! `cargo xtask`: orrery's developer tasks.
//!
//! - `cargo xtask bench <suite> [args]`: builds `orrery-bench` in release mode with
//!   every executor feature and runs the suite (table on stdout, `<suite>.json` and
//!   `<suite>.svg` under `bench-results/`, or `--out DIR`).
//! - `cargo xtask bench report [--check]`: regenerates the Current table of every page of
//!   `docs/performance/` listed in `docs/performance/report.json` from the committed JSON
//!   it names (between the page's `<!-- report:begin -->` and `<!-- report:end -->`
//!   lines), and the page's chart `docs/performance/<page>.svg`; `--check` writes nothing
//!   and fails when a page or chart is out of date (see [`report`]).
//! - `cargo xtask device-bundle [--out .device] [--only NAMES | --all] [--example NAMES]`: builds the
//!   release test executables and the bench binary (features `cuda,wgpu`), strips the
//!   ones that need a GPU into one folder with a `run.sh` that runs them on a GPU
//!   machine with no Rust toolchain (`ORRERY_REQUIRE_CUDA=1`, `ORRERY_REQUIRE_WGPU=1`,
//!   optional compute-sanitizer, `BENCH=<suites>`), writing logs to `$OUT`. CPU-only
//!   tests run here, so by default only [`GPU_CRATES`] and the test targets named in
//!   [`GPU_TESTS`] travel: the device takes 64 MiB in all, wheels and drivers included.
//! - `cargo xtask check-packaging`: every crate can be packaged with the files it embeds.
//!   No `include_str!`/`include_bytes!` of any workspace package reads a file outside
//!   that package's folder, `cargo package --list` of each crate in [`SOURCE_CRATES`]
//!   lists every kernel source under its folder, and those crates build from their
//!   `.crate` files (`cargo package`, which also covers include paths built by macros).
//! - `cargo xtask kernels [--ptx compute_90,compute_80] [--cubin sm_90,sm_80] [--jobs N]
//!   [--no-table] [--verbose]`: compiles every CUDA module the crates compile at run time
//!   with NVRTC and the executor's options (PTX for the `--ptx` architectures, CUBINs for
//!   the `--cubin` ones), validates every WGSL variant the wgpu executor may compile with
//!   naga, checks that each kernel and its WGSL twin have the same entry points and
//!   argument lists, and prints ptxas's registers, spills and static shared memory per
//!   entry point; needs only libnvrtc on `LD_LIBRARY_PATH` (see [`kernels`]).

mod kernels;
mod report;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(about = "orrery developer tasks")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Run a benchmark suite (keys, primitives, ...) on every available executor, or
    /// `report [--check]`: regenerate the Current tables of docs/performance/ from their
    /// committed JSON.
    Bench {
        /// Arguments for orrery-bench (the suite first; see `orrery-bench --help`), or
        /// `report [--check]`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Collect stripped release test and bench binaries and a run script for a GPU machine.
    DeviceBundle {
        /// Output folder (git-ignored).
        #[arg(long, default_value = ".device")]
        out: PathBuf,
        /// Crates to leave out (e.g. one that is mid-change).
        #[arg(long)]
        exclude: Vec<String>,
        /// Bundle only the test targets whose names match one of these patterns
        /// (comma separated; `*` at the end matches any suffix, e.g. `balltree,conformance`),
        /// instead of the default GPU selection.
        #[arg(long, value_delimiter = ',', conflicts_with = "all")]
        only: Vec<String>,
        /// Bundle every test target, CPU-only ones too (may exceed the device limit).
        #[arg(long)]
        all: bool,
        /// Also bundle these workspace examples (comma separated, e.g. `isa_levels`), into
        /// `<out>/examples` (run.sh does not run them).
        #[arg(long = "example", value_delimiter = ',')]
        examples: Vec<String>,
    },
    /// Check that every crate ships the files it embeds (include paths stay inside the
    /// package; the kernel crates package every source).
    CheckPackaging,
    /// Compile every CUDA kernel with NVRTC (no GPU needed), validate every WGSL shader
    /// with naga, check each kernel against its WGSL twin, and print register use.
    Kernels {
        /// Virtual architectures to compile PTX for.
        #[arg(long, value_delimiter = ',', default_value = "compute_90,compute_80")]
        ptx: Vec<String>,
        /// Real architectures to compile CUBINs for, with ptxas's resource report (`""`
        /// for none).
        #[arg(long, value_delimiter = ',', default_value = "sm_90,sm_80")]
        cubin: Vec<String>,
        /// Parallel NVRTC compilations (default: the available cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// Leave out the register table (the summary still names spilling entries).
        #[arg(long)]
        no_table: bool,
        /// Also print the allowed one-language entries and the twin check's notes.
        #[arg(long)]
        verbose: bool,
    },
}

/// The crates that hold kernel sources, and the extensions of the files that must all be
/// in their packages.
const SOURCE_CRATES: &[(&str, &[&str])] = &[("orrery-kernels", &["cu", "cuh"]), ("orrery-shaders", &["wgsl"])];

/// Crates whose every test target needs (or exercises) a GPU executor.
const GPU_CRATES: &[&str] = &["orrery-backend-cuda", "orrery-backend-wgpu"];

/// Test target names (any crate) that need a GPU; `*` at the end matches any suffix.
/// `balltree` is orrery-balltree's one integration-test binary: its `gpu_cuda`,
/// `gpu_wgpu` and `gpu_bench` modules need a GPU, the rest run where the bundle is built
/// (and [`RUN_SCRIPT`] runs only the GPU modules of it unless given a filter).
/// `tree` is orrery-tree-build's: its `gpu`, `gpu_view` and `gpu_nf` modules need a GPU;
/// `traverse` is orrery-traverse's, with its `gpu*` modules; `sim` is orrery-sim's, whose
/// `gpu::` module needs a GPU (the rest, the long drift test among them, runs on CI);
/// `clusters` is orrery-clusters', with its `gpu*` modules.
const GPU_TESTS: &[&str] =
    &["gpu*", "conformance", "compile", "wgpu*", "cuda*", "balltree", "tree", "traverse", "sim", "clusters"];

/// Which test targets go into the bundle.
#[derive(Debug, Clone)]
enum Selection {
    /// [`GPU_CRATES`] and [`GPU_TESTS`].
    Gpu,
    /// Targets whose names match one of these patterns.
    Only(Vec<String>),
    /// Every test target.
    All,
}

impl Selection {
    fn keeps(&self, krate: &str, target: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(patterns) => patterns.iter().any(|p| matches(p, target)),
            Self::Gpu => GPU_CRATES.contains(&krate) || GPU_TESTS.iter().any(|p| matches(p, target)),
        }
    }
}

/// `pattern` matches `name` exactly, or as a prefix when it ends in `*`.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

fn main() -> Result<()> {
    let root = workspace_root()?;
    std::env::set_current_dir(&root)?;
    match Cli::parse().task {
        Task::Bench { args } if args.first().is_some_and(|a| a == "report") => report::run(&args[1..]),
        Task::Bench { args } => bench(&args),
        Task::DeviceBundle { out, exclude, only, all, examples } => {
            let selection = if all {
                Selection::All
            } else if only.is_empty() {
                Selection::Gpu
            } else {
                Selection::Only(only)
            };
            device_bundle(&out, &exclude, &selection, &examples)
        }
        Task::CheckPackaging => check_packaging(),
        Task::Kernels { ptx, cubin, jobs, no_table, verbose } => {
            let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
            // `--cubin ""` asks for none.
            let given = |v: Vec<String>| v.into_iter().filter(|a| !a.is_empty()).collect();
            kernels::run(&kernels::Options { ptx: given(ptx), cubin: given(cubin), jobs, table: !no_table, verbose })
        }
    }
}

fn workspace_root() -> Result<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    Ok(manifest.parent().context("xtask has no parent folder")?.to_path_buf())
}

fn commit() -> String {
    Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(|| "unknown".into(), |o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd.status().with_context(|| format!("failed to start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

fn bench(args: &[String]) -> Result<()> {
    run(Command::new("cargo")
        .args(["run", "--release", "-p", "orrery-benches", "--features", "cuda,wgpu", "--"])
        .args(args)
        .env("ORRERY_COMMIT", commit()))
}

/// Names of the executables `cargo build --message-format=json` reports; with
/// `tests`, only the test harnesses it selects (not examples built alongside them).
fn executables(cargo_args: &[&str], tests: Option<&Selection>) -> Result<Vec<PathBuf>> {
    eprintln!("$ cargo {}", cargo_args.join(" "));
    let out = Command::new("cargo").args(cargo_args).arg("--message-format=json").output()?;
    if !out.status.success() {
        bail!("cargo {} failed:\n{}", cargo_args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    let mut exes = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if let Some(selection) = tests {
            if v["profile"]["test"].as_bool() != Some(true) {
                continue;
            }
            // The package folder (crates/<name>/Cargo.toml) names the crate.
            let manifest = Path::new(v["manifest_path"].as_str().unwrap_or(""));
            let krate = manifest
                .parent()
                .and_then(Path::file_name)
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let target = v["target"]["name"].as_str().unwrap_or("");
            if !selection.keeps(&krate, target) {
                eprintln!("  not bundled (no GPU): {krate} {target}");
                continue;
            }
        }
        if let Some(exe) = v["executable"].as_str() {
            exes.push(PathBuf::from(exe));
        }
    }
    Ok(exes)
}

fn device_bundle(out: &Path, exclude: &[String], selection: &Selection, examples: &[String]) -> Result<()> {
    let bin = out.join("bin");
    let example_dir = out.join("examples");
    for dir in [&bin, &example_dir] {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
    }
    std::fs::create_dir_all(&bin)?;
    let mut test_args = vec!["test", "--release", "--workspace", "--all-features", "--no-run"];
    for krate in exclude {
        test_args.extend(["--exclude", krate.as_str()]);
    }
    let mut exes = executables(&test_args, Some(selection))?;
    exes.extend(executables(&["build", "--release", "-p", "orrery-benches", "--features", "cuda,wgpu"], None)?);
    let mut names = Vec::new();
    for exe in exes {
        let name = exe.file_name().context("executable without a name")?.to_string_lossy().into_owned();
        // Test executables are named crate-<hash>; keep the crate part readable.
        let dest = bin.join(&name);
        std::fs::copy(&exe, &dest)?;
        run(Command::new("strip").arg(&dest))?;
        names.push(name);
    }
    let mut total: u64 = names.iter().map(|n| std::fs::metadata(bin.join(n)).map_or(0, |m| m.len())).sum();
    if !examples.is_empty() {
        std::fs::create_dir_all(&example_dir)?;
    }
    for example in examples {
        for exe in executables(&["build", "--release", "--workspace", "--example", example], None)? {
            let dest = example_dir.join(exe.file_name().context("executable without a name")?);
            std::fs::copy(&exe, &dest)?;
            run(Command::new("strip").arg(&dest))?;
            total += std::fs::metadata(&dest)?.len();
            names.push(format!("examples/{example}"));
        }
    }
    std::fs::write(out.join("COMMIT"), commit())?;
    std::fs::write(out.join("run.sh"), RUN_SCRIPT)?;
    eprintln!("bundle in {}: {} binaries, {:.1} MiB", out.display(), names.len(), total as f64 / 1048576.0);
    if total > 56 << 20 {
        bail!(
            "bundle is {:.1} MiB; the device machine takes 64 MiB in all (with .gl, .whl and the sources): \
             bundle less (--only, --exclude)",
            total as f64 / 1048576.0
        );
    }
    Ok(())
}

/// One `include_str!`/`include_bytes!` found in a source file.
#[derive(Debug, PartialEq, Eq)]
struct Include {
    /// 1-based line of the macro name.
    line: usize,
    /// `include_str` or `include_bytes`.
    mac: &'static str,
    /// What the argument names.
    arg: IncludeArg,
}

#[derive(Debug, PartialEq, Eq)]
enum IncludeArg {
    /// A path from string literals (and `env!("CARGO_MANIFEST_DIR")`, given as `manifest_dir`).
    Path(String),
    /// A file under `env!("OUT_DIR")`: generated by a build script, not a source.
    Generated,
    /// Anything else (e.g. a macro variable): the text of the argument.
    Unknown(String),
}

/// A string literal (`"..."`, `r"..."`, `r#"..."#`) at the start of `s`: its value and the
/// rest of `s`.
fn string_literal(s: &str) -> Option<(String, &str)> {
    if let Some(body) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((value, &body[i + 1..])),
                '\\' => value.push(chars.next()?.1),
                c => value.push(c),
            }
        }
        return None;
    }
    let raw = s.strip_prefix('r')?;
    let hashes = raw.len() - raw.trim_start_matches('#').len();
    let body = raw[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some((body[..end].to_owned(), &body[end + close.len()..]))
}

/// The argument of an include macro, `s` starting after its `(`: a literal, or a
/// `concat!` of literals and `env!` calls; [`IncludeArg::Unknown`] for anything else.
fn include_arg(s: &str, manifest_dir: &str) -> IncludeArg {
    let unknown = || {
        // The text up to the macro's closing parenthesis.
        let mut depth = 0usize;
        let end = s
            .char_indices()
            .find(|&(_, c)| match c {
                '(' => {
                    depth += 1;
                    false
                }
                ')' if depth == 0 => true,
                ')' => {
                    depth -= 1;
                    false
                }
                _ => false,
            })
            .map_or(s.len(), |(i, _)| i);
        IncludeArg::Unknown(s[..end].trim().to_owned())
    };
    let s = s.trim_start();
    if let Some((path, _)) = string_literal(s) {
        return IncludeArg::Path(path);
    }
    let Some(mut rest) = s.strip_prefix("concat!").map(str::trim_start).and_then(|r| r.strip_prefix('(')) else {
        return unknown();
    };
    let mut path = String::new();
    let mut generated = false;
    loop {
        rest = rest.trim_start();
        if rest.starts_with(')') {
            break;
        }
        if let Some((part, r)) = string_literal(rest) {
            path.push_str(&part);
            rest = r;
        } else if let Some(r) = rest.strip_prefix("env!").map(str::trim_start).and_then(|r| r.strip_prefix('(')) {
            let Some((var, r)) = string_literal(r.trim_start()) else { return unknown() };
            let Some(r) = r.trim_start().strip_prefix(')') else { return unknown() };
            match var.as_str() {
                "CARGO_MANIFEST_DIR" => path.push_str(manifest_dir),
                "OUT_DIR" => generated = true,
                _ => return unknown(),
            }
            rest = r;
        } else {
            return unknown();
        }
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
    if generated { IncludeArg::Generated } else { IncludeArg::Path(path) }
}

/// Every `include_str!(...)` and `include_bytes!(...)` of a Rust source, outside `//`
/// comments.
fn includes(text: &str, manifest_dir: &str) -> Vec<Include> {
    let mut found = Vec::new();
    for mac in ["include_str", "include_bytes"] {
        for (at, _) in text.match_indices(mac) {
            let before = &text[..at];
            if before.chars().next_back().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            if text[line_start..at].contains("//") {
                continue;
            }
            let rest = text[at + mac.len()..].trim_start();
            let Some(rest) = rest.strip_prefix('!').map(str::trim_start).and_then(|r| r.strip_prefix('(')) else {
                continue;
            };
            found.push(Include { line: before.matches('\n').count() + 1, mac, arg: include_arg(rest, manifest_dir) });
        }
    }
    found.sort_by_key(|i| i.line);
    found
}

/// `path` with `.` and `..` resolved lexically (the target need not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Files under `dir` (relative to it, `/`-separated) accepted by `keep`, skipping hidden
/// folders, `target` and folders of other packages (those with a `Cargo.toml`).
fn package_files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<String>) -> Result<()> {
        for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            if path.is_dir() {
                if !(name.starts_with('.') || name == "target" || path.join("Cargo.toml").exists()) {
                    walk(root, &path, keep, out)?;
                }
            } else if keep(&path) {
                let rel = path.strip_prefix(root)?;
                out.push(rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"));
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, keep, &mut out)?;
    out.sort();
    Ok(out)
}

/// The workspace's packages: (name, folder).
fn workspace_packages() -> Result<Vec<(String, PathBuf)>> {
    let out = Command::new("cargo").args(["metadata", "--no-deps", "--format-version", "1"]).output()?;
    if !out.status.success() {
        bail!("cargo metadata failed:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let mut packages = Vec::new();
    for p in meta["packages"].as_array().context("cargo metadata lists no packages")? {
        let name = p["name"].as_str().context("package without a name")?;
        let manifest = Path::new(p["manifest_path"].as_str().context("package without a manifest")?);
        packages.push((name.to_owned(), manifest.parent().context("manifest without a folder")?.to_path_buf()));
    }
    packages.sort();
    Ok(packages)
}

fn check_packaging() -> Result<()> {
    let packages = workspace_packages()?;
    let mut problems = Vec::new();
    let (mut checked, mut by_macro) = (0, 0);
    for (name, dir) in &packages {
        let is_rust = |p: &Path| p.extension().is_some_and(|e| e == "rs");
        for rel in package_files(dir, &is_rust)? {
            let file = dir.join(&rel);
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            let shown = file.strip_prefix(std::env::current_dir()?).unwrap_or(&file).display().to_string();
            for inc in includes(&text, &dir.to_string_lossy()) {
                match inc.arg {
                    IncludeArg::Path(path) => {
                        checked += 1;
                        let target = normalize(&file.parent().context("file without a folder")?.join(&path));
                        if !target.starts_with(dir) {
                            problems.push(format!(
                                "{shown}:{}: {}!(\"{path}\") reads {}, outside the folder of {name} ({}): \
                                 `cargo package` would not ship it",
                                inc.line,
                                inc.mac,
                                target.display(),
                                dir.display()
                            ));
                        }
                    }
                    IncludeArg::Generated => {}
                    // A macro-built path; the package build below compiles these crates
                    // from their .crate files, which checks such paths too.
                    IncludeArg::Unknown(_) if SOURCE_CRATES.iter().any(|(c, _)| c == name) => by_macro += 1,
                    IncludeArg::Unknown(arg) => problems.push(format!(
                        "{shown}:{}: {}!({arg}): not a literal path, so it cannot be checked; \
                         use a literal (or move the file into a kernel crate)",
                        inc.line, inc.mac
                    )),
                }
            }
        }
    }
    for (krate, exts) in SOURCE_CRATES {
        let Some((_, dir)) = packages.iter().find(|(n, _)| n == krate) else {
            problems.push(format!("the workspace has no package {krate}"));
            continue;
        };
        let is_source = |p: &Path| p.extension().is_some_and(|e| exts.iter().any(|x| e == *x));
        let sources = package_files(dir, &is_source)?;
        eprintln!("$ cargo package --list --allow-dirty -p {krate}");
        let out = Command::new("cargo").args(["package", "--list", "--allow-dirty", "-p", krate]).output()?;
        if !out.status.success() {
            bail!("cargo package --list -p {krate} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        }
        let listed = String::from_utf8_lossy(&out.stdout);
        let listed: std::collections::BTreeSet<&str> = listed.lines().collect();
        for source in &sources {
            if !listed.contains(source.as_str()) {
                let shown = dir.strip_prefix(std::env::current_dir()?).unwrap_or(dir).join(source);
                problems.push(format!("{} is not in the package of {krate}", shown.display()));
            }
        }
        eprintln!(
            "  {krate}: {} of {} sources ({}) packaged",
            sources.iter().filter(|s| listed.contains(s.as_str())).count(),
            sources.len(),
            exts.join(", ")
        );
    }
    if !problems.is_empty() {
        for p in &problems {
            eprintln!("error: {p}");
        }
        bail!("{} packaging problem(s)", problems.len());
    }
    eprintln!(
        "  {checked} literal include paths in {} packages, all inside their package; \
         {by_macro} built by macros in the kernel crates (checked by their package build)",
        packages.len()
    );
    // Build the kernel crates from their packages: proves the embedded paths resolve there.
    let mut cmd = Command::new("cargo");
    cmd.args(["package", "--allow-dirty", "--quiet"]);
    for (krate, _) in SOURCE_CRATES {
        cmd.args(["-p", krate]);
    }
    run(&mut cmd)
}

/// The script a GPU machine runs: every test binary (GPU tests required), optionally
/// under compute-sanitizer, then the bench suites named in `$BENCH`.
const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs orrery's release tests and benches on a GPU machine without a Rust toolchain.
#   OUT=<dir> bash .device/run.sh [test-filter]
# Env: SANITIZE="memcheck racecheck" runs the test binaries matching SANITIZE_BINS
#      (default: the CUDA conformance suite, "cuda-*") under compute-sanitizer,
#      with SANITIZE_FILTER as test arguments;
#      BENCH="primitives keys balltree" runs those suites (run from the repository root
#      copy, so a suite's peer script is found: primitives -> benches/python/peers.py,
#      balltree -> benches/python/balltree_peer.py, clusters ->
#      benches/python/clusters_peer.py; PEER=0 runs none); BENCH_ARGS
#      passes more arguments.
# balltree-*, orrery-balltree's one test binary, also holds CPU-only modules (they ran
# where the bundle was built): without a test-filter only its gpu_cuda:: and gpu_wgpu::
# modules run here (gpu_bench:: is ignored tests: run it by name); likewise tree-*,
# orrery-tree-build's, runs only its modules named gpu* (gpu::, gpu_view::, gpu_nf::), and
# so do traverse-*, clusters-* and sim-* (orrery-sim's gpu:: module).
# compute-sanitizer runs with --report-api-errors no: the CUDA executor counts a kernel's
# parameters by probing cuFuncGetParamInfo until it fails, an API error by design.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$here/out}
mkdir -p "$out"
export ORRERY_COMMIT=$(cat "$here/COMMIT")
export ORRERY_REQUIRE_CUDA=${ORRERY_REQUIRE_CUDA:-1}
export ORRERY_REQUIRE_WGPU=${ORRERY_REQUIRE_WGPU:-1}
export ORRERY_KERNEL_CACHE=${ORRERY_KERNEL_CACHE:-/tmp/orrery-kernels}
filter=${1:-}
status=0
summary=$out/summary.txt
: > "$summary"
for t in "$here"/bin/*; do
  name=$(basename "$t")
  case "$name" in orrery-bench|orrery) continue;; esac
  args=$filter
  case "$name" in
    balltree-*) [ -n "$filter" ] || args="gpu_cuda:: gpu_wgpu::";;
    tree-*) [ -n "$filter" ] || args="gpu";;
    traverse-*) [ -n "$filter" ] || args="gpu";;
    sim-*) [ -n "$filter" ] || args="gpu::";;
    clusters-*) [ -n "$filter" ] || args="gpu";;
  esac
  "$t" --test-threads=4 $args > "$out/test-$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(grep -E '^test result' "$out/test-$name.log" | tail -1)" | tee -a "$summary"
  [ $rc -eq 0 ] || status=1
done
for tool in ${SANITIZE:-}; do
  for t in "$here"/bin/${SANITIZE_BINS:-cuda-*}; do
    [ -e "$t" ] || continue
    name=$(basename "$t")
    compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 9 "$t" --test-threads=1 ${SANITIZE_FILTER:-} > "$out/sanitize-$tool-$name.log" 2>&1
    rc=$?
    echo "sanitize $tool $name rc=$rc $(grep -E 'ERROR SUMMARY' "$out/sanitize-$tool-$name.log" | tail -1)" | tee -a "$summary"
    [ $rc -eq 0 ] || status=1
  done
done
for suite in ${BENCH:-}; do
  peer=
  case "$suite" in
    primitives) peer=benches/python/peers.py;;
    balltree) peer=benches/python/balltree_peer.py;;
    clusters) peer=benches/python/clusters_peer.py;;
  esac
  peer_args=
  [ -n "$peer" ] && [ -e "$peer" ] && [ "${PEER:-1}" != 0 ] && peer_args="--peer $peer"
  "$here/bin/orrery-bench" "$suite" --out "$out" $peer_args ${BENCH_ARGS:-} 2>&1 | tee "$out/bench-$suite.txt"
done
exit $status
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// The test targets of the bundle of 2026-11-29 that need a GPU stay in; the
    /// CPU-only ones (about 20 MiB of them) stay out. orrery-balltree's GPU tests are
    /// modules of its one test binary, `balltree`; orrery-core's binary, `core`, has none.
    #[test]
    fn default_selection_keeps_gpu_tests_only() {
        let gpu = Selection::Gpu;
        for (krate, target) in [
            ("orrery-backend-cuda", "orrery_backend_cuda"),
            ("orrery-backend-cuda", "bench"),
            ("orrery-backend-cuda", "compile"),
            ("orrery-backend-cuda", "conformance"),
            ("orrery-backend-wgpu", "orrery_backend_wgpu"),
            ("orrery-backend-wgpu", "wgpu"),
            ("orrery-balltree", "balltree"),
            ("orrery-tree-build", "tree"),
            ("orrery-traverse", "traverse"),
            ("orrery-sim", "sim"),
            ("orrery-clusters", "clusters"),
        ] {
            assert!(gpu.keeps(krate, target), "{krate} {target} must be bundled");
        }
        for (krate, target) in
            [("orrery-core", "orrery_core"), ("orrery-core", "core"), ("orrery-balltree", "orrery_balltree")]
        {
            assert!(!gpu.keeps(krate, target), "{krate} {target} needs no GPU");
        }
    }

    /// A source with include macros; `INC` stands for the macro name, so that this file
    /// itself holds no include for `check-packaging` to find.
    fn source(text: &str) -> String {
        text.replace("INC", concat!("include", "_str"))
    }

    #[test]
    fn includes_are_found_and_read() {
        let text = source(
            "const A: &str = INC!(\"../a.cu\");\n\
             // INC!(\"../../commented.cu\")\n\
             const B: &str = INC!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/b.wgsl\"));\n\
             const C: &str = INC!(concat!(\"../\", $file));\n\
             const D: &str = INC!(concat!(env!(\"OUT_DIR\"), \"/gen.rs\"));\n\
             const E: &str = my_INC!(\"x\");\n\
             const F: &str = INC! (\n    r#\"../../f.cu\"#,\n);\n",
        );
        let found = includes(&text, "/pkg");
        let args: Vec<(usize, &IncludeArg)> = found.iter().map(|i| (i.line, &i.arg)).collect();
        assert_eq!(
            args,
            [
                (1, &IncludeArg::Path("../a.cu".into())),
                (3, &IncludeArg::Path("/pkg/b.wgsl".into())),
                (4, &IncludeArg::Unknown("concat!(\"../\", $file)".into())),
                (5, &IncludeArg::Generated),
                (7, &IncludeArg::Path("../../f.cu".into())),
            ]
        );
        assert!(found.iter().all(|i| i.mac == "include_str"));
    }

    #[test]
    fn paths_are_normalised_lexically() {
        let file_dir = Path::new("/ws/crates/a/src/gpu");
        assert_eq!(normalize(&file_dir.join("../../../../kernels/x.cu")), Path::new("/ws/kernels/x.cu"));
        assert!(normalize(&file_dir.join("./../k.cu")).starts_with("/ws/crates/a"));
        assert!(!normalize(&file_dir.join("../../../b/k.cu")).starts_with("/ws/crates/a"));
    }

    #[test]
    fn only_matches_names_and_prefixes() {
        let only = Selection::Only(vec!["balltree".into(), "conf*".into()]);
        assert!(only.keeps("orrery-balltree", "balltree"));
        assert!(only.keeps("orrery-backend-cuda", "conformance"));
        assert!(!only.keeps("orrery-backend-cuda", "compile"));
        assert!(!only.keeps("orrery-balltree", "balltree_extra"));
        assert!(Selection::All.keeps("orrery-core", "core"));
    }
}
