//! `tree`: the Cornerstone tree build (orrery-tree-build) per phase — keys, sort, build
//! from scratch, and an incremental step (noise of 1e-3 of the box edge, then keys, sort,
//! the update from the previous tree and its TreeView) — on the datasets of the tree issue, for octrees
//! (Hilbert; Morton on the uniform set) and binary trees, with LeafCount (bucket 16).
//! The expanding sphere is a sequence: 100 steps of homologous expansion, each an update
//! from the previous step's tree; its records are medians over the steps.
//!
//! `--peer-files DIR` also writes each dataset in the peer drivers' format and our
//! converged Hilbert leaf array beside it (`<set>-<N>.bin`, `<set>-<N>-leaves.bin`), so
//! `benches/device/tree.sh` can run `cstone_octree_driver` on the same particles and
//! compare the leaf arrays byte for byte.

use std::path::Path;
use std::time::{Duration, Instant};

use orrery_core::sfc::Curve;
use orrery_core::{Aabb, PositionsView, Result};
use orrery_tree_build::view::Geometry;
use orrery_tree_build::{Criterion, Rebalance, Shape, Tree, TreeView, build, input, update};

use crate::data::{TreeSet, jitter, write_peer_file};
use crate::report::Record;
use crate::stats::Stats;
use crate::suites::Config;

/// The bucket of every LeafCount run (Cornerstone's benchmarks use 16).
pub const BUCKET: u32 = 16;
/// Steps of the expanding sphere.
const EXPANSION_STEPS: usize = 100;

/// One tree variant: a shape and a criterion.
#[derive(Debug, Clone, Copy)]
struct Variant {
    shape: Shape,
    criterion: Criterion,
}

impl Variant {
    fn label(self) -> String {
        let shape = match self.shape {
            Shape::Octree(Curve::Hilbert) => "octree hilbert",
            Shape::Octree(Curve::Morton) => "octree morton",
            Shape::Binary => "binary",
        };
        let crit = match self.criterion {
            Criterion::LeafCount { .. } => "LC",
            Criterion::NfCount { .. } => "NF",
            _ => "other",
        };
        format!("{shape} {crit}")
    }
}

/// NFCount (default threshold) beside LeafCount: octree Hilbert on every set, binary on
/// the uniform one.
fn nf_variants(set: TreeSet, bbox: Aabb<f64>) -> Result<Vec<Variant>> {
    let mut out = Vec::new();
    let mut shapes = vec![Shape::Octree(Curve::Hilbert)];
    if set == TreeSet::Uniform {
        shapes.push(Shape::Binary);
    }
    for shape in shapes {
        out.push(Variant { shape, criterion: Criterion::nf_count(shape, &bbox)? });
    }
    Ok(out)
}

/// "2M", "25.6M": decimal millions as the issue writes them.
fn millions(n: usize) -> String {
    let m = n as f64 / 1e6;
    if (m - m.round()).abs() < 1e-9 { format!("{}M", m.round()) } else { format!("{m}M") }
}

/// Times `f` with the wall clock: `warmup` untimed runs, then `repeats` timed.
fn time<S>(
    cfg: &Config,
    state: &mut S,
    mut setup: impl FnMut(&mut S),
    mut f: impl FnMut(&mut S) -> Result<()>,
) -> Result<Stats> {
    for _ in 0..cfg.warmup {
        setup(state);
        f(state)?;
    }
    let mut samples = Vec::with_capacity(cfg.repeats);
    for _ in 0..cfg.repeats.max(1) {
        setup(state);
        let t = Instant::now();
        f(state)?;
        samples.push(t.elapsed());
    }
    Ok(Stats::from_samples(&mut samples))
}

fn record(executor: &str, workload: String, n: usize, stats: Stats, info: String) -> Record {
    Record { suite: "tree".into(), workload, executor: executor.into(), elements: n as u64, bytes: 0, stats, info }
}

fn tree_info(tree: &Tree, passes: u32) -> String {
    format!(
        "{} leaves, depth {}, {} empty, {passes} passes",
        tree.leaves().len(),
        tree.leaves().depth(),
        tree.empty_leaves()
    )
}

/// The sizes and sets of a run: 200K of every set with `--quick`; else 2M of every set
/// and 25.6M uniform and Plummer, restricted to the sizes listed in the environment
/// variable `ORRERY_TREE_SIZES` (comma-separated particle counts) when it is set.
fn suite_sizes(cfg: &Config) -> Vec<(usize, &'static [TreeSet])> {
    let all: Vec<(usize, &'static [TreeSet])> = if cfg.quick {
        vec![(200_000, &TreeSet::ALL)]
    } else {
        vec![(2_000_000, &TreeSet::ALL), (25_600_000, &[TreeSet::Uniform, TreeSet::Plummer])]
    };
    match std::env::var("ORRERY_TREE_SIZES") {
        Ok(list) => {
            let wanted: Vec<usize> = list.split(',').filter_map(|s| s.trim().parse().ok()).collect();
            all.into_iter().filter(|(n, _)| wanted.contains(n)).collect()
        }
        Err(_) => all,
    }
}

/// Runs the suite on the CPU (the calling rayon pool).
///
/// # Errors
/// Build failures; I/O errors of `--peer-files` are reported as
/// [`orrery_core::Error::InvalidArgument`].
pub fn run_cpu(cfg: &Config, executor: &str, peer_files: Option<&Path>) -> Result<Vec<Record>> {
    let sizes = suite_sizes(cfg);
    let bbox = Aabb::cube(-1.0f64, 1.0)?;
    let mut records = Vec::new();
    for (n, sets) in sizes {
        for &set in sets {
            let points = set.generate(n, 42);
            let mut variants =
                vec![Variant { shape: Shape::Octree(Curve::Hilbert), criterion: Criterion::leaf_count(BUCKET) }];
            if set == TreeSet::Uniform {
                variants
                    .push(Variant { shape: Shape::Octree(Curve::Morton), criterion: Criterion::leaf_count(BUCKET) });
            }
            variants.push(Variant { shape: Shape::Binary, criterion: Criterion::leaf_count(BUCKET) });
            variants.extend(nf_variants(set, bbox)?);
            for v in variants {
                let label = format!("{} {} {}", set.name(), millions(n), v.label());
                let recs = if set == TreeSet::Expanding {
                    expanding(cfg, executor, &label, &points, bbox, v)?
                } else {
                    steady(cfg, executor, &label, &points, bbox, v)?
                };
                records.extend(recs);
            }
            if let Some(dir) = peer_files {
                write_peer_pair(dir, &format!("{}-{}", set.name(), millions(n)), &points, bbox)?;
            }
        }
    }
    Ok(records)
}

/// Keys, sort, from scratch and one incremental step of a static set.
fn steady(
    cfg: &Config,
    executor: &str,
    label: &str,
    points: &[Vec<f64>; 3],
    bbox: Aabb<f64>,
    v: Variant,
) -> Result<Vec<Record>> {
    let n = points[0].len();
    let options = Rebalance::new(v.criterion);
    let layout = v.shape.layout();
    let view = PositionsView::new(&points[0], &points[1], &points[2])?;
    let mut out = Vec::new();

    let keys = time(
        cfg,
        &mut (),
        |()| {},
        |()| {
            std::hint::black_box(input::particle_keys(view, &bbox, v.shape));
            Ok(())
        },
    )?;
    out.push(record(executor, format!("{label} keys"), n, keys, String::new()));
    let raw = input::particle_keys(view, &bbox, v.shape);
    let sort = time(
        cfg,
        &mut None,
        |s| *s = Some(raw.clone()),
        |s| {
            std::hint::black_box(input::sort_keys(s.take().unwrap_or_default(), layout));
            Ok(())
        },
    )?;
    out.push(record(executor, format!("{label} sort"), n, sort, String::new()));
    let (sorted, _, _) = input::sort_keys(raw, layout);
    let (tree, run) = build(&sorted, layout, &options)?;
    let scratch = time(cfg, &mut (), |()| {}, |()| build(&sorted, layout, &options).map(|_| ()))?;
    out.push(record(executor, format!("{label} scratch"), n, scratch, tree_info(&tree, run.passes)));

    // One incremental step: the same noise every repeat, updated from the same tree.
    let mut moved = points.clone();
    jitter(&mut moved, 2e-3, 7);
    let moved_view = PositionsView::new(&moved[0], &moved[1], &moved[2])?;
    let moved_keys = input::particle_keys(moved_view, &bbox, v.shape);
    let (moved_sorted, _, _) = input::sort_keys(moved_keys.clone(), layout);
    let mut after = tree.clone();
    let step_run = update(&mut after, &moved_sorted, &options)?;
    let step_keys = time(
        cfg,
        &mut (),
        |()| {},
        |()| {
            std::hint::black_box(input::particle_keys(moved_view, &bbox, v.shape));
            Ok(())
        },
    )?;
    let step_sort = time(
        cfg,
        &mut None,
        |s| *s = Some(moved_keys.clone()),
        |s| {
            std::hint::black_box(input::sort_keys(s.take().unwrap_or_default(), layout));
            Ok(())
        },
    )?;
    let step_update =
        time(cfg, &mut tree.clone(), |t| *t = tree.clone(), |t| update(t, &moved_sorted, &options).map(|_| ()))?;
    // The TreeView of the updated tree (leaf starts are the prefix sum of its counts).
    let starts = after.leaf_starts();
    let step_view = time(
        cfg,
        &mut (),
        |()| {},
        |()| {
            TreeView::from_leaves(after.leaves(), &starts, Geometry::new(v.shape, bbox), None).map(|view| {
                std::hint::black_box(view);
            })
        },
    )?;
    let total = step_keys.median_ms + step_sort.median_ms + step_update.median_ms + step_view.median_ms;
    out.push(record(executor, format!("{label} step keys"), n, step_keys, String::new()));
    out.push(record(executor, format!("{label} step sort"), n, step_sort, String::new()));
    out.push(record(executor, format!("{label} step update"), n, step_update, tree_info(&after, step_run.passes)));
    out.push(record(
        executor,
        format!("{label} step view"),
        n,
        step_view,
        format!("whole step (keys + sort + update + view) {total:.3} ms, medians summed"),
    ));
    Ok(out)
}

/// The expanding sphere: per step, keys, sort and the update from the previous step's
/// tree; medians over the steps.
fn expanding(
    cfg: &Config,
    executor: &str,
    label: &str,
    points: &[Vec<f64>; 3],
    bbox: Aabb<f64>,
    v: Variant,
) -> Result<Vec<Record>> {
    let n = points[0].len();
    let options = Rebalance::new(v.criterion);
    let layout = v.shape.layout();
    let steps = if cfg.quick { 10 } else { EXPANSION_STEPS };
    let mut tree: Option<Tree> = None;
    let (mut t_keys, mut t_sort, mut t_update) = (Vec::new(), Vec::new(), Vec::new());
    let mut passes = Vec::new();
    for step in 0..=steps {
        let f = 1.0 + 0.08 * step as f64;
        let scaled: [Vec<f64>; 3] = [0, 1, 2].map(|a| points[a].iter().map(|&x| x * f).collect());
        let view = PositionsView::new(&scaled[0], &scaled[1], &scaled[2])?;
        let t0 = Instant::now();
        let keys = input::particle_keys(view, &bbox, v.shape);
        let t1 = Instant::now();
        let (sorted, _, _) = input::sort_keys(keys, layout);
        let t2 = Instant::now();
        let run = if let Some(t) = tree.as_mut() {
            update(t, &sorted, &options)?
        } else {
            let (t, run) = build(&sorted, layout, &options)?;
            tree = Some(t);
            run
        };
        let t3 = Instant::now();
        if step > 0 {
            t_keys.push(t1 - t0);
            t_sort.push(t2 - t1);
            t_update.push(t3 - t2);
            passes.push(run.passes);
        }
    }
    let stats = |s: &mut Vec<Duration>| Stats::from_samples(s);
    let tree = tree.expect("at least one step ran");
    passes.sort_unstable();
    let info =
        format!("final {}; median passes {}", tree_info(&tree, passes[passes.len() / 2]), passes[passes.len() / 2]);
    Ok(vec![
        record(executor, format!("{label} step keys"), n, stats(&mut t_keys), String::new()),
        record(executor, format!("{label} step sort"), n, stats(&mut t_sort), String::new()),
        record(executor, format!("{label} step update"), n, stats(&mut t_update), info),
    ])
}

/// Writes a set in the peer format and our converged Hilbert leaf array beside it.
fn write_peer_pair(dir: &Path, name: &str, points: &[Vec<f64>; 3], bbox: Aabb<f64>) -> Result<()> {
    let io = |e: std::io::Error| orrery_core::Error::InvalidArgument { what: "--peer-files", reason: e.to_string() };
    std::fs::create_dir_all(dir).map_err(io)?;
    write_peer_file(&dir.join(format!("{name}.bin")), points, None).map_err(io)?;
    let view = PositionsView::new(&points[0], &points[1], &points[2])?;
    let sorted = input::sort_particles(view, Some(bbox), Shape::Octree(Curve::Hilbert))?;
    let (tree, _) = build(&sorted.keys, sorted.layout, &Rebalance::new(Criterion::leaf_count(BUCKET)))?;
    let keys = tree.leaves().keys();
    let mut bytes = Vec::with_capacity(8 * (keys.len() + 1));
    bytes.extend_from_slice(&(keys.len() as u64).to_le_bytes());
    for k in keys {
        bytes.extend_from_slice(&k.to_le_bytes());
    }
    std::fs::write(dir.join(format!("{name}-leaves.bin")), bytes).map_err(io)
}

/// Runs the suite on a GPU executor: the same sets and variants as the CPU, f64
/// positions on CUDA (Cornerstone's precision; WGSL has no f64 binary keys or views, so
/// wgpu runs f32). With f64 the leaf arrays are compared with the
/// CPU build's, and the records say whether they are equal.
///
/// # Errors
/// Build and device failures.
#[cfg(any(feature = "cuda", feature = "wgpu"))]
pub fn run_gpu<E: orrery_core::GpuExecutor>(exec: &E, cfg: &Config) -> Result<Vec<Record>> {
    let sizes = suite_sizes(cfg);
    let wgsl = exec.kind() == orrery_core::ExecutorKind::Wgpu;
    let mut records = Vec::new();
    for (n, sets) in sizes {
        for &set in sets {
            let points = set.generate(n, 42);
            let mut variants =
                vec![Variant { shape: Shape::Octree(Curve::Hilbert), criterion: Criterion::leaf_count(BUCKET) }];
            if set == TreeSet::Uniform {
                variants
                    .push(Variant { shape: Shape::Octree(Curve::Morton), criterion: Criterion::leaf_count(BUCKET) });
            }
            variants.push(Variant { shape: Shape::Binary, criterion: Criterion::leaf_count(BUCKET) });
            variants.extend(nf_variants(set, Aabb::cube(-1.0f64, 1.0)?)?);
            for v in variants {
                let label = format!("{} {} {}", set.name(), millions(n), v.label());
                // WGSL has neither f64 binary keys nor f64 views: wgpu runs f32.
                let f64_ok = exec.limits().f64 && !wgsl;
                let recs = if f64_ok {
                    gpu::variant::<E, f64>(exec, cfg, &label, &points, set, v)?
                } else {
                    gpu::variant::<E, f32>(exec, cfg, &label, &points, set, v)?
                };
                records.extend(recs);
            }
        }
    }
    Ok(records)
}

#[cfg(any(feature = "cuda", feature = "wgpu"))]
mod gpu {
    use orrery_core::{Aabb, DType, GpuExecutor, Real, Result};
    use orrery_tree_build::gpu::{GpuTree, TreeReal};
    use orrery_tree_build::gpu_view::{GpuTreeViewBuilder, GpuViewReal};
    use orrery_tree_build::view::Geometry;
    use orrery_tree_build::{Rebalance, build, input};

    use super::{EXPANSION_STEPS, Variant, record, time_device};
    use crate::data::{TreeSet, jitter};
    use crate::report::Record;
    use crate::stats::{Stats, measure_with_setup};
    use crate::suites::Config;

    fn upload<E: GpuExecutor, T: Real>(exec: &E, points: &[Vec<f64>; 3]) -> Result<[E::Buffer<T>; 3]> {
        let conv = |a: &Vec<f64>| a.iter().map(|&v| <T as Real>::from_f64(v)).collect::<Vec<T>>();
        Ok([exec.upload(&conv(&points[0]))?, exec.upload(&conv(&points[1]))?, exec.upload(&conv(&points[2]))?])
    }

    /// One variant on the device: keys, sort, from scratch, an update of the unchanged
    /// tree (Cornerstone's "update (1 call)"), and one incremental step per phase and
    /// whole; the expanding set as 100 steps.
    pub(super) fn variant<E: GpuExecutor, T: TreeReal + GpuViewReal>(
        exec: &E,
        cfg: &Config,
        label: &str,
        points: &[Vec<f64>; 3],
        set: TreeSet,
        v: Variant,
    ) -> Result<Vec<Record>> {
        let n = points[0].len();
        let name = format!("{} {}", exec.name(), if T::DTYPE == DType::F64 { "f64" } else { "f32" });
        let cube = Aabb::cube(<T as Real>::from_f64(-1.0), <T as Real>::from_f64(1.0))?;
        let bbox = Some(cube);
        let options = Rebalance::new(v.criterion);
        let mut tree = GpuTree::new(exec, v.shape, options)?;
        let [x, y, z] = upload::<E, T>(exec, points)?;
        let mut out = Vec::new();
        if set == TreeSet::Expanding {
            return expanding::<E, T>(exec, cfg, label, &name, points, v, &mut tree);
        }

        let keys = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            &mut tree,
            |_| Ok(()),
            |t| t.compute_keys(exec, &x, &y, &z, bbox).map(drop),
        )?;
        out.push(record(&name, format!("{label} keys"), n, keys, String::new()));
        let sort = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            &mut tree,
            |t| t.compute_keys(exec, &x, &y, &z, bbox).map(drop),
            |t| t.sort(exec),
        )?;
        out.push(record(&name, format!("{label} sort"), n, sort, String::new()));
        let scratch =
            measure_with_setup(exec, cfg.warmup, cfg.repeats, &mut tree, |_| Ok(()), |t| t.rebuild(exec).map(drop))?;
        let run = tree.rebuild(exec)?;
        let mut info = format!("{} leaves, {} passes", tree.num_leaves(), run.passes);
        if T::DTYPE == DType::F64 {
            // The same f64 positions on the CPU: the leaf arrays must be equal.
            let view = orrery_core::PositionsView::new(&points[0], &points[1], &points[2])?;
            let sorted = input::sort_particles(view, Some(Aabb::cube(-1.0f64, 1.0)?), v.shape)?;
            let (cpu, _) = build(&sorted.keys, sorted.layout, &options)?;
            let equal = tree.leaves(exec)? == *cpu.leaves();
            info.push_str(if equal { "; leaves = CPU" } else { "; LEAVES DIFFER FROM CPU" });
        }
        out.push(record(&name, format!("{label} scratch"), n, scratch, info));
        let unchanged =
            measure_with_setup(exec, cfg.warmup, cfg.repeats, &mut tree, |_| Ok(()), |t| t.rebalance(exec).map(drop))?;
        out.push(record(&name, format!("{label} update unchanged"), n, unchanged, "1 pass".into()));

        out.extend(step::<E, T>(exec, cfg, label, &name, points, v, &mut tree, [&x, &y, &z])?);
        Ok(out)
    }

    /// One incremental step after noise of 1e-3 of the edge, from the converged tree of
    /// `points` in `tree`: keys, sort, update and view timed apart, then the whole step.
    #[allow(clippy::too_many_arguments)]
    fn step<E: GpuExecutor, T: TreeReal + GpuViewReal>(
        exec: &E,
        cfg: &Config,
        label: &str,
        name: &str,
        points: &[Vec<f64>; 3],
        v: Variant,
        tree: &mut GpuTree<E>,
        [x, y, z]: [&E::Buffer<T>; 3],
    ) -> Result<Vec<Record>> {
        let n = points[0].len();
        let cube = Aabb::cube(<T as Real>::from_f64(-1.0), <T as Real>::from_f64(1.0))?;
        let bbox = Some(cube);
        let mut out = Vec::new();
        // One incremental step after noise of 1e-3 of the edge, from the converged tree.
        let mut moved = points.clone();
        jitter(&mut moved, 2e-3, 7);
        let [mx, my, mz] = upload::<E, T>(exec, &moved)?;
        let restore = |t: &mut GpuTree<E>| -> Result<()> {
            t.compute_keys(exec, x, y, z, bbox)?;
            t.sort(exec)?;
            t.rebuild(exec).map(drop)
        };
        let step_keys = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            tree,
            |_| Ok(()),
            |t| t.compute_keys(exec, &mx, &my, &mz, bbox).map(drop),
        )?;
        let step_sort = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            tree,
            |t| t.compute_keys(exec, &mx, &my, &mz, bbox).map(drop),
            |t| t.sort(exec),
        )?;
        let step_update = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            tree,
            |t| {
                restore(t)?;
                t.compute_keys(exec, &mx, &my, &mz, bbox)?;
                t.sort(exec)
            },
            |t| t.rebalance(exec).map(drop),
        )?;
        let geometry = Geometry::new(v.shape, cube);
        let mut builder = GpuTreeViewBuilder::<E, T>::new();
        let step_view = measure_with_setup(
            exec,
            cfg.warmup,
            cfg.repeats,
            tree,
            |t| {
                restore(t)?;
                t.step(exec, &mx, &my, &mz, bbox).map(drop)
            },
            |t| t.build_view(exec, &mut builder, &geometry).map(drop),
        )?;
        let whole = measure_with_setup(exec, cfg.warmup, cfg.repeats, tree, restore, |t| {
            t.step(exec, &mx, &my, &mz, bbox)?;
            t.build_view(exec, &mut builder, &geometry).map(drop)
        })?;
        restore(tree)?;
        tree.compute_keys(exec, &mx, &my, &mz, bbox)?;
        tree.sort(exec)?;
        let step_run = tree.rebalance(exec)?;
        let (replays, recorded) = tree.replay_stats();
        out.push(record(name, format!("{label} step keys"), n, step_keys, String::new()));
        out.push(record(name, format!("{label} step sort"), n, step_sort, String::new()));
        out.push(record(
            name,
            format!("{label} step update"),
            n,
            step_update,
            format!(
                "{} leaves, {} passes; replays {replays}, recordings {recorded}",
                tree.num_leaves(),
                step_run.passes
            ),
        ));
        out.push(record(name, format!("{label} step view"), n, step_view, String::new()));
        let ratio = whole.median_ms / (step_keys.median_ms + step_sort.median_ms);
        out.push(record(
            name,
            format!("{label} step whole"),
            n,
            whole,
            format!("keys + sort + update + view: {ratio:.2}x keys + sort"),
        ));
        Ok(out)
    }

    /// The expanding sphere on the device: per step an upload (untimed), keys, sort and the
    /// update from the previous step's tree.
    fn expanding<E: GpuExecutor, T: TreeReal + GpuViewReal>(
        exec: &E,
        cfg: &Config,
        label: &str,
        name: &str,
        points: &[Vec<f64>; 3],
        v: Variant,
        tree: &mut GpuTree<E>,
    ) -> Result<Vec<Record>> {
        let _ = v;
        let n = points[0].len();
        let bbox = Some(Aabb::cube(<T as Real>::from_f64(-1.0), <T as Real>::from_f64(1.0))?);
        let steps = if cfg.quick { 10 } else { EXPANSION_STEPS };
        let (mut t_keys, mut t_sort, mut t_update) = (Vec::new(), Vec::new(), Vec::new());
        let mut passes = Vec::new();
        for step in 0..=steps {
            let f = 1.0 + 0.08 * step as f64;
            let scaled: [Vec<f64>; 3] = [0, 1, 2].map(|a| points[a].iter().map(|&x| x * f).collect());
            let [x, y, z] = upload::<E, T>(exec, &scaled)?;
            let keys = time_device(exec, || tree.compute_keys(exec, &x, &y, &z, bbox).map(drop))?;
            let sort = time_device(exec, || tree.sort(exec))?;
            let mut run = None;
            let update = time_device(exec, || {
                run = Some(tree.rebalance(exec)?);
                Ok(())
            })?;
            if step > 0 {
                t_keys.push(keys);
                t_sort.push(sort);
                t_update.push(update);
                passes.push(run.map_or(0, |r| r.passes));
            }
        }
        passes.sort_unstable();
        let median = passes[passes.len() / 2];
        let info = format!("final {} leaves; median passes {median}", tree.num_leaves());
        Ok(vec![
            record(name, format!("{label} step keys"), n, Stats::from_samples(&mut t_keys), String::new()),
            record(name, format!("{label} step sort"), n, Stats::from_samples(&mut t_sort), String::new()),
            record(name, format!("{label} step update"), n, Stats::from_samples(&mut t_update), info),
        ])
    }
}

/// One device-timed call (executor marks around it).
#[cfg(any(feature = "cuda", feature = "wgpu"))]
fn time_device<E: orrery_core::Executor>(exec: &E, f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let start = exec.mark()?;
    f()?;
    let end = exec.mark()?;
    exec.elapsed(&start, &end)
}
