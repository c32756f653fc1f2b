//! Snapshots: a [`State`], the solver's tree leaves and the run's parameters, in NumPy
//! `.npz` or GADGET-4 HDF5.
//!
//! A snapshot of [`crate::Simulation::snapshot`] holds everything a restart needs to
//! continue bit for bit ([`crate::Simulation::resume`]): the bodies and the clock, the
//! Cornerstone leaf array of a Barnes-Hut solver's tree ([`Snapshot::tree_leaves`]; the
//! next tree update starts from it), and the run parameters as `orrery.*` attributes
//! ([`crate::RunParameters`]).
//!
//! Why it is shaped so:
//!
//! - One [`Snapshot`] type for both formats, so a restart does not care which one it reads;
//!   the run parameters ride along as strings ([`Snapshot::attributes`]) because every
//!   format can hold a string exactly, and the caller decides how to parse them
//!   ([`crate::RunParameters::from_attributes`] parses orrery's own).
//! - The tree leaves are optional: a direct-summation run has none, and files written
//!   before they existed (or by other codes) still read. When present they are checked
//!   to be a Cornerstone leaf array (at least two keys, the first 0, every interval an
//!   aligned power-of-two cell, so strictly increasing); the solver checks the exact
//!   layout of its own keys when it restores them.
//! - [`read()`] trusts the bytes over the name: it sniffs the magic numbers (zip, HDF5, npy)
//!   and only falls back to the extension when neither matches, so a misnamed file still
//!   reads and a broken one gets its own format's precise complaint.
//! - Every write goes through one atomic helper (a temp file beside the target, fsync,
//!   rename), so a crash or a full disk mid-write never leaves half a snapshot where the
//!   previous good one was.
//! - Every defect of a file read is a [`SimError::BadFile`] naming the file and the
//!   member; nothing in here panics on any input bytes.
//! - HDF5 needs a C library, so it lives behind the `hdf5` feature; [`Format::Hdf5`]
//!   exists either way and reports the missing feature as a typed error.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Result, SimError, State};

#[cfg(feature = "hdf5")]
pub mod hdf5;
pub mod npz;

/// A simulation state and the parameters of the run that produced it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Bodies and clock.
    pub state: State,
    /// The Cornerstone leaf array of the solver's tree (a Barnes-Hut run's), so that a
    /// restart updates the same tree and continues bit for bit; `None` for solvers
    /// without a kept tree and for files that do not hold one.
    pub tree_leaves: Option<Vec<u64>>,
    /// Run parameters (time step, softening, solver, ...), stored verbatim so a restart
    /// reads back exactly the strings that were written.
    pub attributes: BTreeMap<String, String>,
}

impl Snapshot {
    /// A snapshot of `state` without tree leaves or attributes.
    pub fn new(state: State) -> Self {
        Self { state, tree_leaves: None, attributes: BTreeMap::new() }
    }

    /// Sets the tree leaves; returns `self` for chaining.
    #[must_use]
    pub fn with_tree_leaves(mut self, leaves: Vec<u64>) -> Self {
        self.tree_leaves = Some(leaves);
        self
    }

    /// Adds (or replaces) one attribute; returns `self` for chaining.
    #[must_use]
    pub fn with_attribute(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.attributes.insert(key.into(), value.into());
        self
    }
}

/// A snapshot file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// NumPy `.npz` (a zip of `.npy` arrays): pure Rust, read by `numpy.load`.
    Npz,
    /// HDF5 in the GADGET-4 layout (feature `hdf5`): read by h5py, pynbody and yt.
    Hdf5,
}

impl Format {
    /// The format a file name asks for: `.npz` is [`Format::Npz`], `.hdf5` and `.h5` are
    /// [`Format::Hdf5`] (case-insensitive).
    ///
    /// # Errors
    /// [`SimError::InvalidArgument`] for any other extension, or none.
    pub fn from_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
        match ext.as_deref() {
            Some("npz") => Ok(Self::Npz),
            Some("hdf5" | "h5") => Ok(Self::Hdf5),
            Some(other) => Err(SimError::InvalidArgument {
                what: "snapshot format",
                reason: format!("{}: unknown extension `.{other}`, expected .npz, .hdf5 or .h5", path.display()),
            }),
            None => Err(SimError::InvalidArgument {
                what: "snapshot format",
                reason: format!("{}: no extension, expected .npz, .hdf5 or .h5", path.display()),
            }),
        }
    }

    /// The usual extension, without the dot (`npz`, `hdf5`).
    pub fn extension(self) -> &'static str {
        match self {
            Self::Npz => "npz",
            Self::Hdf5 => "hdf5",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Npz => "npz",
            Self::Hdf5 => "HDF5",
        })
    }
}

/// Writes `snapshot` to `path` in `format`, atomically: the file appears complete or not
/// at all, and an existing file at `path` is replaced only by a complete new one.
///
/// # Errors
/// - [`SimError::Core`] / [`SimError::InvalidArgument`] when the state fails
///   [`State::check`] (nothing is written), the tree leaves are not a leaf array, or an
///   attribute cannot be stored (HDF5: a NUL in a string, an empty key);
/// - [`SimError::InvalidArgument`] for [`Format::Hdf5`] without the `hdf5` feature;
/// - [`SimError::Io`] when the file cannot be written.
pub fn write(path: impl AsRef<Path>, snapshot: &Snapshot, format: Format) -> Result<()> {
    let path = path.as_ref();
    match format {
        Format::Npz => npz::write(path, snapshot),
        #[cfg(feature = "hdf5")]
        Format::Hdf5 => hdf5::write(path, snapshot),
        #[cfg(not(feature = "hdf5"))]
        Format::Hdf5 => Err(no_hdf5(path)),
    }
}

/// Reads a snapshot written by [`write()`] (or a GADGET HDF5 snapshot's type-1 bodies).
///
/// The format is sniffed from the first bytes (zip or HDF5 signature); when neither
/// matches, the extension decides which reader reports what is wrong.
///
/// # Errors
/// - [`SimError::Io`] when the file cannot be opened or read;
/// - [`SimError::BadFile`] naming the member for anything wrong inside (truncated or
///   corrupt file, missing member, wrong dtype or shape, lengths that disagree, NaN or
///   infinite values, non-positive masses), or for a file that is no snapshot at all;
/// - [`SimError::InvalidArgument`] for an HDF5 file without the `hdf5` feature.
pub fn read(path: impl AsRef<Path>) -> Result<Snapshot> {
    let path = path.as_ref();
    match detect(path)? {
        Kind::Npz => npz::read(path),
        #[cfg(feature = "hdf5")]
        Kind::Hdf5 => hdf5::read(path),
        #[cfg(not(feature = "hdf5"))]
        Kind::Hdf5 => Err(no_hdf5(path)),
        Kind::Npy => Err(SimError::bad_file(
            path,
            "a plain .npy array (positions only), not a snapshot; read it with read_positions",
        )),
    }
}

/// Positions (and masses when the file has them) read by [`read_positions`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Positions {
    /// x, y and z of every body.
    pub positions: [Vec<f64>; 3],
    /// One mass per body, when the file holds masses (snapshots do, a plain `.npy`
    /// does not).
    pub masses: Option<Vec<f64>>,
}

impl Positions {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.positions[0].len()
    }

    /// Whether there are none (never, for a value [`read_positions`] returned).
    pub fn is_empty(&self) -> bool {
        self.positions[0].is_empty()
    }
}

/// Reads only the positions, and the masses when present, from a snapshot of either
/// format or from a plain `.npy` array of shape (n, 3) in float32 or float64.
///
/// Less is required than by [`read()`]: an `.npz` needs only `pos` (`mass` is used when
/// present), an HDF5 file only `PartType1/Coordinates` (masses from `Masses` or the
/// `MassTable`). What is read is validated the same way (finite positions, positive
/// masses, matching lengths, at least one body).
///
/// # Errors
/// As [`read()`].
pub fn read_positions(path: impl AsRef<Path>) -> Result<Positions> {
    let path = path.as_ref();
    match detect(path)? {
        Kind::Npz => npz::read_positions(path),
        #[cfg(feature = "hdf5")]
        Kind::Hdf5 => hdf5::read_positions(path),
        #[cfg(not(feature = "hdf5"))]
        Kind::Hdf5 => Err(no_hdf5(path)),
        Kind::Npy => npz::read_npy_positions(path),
    }
}

/// What a file holds, by its magic bytes or else its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Npz,
    Hdf5,
    Npy,
}

/// HDF5's signature (at offset 0 unless the file has a user block).
const HDF5_MAGIC: &[u8; 8] = b"\x89HDF\r\n\x1a\n";
/// A zip local file header, which is how every non-empty `.npz` starts.
const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";
/// A `.npy` array.
const NPY_MAGIC: &[u8; 6] = b"\x93NUMPY";

fn detect(path: &Path) -> Result<Kind> {
    let mut head = Vec::with_capacity(8);
    File::open(path).and_then(|f| f.take(8).read_to_end(&mut head)).map_err(|e| SimError::io(path, e))?;
    if head.starts_with(HDF5_MAGIC) {
        return Ok(Kind::Hdf5);
    }
    if head.starts_with(ZIP_MAGIC) {
        return Ok(Kind::Npz);
    }
    if head.starts_with(NPY_MAGIC) {
        return Ok(Kind::Npy);
    }
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("npz") => Ok(Kind::Npz),
        Some("hdf5" | "h5") => Ok(Kind::Hdf5),
        Some("npy") => Ok(Kind::Npy),
        _ if head.is_empty() => Err(SimError::bad_file(path, "the file is empty")),
        _ => Err(SimError::bad_file(
            path,
            "neither an npz (zip), an HDF5 nor an npy file: no known signature in the first bytes",
        )),
    }
}

#[cfg(not(feature = "hdf5"))]
fn no_hdf5(path: &Path) -> SimError {
    SimError::InvalidArgument {
        what: "snapshot format",
        reason: format!("{}: HDF5 snapshots need orrery-sim's `hdf5` feature (and the HDF5 C library)", path.display()),
    }
}

/// Distinguishes temp files of concurrent writes within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The temp file beside `path` that a write goes to before it is renamed over `path`:
/// `.<name>.tmp-<pid>-<k>`, hidden and in the same folder, so the rename stays on one
/// file system.
fn temp_path(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| SimError::InvalidArgument {
        what: "snapshot path",
        reason: format!("{} does not name a file", path.display()),
    })?;
    let k = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".tmp-{}-{k}", std::process::id()));
    Ok(path.with_file_name(tmp))
}

/// Runs `write` on a fresh temp path beside `path`, fsyncs the result, renames it over
/// `path` and fsyncs the folder. On any error the temp file is removed and `path` is left
/// as it was.
///
/// `write` must create the file at the path it is given (exclusively) and close it before
/// returning.
pub(crate) fn write_atomically(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let tmp = temp_path(path)?;
    let result = write(&tmp)
        .and_then(|()| File::open(&tmp).and_then(|f| f.sync_all()).map_err(|e| SimError::io(path, e)))
        .and_then(|()| fs::rename(&tmp, path).map_err(|e| SimError::io(path, e)));
    if let Err(e) = result {
        // The temp file may not exist (the write failed before creating it): ignore that.
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // Make the rename itself durable. Some file systems refuse to fsync a folder; the
    // snapshot is complete and in place either way, so that is not an error.
    #[cfg(unix)]
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// The names a format gives to the columns of a [`State`], for error messages.
pub(crate) struct ColumnNames {
    /// Positions.
    pub pos: &'static str,
    /// Velocities.
    pub vel: &'static str,
    /// Masses.
    pub mass: &'static str,
    /// Ids.
    pub ids: &'static str,
    /// Time.
    pub time: &'static str,
}

/// Runs [`State::check`] on a state read from `path` and turns a failure into
/// [`SimError::BadFile`] naming the member as the format calls it.
pub(crate) fn check_read(state: &State, path: &Path, names: &ColumnNames) -> Result<()> {
    use orrery_core::Error as CoreError;
    let Err(e) = state.check() else { return Ok(()) };
    let column = |what: &str| match what {
        "x" => Some((names.pos, 0)),
        "y" => Some((names.pos, 1)),
        "z" => Some((names.pos, 2)),
        "vx" => Some((names.vel, 0)),
        "vy" => Some((names.vel, 1)),
        "vz" => Some((names.vel, 2)),
        _ => None,
    };
    let reason = match &e {
        SimError::Core(CoreError::NonFiniteValue { what, index, value }) => match column(what) {
            Some((member, col)) => {
                format!("`{member}` row {index} column {col} is {value}; values must be finite")
            }
            None => format!("`{what}` entry {index} is {value}; values must be finite"),
        },
        SimError::Core(CoreError::InvalidArgument { what: "mass", reason }) => {
            format!("`{}`: {reason}", names.mass)
        }
        SimError::Core(CoreError::EmptyInput { .. }) => {
            format!("`{}` has no rows; a snapshot holds at least one body", names.pos)
        }
        SimError::Core(CoreError::LengthMismatch { what, expected, actual }) => {
            let member = column(what).map_or(if *what == "ids" { names.ids } else { what }, |c| c.0);
            format!("`{member}` has {actual} rows, `{}` has {expected}", names.mass)
        }
        SimError::InvalidArgument { what: "time", reason } => format!("`{}` {reason}", names.time),
        other => other.to_string(),
    };
    Err(SimError::bad_file(path, reason))
}

/// What is wrong with `keys` as a Cornerstone leaf array over 63-bit keys, if anything:
/// [`orrery_tree_build::leaves::check_leaf_array`] with the binary layout, whose cells
/// (aligned powers of two) include the octree's (aligned powers of eight), so every tree
/// a solver keeps passes, and anything with fewer than two keys, unsorted, not starting
/// at 0 or not ending at the key range is refused. The solver checks its own layout when
/// it restores them.
fn leaf_array_problem(keys: &[u64]) -> Option<String> {
    use orrery_core::sfc::KeyLayout;
    let e = orrery_tree_build::leaves::check_leaf_array(keys, KeyLayout::binary::<u64>()).err()?;
    Some(match e {
        orrery_core::Error::InvalidTree { index, reason } => format!("entry {index}: {reason}"),
        other => other.to_string(),
    })
}

/// Checks tree leaves read from `what` of `path` (e.g. "member `tree_leaves`"); a
/// [`SimError::BadFile`] naming it otherwise.
pub(crate) fn check_read_leaves(keys: &[u64], path: &Path, what: &str) -> Result<()> {
    match leaf_array_problem(keys) {
        None => Ok(()),
        Some(reason) => Err(SimError::bad_file(path, format!("{what} is not a tree's leaf array: {reason}"))),
    }
}

/// Checks a snapshot's tree leaves before it is written (nothing is written otherwise).
///
/// # Errors
/// [`SimError::InvalidArgument`] (`tree leaves`) when they are not a leaf array.
pub(crate) fn check_write_leaves(snapshot: &Snapshot) -> Result<()> {
    match snapshot.tree_leaves.as_deref().and_then(leaf_array_problem) {
        None => Ok(()),
        Some(reason) => Err(SimError::InvalidArgument { what: "tree leaves", reason }),
    }
}

/// Checks positions and optional masses the way [`check_read`] checks a state.
pub(crate) fn check_positions(p: &Positions, path: &Path, pos: &str, mass: &str) -> Result<()> {
    let n = p.positions[0].len();
    if n == 0 {
        return Err(SimError::bad_file(path, format!("`{pos}` has no rows; at least one body is needed")));
    }
    for (col, c) in p.positions.iter().enumerate() {
        if let Some(i) = c.iter().position(|v| !v.is_finite()) {
            return Err(SimError::bad_file(
                path,
                format!("`{pos}` row {i} column {col} is {}; values must be finite", c[i]),
            ));
        }
    }
    if let Some(m) = &p.masses {
        if m.len() != n {
            return Err(SimError::bad_file(path, format!("`{mass}` has {} rows, `{pos}` has {n}", m.len())));
        }
        if let Some(i) = m.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(SimError::bad_file(
                path,
                format!("`{mass}`: body {i} has mass {}, masses must be positive and finite", m[i]),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use orrery_traverse::ic::PhaseSpace;

    /// A small state with awkward values (negative zero, subnormals, large ids) so that
    /// round trips prove bit-exactness.
    pub(crate) fn sample_snapshot(n: usize) -> Snapshot {
        let f = |i: usize, k: f64| (i as f64 * 0.37 + k).sin() * 10f64.powi(i32::try_from(i % 7).unwrap_or(0) - 3);
        let mut bodies = PhaseSpace {
            x: (0..n).map(|i| f(i, 0.1)).collect(),
            y: (0..n).map(|i| f(i, 0.2)).collect(),
            z: (0..n).map(|i| f(i, 0.3)).collect(),
            vx: (0..n).map(|i| f(i, 0.4)).collect(),
            vy: (0..n).map(|i| f(i, 0.5)).collect(),
            vz: (0..n).map(|i| f(i, 0.6)).collect(),
            mass: (0..n).map(|i| 1.0 / (i as f64 + 1.0)).collect(),
        };
        bodies.x[0] = -0.0;
        if n > 1 {
            bodies.vy[1] = f64::MIN_POSITIVE / 8.0;
            bodies.mass[1] = f64::MIN_POSITIVE / 4.0;
        }
        let mut state = State::new(bodies);
        state.ids = (0..n as u64).map(|i| u64::MAX - 3 * i).collect();
        state.time = 1.0 / 3.0;
        state.step = 1_234_567_890_123;
        Snapshot::new(state)
            .with_tree_leaves(sample_leaves())
            .with_attribute("dt", "0.001")
            .with_attribute("softening", "1e-3")
            .with_attribute("solver", "barnes-hut θ=0.5 \"quoted\" \\ tab\t end")
            .with_attribute("empty", "")
    }

    /// An octree leaf array: the root's first child split in eight, its other children
    /// leaves (up to the key range 2^63, so the top bit is exercised).
    pub(crate) fn sample_leaves() -> Vec<u64> {
        (0..8u64).map(|i| i << 57).chain((1..=8u64).map(|i| i << 60)).collect()
    }

    /// Equality down to the bit pattern of every float.
    pub(crate) fn assert_bit_exact(a: &Snapshot, b: &Snapshot) {
        let cols = |s: &Snapshot| {
            let p = &s.state.bodies;
            [&p.x, &p.y, &p.z, &p.vx, &p.vy, &p.vz, &p.mass].map(|c| c.iter().map(|v| v.to_bits()).collect::<Vec<_>>())
        };
        assert_eq!(cols(a), cols(b));
        assert_eq!(a.state.ids, b.state.ids);
        assert_eq!(a.state.time.to_bits(), b.state.time.to_bits());
        assert_eq!(a.state.step, b.state.step);
        assert_eq!(a.tree_leaves, b.tree_leaves);
        assert_eq!(a.attributes, b.attributes);
        assert_eq!(a, b);
    }

    /// Names of the entries of `dir`.
    pub(crate) fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn format_from_path() {
        assert_eq!(Format::from_path("a/b.npz").unwrap(), Format::Npz);
        assert_eq!(Format::from_path("b.NPZ").unwrap(), Format::Npz);
        assert_eq!(Format::from_path("snap_000.hdf5").unwrap(), Format::Hdf5);
        assert_eq!(Format::from_path("snap.h5").unwrap(), Format::Hdf5);
        for bad in ["snap.npy", "snap.txt", "snap", "dir/"] {
            let e = Format::from_path(bad).unwrap_err();
            assert!(matches!(e, SimError::InvalidArgument { what: "snapshot format", .. }), "{bad}: {e}");
        }
        let msg = Format::from_path("x.txt").unwrap_err().to_string();
        assert!(msg.contains(".txt") && msg.contains(".npz"), "{msg}");
    }

    #[test]
    fn failing_write_leaves_previous_file_and_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("snap.npz");
        fs::write(&target, b"previous good snapshot").unwrap();

        // A writer that creates its file, writes part of it, then fails.
        let e = write_atomically(&target, |tmp| {
            fs::write(tmp, b"half a snap").unwrap();
            Err(SimError::io(tmp, std::io::Error::other("disk full (simulated)")))
        })
        .unwrap_err();
        assert!(e.to_string().contains("disk full"), "{e}");
        assert_eq!(fs::read(&target).unwrap(), b"previous good snapshot");
        assert_eq!(entries(dir.path()), ["snap.npz"]);

        // A writer that fails before creating anything.
        write_atomically(&target, |_| Err(SimError::bad_file("x", "nope"))).unwrap_err();
        assert_eq!(entries(dir.path()), ["snap.npz"]);

        // The rename fails (the target is a non-empty folder): the temp is removed.
        let blocked = dir.path().join("blocked.npz");
        fs::create_dir(&blocked).unwrap();
        fs::write(blocked.join("inside"), b"x").unwrap();
        let e = write(&blocked, &sample_snapshot(3), Format::Npz).unwrap_err();
        assert!(matches!(e, SimError::Io { .. }), "{e}");
        assert_eq!(entries(dir.path()), ["blocked.npz", "snap.npz"]);

        // An invalid state is refused before anything is written.
        let mut bad = sample_snapshot(3);
        bad.state.bodies.mass[2] = -1.0;
        write(&target, &bad, Format::Npz).unwrap_err();
        assert_eq!(fs::read(&target).unwrap(), b"previous good snapshot");
        assert_eq!(entries(dir.path()), ["blocked.npz", "snap.npz"]);

        // A missing folder is an I/O error naming the target.
        let e = write(dir.path().join("no/such/dir/s.npz"), &sample_snapshot(2), Format::Npz).unwrap_err();
        assert!(matches!(e, SimError::Io { .. }) && e.to_string().contains("s.npz"), "{e}");
    }

    #[test]
    fn successful_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("snap.npz");
        fs::write(&target, b"old").unwrap();
        let snap = sample_snapshot(5);
        write(&target, &snap, Format::Npz).unwrap();
        assert_eq!(entries(dir.path()), ["snap.npz"]);
        assert_bit_exact(&read(&target).unwrap(), &snap);
    }

    #[test]
    fn read_sniffs_magic_over_extension() {
        let dir = tempfile::tempdir().unwrap();
        let snap = sample_snapshot(4);
        let npz = dir.path().join("a.npz");
        write(&npz, &snap, Format::Npz).unwrap();
        let misnamed = dir.path().join("a.dat");
        fs::copy(&npz, &misnamed).unwrap();
        assert_bit_exact(&read(&misnamed).unwrap(), &snap);

        let text = dir.path().join("notes.txt");
        fs::write(&text, b"hello world").unwrap();
        let e = read(&text).unwrap_err();
        assert!(matches!(e, SimError::BadFile { .. }) && e.to_string().contains("signature"), "{e}");
        let empty = dir.path().join("empty.bin");
        fs::write(&empty, b"").unwrap();
        assert!(read(&empty).unwrap_err().to_string().contains("empty"));
        let e = read(dir.path().join("missing.npz")).unwrap_err();
        assert!(matches!(e, SimError::Io { .. }), "{e}");
    }

    /// NumPy (and h5py, with the `hdf5` feature) read our files as documented:
    /// `tests/python/check_snapshot.py` checks members, dtypes, shapes and every value bit
    /// for bit. Skipped, saying so, when Python lacks the modules, unless
    /// `ORRERY_REQUIRE_H5PY=1` (CI), which makes that a failure.
    #[test]
    fn python_reads_snapshots() {
        use std::process::Command;
        let need = if cfg!(feature = "hdf5") { "import h5py, numpy" } else { "import numpy" };
        let probe = Command::new("python3").args(["-c", need]).output();
        let available = matches!(&probe, Ok(o) if o.status.success());
        if !available {
            let why = match &probe {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().lines().last().unwrap_or("").to_owned(),
                Err(e) => format!("python3: {e}"),
            };
            assert!(
                std::env::var("ORRERY_REQUIRE_H5PY").as_deref() != Ok("1"),
                "ORRERY_REQUIRE_H5PY=1 but `python3 -c \"{need}\"` failed: {why}"
            );
            eprintln!("skipped: h5py not installed (`python3 -c \"{need}\"` failed: {why})");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let snap = sample_snapshot(7);
        let mut files = vec![dir.path().join("s.npz")];
        write(&files[0], &snap, Format::Npz).unwrap();
        if cfg!(feature = "hdf5") {
            files.push(dir.path().join("s.hdf5"));
            write(&files[1], &snap, Format::Hdf5).unwrap();
        }
        let b = &snap.state.bodies;
        let rows = |c: [&Vec<f64>; 3]| (0..snap.state.len()).map(|i| [c[0][i], c[1][i], c[2][i]]).collect::<Vec<_>>();
        let expected = serde_json::json!({
            "pos": rows([&b.x, &b.y, &b.z]),
            "vel": rows([&b.vx, &b.vy, &b.vz]),
            "mass": b.mass,
            "ids": snap.state.ids,
            "time": snap.state.time,
            "step": snap.state.step,
            "tree_leaves": snap.tree_leaves,
            "attributes": snap.attributes,
        });
        let exp_path = dir.path().join("expected.json");
        fs::write(&exp_path, serde_json::to_vec(&expected).unwrap()).unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/check_snapshot.py");
        let out = Command::new("python3").arg(script).arg(&exp_path).args(&files).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "check_snapshot.py failed:\n{text}");
        assert_eq!(text.matches("ok ").count(), files.len(), "{text}");
    }

    #[test]
    fn leaf_arrays_are_checked() {
        let octree = sample_leaves();
        assert_eq!(leaf_array_problem(&octree), None);
        // A binary tree's halves pass too (the solver checks its own layout).
        assert_eq!(leaf_array_problem(&[0, 1 << 62, 1 << 63]), None);
        let end = 1u64 << 63;
        for (keys, want) in [
            (vec![], "at least 2 keys"),
            (vec![0], "at least 2 keys"),
            (vec![8, end], "entry 0: the first key must be 0"),
            (vec![0, 1 << 62, 1 << 61, end], "entry 1:"),
            (vec![0, 1 << 62, 1 << 62, end], "entry 1:"),
            (vec![0, 1 << 62], "entry 1: the last key"),
            (vec![0, 3, end], "entry 0:"),
        ] {
            let p = leaf_array_problem(&keys).unwrap_or_else(|| panic!("{keys:?} passed"));
            assert!(p.contains(want), "{keys:?}: want {want:?} in {p:?}");
        }
        let e = check_read_leaves(&[0, 2, 1], Path::new("s.npz"), "member `tree_leaves`").unwrap_err();
        assert!(matches!(e, SimError::BadFile { .. }), "{e}");
        assert!(e.to_string().starts_with("s.npz: member `tree_leaves` is not a tree's leaf array: entry"), "{e}");
    }

    #[test]
    fn writes_refuse_bad_leaves_and_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut formats = vec![Format::Npz];
        if cfg!(feature = "hdf5") {
            formats.push(Format::Hdf5);
        }
        for format in formats {
            let path = dir.path().join(format!("s.{}", format.extension()));
            let snap = sample_snapshot(3).with_tree_leaves(vec![0, 5, 4]);
            let e = write(&path, &snap, format).unwrap_err();
            assert!(matches!(e, SimError::InvalidArgument { what: "tree leaves", .. }), "{format}: {e}");
            assert!(entries(dir.path()).is_empty(), "{format}");
            // No leaves at all is fine and reads back as none.
            let mut snap = sample_snapshot(3);
            snap.tree_leaves = None;
            write(&path, &snap, format).unwrap();
            assert_eq!(read(&path).unwrap().tree_leaves, None, "{format}");
            fs::remove_file(&path).unwrap();
        }
    }

    #[cfg(not(feature = "hdf5"))]
    #[test]
    fn hdf5_without_feature_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path().join("s.hdf5"), &sample_snapshot(2), Format::Hdf5).unwrap_err();
        assert!(e.to_string().contains("`hdf5` feature"), "{e}");
        assert!(entries(dir.path()).is_empty());
    }
}
