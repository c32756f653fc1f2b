//! Restarts through a snapshot file: `Simulation::snapshot`, `snapshot::write`,
//! `snapshot::read`, `Simulation::resume` continue a run bit for bit (direct and
//! Barnes-Hut, fixed and block steps, npz and HDF5); corrupt leaves and missing run
//! parameters are typed errors naming what is wrong.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use npyz::zip::{self, ZipArchive, ZipWriter};
use orrery_sim::backend::host::Host;
use orrery_sim::diagnostics::Diagnostics;
use orrery_sim::snapshot::{self, Format};
use orrery_sim::{
    Physics, RunParameters, SimError, Simulation, SolverSpec, State, TimeSteps, TreeSettings, ic, params,
};
use orrery_traverse::gpu::GpuWalk;
use orrery_traverse::mac::Mac;
use orrery_traverse::multipole::Expansion;

const PHYSICS: Physics = Physics { g: 1.0, softening: 0.05 };
const BODIES: usize = 300;
const STEPS: u64 = 20;
const FIRST: u64 = 7;

fn formats() -> Vec<Format> {
    if cfg!(feature = "hdf5") { vec![Format::Npz, Format::Hdf5] } else { vec![Format::Npz] }
}

fn specs() -> [SolverSpec; 2] {
    [SolverSpec::Direct, SolverSpec::BarnesHut(TreeSettings::default())]
}

fn time_steps() -> [TimeSteps; 2] {
    [TimeSteps::fixed(1.0 / 128.0), TimeSteps::block(1.0 / 32.0, 3, 0.025)]
}

fn start(spec: &SolverSpec, steps: TimeSteps) -> Simulation<Host> {
    let state = State::new(ic::plummer(BODIES, 5).unwrap());
    let mut sim = Simulation::new(Host, spec, PHYSICS, steps, state, None, None).unwrap();
    // Fixes the reference energy at the start, as a run's first report does.
    sim.diagnostics().unwrap();
    sim
}

/// Runs `count` steps and returns the final state and diagnostics.
fn finish(sim: &mut Simulation<Host>, count: u64) -> (State, Diagnostics) {
    for _ in 0..count {
        sim.step().unwrap();
    }
    let d = sim.diagnostics().unwrap();
    (sim.state().clone(), d)
}

/// Every float of a state and of the diagnostics as bits, so that `-0.0 != 0.0` and any
/// last-place difference fails.
fn bits(state: &State, d: &Diagnostics) -> (Vec<Vec<u64>>, Vec<u64>, u64) {
    let b = &state.bodies;
    let cols = [&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz, &b.mass].map(|c| c.iter().map(|v| v.to_bits()).collect());
    let mut scalars = vec![state.time, d.time, d.kinetic, d.potential, d.total, d.energy_error, d.virial_ratio];
    scalars.extend(d.momentum.iter().chain(&d.angular_momentum));
    (cols.to_vec(), scalars.iter().map(|v| v.to_bits()).collect(), state.step)
}

#[test]
fn a_restart_through_a_file_continues_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    for spec in specs() {
        for steps in time_steps() {
            let mut whole = start(&spec, steps);
            let (end, end_d) = finish(&mut whole, STEPS);
            assert_eq!(end.step, STEPS);
            for format in formats() {
                let what = format!("{spec:?} {steps:?} {format}");
                let mut first = start(&spec, steps);
                let (_, _) = finish(&mut first, FIRST);
                let snap = first.snapshot().unwrap();
                assert_eq!(snap.tree_leaves.is_some(), matches!(spec, SolverSpec::BarnesHut(_)), "{what}");
                assert!(snap.attributes.contains_key(params::ENERGY0), "{what}");
                drop(first);

                let path = dir.path().join(format!("restart.{}", format.extension()));
                snapshot::write(&path, &snap, format).unwrap();
                let read = snapshot::read(&path).unwrap();
                assert_eq!(read, snap, "{what}: the file does not read back what was written");

                let mut resumed = Simulation::resume(Host, read).unwrap();
                assert_eq!(resumed.solver_spec(), spec, "{what}");
                assert_eq!(resumed.time_steps(), steps, "{what}");
                assert_eq!(resumed.energy0().map(f64::to_bits), whole.energy0().map(f64::to_bits), "{what}");
                let (again, again_d) = finish(&mut resumed, STEPS - FIRST);
                assert_eq!(bits(&again, &again_d), bits(&end, &end_d), "{what}");
                assert_eq!(again.ids, end.ids, "{what}");
                assert_eq!(resumed.tree_leaves(), whole.tree_leaves(), "{what}");
            }
        }
    }
}

/// A copy of the npz at `from` with its `tree_leaves` member replaced by `leaves` (the
/// writer refuses bad leaves, so the file is edited behind its back).
fn replace_npz_leaves(from: &Path, to: &Path, leaves: &[u64]) {
    let mut src = ZipArchive::new(File::open(from).unwrap()).unwrap();
    let mut dst = ZipWriter::new(File::create(to).unwrap());
    for i in 0..src.len() {
        let member = src.by_index_raw(i).unwrap();
        if member.name() != "tree_leaves.npy" {
            dst.raw_copy_file(member).unwrap();
        }
    }
    let mut header = format!("{{'descr': '<u8', 'fortran_order': False, 'shape': ({},), }}", leaves.len());
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut npy = b"\x93NUMPY\x01\x00".to_vec();
    npy.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    npy.extend_from_slice(header.as_bytes());
    npy.extend(leaves.iter().flat_map(|k| k.to_le_bytes()));
    dst.start_file("tree_leaves.npy", zip::write::FileOptions::default()).unwrap();
    dst.write_all(&npy).unwrap();
    dst.finish().unwrap();
}

fn barnes_hut_snapshot() -> snapshot::Snapshot {
    let mut sim = start(&SolverSpec::BarnesHut(TreeSettings::default()), TimeSteps::fixed(1.0 / 128.0));
    sim.step().unwrap();
    sim.snapshot().unwrap()
}

#[test]
fn unsorted_tree_leaves_in_a_file_are_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let snap = barnes_hut_snapshot();
    let mut leaves = snap.tree_leaves.clone().unwrap();
    assert!(leaves.len() > 3, "the tree has more than two leaves");
    leaves.swap(1, 2);
    let good = dir.path().join("good.npz");
    snapshot::write(&good, &snap, Format::Npz).unwrap();
    let bad = dir.path().join("bad.npz");
    replace_npz_leaves(&good, &bad, &leaves);
    let e = snapshot::read(&bad).unwrap_err();
    assert!(matches!(e, SimError::BadFile { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.contains("bad.npz") && msg.contains("member `tree_leaves` is not a tree's leaf array"), "{msg}");
    // The edit itself is sound: the original leaves, written the same way, read back.
    replace_npz_leaves(&good, &bad, snap.tree_leaves.as_deref().unwrap());
    assert_eq!(snapshot::read(&bad).unwrap(), snap);
}

#[cfg(feature = "hdf5")]
#[test]
fn unsorted_tree_leaves_in_an_hdf5_file_are_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let snap = barnes_hut_snapshot();
    let path = dir.path().join("bad.hdf5");
    snapshot::write(&path, &snap, Format::Hdf5).unwrap();
    {
        let f = hdf5::File::open_rw(&path).unwrap();
        let ds = f.dataset("Orrery/TreeLeaves").unwrap();
        let mut leaves: Vec<u64> = ds.read_raw().unwrap();
        assert_eq!(leaves, snap.tree_leaves.clone().unwrap());
        leaves.swap(1, 2);
        ds.write_raw(&leaves).unwrap();
    }
    let e = snapshot::read(&path).unwrap_err();
    assert!(matches!(e, SimError::BadFile { .. }), "{e}");
    assert!(e.to_string().contains("dataset `Orrery/TreeLeaves` is not a tree's leaf array"), "{e}");
}

#[test]
fn files_without_tree_leaves_still_resume() {
    let dir = tempfile::tempdir().unwrap();
    for format in formats() {
        let mut snap = barnes_hut_snapshot();
        snap.tree_leaves = None;
        let path = dir.path().join(format!("old.{}", format.extension()));
        snapshot::write(&path, &snap, format).unwrap();
        let read = snapshot::read(&path).unwrap();
        assert_eq!(read.tree_leaves, None, "{format}");
        let mut sim = Simulation::resume(Host, read).unwrap();
        sim.step().unwrap();
        assert!(sim.tree_leaves().is_some(), "{format}: the solver builds its own tree");
    }
}

/// `resume` hands the snapshot's leaves to the solver: halves of the key range are a
/// leaf array (the file reads) but not an octree's, and the Barnes-Hut solver refuses
/// them. (The converged LeafCount tree does not depend on where its update starts, so
/// leaves that are an octree's would not change the forces; this is how the hand-over
/// itself is seen.)
#[test]
fn resume_gives_the_leaves_to_the_solver() {
    let dir = tempfile::tempdir().unwrap();
    let snap = barnes_hut_snapshot().with_tree_leaves(vec![0, 1 << 62, 1 << 63]);
    let path = dir.path().join("binary.npz");
    snapshot::write(&path, &snap, Format::Npz).unwrap();
    let read = snapshot::read(&path).unwrap();
    let e = Simulation::resume(Host, read.clone()).err().expect("octree solver, binary leaves");
    assert!(matches!(e, SimError::Core(orrery_core::Error::InvalidTree { .. })), "{e}");
    // The same file resumes by direct summation, which keeps no tree.
    let mut read = read;
    read.attributes.insert(params::SOLVER.into(), "direct".into());
    let mut sim = Simulation::resume(Host, read).unwrap();
    assert_eq!(sim.tree_leaves(), None);
    sim.step().unwrap();
}

#[test]
fn a_snapshot_without_the_time_step_does_not_resume() {
    let mut snap = barnes_hut_snapshot();
    assert!(snap.attributes.remove(params::DT).is_some());
    let e = Simulation::resume(Host, snap.clone()).err().expect("resume without orrery.dt");
    assert!(matches!(e, SimError::InvalidArgument { what: "run parameters", .. }), "{e}");
    assert!(e.to_string().contains("`orrery.dt` is missing"), "{e}");

    snap.attributes.insert(params::DT.into(), "fast".into());
    let e = Simulation::resume(Host, snap.clone()).err().expect("resume with a bad orrery.dt");
    assert!(e.to_string().contains("`orrery.dt` is \"fast\""), "{e}");

    // Parsed but out of range: Simulation::new's own check.
    snap.attributes.insert(params::DT.into(), "-1".into());
    let e = Simulation::resume(Host, snap).err().expect("resume with a negative orrery.dt");
    assert!(matches!(e, SimError::InvalidArgument { what: "time step", .. }), "{e}");
}

/// Every key `to_attributes` writes, and awkward floats, parse back to the same bits;
/// unknown keys are ignored; each missing or unparsable key is named.
#[test]
fn run_parameters_round_trip_exactly() {
    let awkward = [0.1 + 0.2, 1e-300, 5e-324, f64::MAX, 1.0 / 3.0, -0.0, 123_456_789.012_345_68];
    let mut cases = Vec::new();
    for (i, &x) in awkward.iter().enumerate() {
        let tree = TreeSettings {
            theta: x.abs().max(1e-300),
            mac: [Mac::Classic, Mac::Safe][i % 2],
            expansion: [Expansion::Monopole, Expansion::Quadrupole][i % 2],
            bucket: [1, 16, u32::MAX][i % 3],
            walk: GpuWalk::ALL[i % 4],
        };
        let spec = if i % 3 == 0 { SolverSpec::Direct } else { SolverSpec::BarnesHut(tree) };
        let e0 = if i % 2 == 0 { Some(-x) } else { None };
        let physics = Physics { g: x, softening: awkward[(i + 1) % awkward.len()] };
        let steps = TimeSteps { dt: awkward[(i + 2) % awkward.len()], levels: i as u32, eta: x };
        cases.push(RunParameters { spec, physics, steps, energy0: e0 });
    }
    for walk in GpuWalk::ALL {
        let tree = TreeSettings { walk, ..TreeSettings::default() };
        cases.push(RunParameters {
            spec: SolverSpec::BarnesHut(tree),
            physics: PHYSICS,
            steps: TimeSteps::fixed(0.01),
            energy0: None,
        });
    }
    let float_bits = |p: &RunParameters| {
        let mut v = vec![p.physics.g, p.physics.softening, p.steps.dt, p.steps.eta];
        v.extend(p.energy0);
        if let SolverSpec::BarnesHut(t) = p.spec {
            v.push(t.theta);
        }
        v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    };
    for p in &cases {
        let mut attrs = p.to_attributes();
        assert!(attrs.keys().all(|k| k.starts_with("orrery.")), "{attrs:?}");
        attrs.insert("ic".into(), "plummer".into());
        attrs.insert("orrery.someday".into(), "ignored".into());
        let back = RunParameters::from_attributes(&attrs).unwrap();
        assert_eq!(back, *p);
        assert_eq!(float_bits(&back), float_bits(p), "{attrs:?}");
    }

    let attrs = cases[1].to_attributes();
    assert_eq!(attrs[params::SOLVER], "barnes-hut");
    assert_eq!(attrs[params::G], "1e-300");
    let mut keys: Vec<&str> = attrs.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "orrery.bucket",
            "orrery.dt",
            "orrery.eta",
            "orrery.expansion",
            "orrery.g",
            "orrery.levels",
            "orrery.mac",
            "orrery.softening",
            "orrery.solver",
            "orrery.theta",
            "orrery.walk",
        ]
    );
    for key in &keys {
        let mut missing = attrs.clone();
        missing.remove(*key);
        let e = RunParameters::from_attributes(&missing).unwrap_err();
        assert!(matches!(e, SimError::InvalidArgument { what: "run parameters", .. }), "{key}: {e}");
        assert!(e.to_string().contains(&format!("`{key}` is missing")), "{key}: {e}");
        let mut garbled = attrs.clone();
        garbled.insert((*key).to_owned(), "x!".into());
        let e = RunParameters::from_attributes(&garbled).unwrap_err();
        assert!(e.to_string().contains(&format!("`{key}` is \"x!\"")), "{key}: {e}");
    }
    let mut bad = BTreeMap::new();
    bad.insert(params::SOLVER.to_owned(), "fmm".to_owned());
    let e = RunParameters::from_attributes(&bad).unwrap_err().to_string();
    assert!(e.contains("`orrery.solver` is \"fmm\""), "{e}");
}
