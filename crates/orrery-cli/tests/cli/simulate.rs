//! `orrery simulate`: a small run writes its snapshots, diagnostics, plots and summary; a
//! restart from a snapshot ends exactly where the uninterrupted run ends; bad options and
//! bad restart files are one line and a non-zero exit.

use std::path::Path;

use orrery_sim::snapshot::{self, Snapshot};
use orrery_sim::{State, ic};

use crate::common::{assert_one_line_error, run};

/// A small, fast CPU run into `out` with extra options (300 bodies unless `extra` says
/// otherwise or restarts).
fn simulate(out: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = out.to_str().expect("a UTF-8 temp path");
    let mut args = vec!["simulate", "--executor", "cpu", "--quiet", "--output", out];
    if !extra.contains(&"--n") && !extra.contains(&"--restart") {
        args.extend(["--n", "300"]);
    }
    args.extend_from_slice(extra);
    run(args)
}

/// The bodies of a snapshot, bit for bit comparable.
fn state_bits(path: &Path) -> (Vec<u64>, u64, u64) {
    let snap = snapshot::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let b = &snap.state.bodies;
    let bits = [&b.x, &b.y, &b.z, &b.vx, &b.vy, &b.vz].into_iter().flatten().map(|v| v.to_bits()).collect();
    (bits, snap.state.time.to_bits(), snap.state.step)
}

fn is_png(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|b| b.len() > 1000 && b.starts_with(b"\x89PNG\r\n\x1a\n"))
}

#[test]
fn a_small_run_writes_snapshots_diagnostics_plots_and_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) =
        simulate(&out, &["--steps", "20", "--snapshot-every", "10", "--diagnostics-every", "5"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert!(stderr.starts_with("executor: cpu"), "{stderr}");
    for name in ["snapshot_000000.npz", "snapshot_000010.npz", "snapshot_000020.npz", "energy.csv", "summary.json"] {
        assert!(out.join(name).is_file(), "{name} missing; stdout: {stdout}");
    }
    assert!(is_png(&out.join("energy_error.png")), "energy_error.png is no PNG");
    assert!(is_png(&out.join("density.png")), "density.png is no PNG");
    // The table.
    for needle in ["energy error", "virial ratio", "steps/s", "tree", "force", "integrate", "wrote "] {
        assert!(stdout.contains(needle), "{needle:?} not in {stdout}");
    }
    // The summary agrees with the files.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["bodies"], 300);
    assert_eq!(summary["steps"], serde_json::json!([0, 20]));
    let error = summary["energy_error"].as_f64().unwrap();
    assert!(error.abs() < 1e-2 && error != 0.0, "energy error {error}");
    let shares: f64 = summary["phases"].as_array().unwrap().iter().map(|p| p["share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "phase shares sum to {shares}");
    // energy.csv: the header, step 0 and every 5th step.
    let csv = std::fs::read_to_string(out.join("energy.csv")).unwrap();
    let steps: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(steps, ["0", "5", "10", "15", "20"]);
    let (_, _, step) = state_bits(&out.join("snapshot_000020.npz"));
    assert_eq!(step, 20);
}

#[test]
fn a_restart_ends_where_the_uninterrupted_run_ends() {
    for extra in [&[][..], &["--solver", "direct", "--levels", "2"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let (whole, half) = (dir.path().join("whole"), dir.path().join("half"));
        let mut args = vec!["--steps", "12", "--snapshot-every", "6"];
        args.extend_from_slice(extra);
        let (code, _, stderr) = simulate(&whole, &args);
        assert_eq!(code, 0, "stderr: {stderr}");
        let restart = whole.join("snapshot_000006.npz");
        let restart = restart.to_str().unwrap();
        let (code, stdout, stderr) = simulate(&half, &["--steps", "12", "--restart", restart]);
        assert_eq!(code, 0, "stderr: {stderr}");
        assert!(stdout.contains("restart from"), "{stdout}");
        assert_eq!(
            state_bits(&whole.join("snapshot_000012.npz")),
            state_bits(&half.join("snapshot_000012.npz")),
            "{extra:?}"
        );
        // The restart's energy error is against the original run's reference energy.
        let energy = |dir: &Path| {
            let s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
            s["energy_error"].as_f64().unwrap().to_bits()
        };
        assert_eq!(energy(&whole), energy(&half), "{extra:?}");
    }
}

#[test]
fn json_prints_the_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = simulate(&dir.path().join("run"), &["--steps", "3", "--json"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(summary["steps"], serde_json::json!([0, 3]));
    assert!(summary["steps_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn every_initial_condition_runs() {
    for ic in ["plummer", "hernquist", "uniform", "cold-sphere", "disk", "collision", "expanding"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, _, stderr) = simulate(&dir.path().join("run"), &["--ic", ic, "--steps", "2", "--softening", "0.05"]);
        assert_eq!(code, 0, "{ic}: {stderr}");
    }
}

#[test]
fn an_existing_output_folder_needs_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let (code, _, stderr) = simulate(&out, &["--steps", "2"]);
    assert_one_line_error(code, &stderr, "--force");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1, "a refused run wrote files");
    let (code, _, stderr) = simulate(&out, &["--steps", "2", "--force"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(std::fs::read_to_string(out.join("keep.txt")).unwrap(), "mine");
}

#[test]
fn bad_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let cases: [(&[&str], &str); 6] = [
        (&["--n", "0"], "--n"),
        (&["--dt=-1"], "--dt"),
        (&["--dt", "NaN"], "--dt"),
        (&["--theta", "3"], "--theta"),
        (&["--softening=-0.1"], "--softening"),
        (&["--levels", "3", "--softening", "0"], "--levels"),
    ];
    for (extra, needle) in cases {
        let (code, _, stderr) = simulate(&out, extra);
        assert_one_line_error(code, &stderr, needle);
        assert!(!out.exists(), "{extra:?} wrote the output folder");
    }
    #[cfg(not(feature = "hdf5"))]
    {
        let (code, _, stderr) = simulate(&out, &["--format", "hdf5"]);
        assert_one_line_error(code, &stderr, "--features hdf5");
    }
}

#[test]
fn bad_restart_files_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let missing = dir.path().join("missing.npz");
    let truncated = dir.path().join("truncated.npz");
    let plain = dir.path().join("plain.npz");
    let finished = dir.path().join("finished.npz");
    // A snapshot without run parameters (not written by `orrery simulate`).
    snapshot::write(&plain, &Snapshot::new(State::new(ic::plummer(50, 1).unwrap())), snapshot::Format::Npz).unwrap();
    std::fs::write(&truncated, &std::fs::read(&plain).unwrap()[..200]).unwrap();
    // A run's last snapshot: restarting it with the same --steps has nothing to do.
    let first = dir.path().join("first");
    let (code, _, stderr) = simulate(&first, &["--steps", "2"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    std::fs::copy(first.join("snapshot_000002.npz"), &finished).unwrap();
    let cases = [(&missing, "missing.npz"), (&truncated, "truncated.npz"), (&plain, "orrery."), (&finished, "--steps")];
    for (file, needle) in cases {
        let (code, _, stderr) = run([
            "simulate",
            "--executor",
            "cpu",
            "--quiet",
            "--steps",
            "2",
            "--restart",
            file.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ]);
        assert_one_line_error(code, &stderr, needle);
    }
    // Initial-condition options do not combine with --restart (clap's usage error).
    let (code, _, stderr) = run(["simulate", "--restart", finished.to_str().unwrap(), "--n", "10"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--n"), "{stderr}");
}

#[cfg(feature = "hdf5")]
#[test]
fn hdf5_snapshots_restart_exactly_too() {
    let dir = tempfile::tempdir().unwrap();
    let (whole, half) = (dir.path().join("whole"), dir.path().join("half"));
    let (code, _, stderr) = simulate(&whole, &["--steps", "8", "--snapshot-every", "4", "--format", "hdf5"]);
    assert_eq!(code, 0, "stderr: {stderr}");
    let restart = whole.join("snapshot_000004.hdf5");
    let (code, _, stderr) =
        simulate(&half, &["--steps", "8", "--format", "hdf5", "--restart", restart.to_str().unwrap()]);
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(state_bits(&whole.join("snapshot_000008.hdf5")), state_bits(&half.join("snapshot_000008.hdf5")));
}
