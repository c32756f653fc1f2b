//! `--input` with snapshot files: an `.npz` (and, with the `hdf5` feature, an `.hdf5`)
//! written by orrery-sim gives the same tree as a `.npy` of the same positions; broken
//! snapshots are one `error:` line naming the file.

use std::path::Path;

use orrery_sim::snapshot::{self, Format, Snapshot};
use orrery_sim::{State, ic};

use crate::common::{assert_one_line_error, run, run_json, write_f64_npy};

/// A Plummer snapshot of `n` bodies written to `dir/name` in `format`; returns the path
/// and the positions.
fn write_snapshot(dir: &Path, name: &str, n: usize, format: Format) -> (String, [Vec<f64>; 3]) {
    let bodies = ic::plummer(n, 21).expect("plummer");
    let cols = [bodies.x.clone(), bodies.y.clone(), bodies.z.clone()];
    let snap = Snapshot::new(State::new(bodies)).with_attribute("ic", "plummer");
    let path = dir.join(name);
    snapshot::write(&path, &snap, format).expect("write the snapshot");
    (path.display().to_string(), cols)
}

/// (points, leaves, depth, passes) of `orrery tree --json` on `path`.
fn tree_stats(path: &str) -> (u64, u64, u64, u64) {
    let json = run_json(["tree", "--input", path, "--executor", "cpu", "--json"]);
    assert_eq!(json["precision"], "f64", "{json}");
    let get = |k: &str| json[k].as_u64().unwrap_or_else(|| panic!("{k} in {json}"));
    (get("points"), get("leaves"), get("depth"), get("passes"))
}

/// The tree of a snapshot equals the tree of a `.npy` holding its positions.
fn same_tree_as_npy(format: Format) {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("snap.{}", format.extension());
    let (snap, cols) = write_snapshot(dir.path(), &name, 1234, format);
    let npy = write_f64_npy(&dir.path().join("points.npy"), &cols);
    let from_snapshot = tree_stats(&snap);
    assert_eq!(from_snapshot.0, 1234);
    assert_eq!(from_snapshot, tree_stats(&npy));
}

#[test]
fn an_npz_snapshot_gives_the_tree_of_its_positions() {
    same_tree_as_npy(Format::Npz);
}

#[cfg(feature = "hdf5")]
#[test]
fn an_hdf5_snapshot_gives_the_tree_of_its_positions() {
    same_tree_as_npy(Format::Hdf5);
}

#[test]
fn balltree_reads_snapshots_too() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (snap, _) = write_snapshot(dir.path(), "s.npz", 500, Format::Npz);
    let json = run_json(["balltree", "--input", &snap, "--batches", "2", "--executor", "cpu", "--json"]);
    assert_eq!((&json["points"], &json["batch_points"]), (&serde_json::json!(500), &serde_json::json!([250, 250])));
}

/// Prefixes of a valid snapshot (the zip or HDF5 structure cut anywhere): each one error
/// line naming the file, exit code 1.
fn truncated_snapshots_fail(format: Format) {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = format!("snap.{}", format.extension());
    let (good, _) = write_snapshot(dir.path(), &name, 50, format);
    let bytes = std::fs::read(&good).expect("read");
    let cut = dir.path().join(format!("cut.{}", format.extension()));
    let mut lens: Vec<usize> = vec![1, 4, 8, 100, bytes.len() / 2, bytes.len() - 100, bytes.len() - 1];
    lens.extend((0..bytes.len()).step_by(bytes.len() / 8 + 1));
    for len in lens {
        std::fs::write(&cut, &bytes[..len]).expect("write");
        let (code, stdout, stderr) = run(["tree", "--input", cut.to_str().unwrap(), "--executor", "cpu"]);
        assert_one_line_error(code, &stderr, "cut.");
        assert!(stdout.is_empty(), "prefix {len}: {stdout}");
    }
}

#[test]
fn a_truncated_npz_is_one_error_line() {
    truncated_snapshots_fail(Format::Npz);
    // What the reader says, for one of them.
    let dir = tempfile::tempdir().expect("tempdir");
    let (good, _) = write_snapshot(dir.path(), "s.npz", 50, Format::Npz);
    let bytes = std::fs::read(&good).expect("read");
    let cut = dir.path().join("cut.npz");
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).expect("write");
    let (code, _, stderr) = run(["tree", "--input", cut.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "cut.npz: not a readable npz (zip) archive");
}

#[cfg(feature = "hdf5")]
#[test]
fn a_truncated_hdf5_is_one_error_line() {
    truncated_snapshots_fail(Format::Hdf5);
}

/// An `.npz` of one float64 member (the snapshot writer refuses what these tests need).
fn write_npz(path: &Path, name: &str, shape: &[u64], values: &[f64]) {
    use npyz::WriterBuilder;
    use std::io::Write;
    let mut npz = npyz::npz::NpzWriter::create(path).expect("create");
    let mut w = npz
        .array::<f64>(name, npyz::zip::write::FileOptions::default())
        .expect("member")
        .default_dtype()
        .shape(shape)
        .begin_nd()
        .expect("header");
    w.extend(values.iter().copied()).expect("data");
    w.finish().expect("finish");
    npz.zip_writer().finish().expect("zip").flush().expect("flush");
}

#[test]
fn non_finite_positions_in_an_npz_are_one_error_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (bad, shown) in [(f64::NAN, "NaN"), (f64::INFINITY, "inf"), (f64::NEG_INFINITY, "-inf")] {
        let path = dir.path().join("nan.npz");
        write_npz(&path, "pos", &[2, 3], &[0.0, 1.0, 2.0, 3.0, bad, 5.0]);
        let (code, _, stderr) = run(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu"]);
        assert_one_line_error(code, &stderr, &format!("nan.npz: `pos` row 1 column 1 is {shown}"));
    }
}

#[test]
fn damaged_snapshots_name_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("junk.npz");
    std::fs::write(&garbage, b"whatever").expect("write");
    let (code, _, stderr) = run(["tree", "--input", garbage.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "junk.npz: not a readable npz (zip) archive");

    let missing = dir.path().join("missing.npz");
    let (code, _, stderr) = run(["tree", "--input", missing.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "missing.npz: cannot open: no such file");

    // An npz without `pos`: the member is named.
    let nopos = dir.path().join("nopos.npz");
    write_npz(&nopos, "mass", &[1], &[1.0]);
    let (code, _, stderr) = run(["tree", "--input", nopos.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "nopos.npz: member `pos` is missing (the file holds: mass)");
}

#[test]
fn hdf5_files_without_the_feature_say_how_to_build() {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["s.hdf5", "s.h5"] {
        let path = dir.path().join(name);
        let mut bytes = b"\x89HDF\r\n\x1a\n".to_vec();
        bytes.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, &bytes).expect("write");
        let (code, _, stderr) = run(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu"]);
        if cfg!(feature = "hdf5") {
            assert_one_line_error(code, &stderr, &format!("{name}: not a readable HDF5 file"));
        } else {
            assert_one_line_error(code, &stderr, &format!("{name}: "));
            assert!(stderr.contains("--features hdf5"), "{stderr}");
        }
    }
}
