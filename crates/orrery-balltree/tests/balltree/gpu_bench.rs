//! Timing of the GPU build (an ignored test: timing is a benchmark's job, never an
//! assertion). Run with
//!
//! ```text
//! cargo test --release -p orrery-balltree --test balltree -- --ignored --nocapture gpu_bench::
//! ```
//!
//! For every available executor (CUDA, wgpu), both strategies and the anchor workloads
//! (3D uniform f32: 16 x 1024, 16 x 4096, 16 x 16384, 64 x 16384, 1 x 2^20): two warm-up
//! builds (kernel compilation, plan upload, buffer growth), then `REPEATS` builds timed
//! with device markers around `GpuBallTreeBuilder::build` alone, rotating over three
//! input sets so repeated runs do not read one buffer from cache. Also timed, as the
//! cost of one global level's sort: the executor's `sort_pairs` of `n` pairs over 40
//! bits. Every timed tree is checked against the CPU once. Prints a table; with
//! `ORRERY_BENCH_OUT=<dir>` also writes `<dir>/balltree_gpu.json`. `ORRERY_BENCH_QUICK=1`
//! runs the two smallest workloads only (for software adapters).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use orrery_backend_cuda::CudaExecutor;
use orrery_backend_wgpu::WgpuExecutor;
use orrery_balltree::gpu::{GpuBallTreeBuilder, Strategy};
use orrery_balltree::{Batches, PointCloud, build_balltree};
use orrery_core::{Executor, GpuExecutor};

use crate::gpu_common;

const REPEATS: usize = 10;

struct Row {
    executor: String,
    workload: String,
    what: String,
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
}

fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (ms(v[v.len() / 2]), ms(v[0]), ms(v[v.len() - 1]))
}

fn workloads() -> Vec<(String, Vec<usize>)> {
    let mut w = vec![("16 x 1024".to_owned(), vec![1024; 16]), ("16 x 4096".to_owned(), vec![4096; 16])];
    if std::env::var("ORRERY_BENCH_QUICK").is_ok_and(|v| v == "1") {
        return w;
    }
    w.push(("16 x 16384".to_owned(), vec![16384; 16]));
    w.push(("64 x 16384".to_owned(), vec![16384; 64]));
    w.push(("1 x 1048576".to_owned(), vec![1 << 20]));
    w
}

fn bench_executor<E: GpuExecutor>(exec: &E, label: &str, rows: &mut Vec<Row>) {
    for (name, sizes) in workloads() {
        let n: usize = sizes.iter().sum();
        let batches = Batches::from_offsets(&gpu_common::offsets(&sizes)).unwrap();
        let inputs: Vec<Vec<f32>> = (0..3).map(|s| gpu_common::uniform(n, 3, 1000 + s)).collect();
        let devs: Vec<E::Buffer<f32>> = inputs.iter().map(|p| exec.upload(p).unwrap()).collect();
        let cpu: Vec<_> =
            inputs.iter().map(|p| build_balltree(&PointCloud::new(p, 3, batches.clone()).unwrap()).unwrap()).collect();
        for &strategy in gpu_common::strategies(exec) {
            let mut builder = GpuBallTreeBuilder::<E>::new(strategy);
            for (k, dev) in devs.iter().enumerate() {
                let tree = builder.build(exec, dev, 3, &batches).unwrap().download(exec).unwrap();
                gpu_common::assert_same(&format!("{label} {name} {strategy:?}"), &tree, &cpu[k]);
            }
            let mut times = Vec::with_capacity(REPEATS);
            for r in 0..REPEATS {
                let start = exec.mark().unwrap();
                builder.build(exec, &devs[r % devs.len()], 3, &batches).unwrap();
                let end = exec.mark().unwrap();
                times.push(exec.elapsed(&start, &end).unwrap());
            }
            let (median_ms, min_ms, max_ms) = stats(times);
            rows.push(Row {
                executor: label.to_owned(),
                workload: name.clone(),
                what: format!("build {strategy:?}"),
                median_ms,
                min_ms,
                max_ms,
            });
        }
        // One global level's sort: n (u64, u32) pairs over 40 bits.
        let keys_host: Vec<u64> = inputs[0].iter().step_by(3).map(|&x| u64::from(x.to_bits()) ^ 0x55).collect();
        let mut keys = exec.upload(&keys_host).unwrap();
        let mut vals = exec.alloc::<u32>(n).unwrap();
        let mut times = Vec::with_capacity(REPEATS);
        for r in 0..REPEATS + 2 {
            exec.write(&mut keys, 0, &keys_host).unwrap();
            exec.iota(&mut vals, 0).unwrap();
            let start = exec.mark().unwrap();
            exec.sort_pairs(&mut keys, &mut vals, 0..40).unwrap();
            let end = exec.mark().unwrap();
            if r >= 2 {
                times.push(exec.elapsed(&start, &end).unwrap());
            }
        }
        let (median_ms, min_ms, max_ms) = stats(times);
        rows.push(Row {
            executor: label.to_owned(),
            workload: name.clone(),
            what: "sort_pairs 40 bits".to_owned(),
            median_ms,
            min_ms,
            max_ms,
        });
    }
}

fn bench_cpu(rows: &mut Vec<Row>) {
    for (name, sizes) in workloads() {
        let n: usize = sizes.iter().sum();
        let batches = Batches::from_offsets(&gpu_common::offsets(&sizes)).unwrap();
        let points = gpu_common::uniform(n, 3, 1000);
        let cloud = PointCloud::new(&points, 3, batches).unwrap();
        build_balltree(&cloud).unwrap();
        let times: Vec<Duration> = (0..5)
            .map(|_| {
                let t = Instant::now();
                build_balltree(&cloud).unwrap();
                t.elapsed()
            })
            .collect();
        let (median_ms, min_ms, max_ms) = stats(times);
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        rows.push(Row {
            executor: format!("cpu ({threads} threads)"),
            workload: name,
            what: "build (host clock)".to_owned(),
            median_ms,
            min_ms,
            max_ms,
        });
    }
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn bench_gpu_build() {
    let mut rows = Vec::new();
    match CudaExecutor::from_env() {
        Ok(e) => {
            let label = e.name();
            bench_executor(&e, &label, &mut rows);
        }
        Err(e) => println!("skipped cuda: {e}"),
    }
    match WgpuExecutor::new() {
        Ok(e) => {
            let label = e.name();
            bench_executor(&e, &label, &mut rows);
        }
        Err(e) => println!("skipped wgpu: {e}"),
    }
    bench_cpu(&mut rows);
    let mut table = String::new();
    writeln!(table, "| executor | workload | what | median ms | min ms | max ms |").unwrap();
    writeln!(table, "|---|---|---|---|---|---|").unwrap();
    for r in &rows {
        writeln!(
            table,
            "| {} | {} | {} | {:.3} | {:.3} | {:.3} |",
            r.executor, r.workload, r.what, r.median_ms, r.min_ms, r.max_ms
        )
        .unwrap();
    }
    println!("{table}");
    if let Ok(dir) = std::env::var("ORRERY_BENCH_OUT") {
        let json: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "executor": r.executor, "workload": r.workload, "what": r.what,
                    "median_ms": r.median_ms, "min_ms": r.min_ms, "max_ms": r.max_ms, "repeats": REPEATS,
                })
            })
            .collect();
        let path = std::path::Path::new(&dir).join("balltree_gpu.json");
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        std::fs::write(std::path::Path::new(&dir).join("balltree_gpu.md"), &table).unwrap();
    }
}

/// One build of each large workload on CUDA, for a kernel profiler (`ncu --clock-control
/// none --metrics gpu__time_duration.sum`): Hybrid 64 x 16384, Hybrid 1 x 2^20, Select
/// 64 x 16384 and Select 1 x 2^20, in that order.
#[test]
#[ignore = "for a profiler: run with --ignored --exact gpu_bench::profile_kernels_once"]
fn profile_kernels_once() {
    let exec = match CudaExecutor::from_env() {
        Ok(e) => e,
        Err(e) => {
            println!("skipped: {e}");
            return;
        }
    };
    for (sizes, strategy) in [
        (vec![16384usize; 64], Strategy::Hybrid),
        (vec![1 << 20], Strategy::Hybrid),
        (vec![16384usize; 64], Strategy::Select),
        (vec![1 << 20], Strategy::Select),
    ] {
        let n: usize = sizes.iter().sum();
        let batches = Batches::from_offsets(&gpu_common::offsets(&sizes)).unwrap();
        let dev = exec.upload(&gpu_common::uniform(n, 3, 7)).unwrap();
        let mut builder = GpuBallTreeBuilder::<CudaExecutor>::new(strategy);
        builder.build(&exec, &dev, 3, &batches).unwrap();
        exec.synchronize().unwrap();
    }
}
