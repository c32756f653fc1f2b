//! `cargo xtask`: orrery's developer tasks.
//!
//! - `cargo xtask bench <suite> [args]`: builds `orrery-bench` in release mode with
//!   every executor feature and runs the suite (table on stdout, JSON + SVG under
//!   `bench-results/`).
//! - `cargo xtask device-bundle [--out .device]`: builds the release test executables
//!   and the bench binary, strips them into one folder with a `run.sh` that runs them
//!   all on a GPU machine with no Rust toolchain (`ORRERY_REQUIRE_CUDA=1`,
//!   `ORRERY_REQUIRE_WGPU=1`, optional compute-sanitizer), writing logs to `$OUT`.

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
    },
}

fn main() -> Result<()> {
    let root = workspace_root()?;
    std::env::set_current_dir(&root)?;
    match Cli::parse().task {
        Task::Bench { args } => bench(&args),
        Task::DeviceBundle { out, exclude } => device_bundle(&out, &exclude),
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
/// `tests_only`, only test harnesses (not examples built alongside them).
fn executables(cargo_args: &[&str], tests_only: bool) -> Result<Vec<PathBuf>> {
    eprintln!("$ cargo {}", cargo_args.join(" "));
    let out = Command::new("cargo").args(cargo_args).arg("--message-format=json").output()?;
    if !out.status.success() {
        bail!("cargo {} failed:\n{}", cargo_args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    let mut exes = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if tests_only && v["profile"]["test"].as_bool() != Some(true) {
            continue;
        }
        if let Some(exe) = v["executable"].as_str() {
            exes.push(PathBuf::from(exe));
        }
    }
    Ok(exes)
}

fn device_bundle(out: &Path, exclude: &[String]) -> Result<()> {
    let bin = out.join("bin");
    if bin.exists() {
        std::fs::remove_dir_all(&bin)?;
    }
    std::fs::create_dir_all(&bin)?;
    let mut test_args = vec!["test", "--release", "--workspace", "--all-features", "--no-run"];
    for krate in exclude {
        test_args.extend(["--exclude", krate.as_str()]);
    }
    let mut exes = executables(&test_args, true)?;
    exes.extend(executables(&["build", "--release", "-p", "orrery-benches", "--features", "cuda,wgpu"], false)?);
    let mut names = Vec::new();
    for exe in exes {
        let name = exe.file_name().context("executable without a name")?.to_string_lossy().into_owned();
        // Test executables are named crate-<hash>; keep the crate part readable.
        let dest = bin.join(&name);
        std::fs::copy(&exe, &dest)?;
        run(Command::new("strip").arg(&dest))?;
        names.push(name);
    }
    std::fs::write(out.join("COMMIT"), commit())?;
    std::fs::write(out.join("run.sh"), RUN_SCRIPT)?;
    let total: u64 = names.iter().map(|n| std::fs::metadata(bin.join(n)).map_or(0, |m| m.len())).sum();
    eprintln!("bundle in {}: {} binaries, {:.1} MiB", out.display(), names.len(), total as f64 / 1048576.0);
    if total > 60 << 20 {
        bail!("bundle is {:.1} MiB; the device machine takes 64 MiB in all", total as f64 / 1048576.0);
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
#      BENCH="primitives keys" runs those suites; BENCH_ARGS passes more arguments.
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
  "$here/bin/orrery-bench" "$suite" --out "$out" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench-$suite.txt"
done
exit $status
"#;
