//! NumPy `.npz` snapshots: what `numpy.savez` writes and `numpy.load` reads.
//!
//! # Layout
//!
//! A zip archive (stored, not compressed; zip64 only for members over 4 GiB) of `.npy`
//! arrays, all little endian and in C order:
//!
//! | member       | dtype        | shape    | holds                                        |
//! |--------------|--------------|----------|----------------------------------------------|
//! | `pos`        | `<f8`        | (n, 3)   | positions x, y, z                            |
//! | `vel`        | `<f8`        | (n, 3)   | velocities                                   |
//! | `mass`       | `<f8`        | (n,)     | masses (positive)                            |
//! | `ids`        | `<u8`        | (n,)     | 64-bit ids                                   |
//! | `time`       | `<f8`        | ()       | simulation time                              |
//! | `step`       | `<u8`        | ()       | steps taken                                  |
//! | `attributes` | `\|u1`       | (k,)     | UTF-8 JSON object of strings (run parameters)|
//! | `tree_leaves`| `<u8`        | (L + 1,) | optional: the solver's Cornerstone leaf array|
//!
//! In Python: `s = np.load("snap.npz"); s["pos"]`, and
//! `json.loads(s["attributes"].tobytes())` for the parameters. `tree_leaves` is written
//! only when the snapshot has leaves (a Barnes-Hut run's) and may be absent on reading.
//!
//! # Why it is shaped so
//!
//! - Positions and velocities as (n, 3) rather than six columns: that is what every
//!   Python N-body tool expects of a position array, and `read_positions` can read the
//!   same `pos` from a snapshot or a user's own file.
//! - The attributes as JSON bytes, not a NumPy string array: `np.load` refuses pickled
//!   object arrays by default, fixed-width `<U` arrays pad and strip trailing NULs, and a
//!   byte array round-trips any string exactly.
//! - Writing goes through `npyz` (its zip writer and `.npy` headers); reading parses the
//!   `.npy` members here, with every length and product checked, because a header is
//!   untrusted input: a shape like (2^40, 2^40) must be a [`SimError::BadFile`], never an
//!   arithmetic overflow or a huge allocation. Member bytes are read whole and checked
//!   against the shape before anything is decoded.
//! - Reading is strict about what it accepts for our members (float64 positions,
//!   velocities and masses; uint64 ids, or int64 ids that are all non-negative, as
//!   `np.arange` makes them) but accepts both C and Fortran order, as `np.save` may
//!   write either.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufReader, BufWriter, Read, Seek, Write};
use std::path::Path;

use npyz::WriterBuilder;
use npyz::zip::{self, ZipArchive};
use orrery_traverse::ic::PhaseSpace;

use super::{ColumnNames, Positions, Snapshot};
use crate::{Result, SimError, State};

/// How the `.npz` members are named in error messages.
const NAMES: ColumnNames = ColumnNames { pos: "pos", vel: "vel", mass: "mass", ids: "ids", time: "time" };

/// The optional member that holds [`Snapshot::tree_leaves`].
pub const TREE_LEAVES: &str = "tree_leaves";

/// Writes `snapshot` to `path` as an `.npz`, atomically (see [`super::write()`]).
///
/// # Errors
/// [`State::check`]'s errors for an invalid state, [`SimError::InvalidArgument`] for
/// tree leaves that are not a leaf array (nothing is written either way);
/// [`SimError::Io`] when the file cannot be written.
pub fn write(path: &Path, snapshot: &Snapshot) -> Result<()> {
    let state = &snapshot.state;
    state.check()?;
    super::check_write_leaves(snapshot)?;
    let json = serde_json::to_vec(&snapshot.attributes)
        .map_err(|e| SimError::InvalidArgument { what: "attributes", reason: e.to_string() })?;
    super::write_atomically(path, |tmp| {
        let file = OpenOptions::new().write(true).create_new(true).open(tmp).map_err(|e| SimError::io(path, e))?;
        write_members(BufWriter::new(file), state, &json, snapshot.tree_leaves.as_deref())
            .map_err(|e| SimError::io(path, e))
    })
}

/// Writes the members. Each `.npy` member is serialised into memory first and handed to
/// the zip writer as one slice: element by element, every 8 bytes would be a call through
/// the zip writer (its CRC and its buffer), which at 1M bodies made a snapshot cost a
/// third of a second (docs/performance/sim.md).
fn write_members(out: BufWriter<File>, state: &State, json: &[u8], leaves: Option<&[u64]>) -> std::io::Result<()> {
    let b = &state.bodies;
    let n = state.len();
    let mut zip = zip::ZipWriter::new(out);
    let mut member = |name: &str, npy: Vec<u8>| -> std::io::Result<()> {
        let options = zip::write::FileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(npy.len() as u64 >= u64::from(u32::MAX));
        zip.start_file(format!("{name}.npy"), options).map_err(std::io::Error::other)?;
        zip.write_all(&npy)
    };
    for (name, c) in [("pos", [&b.x, &b.y, &b.z]), ("vel", [&b.vx, &b.vy, &b.vz])] {
        member(name, npy_bytes(&[n as u64, 3], (0..n).flat_map(|i| [c[0][i], c[1][i], c[2][i]]))?)?;
    }
    member("mass", npy_bytes(&[n as u64], b.mass.iter().copied())?)?;
    member("ids", npy_bytes(&[n as u64], state.ids.iter().copied())?)?;
    member("time", npy_bytes(&[], [state.time])?)?;
    member("step", npy_bytes(&[], [state.step])?)?;
    member("attributes", npy_bytes(&[json.len() as u64], json.iter().copied())?)?;
    if let Some(leaves) = leaves {
        member(TREE_LEAVES, npy_bytes(&[leaves.len() as u64], leaves.iter().copied())?)?;
    }
    let out = zip.finish().map_err(std::io::Error::other)?;
    let mut file = out.into_inner().map_err(std::io::IntoInnerError::into_error)?;
    file.flush()
}

/// One `.npy` file (npyz's header and its default little-endian dtype for `T`) of
/// `shape` holding `values`, in memory.
fn npy_bytes<T: npyz::AutoSerialize>(shape: &[u64], values: impl IntoIterator<Item = T>) -> std::io::Result<Vec<u8>> {
    let values = values.into_iter();
    let mut bytes = Vec::with_capacity(128 + values.size_hint().0 * std::mem::size_of::<T>());
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut bytes).begin_nd()?;
    w.extend(values)?;
    w.finish()?;
    Ok(bytes)
}

/// Reads an `.npz` snapshot, validating every member.
///
/// # Errors
/// [`SimError::Io`] when the file cannot be opened; [`SimError::BadFile`] naming the
/// member for anything wrong inside.
pub fn read(path: &Path) -> Result<Snapshot> {
    read_archive(open(path)?, path)
}

/// [`read()`] on an opened archive (`path` only names it in errors).
fn read_archive<R: Read + Seek>(mut archive: ZipArchive<R>, path: &Path) -> Result<Snapshot> {
    let bad = |reason: String| SimError::bad_file(path, reason);

    let pos = member(&mut archive, path, "pos")?.rows3(false).map_err(|r| bad(format!("member `pos` {r}")))?;
    let n = pos[0].len();
    if n == 0 {
        return Err(bad("member `pos` has no rows; a snapshot holds at least one body".to_owned()));
    }
    let vel = member(&mut archive, path, "vel")?.rows3(false).map_err(|r| bad(format!("member `vel` {r}")))?;
    same_rows(path, "vel", vel[0].len(), n)?;
    let mass = member(&mut archive, path, "mass")?.column_f64().map_err(|r| bad(format!("member `mass` {r}")))?;
    same_rows(path, "mass", mass.len(), n)?;
    let ids = member(&mut archive, path, "ids")?.column_ids().map_err(|r| bad(format!("member `ids` {r}")))?;
    same_rows(path, "ids", ids.len(), n)?;
    let time = member(&mut archive, path, "time")?.scalar_f64().map_err(|r| bad(format!("member `time` {r}")))?;
    let step = member(&mut archive, path, "step")?.scalar_u64().map_err(|r| bad(format!("member `step` {r}")))?;
    let json =
        member(&mut archive, path, "attributes")?.bytes().map_err(|r| bad(format!("member `attributes` {r}")))?;
    let attributes: BTreeMap<String, String> = serde_json::from_slice(&json)
        .map_err(|e| bad(format!("member `attributes` is not a JSON object of strings: {e}")))?;

    let tree_leaves = match optional_member(&mut archive, path, TREE_LEAVES)? {
        Some(m) => {
            let keys = m.column_u64().map_err(|r| bad(format!("member `{TREE_LEAVES}` {r}")))?;
            super::check_read_leaves(&keys, path, &format!("member `{TREE_LEAVES}`"))?;
            Some(keys)
        }
        None => None,
    };

    let [x, y, z] = pos;
    let [vx, vy, vz] = vel;
    let state = State { bodies: PhaseSpace { x, y, z, vx, vy, vz, mass }, ids, time, step };
    super::check_read(&state, path, &NAMES)?;
    Ok(Snapshot { state, tree_leaves, attributes })
}

/// Reads `pos` (and `mass` when present) of an `.npz`.
pub(crate) fn read_positions(path: &Path) -> Result<Positions> {
    read_archive_positions(open(path)?, path)
}

fn read_archive_positions<R: Read + Seek>(mut archive: ZipArchive<R>, path: &Path) -> Result<Positions> {
    let bad = |reason: String| SimError::bad_file(path, reason);
    let positions = member(&mut archive, path, "pos")?.rows3(true).map_err(|r| bad(format!("member `pos` {r}")))?;
    let masses = match optional_member(&mut archive, path, "mass")? {
        Some(m) => Some(m.column_f64().map_err(|r| bad(format!("member `mass` {r}")))?),
        None => None,
    };
    let p = Positions { positions, masses };
    super::check_positions(&p, path, "pos", "mass")?;
    Ok(p)
}

/// Reads a plain `.npy` of shape (n, 3), float32 or float64.
pub(crate) fn read_npy_positions(path: &Path) -> Result<Positions> {
    let mut bytes = Vec::new();
    File::open(path).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| SimError::io(path, e))?;
    let bad = |reason: String| SimError::bad_file(path, reason);
    let positions = Npy::parse(bytes).and_then(|a| a.rows3(true)).map_err(|r| bad(format!("array {r}")))?;
    let p = Positions { positions, masses: None };
    super::check_positions(&p, path, "array", "mass")?;
    Ok(p)
}

fn same_rows(path: &Path, name: &str, rows: usize, n: usize) -> Result<()> {
    if rows == n {
        Ok(())
    } else {
        Err(SimError::bad_file(path, format!("member `{name}` has {rows} rows, `pos` has {n}")))
    }
}

fn open(path: &Path) -> Result<ZipArchive<BufReader<File>>> {
    let file = File::open(path).map_err(|e| SimError::io(path, e))?;
    archive(BufReader::new(file), path)
}

/// Opens the archive and checks that every member's local header names it as the
/// central directory does. The zip reader finds members by their central-directory name
/// only and checks no CRC of names, so without this a damaged name would make an optional
/// member (`tree_leaves`, `mass` for positions) silently absent.
fn archive<R: Read + Seek>(reader: R, path: &Path) -> Result<ZipArchive<R>> {
    let bad = |e: String| SimError::bad_file(path, format!("not a readable npz (zip) archive: {e}"));
    let mut archive = ZipArchive::new(reader).map_err(|e| bad(e.to_string()))?;
    let mut names = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(|e| bad(e.to_string()))?;
        names.push((entry.name_raw().to_vec(), entry.header_start()));
    }
    let mut reader = archive.into_inner();
    for (name, start) in names {
        if local_name(&mut reader, start).as_deref() != Some(&name[..]) {
            let shown = String::from_utf8_lossy(&name).into_owned();
            return Err(bad(format!("the local header of member {shown:?} names another member (a damaged archive)")));
        }
    }
    ZipArchive::new(reader).map_err(|e| bad(e.to_string()))
}

/// The file name in the zip local header at `start`, if it can be read.
fn local_name<R: Read + Seek>(reader: &mut R, start: u64) -> Option<Vec<u8>> {
    // Signature (4), version, flags, method, time, date (2 each), CRC and sizes (4 each),
    // then the name's and the extra field's lengths (2 each) and the name.
    reader.seek(std::io::SeekFrom::Start(start.checked_add(26)?)).ok()?;
    let mut len = [0u8; 2];
    reader.read_exact(&mut len).ok()?;
    reader.seek(std::io::SeekFrom::Current(2)).ok()?;
    let mut name = vec![0u8; usize::from(u16::from_le_bytes(len))];
    reader.read_exact(&mut name).ok()?;
    Some(name)
}

fn member<R: Read + Seek>(archive: &mut ZipArchive<R>, path: &Path, name: &str) -> Result<Npy> {
    optional_member(archive, path, name)?.ok_or_else(|| {
        let mut held: Vec<&str> = archive.file_names().map(|f| f.strip_suffix(".npy").unwrap_or(f)).collect::<Vec<_>>();
        held.sort_unstable();
        let held = if held.is_empty() { "none".to_owned() } else { held.join(", ") };
        SimError::bad_file(path, format!("member `{name}` is missing (the file holds: {held})"))
    })
}

fn optional_member<R: Read + Seek>(archive: &mut ZipArchive<R>, path: &Path, name: &str) -> Result<Option<Npy>> {
    let file_name = format!("{name}.npy");
    let bad = |reason: String| SimError::bad_file(path, format!("member `{name}` {reason}"));
    let mut entry = match archive.by_name(&file_name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(bad(format!("cannot be opened: {e}"))),
    };
    let mut bytes = Vec::new();
    // The zip reader checks the CRC at the end: a corrupt member fails here.
    entry.read_to_end(&mut bytes).map_err(|e| bad(format!("cannot be read: {e}")))?;
    Npy::parse(bytes).map(Some).map_err(bad)
}

/// The element types our members use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F64,
    F32,
    U64,
    I64,
    U8,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Self::F64 | Self::U64 | Self::I64 => 8,
            Self::F32 => 4,
            Self::U8 => 1,
        }
    }

    fn parse(descr: &str) -> std::result::Result<Self, String> {
        match descr {
            "<f8" => Ok(Self::F64),
            "<f4" => Ok(Self::F32),
            "<u8" => Ok(Self::U64),
            "<i8" => Ok(Self::I64),
            "|u1" | "<u1" | ">u1" | "=u1" => Ok(Self::U8),
            other if other.starts_with('>') => {
                Err(format!("has dtype '{other}' (big endian), only little endian is read"))
            }
            other => Err(format!("has dtype '{other}', which no snapshot member uses")),
        }
    }
}

/// One parsed `.npy` array: its header and its data bytes, whose length matches the shape.
#[derive(Debug)]
struct Npy {
    dtype: Dtype,
    shape: Vec<u64>,
    fortran: bool,
    bytes: Vec<u8>,
    data_start: usize,
}

type Reason<T> = std::result::Result<T, String>;

impl Npy {
    /// Parses the `.npy` format (versions 1 to 3): magic, version, header length, a
    /// Python dict literal with `descr`, `fortran_order` and `shape`, then the data.
    fn parse(bytes: Vec<u8>) -> Reason<Self> {
        const MAGIC: &[u8] = b"\x93NUMPY";
        if bytes.len() < MAGIC.len() + 2 || !bytes.starts_with(MAGIC) {
            return Err(if bytes.len() < MAGIC.len() + 2 && MAGIC.starts_with(&bytes) {
                "is truncated inside the .npy magic".to_owned()
            } else {
                "is not a .npy array (no \\x93NUMPY magic)".to_owned()
            });
        }
        let major = bytes[6];
        let (len_size, header_len): (usize, _) = match major {
            1 => (2, bytes.get(8..10).map(|b| usize::from(u16::from_le_bytes([b[0], b[1]])))),
            2 | 3 => (4, bytes.get(8..12).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)),
            v => return Err(format!("has .npy format version {v}, only 1 to 3 exist")),
        };
        let header_len = header_len.ok_or("is truncated inside the .npy header")?;
        let header_start = 8 + len_size;
        let data_start = header_start.checked_add(header_len).ok_or("has an impossible .npy header length")?;
        let header = bytes.get(header_start..data_start).ok_or("is truncated inside the .npy header")?;
        let header = std::str::from_utf8(header).map_err(|_| "has a .npy header that is not UTF-8".to_owned())?;
        let dict = parse_header(header).map_err(|e| format!("has a malformed .npy header ({e}): {}", header.trim()))?;
        let dtype = Dtype::parse(&dict.descr)?;
        let count = dict
            .shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
            .and_then(|c| c.checked_mul(dtype.size() as u64))
            .ok_or_else(|| format!("has shape {} whose size overflows", shape_str(&dict.shape)))?;
        let have = (bytes.len() - data_start) as u64;
        if have < count {
            return Err(format!(
                "is truncated: shape {} of {} needs {count} data bytes, the member has {have}",
                shape_str(&dict.shape),
                dict.descr
            ));
        }
        if have > count {
            return Err(format!("has {} bytes after the data of shape {}", have - count, shape_str(&dict.shape)));
        }
        Ok(Self { dtype, shape: dict.shape, fortran: dict.fortran_order, bytes, data_start })
    }

    fn data(&self) -> &[u8] {
        &self.bytes[self.data_start..]
    }

    fn expect_dtype(&self, allowed: &[Dtype], want: &str) -> Reason<()> {
        if allowed.contains(&self.dtype) {
            Ok(())
        } else {
            Err(format!("has dtype {}, expected {want}", dtype_name(self.dtype)))
        }
    }

    fn f64s(&self) -> Vec<f64> {
        match self.dtype {
            Dtype::F32 => self.data().chunks_exact(4).map(|c| f64::from(f32::from_le_bytes(le4(c)))).collect(),
            _ => self.data().chunks_exact(8).map(|c| f64::from_le_bytes(le8(c))).collect(),
        }
    }

    /// An (n, 3) array of floats as three columns.
    fn rows3(&self, allow_f32: bool) -> Reason<[Vec<f64>; 3]> {
        if allow_f32 {
            self.expect_dtype(&[Dtype::F64, Dtype::F32], "float64 or float32 ('<f8' or '<f4')")?;
        } else {
            self.expect_dtype(&[Dtype::F64], "float64 ('<f8')")?;
        }
        let [n, 3] = self.shape[..] else {
            return Err(format!("has shape {}, expected (n, 3)", shape_str(&self.shape)));
        };
        let n = n as usize;
        let flat = self.f64s();
        let at = |i: usize, j: usize| if self.fortran { flat[j * n + i] } else { flat[i * 3 + j] };
        Ok([0, 1, 2].map(|j| (0..n).map(|i| at(i, j)).collect()))
    }

    fn column_shape(&self) -> Reason<()> {
        match self.shape[..] {
            [_] => Ok(()),
            _ => Err(format!("has shape {}, expected (n,)", shape_str(&self.shape))),
        }
    }

    fn column_f64(&self) -> Reason<Vec<f64>> {
        self.expect_dtype(&[Dtype::F64], "float64 ('<f8')")?;
        self.column_shape()?;
        Ok(self.f64s())
    }

    fn column_ids(&self) -> Reason<Vec<u64>> {
        self.expect_dtype(&[Dtype::U64, Dtype::I64], "uint64 ('<u8') or non-negative int64 ('<i8')")?;
        self.column_shape()?;
        let ids: Vec<u64> = self.data().chunks_exact(8).map(|c| u64::from_le_bytes(le8(c))).collect();
        if self.dtype == Dtype::I64
            && let Some(i) = ids.iter().position(|&v| v.cast_signed() < 0)
        {
            return Err(format!("entry {i} is {}, ids must be non-negative", ids[i].cast_signed()));
        }
        Ok(ids)
    }

    fn column_u64(&self) -> Reason<Vec<u64>> {
        self.expect_dtype(&[Dtype::U64], "uint64 ('<u8')")?;
        self.column_shape()?;
        Ok(self.data().chunks_exact(8).map(|c| u64::from_le_bytes(le8(c))).collect())
    }

    fn scalar_shape(&self) -> Reason<()> {
        if self.shape.is_empty() {
            Ok(())
        } else {
            Err(format!("has shape {}, expected a scalar ()", shape_str(&self.shape)))
        }
    }

    fn scalar_f64(&self) -> Reason<f64> {
        self.expect_dtype(&[Dtype::F64], "float64 ('<f8')")?;
        self.scalar_shape()?;
        Ok(f64::from_le_bytes(le8(self.data())))
    }

    fn scalar_u64(&self) -> Reason<u64> {
        self.expect_dtype(&[Dtype::U64], "uint64 ('<u8')")?;
        self.scalar_shape()?;
        Ok(u64::from_le_bytes(le8(self.data())))
    }

    fn bytes(&self) -> Reason<Vec<u8>> {
        self.expect_dtype(&[Dtype::U8], "uint8 ('|u1')")?;
        self.column_shape()?;
        Ok(self.data().to_vec())
    }
}

/// The first 8 bytes of `c` (zeros where it is shorter, which the length checks exclude).
fn le8(c: &[u8]) -> [u8; 8] {
    c.get(..8).and_then(|c| c.try_into().ok()).unwrap_or_default()
}

/// The first 4 bytes of `c`.
fn le4(c: &[u8]) -> [u8; 4] {
    c.get(..4).and_then(|c| c.try_into().ok()).unwrap_or_default()
}

fn dtype_name(d: Dtype) -> &'static str {
    match d {
        Dtype::F64 => "float64 ('<f8')",
        Dtype::F32 => "float32 ('<f4')",
        Dtype::U64 => "uint64 ('<u8')",
        Dtype::I64 => "int64 ('<i8')",
        Dtype::U8 => "uint8 ('|u1')",
    }
}

fn shape_str(shape: &[u64]) -> String {
    match shape {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// The three keys of a `.npy` header.
#[derive(Debug)]
struct Header {
    descr: String,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// Parses the header dict, e.g. `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 3), }`.
///
/// Only what `numpy.lib.format` writes is accepted: string keys, and string, boolean or
/// tuple-of-integers values. A structured dtype (a list as `descr`) is refused.
fn parse_header(text: &str) -> Reason<Header> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    p.expect(b'{')?;
    loop {
        p.ws();
        if p.eat(b'}') {
            break;
        }
        let key = p.string()?;
        p.ws();
        p.expect(b':')?;
        p.ws();
        match key.as_str() {
            "descr" => descr = Some(p.string().map_err(|_| "descr is not a simple dtype string".to_owned())?),
            "fortran_order" => fortran = Some(p.boolean()?),
            "shape" => shape = Some(p.tuple()?),
            other => return Err(format!("unexpected key '{other}'")),
        }
        p.ws();
        if !p.eat(b',') {
            p.ws();
            p.expect(b'}')?;
            break;
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return Err("text after the dict".to_owned());
    }
    Ok(Header {
        descr: descr.ok_or("no 'descr'")?,
        fortran_order: fortran.ok_or("no 'fortran_order'")?,
        shape: shape.ok_or("no 'shape'")?,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Reason<()> {
        if self.eat(c) { Ok(()) } else { Err(format!("expected '{}' at byte {}", c as char, self.i)) }
    }

    fn string(&mut self) -> Reason<String> {
        let Some(quote @ (b'\'' | b'"')) = self.peek() else {
            return Err(format!("expected a string at byte {}", self.i));
        };
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if c == quote {
                let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                self.i += 1;
                return Ok(s);
            }
            if c == b'\\' {
                return Err("escapes in header strings are not supported".to_owned());
            }
            self.i += 1;
        }
        Err("unterminated string".to_owned())
    }

    fn boolean(&mut self) -> Reason<bool> {
        for (word, value) in [(&b"True"[..], true), (&b"False"[..], false)] {
            if self.s[self.i..].starts_with(word) {
                self.i += word.len();
                return Ok(value);
            }
        }
        Err(format!("expected True or False at byte {}", self.i))
    }

    fn tuple(&mut self) -> Reason<Vec<u64>> {
        self.expect(b'(')?;
        let mut dims = Vec::new();
        loop {
            self.ws();
            if self.eat(b')') {
                return Ok(dims);
            }
            dims.push(self.integer()?);
            self.ws();
            // Python 2 wrote longs as `3L`.
            self.eat(b'L');
            self.ws();
            if !self.eat(b',') {
                self.ws();
                self.expect(b')')?;
                return Ok(dims);
            }
        }
    }

    fn integer(&mut self) -> Reason<u64> {
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            v = v.checked_mul(10).and_then(|v| v.checked_add(u64::from(c - b'0'))).ok_or("a dimension exceeds 2^64")?;
            self.i += 1;
        }
        if self.i == start { Err(format!("expected a dimension at byte {}", self.i)) } else { Ok(v) }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use std::fs;

    use super::super::tests::{assert_bit_exact, entries, sample_snapshot};
    use super::super::{self as snapshot, Format};
    use super::*;

    /// Named raw `.npy` members of a hand-made `.npz`.
    type Members = Vec<(&'static str, Vec<u8>)>;

    /// Writes `members` (name, raw .npy bytes) into a stored zip, the way `np.savez` does.
    fn write_zip(path: &Path, members: &[(&str, Vec<u8>)]) {
        let mut z = zip::ZipWriter::new(File::create(path).unwrap());
        for (name, bytes) in members {
            z.start_file(format!("{name}.npy"), zip::write::FileOptions::default()).unwrap();
            z.write_all(bytes).unwrap();
        }
        z.finish().unwrap();
    }

    /// A `.npy` v1 file with the given header fields and raw data.
    fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let dict = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        let mut header = dict.into_bytes();
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(b' ');
        }
        header.push(b'\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(data);
        out
    }

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn u64s(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    /// The members of a valid 2-body snapshot, to be spoiled one at a time.
    fn valid_members() -> Members {
        vec![
            ("pos", npy("<f8", false, "(2, 3)", &f64s(&[1., 2., 3., 4., 5., 6.]))),
            ("vel", npy("<f8", false, "(2, 3)", &f64s(&[0.; 6]))),
            ("mass", npy("<f8", false, "(2,)", &f64s(&[1., 2.]))),
            ("ids", npy("<u8", false, "(2,)", &u64s(&[7, 8]))),
            ("time", npy("<f8", false, "()", &f64s(&[0.5]))),
            ("step", npy("<u8", false, "()", &u64s(&[3]))),
            ("attributes", npy("|u1", false, "(2,)", b"{}")),
        ]
    }

    fn with(name: &'static str, bytes: Vec<u8>) -> Members {
        let mut bytes = Some(bytes);
        valid_members()
            .into_iter()
            .map(|(n, b)| if n == name { (n, bytes.take().unwrap_or_default()) } else { (n, b) })
            .collect()
    }

    fn plus(name: &'static str, bytes: Vec<u8>) -> Members {
        let mut m = valid_members();
        m.push((name, bytes));
        m
    }

    fn without(name: &str) -> Members {
        valid_members().into_iter().filter(|(n, _)| *n != name).collect()
    }

    fn read_err(dir: &Path, members: &[(&str, Vec<u8>)]) -> String {
        let path = dir.join("bad.npz");
        write_zip(&path, members);
        match read(&path) {
            Err(e @ SimError::BadFile { .. }) => {
                let msg = e.to_string();
                assert!(msg.starts_with(&path.display().to_string()), "{msg}");
                assert!(!msg.contains('\n'), "one line: {msg}");
                msg
            }
            other => panic!("expected BadFile, got {other:?}"),
        }
    }

    #[test]
    fn npz_round_trip_is_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        for n in [1, 2, 17, 1000] {
            let snap = sample_snapshot(n);
            let path = dir.path().join(format!("s{n}.npz"));
            snapshot::write(&path, &snap, Format::Npz).unwrap();
            assert_bit_exact(&snapshot::read(&path).unwrap(), &snap);
            let p = snapshot::read_positions(&path).unwrap();
            let b = &snap.state.bodies;
            assert_eq!(p.positions, [b.x.clone(), b.y.clone(), b.z.clone()]);
            assert_eq!(p.masses.as_deref(), Some(&b.mass[..]));
        }
        // Overwriting in place works and leaves nothing else behind.
        let snap = sample_snapshot(3).with_attribute("dt", "0.5");
        snapshot::write(dir.path().join("s1.npz"), &snap, Format::Npz).unwrap();
        assert_bit_exact(&snapshot::read(dir.path().join("s1.npz")).unwrap(), &snap);
        assert_eq!(entries(dir.path()), ["s1.npz", "s1000.npz", "s17.npz", "s2.npz"]);
    }

    #[test]
    fn npz_reads_hand_made_variants() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ok.npz");
        write_zip(&path, &valid_members());
        let s = read(&path).unwrap();
        assert_eq!(s.state.bodies.x, [1., 4.]);
        assert_eq!(s.state.bodies.z, [3., 6.]);
        assert_eq!((s.state.ids.clone(), s.state.time, s.state.step), (vec![7, 8], 0.5, 3));

        assert_eq!(s.tree_leaves, None);
        write_zip(&path, &plus("tree_leaves", npy("<u8", false, "(3,)", &u64s(&[0, 1 << 62, 1 << 63]))));
        assert_eq!(read(&path).unwrap().tree_leaves, Some(vec![0, 1 << 62, 1 << 63]));

        // Fortran order (column-major data) and int64 ids, as numpy may write them.
        let f = with("pos", npy("<f8", true, "(2, 3)", &f64s(&[1., 4., 2., 5., 3., 6.])));
        let mut f: Vec<_> = f.into_iter().filter(|(n, _)| *n != "ids").collect();
        f.push(("ids", npy("<i8", false, "(2,)", &u64s(&[7, 8]))));
        write_zip(&path, &f);
        let t = read(&path).unwrap();
        assert_eq!(t.state, s.state);

        // read_positions needs only `pos`; a float32 `pos` is widened.
        let pos32: Vec<u8> = [1f32, 2., 3., 4., 5., 6.].iter().flat_map(|x| x.to_le_bytes()).collect();
        write_zip(&path, &[("pos", npy("<f4", false, "(2, 3)", &pos32))]);
        let p = snapshot::read_positions(&path).unwrap();
        assert_eq!(p.positions, [vec![1., 4.], vec![2., 5.], vec![3., 6.]]);
        assert_eq!(p.masses, None);
    }

    #[test]
    fn npy_positions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.npy");
        fs::write(&path, npy("<f8", false, "(2, 3)", &f64s(&[1., 2., 3., 4., 5., 6.]))).unwrap();
        let p = snapshot::read_positions(&path).unwrap();
        assert_eq!(p.positions, [vec![1., 4.], vec![2., 5.], vec![3., 6.]]);
        assert_eq!((p.masses.as_ref(), p.len()), (None, 2));
        // A .npy is not a snapshot.
        assert!(snapshot::read(&path).unwrap_err().to_string().contains("read_positions"));

        for (bytes, want) in [
            (npy("<f8", false, "(2, 2)", &f64s(&[0.; 4])), "shape (2, 2), expected (n, 3)"),
            (npy("<i4", false, "(1, 3)", &[0; 12]), "dtype '<i4'"),
            (npy(">f8", false, "(1, 3)", &[0; 24]), "big endian"),
            (npy("<f8", false, "(0, 3)", &[]), "no rows"),
            (npy("<f8", false, "(1, 3)", &f64s(&[0., f64::NAN, 0.])), "row 0 column 1 is NaN"),
            (npy("<f8", false, "(2, 3)", &f64s(&[0.; 5])), "truncated"),
        ] {
            fs::write(&path, bytes).unwrap();
            let e = snapshot::read_positions(&path).unwrap_err();
            assert!(matches!(e, SimError::BadFile { .. }) && e.to_string().contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn npz_bad_files_name_the_member() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let cases: Vec<(Members, &str)> = vec![
            (without("vel"), "member `vel` is missing (the file holds: attributes, ids, mass, pos, step, time)"),
            (without("attributes"), "member `attributes` is missing"),
            (
                with("pos", npy("<f8", false, "(2, 2)", &f64s(&[0.; 4]))),
                "member `pos` has shape (2, 2), expected (n, 3)",
            ),
            (
                with("pos", npy("<f4", false, "(2, 3)", &[0; 24])),
                "member `pos` has dtype float32 ('<f4'), expected float64",
            ),
            (with("mass", npy("<f8", false, "(3,)", &f64s(&[1.; 3]))), "member `mass` has 3 rows, `pos` has 2"),
            (with("vel", npy("<f8", false, "(1, 3)", &f64s(&[0.; 3]))), "member `vel` has 1 rows, `pos` has 2"),
            (with("ids", npy("<u8", false, "(2, 1)", &u64s(&[1, 2]))), "member `ids` has shape (2, 1), expected (n,)"),
            (with("ids", npy("<i8", false, "(2,)", &u64s(&[1, u64::MAX]))), "member `ids` entry 1 is -1"),
            (with("ids", npy("<f8", false, "(2,)", &f64s(&[1., 2.]))), "member `ids` has dtype float64"),
            (with("time", npy("<f8", false, "(1,)", &f64s(&[0.]))), "member `time` has shape (1,), expected a scalar"),
            (with("time", npy("<f8", false, "()", &f64s(&[f64::INFINITY]))), "`time` inf is not finite"),
            (with("step", npy("<i8", false, "()", &u64s(&[1]))), "member `step` has dtype int64"),
            (with("mass", npy("<f8", false, "(2,)", &f64s(&[1., 0.]))), "`mass`: body 1 has mass 0"),
            (with("mass", npy("<f8", false, "(2,)", &f64s(&[-1., 1.]))), "`mass`: body 0 has mass -1"),
            (
                with("pos", npy("<f8", false, "(2, 3)", &f64s(&[0., 0., 0., 0., 0., f64::NAN]))),
                "`pos` row 1 column 2 is NaN",
            ),
            (
                with("vel", npy("<f8", false, "(2, 3)", &f64s(&[0., f64::NEG_INFINITY, 0., 0., 0., 0.]))),
                "`vel` row 0 column 1 is -inf",
            ),
            (
                with("pos", npy("<f8", false, "(2, 3)", &f64s(&[0.; 5]))),
                "member `pos` is truncated: shape (2, 3) of <f8 needs 48 data bytes, the member has 40",
            ),
            (with("pos", npy("<f8", false, "(2, 3)", &f64s(&[0.; 7]))), "member `pos` has 8 bytes after the data"),
            (with("pos", npy("<f8", false, "(4294967296, 4294967296)", &[])), "whose size overflows"),
            (with("pos", npy("<f8", false, "(99999999999999999999, 3)", &[])), "exceeds 2^64"),
            (with("pos", npy("[('a', '<f8')]", false, "(2,)", &[])), "malformed .npy header"),
            (with("pos", b"\x93NUMPY\x09\x00".to_vec()), "version 9"),
            (with("pos", b"not an npy".to_vec()), "member `pos` is not a .npy array"),
            (
                with("attributes", npy("|u1", false, "(3,)", b"[1]")),
                "member `attributes` is not a JSON object of strings",
            ),
            (
                with("attributes", npy("|u1", false, "(7,)", b"{\"a\":1}")),
                "member `attributes` is not a JSON object of strings",
            ),
            (with("pos", npy("<f8", false, "(0, 3)", &[])), "`pos` has no rows"),
            (
                plus("tree_leaves", npy("<u8", false, "(4,)", &u64s(&[0, 1 << 62, 1 << 61, 1 << 63]))),
                "member `tree_leaves` is not a tree's leaf array: entry 1:",
            ),
            (
                plus("tree_leaves", npy("<u8", false, "(1,)", &u64s(&[0]))),
                "member `tree_leaves` is not a tree's leaf array: entry 0: a leaf array needs at least 2 keys",
            ),
            (
                plus("tree_leaves", npy("<u8", false, "(2,)", &u64s(&[1, 1 << 63]))),
                "member `tree_leaves` is not a tree's leaf array: entry 0: the first key must be 0",
            ),
            (
                plus("tree_leaves", npy("<i8", false, "(2,)", &u64s(&[0, 1 << 63]))),
                "member `tree_leaves` has dtype int64 ('<i8'), expected uint64",
            ),
            (
                plus("tree_leaves", npy("<u8", false, "(1, 2)", &u64s(&[0, 1 << 63]))),
                "member `tree_leaves` has shape (1, 2), expected (n,)",
            ),
        ];
        for (members, want) in cases {
            let msg = read_err(d, &members);
            assert!(msg.contains(want), "want {want:?} in {msg:?}");
        }
    }

    /// Every prefix of a valid file, garbage, and single-byte corruptions: each one an
    /// `Err`, none a panic (a panic would fail this test).
    #[test]
    fn npz_never_panics_on_bad_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.npz");
        snapshot::write(&good, &sample_snapshot(3), Format::Npz).unwrap();
        let bytes = fs::read(&good).unwrap();
        // In memory: the same readers as on a file, minus a slow file system.
        let path = Path::new("mem.npz");
        let try_read = |b: &[u8]| {
            let a = archive(std::io::Cursor::new(b), path).and_then(|z| read_archive(z, path));
            let p = archive(std::io::Cursor::new(b), path).and_then(|z| read_archive_positions(z, path));
            (a, p)
        };
        // One real file, through the public entry points.
        let on_disk = dir.path().join("x.npz");
        fs::write(&on_disk, &bytes[..bytes.len() - 1]).unwrap();
        assert!(snapshot::read(&on_disk).is_err() && snapshot::read_positions(&on_disk).is_err());
        for len in 0..bytes.len() {
            let (a, p) = try_read(&bytes[..len]);
            assert!(a.is_err() && p.is_err(), "a prefix of {len} bytes was read");
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for len in [1, 4, 8, 22, 100, 1000, 5000] {
            for _ in 0..20 {
                let mut junk: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                let (a, p) = try_read(&junk);
                assert!(a.is_err() && p.is_err());
                // Garbage behind a valid zip signature.
                junk.splice(0..0, *b"PK\x03\x04");
                let (a, p) = try_read(&junk);
                assert!(a.is_err() && p.is_err());
            }
        }
        // Flip bytes of the valid file; the CRC or the parser must catch each one (or it
        // lands in zip padding and the read is still right).
        let want = snapshot::read(&good).unwrap();
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            if let (Ok(s), _) = try_read(&b) {
                assert_eq!(s, want, "flipping byte {i} read back a different snapshot");
            }
        }
    }

    #[test]
    fn header_parser() {
        let h = parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }   \n").unwrap();
        assert_eq!((h.descr.as_str(), h.fortran_order, h.shape), ("<f8", false, vec![3]));
        let h = parse_header("{\"shape\":(),\"descr\":\"|u1\",\"fortran_order\":True}").unwrap();
        assert_eq!((h.descr.as_str(), h.fortran_order, h.shape), ("|u1", true, vec![]));
        assert_eq!(parse_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L)}").unwrap().shape, [2, 3]);
        for bad in [
            "",
            "{",
            "{'descr': '<f8'}",
            "{'descr': '<f8', 'fortran_order': 0, 'shape': ()}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (1,2,}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}",
            "{'descr': '<f8', 'fortran_order': False, 'shape': ()} x",
            "{'descr': '<f\\8', 'fortran_order': False, 'shape': ()}",
            "{'extra': 1}",
        ] {
            assert!(parse_header(bad).is_err(), "{bad}");
        }
    }
}
