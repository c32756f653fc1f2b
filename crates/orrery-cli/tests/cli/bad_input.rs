//! Bad files: each one is a single `error:` line naming the file and its problem, exit
//! code 1, never a panic.

use std::path::Path;

use crate::common::{assert_one_line_error, f64_rows, npy_bytes, plummer, random_bytes, run};

/// Runs `tree` on `path` and checks the failure; returns stderr.
fn fails(path: &Path, needle: &str) -> String {
    let (code, _, stderr) = run(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, needle);
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(stderr.contains(name), "the file is not named: {stderr}");
    stderr
}

/// Writes `bytes` to `dir/name` and checks the failure.
fn fails_with(dir: &Path, name: &str, bytes: &[u8], needle: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    fails(&path, needle)
}

fn valid_points(n: usize) -> Vec<u8> {
    npy_bytes("<f8", false, &[n as u64, 3], &f64_rows(&plummer(n, 1)))
}

#[test]
fn a_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    fails(&dir.path().join("nowhere.npy"), "no such file");
}

#[test]
fn an_empty_file() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(dir.path(), "empty.npy", b"", "empty");
}

#[test]
fn a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("dir.npy");
    std::fs::create_dir(&sub).unwrap();
    let (code, _, stderr) = run(["tree", "--input", sub.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "dir.npy");
}

#[test]
fn every_truncated_prefix_of_a_valid_file() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = valid_points(4);
    let path = dir.path().join("cut.npy");
    for len in 0..bytes.len() {
        std::fs::write(&path, &bytes[..len]).unwrap();
        let (code, _, stderr) = run(["tree", "--input", path.to_str().unwrap(), "--executor", "cpu"]);
        assert_one_line_error(code, &stderr, "cut.npy");
    }
}

#[test]
fn random_bytes_with_and_without_the_magic() {
    let dir = tempfile::tempdir().unwrap();
    for (seed, len) in [(1u64, 1usize), (2, 7), (3, 64), (4, 1000), (5, 5000)] {
        fails_with(dir.path(), "noise.npy", &random_bytes(len, seed), "not a .npy file");
        let mut with_magic = b"\x93NUMPY\x01\x00".to_vec();
        with_magic.extend(random_bytes(len, seed + 100));
        fails_with(dir.path(), "magic.npy", &with_magic, "magic.npy");
        let mut header_then_noise = valid_points(3)[..10].to_vec();
        header_then_noise.extend(random_bytes(len, seed + 200));
        fails_with(dir.path(), "header.npy", &header_then_noise, "header.npy");
    }
}

#[test]
fn garbage_headers() {
    let dir = tempfile::tempdir().unwrap();
    let with_header = |text: &str| {
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(text.len() as u16).to_le_bytes());
        b.extend_from_slice(text.as_bytes());
        b
    };
    for (i, text) in [
        "{}",
        "[1, 2, 3]",
        "{'descr': '<f8'}",
        "{'descr': '<f8', 'fortran_order': 3, 'shape': (1, 3)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 3)}",
        "{'descr': 5, 'fortran_order': False, 'shape': (1, 3)}",
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
        "{'descr': '<q9', 'fortran_order': False, 'shape': (1, 3)}",
        "\u{ff}\u{fe}",
    ]
    .iter()
    .enumerate()
    {
        fails_with(dir.path(), &format!("garbage{i}.npy"), &with_header(text), "garbage");
    }
    let mut v9 = valid_points(2);
    v9[6] = 9;
    fails_with(dir.path(), "version.npy", &v9, "version 9.0");
}

#[test]
fn wrong_dtypes() {
    let dir = tempfile::tempdir().unwrap();
    for (descr, size, what) in [
        ("<i8", 8, "signed integers"),
        ("<u4", 4, "unsigned integers"),
        ("<c16", 16, "complex"),
        ("|b1", 1, "booleans"),
        ("<f2", 2, "another width"),
        ("|S8", 8, "strings"),
    ] {
        let data = vec![0u8; 2 * 3 * size];
        fails_with(dir.path(), "dtype.npy", &npy_bytes(descr, false, &[2, 3], &data), what);
    }
}

#[test]
fn wrong_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let data = |count: usize| vec![0u8; count * 8];
    fails_with(dir.path(), "flat.npy", &npy_bytes("<f8", false, &[6], &data(6)), "shape (6,)");
    fails_with(dir.path(), "two.npy", &npy_bytes("<f8", false, &[3, 2], &data(6)), "shape (3, 2)");
    fails_with(dir.path(), "cube.npy", &npy_bytes("<f8", false, &[1, 2, 3], &data(6)), "shape (1, 2, 3)");
    fails_with(dir.path(), "scalar.npy", &npy_bytes("<f8", false, &[], &data(1)), "shape ()");
    fails_with(dir.path(), "none.npy", &npy_bytes("<f8", false, &[0, 3], &[]), "no points");
}

#[test]
fn a_header_that_promises_more_or_less_than_the_file_holds() {
    let dir = tempfile::tempdir().unwrap();
    let data = f64_rows(&plummer(4, 2));
    fails_with(dir.path(), "short.npy", &npy_bytes("<f8", false, &[5, 3], &data), "truncated");
    fails_with(dir.path(), "huge.npy", &npy_bytes("<f8", false, &[1 << 31, 3], &data), "truncated");
    fails_with(dir.path(), "vast.npy", &npy_bytes("<f8", false, &[1 << 40, 3], &data), "32-bit");
    fails_with(dir.path(), "long.npy", &npy_bytes("<f8", false, &[3, 3], &data), "unexpected bytes");
}

#[test]
fn non_finite_values() {
    let dir = tempfile::tempdir().unwrap();
    for (i, bad) in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY].into_iter().enumerate() {
        let mut cols = plummer(5, 3);
        cols[1][2] = bad;
        let stderr = fails_with(
            dir.path(),
            &format!("bad{i}.npy"),
            &npy_bytes("<f8", false, &[5, 3], &f64_rows(&cols)),
            "point 2 has y",
        );
        assert!(stderr.contains(&bad.to_string()), "{stderr}");
    }
    let f32_nan: Vec<u8> = [0.0f32, f32::NAN, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    fails_with(dir.path(), "nan32.npy", &npy_bytes("<f4", false, &[1, 3], &f32_nan), "point 0 has y = NaN");
}

/// Snapshot files are read too: see `snapshot_input.rs`.
#[test]
fn unknown_extensions() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(dir.path(), "points.txt", b"1 2 3", "unknown file type .txt");
    fails_with(dir.path(), "points", b"1 2 3", "no file extension");
}

#[test]
fn the_balltree_command_reads_files_the_same_way() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ints.npy");
    std::fs::write(&path, npy_bytes("<i4", false, &[2, 3], &[0u8; 24])).unwrap();
    let (code, _, stderr) = run(["balltree", "--input", path.to_str().unwrap(), "--executor", "cpu"]);
    assert_one_line_error(code, &stderr, "ints.npy: dtype <i4");
}
