//! Helpers: the command, hand-made `.npy` files, JSON output, the library's own build of
//! the same points.

use std::path::Path;

use assert_cmd::Command;

/// `orrery` with the given arguments.
pub fn orrery<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = Command::cargo_bin("orrery").expect("the orrery binary is built");
    cmd.args(args);
    cmd
}

/// Runs `orrery` and returns (exit code, stdout, stderr).
pub fn run<I, S>(args: I) -> (i32, String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = orrery(args).output().expect("orrery runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `orrery ... --json` and parses stdout, asserting success.
pub fn run_json<I, S>(args: I) -> serde_json::Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 0, "stderr: {stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout}"))
}

/// Asserts the run failed the way every orrery failure does: exit code 1, stderr one line
/// `error: ...` containing `needle`, and no panic.
pub fn assert_one_line_error(code: i32, stderr: &str, needle: &str) {
    assert_eq!(code, 1, "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "a panic: {stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr:?}");
    assert!(lines[0].starts_with("error: "), "{stderr:?}");
    assert!(lines[0].contains(needle), "{needle:?} not in {stderr:?}");
}

/// A `.npy` file (format 1.0) with the given dtype string, order, shape and raw data.
pub fn npy_bytes(descr: &str, fortran: bool, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let shape_text = match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    };
    let order = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape_text}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(header.len()).expect("short header").to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

/// Points as row-major little-endian f64 bytes.
pub fn f64_rows(cols: &[Vec<f64>; 3]) -> Vec<u8> {
    (0..cols[0].len()).flat_map(|i| (0..3).flat_map(move |a| cols[a][i].to_le_bytes())).collect()
}

/// Points as row-major little-endian f32 bytes.
pub fn f32_rows(cols: &[Vec<f32>; 3]) -> Vec<u8> {
    (0..cols[0].len()).flat_map(|i| (0..3).flat_map(move |a| cols[a][i].to_le_bytes())).collect()
}

/// The positions of the Plummer model the CLI generates with `--generate plummer`.
pub fn plummer(n: usize, seed: u64) -> [Vec<f64>; 3] {
    let ps = orrery_traverse::ic::plummer(n, seed).expect("plummer");
    [ps.x, ps.y, ps.z]
}

/// Writes a `.npy` of f64 points and returns its path as a string.
pub fn write_f64_npy(path: &Path, cols: &[Vec<f64>; 3]) -> String {
    std::fs::write(path, npy_bytes("<f8", false, &[cols[0].len() as u64, 3], &f64_rows(cols))).expect("write");
    path.display().to_string()
}

/// Reads a 1-D `.npy` array the CLI wrote.
pub fn read_npy<T: npyz::Deserialize>(path: &Path) -> Vec<T> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    npyz::NpyFile::new(std::io::BufReader::new(file)).expect("npy header").into_vec().expect("npy data")
}

/// A deterministic byte generator (xorshift), for random files.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}
