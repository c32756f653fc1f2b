//! `cargo xtask`: orrery's developer tasks.
//!
//! - `cargo xtask bench <suite> [args]`: builds `orrery-bench` in release mode with
//!   every executor feature and runs the suite (table on stdout, JSON + SVG under
//!   `bench-results/`).
//! - `cargo xtask device-bundle [--out .device] [--only NAMES | --all] [--example NAMES]`: builds the
//!   release test executables and the bench binary (features `cuda,wgpu`), strips the
//!   ones that need a GPU into one folder with a `run.sh` that runs them on a GPU
//!   machine with no Rust toolchain (`ORRERY_REQUIRE_CUDA=1`, `ORRERY_REQUIRE_WGPU=1`,
//!   optional compute-sanitizer, `BENCH=<suites>`), writing logs to `$OUT`. CPU-only
//!   tests run here, so by default only [`GPU_CRATES`] and the test targets named in
//!   [`GPU_TESTS`] travel: the device takes 64 MiB in all, wheels and drivers included.

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
    /// Run a benchmark suite (keys, primitives, ...) on every available executor.
    Bench {
        /// Arguments for orrery-bench (the suite first); see `orrery-bench --help`.
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
        /// (comma separated; `*` at the end matches any suffix, e.g. `gpu_cuda,conformance`),
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
}

/// Crates whose every test target needs (or exercises) a GPU executor.
const GPU_CRATES: &[&str] = &["orrery-backend-cuda", "orrery-backend-wgpu"];

/// Test target names (any crate) that need a GPU; `*` at the end matches any suffix.
const GPU_TESTS: &[&str] = &["gpu*", "conformance", "compile", "wgpu*", "cuda*"];

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

/// The script a GPU machine runs: every test binary (GPU tests required), optionally
/// under compute-sanitizer, then the bench suites named in `$BENCH`.
const RUN_SCRIPT: &str = r#"#!/usr/bin/env bash
# Runs orrery's release tests and benches on a GPU machine without a Rust toolchain.
#   OUT=<dir> bash .device/run.sh [test-filter]
# Env: SANITIZE="memcheck racecheck" runs the test binaries matching SANITIZE_BINS
#      (default: the CUDA conformance suite, "conformance-*") under compute-sanitizer,
#      with SANITIZE_FILTER as test arguments;
#      BENCH="primitives keys balltree" runs those suites (run from the repository root
#      copy, so a suite's peer script is found: primitives -> benches/python/peers.py,
#      balltree -> benches/python/balltree_peer.py; PEER=0 runs none); BENCH_ARGS
#      passes more arguments.
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
  "$t" --test-threads=4 $filter > "$out/test-$name.log" 2>&1
  rc=$?
  echo "$name rc=$rc $(grep -E '^test result' "$out/test-$name.log" | tail -1)" | tee -a "$summary"
  [ $rc -eq 0 ] || status=1
done
for tool in ${SANITIZE:-}; do
  for t in "$here"/bin/${SANITIZE_BINS:-conformance-*}; do
    [ -e "$t" ] || continue
    name=$(basename "$t")
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$t" --test-threads=1 ${SANITIZE_FILTER:-} > "$out/sanitize-$tool-$name.log" 2>&1
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
    /// CPU-only ones (about 20 MiB of them) stay out.
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
            ("orrery-balltree", "gpu_cuda"),
            ("orrery-balltree", "gpu_wgpu"),
            ("orrery-balltree", "gpu_bench"),
        ] {
            assert!(gpu.keeps(krate, target), "{krate} {target} must be bundled");
        }
        for (krate, target) in [
            ("orrery-core", "orrery_core"),
            ("orrery-core", "sfc_hilbert"),
            ("orrery-core", "cpu_primitives"),
            ("orrery-balltree", "orrery_balltree"),
            ("orrery-balltree", "golden"),
            ("orrery-balltree", "properties"),
        ] {
            assert!(!gpu.keeps(krate, target), "{krate} {target} needs no GPU");
        }
    }

    #[test]
    fn only_matches_names_and_prefixes() {
        let only = Selection::Only(vec!["gpu_cuda".into(), "conf*".into()]);
        assert!(only.keeps("orrery-balltree", "gpu_cuda"));
        assert!(only.keeps("orrery-backend-cuda", "conformance"));
        assert!(!only.keeps("orrery-backend-cuda", "compile"));
        assert!(!only.keeps("orrery-balltree", "gpu_cuda_extra"));
        assert!(Selection::All.keeps("orrery-core", "sfc_cell"));
    }
}
