//! The conformance suite on every executor this machine has: the CPU always, CUDA where
//! a device is (required with `ORRERY_REQUIRE_CUDA=1`), wgpu where an adapter is
//! (required with `ORRERY_REQUIRE_WGPU=1`). A check panicking counts as failed. Skipped
//! executors are named on stderr and counted in the summary. The first argument that is
//! not a flag filters checks by name; `ORRERY_CONFORMANCE_EXECUTORS=cpu,cuda` limits the
//! executors (for sanitizer runs).

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;
use orrery_conformance::{Check, checks, gpu_checks};
use orrery_core::{CpuExecutor, Executor, GpuExecutor};

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    skipped: usize,
}

fn run<E: Executor>(label: &str, exec: &E, suite: &[Check<E>], filter: Option<&str>, tally: &mut Tally) {
    for (name, check) in suite {
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| check(exec))).unwrap_or_else(|p| {
            Err(p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default())
        });
        match outcome {
            Ok(()) => {
                tally.passed += 1;
                println!("ok      {label} {name}");
            }
            Err(why) => {
                println!("FAILED  {label} {name}: {why}");
                tally.failed.push(format!("{label} {name}"));
            }
        }
    }
}

fn skip(tally: &mut Tally, label: &str, reason: &str, count: usize) {
    orrery_core::skip::report(&format!("{label} ({count} checks)"), reason);
    tally.skipped += count;
}

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

fn wanted(executor: &str) -> bool {
    std::env::var("ORRERY_CONFORMANCE_EXECUTORS").map_or(true, |list| list.split(',').any(|e| e.trim() == executor))
}

/// Runs both suites on a GPU executor that opened, or records why it did not.
fn gpu<E: GpuExecutor>(
    label: &str,
    opened: orrery_core::Result<E>,
    require: &str,
    filter: Option<&str>,
    tally: &mut Tally,
) {
    if !wanted(label) {
        return;
    }
    match opened {
        Ok(exec) => {
            let name = exec.name();
            run(&name, &exec, &checks(), filter, tally);
            run(&name, &exec, &gpu_checks(), filter, tally);
        }
        Err(e) if required(require) => tally.failed.push(format!("{label}: {require}=1 but {e}")),
        Err(e) => skip(tally, label, &e.to_string(), checks::<E>().len() + gpu_checks::<E>().len()),
    }
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let filter = filter.as_deref();
    let mut tally = Tally::default();
    if wanted("cpu") {
        run("cpu", &CpuExecutor::new(), &checks(), filter, &mut tally);
    }
    gpu("cuda", CudaExecutor::from_env(), "ORRERY_REQUIRE_CUDA", filter, &mut tally);
    gpu("wgpu", WgpuExecutor::new(), "ORRERY_REQUIRE_WGPU", filter, &mut tally);
    println!("\nconformance: {} passed, {} failed, {} skipped", tally.passed, tally.failed.len(), tally.skipped);
    let _ = writeln!(std::io::stderr().lock(), "conformance: {} skipped", tally.skipped);
    if !tally.failed.is_empty() {
        for f in &tally.failed {
            println!("failed: {f}");
        }
        std::process::exit(1);
    }
}
