//! The conformance suite on every executor this machine has: the CPU always, CUDA where
//! a device is (required with `ORRERY_REQUIRE_CUDA=1`), wgpu where an adapter is
//! (required with `ORRERY_REQUIRE_WGPU=1`). A check panicking counts as failed. Skipped
//! executors are named on stderr and counted in the summary.

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};

use orrery_conformance::{Check, checks, gpu_checks};
use orrery_core::{CpuExecutor, Executor};

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
    // Straight to the stream: the skip must be visible in CI's log.
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {label}: {reason} ({count} checks)");
    tally.skipped += count;
}

fn required(var: &str) -> bool {
    std::env::var(var).is_ok_and(|v| v == "1")
}

fn main() {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let filter = filter.as_deref();
    let mut tally = Tally::default();
    let cpu = CpuExecutor::new();
    run("cpu", &cpu, &checks::<CpuExecutor>(), filter, &mut tally);

    match orrery_backend_cuda::CudaExecutor::from_env() {
        Ok(cuda) => {
            let label = cuda.name();
            run(&label, &cuda, &checks(), filter, &mut tally);
            run(&label, &cuda, &gpu_checks(), filter, &mut tally);
        }
        Err(e) if required("ORRERY_REQUIRE_CUDA") => {
            tally.failed.push(format!("cuda: ORRERY_REQUIRE_CUDA=1 but {e}"));
        }
        Err(e) => {
            let n = checks::<orrery_backend_cuda::CudaExecutor>().len()
                + gpu_checks::<orrery_backend_cuda::CudaExecutor>().len();
            skip(&mut tally, "cuda", &e.to_string(), n);
        }
    }

    match orrery_backend_wgpu::WgpuExecutor::new() {
        Ok(wgpu) => {
            let label = wgpu.name();
            run(&label, &wgpu, &checks(), filter, &mut tally);
            run(&label, &wgpu, &gpu_checks(), filter, &mut tally);
        }
        Err(e) if required("ORRERY_REQUIRE_WGPU") => {
            tally.failed.push(format!("wgpu: ORRERY_REQUIRE_WGPU=1 but {e}"));
        }
        Err(e) => {
            let n = checks::<orrery_backend_wgpu::WgpuExecutor>().len()
                + gpu_checks::<orrery_backend_wgpu::WgpuExecutor>().len();
            skip(&mut tally, "wgpu", &e.to_string(), n);
        }
    }

    println!("\nconformance: {} passed, {} failed, {} skipped", tally.passed, tally.failed.len(), tally.skipped);
    let _ = writeln!(std::io::stderr().lock(), "conformance: {} skipped", tally.skipped);
    if !tally.failed.is_empty() {
        for f in &tally.failed {
            println!("failed: {f}");
        }
        std::process::exit(1);
    }
}
