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
            _ => "other",
        };
        format!("{shape} {crit}")
    }
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

/// Runs the suite on the CPU (the calling rayon pool).
///
/// # Errors
/// Build failures; I/O errors of `--peer-files` are reported as
/// [`orrery_core::Error::InvalidArgument`].
pub fn run_cpu(cfg: &Config, executor: &str, peer_files: Option<&Path>) -> Result<Vec<Record>> {
    let sizes: Vec<(usize, &[TreeSet])> = if cfg.quick {
        vec![(200_000, &TreeSet::ALL)]
    } else {
        vec![(2_000_000, &TreeSet::ALL), (25_600_000, &[TreeSet::Uniform, TreeSet::Plummer])]
    };
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
    let starts = leaf_starts_of(&after);
    let step_view = time(cfg, &mut (), |()| {}, |()| {
        TreeView::from_leaves(after.leaves(), &starts, Geometry::new(v.shape, bbox), None).map(|view| {
            std::hint::black_box(view);
        })
    })?;
    let total = step_keys.median_ms + step_sort.median_ms + step_update.median_ms + step_view.median_ms;
    out.push(record(executor, format!("{label} step keys"), n, step_keys, String::new()));
    out.push(record(executor, format!("{label} step sort"), n, step_sort, String::new()));
    out.push(record(
        executor,
        format!("{label} step update"),
        n,
        step_update,
        tree_info(&after, step_run.passes),
    ));
    out.push(record(
        executor,
        format!("{label} step view"),
        n,
        step_view,
        format!("whole step (keys + sort + update + view) {total:.3} ms, medians summed"),
    ));
    Ok(out)
}

/// The first sorted particle of every leaf (and the active count last): the prefix sum
/// of the counts, as the leaves tile the key range in order.
fn leaf_starts_of(tree: &Tree) -> Vec<u32> {
    let mut starts = Vec::with_capacity(tree.counts().len() + 1);
    let mut acc = 0u32;
    starts.push(0);
    for &c in tree.counts() {
        acc += c;
        starts.push(acc);
    }
    starts
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
    write_peer_file(&dir.join(format!("{name}.bin")), points).map_err(io)?;
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
