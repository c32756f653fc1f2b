//! `orrery balltree`: the tree equals orrery-balltree's own build of the same batches,
//! and `--output` writes it.

use orrery_balltree::{Batches, PointCloud, build_balltree};

use crate::common::{plummer, read_npy, run, run_json, write_f64_npy};

/// Row-major coordinates.
fn rows(cols: &[Vec<f64>; 3]) -> Vec<f64> {
    (0..cols[0].len()).flat_map(|i| [cols[0][i], cols[1][i], cols[2][i]]).collect()
}

#[test]
fn batches_are_equal_and_the_tree_is_the_library_tree() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cols = plummer(1003, 9);
    let path = write_f64_npy(&dir.path().join("p.npy"), &cols);
    let out = dir.path().join("bt");
    let json = run_json([
        "balltree",
        "--input",
        &path,
        "--batches",
        "4",
        "--executor",
        "cpu",
        "--json",
        "--output",
        out.to_str().unwrap(),
    ]);
    // 1003 = 3 * 251 + 250: the first 1003 % 4 batches hold one point more.
    let batches = Batches::from_offsets(&[0usize, 251, 502, 753, 1003]).unwrap();
    let points = rows(&cols);
    let tree = build_balltree(&PointCloud::new(&points, 3, batches).unwrap()).unwrap();
    assert_eq!(json["batches"], 4);
    assert_eq!(json["batch_points"], serde_json::json!([250, 251]));
    assert_eq!(json["slots"].as_u64().unwrap() as usize, tree.num_slots());
    assert_eq!(json["levels"], 8, "256 slots per batch: depth 7");
    assert_eq!(read_npy::<u32>(&out.join("indices.npy")), tree.indices());
    let mask: Vec<u8> = read_npy(&out.join("mask.npy"));
    assert_eq!(mask, tree.mask().iter().map(|&m| u8::from(m)).collect::<Vec<_>>());
    assert_eq!(read_npy::<u32>(&out.join("permutation.npy")), tree.permutation());
    assert_eq!(read_npy::<u32>(&out.join("slot_offsets.npy")), tree.layout().slot_offsets());
}

#[test]
fn a_generated_set_reports_its_shape_in_text() {
    let (code, stdout, stderr) = run(["balltree", "--generate", "uniform", "--n", "1000", "--executor", "cpu"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("slots: 1024"), "{stdout}");
    assert!(stdout.contains("levels: 10"), "{stdout}");
    assert!(stdout.contains("time: validate"), "{stdout}");
}

#[test]
fn more_batches_than_points_is_an_error_line() {
    let (code, _, stderr) =
        run(["balltree", "--generate", "uniform", "--n", "3", "--batches", "4", "--executor", "cpu"]);
    crate::common::assert_one_line_error(code, &stderr, "--batches 4");
}

#[test]
fn an_existing_output_directory_needs_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, _, stderr) = run([
        "balltree",
        "--generate",
        "uniform",
        "--n",
        "64",
        "--executor",
        "cpu",
        "--output",
        dir.path().to_str().unwrap(),
    ]);
    crate::common::assert_one_line_error(code, &stderr, "--force");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written");
}
