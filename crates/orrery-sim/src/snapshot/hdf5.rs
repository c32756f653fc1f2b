//! HDF5 snapshots in the GADGET-4 layout (feature `hdf5`), for h5py, pynbody and yt.
//!
//! # Layout
//!
//! Our bodies are GADGET particle type 1 (dark matter / collisionless); types 0 and 2-5
//! are empty.
//!
//! - group `Header`, attributes:
//!   - `NumPart_ThisFile`, `NumPart_Total`, `NumPart_Total_HighWord`: uint32\[6\],
//!     `[0, n, 0, 0, 0, 0]` (high word all 0; more than 2^32 - 1 bodies are refused);
//!   - `MassTable`: float64\[6\], all 0 (masses are per particle, in `Masses`);
//!   - `Time` (the state's time), `Redshift` (0), `BoxSize` (0: not periodic),
//!     `Omega0` (0), `OmegaLambda` (0), `HubbleParam` (1): float64 scalars;
//!   - `NumFilesPerSnapshot` (1), `Flag_Sfr`, `Flag_Cooling`, `Flag_StellarAge`,
//!     `Flag_Metals`, `Flag_Feedback` (0), `Flag_DoublePrecision` (1): int32 scalars;
//! - group `Config`: int32 attributes `DOUBLEPRECISION` = 1 and `IDS_64BIT` = 1 (the
//!   GADGET-4 compile options that describe these data) and the string `ORRERY_VERSION`;
//! - group `Parameters`: one variable-length UTF-8 string attribute per
//!   [`Snapshot::attributes`] entry, and `OrreryStep` (uint64 scalar, the step count);
//! - group `PartType1`, datasets `Coordinates` (n, 3) float64, `Velocities` (n, 3)
//!   float64, `Masses` (n) float64, `ParticleIDs` (n) uint64;
//! - group `Orrery` (only when the snapshot has tree leaves), dataset `TreeLeaves`
//!   (L + 1) uint64: [`Snapshot::tree_leaves`], the solver's Cornerstone leaf array. A
//!   group of its own, beside GADGET's, because `Parameters` holds attributes only and
//!   GADGET readers find particles by the `PartType*` group names. (pynbody and yt were
//!   checked by hand before this group existed, not since.)
//!
//! # Why these dtypes
//!
//! GADGET-2 and -3 (and GADGET-4 built with `GADGET2_HEADER`) write `NumPart_*` as 32-bit
//! words with a separate high word; plain GADGET-4 writes uint64 and drops the high
//! word. The 32-bit form with the high word is the one every reader handles: h5py and
//! pynbody take any integer type, yt adds `NumPart_Total_HighWord << 32` when the
//! attribute is there. `NumFilesPerSnapshot` and the flags are C `int` in every GADGET.
//!
//! # Reading
//!
//! [`read()`] takes the type-1 bodies of a single-file GADGET snapshot: positions,
//! velocities and masses in float64 or float32 (GADGET's single-precision outputs),
//! masses from `Masses` or else `MassTable[1]`, ids in any non-negative integer type;
//! the step from `Parameters/OrreryStep` (0 when absent), the tree leaves from
//! `Orrery/TreeLeaves` (none when absent; uint64 and a leaf array when present). Only
//! variable-length string attributes of `Parameters` come back as
//! [`Snapshot::attributes`]: GADGET's own parameters (numbers, fixed-length strings) are
//! left out. A file of a multi-file
//! snapshot is refused, as is anything malformed ([`SimError::BadFile`] naming the group,
//! attribute or dataset).
//!
//! The HDF5 C library parses the file. It reports truncated and non-HDF5 files as errors
//! (tested), but a deliberately crafted file can still crash it: unlike the `.npz` reader,
//! this one is not hardened against hostile bytes.
//!
//! # Checked with Python readers
//!
//! Python 3.11.7, files written by this module against Debian's HDF5 1.10.8
//! (hdf5-metno 0.10.1):
//!
//! - **h5py 3.16.0** (bundling HDF5 2.0.0) with numpy 2.4.6: every group, attribute,
//!   dtype, shape and value as listed above, bit for bit. This is the automated check
//!   (`tests/python/check_snapshot.py`, run by the `python_reads_snapshots` test; CI sets
//!   `ORRERY_REQUIRE_H5PY=1`).
//! - **pynbody 2.8.0**, by hand: `pynbody.load("snap.hdf5")` gives a `GadgetHDFSnap` of
//!   n particles in the `dm` family; `f["pos"]`, `f["vel"]`, `f["mass"]` and `f["iord"]`
//!   equal our positions, velocities, masses and ids exactly. It warns that there is no
//!   unit information (it assumes GADGET's default units, positions in `Mpc a h**-1`) and
//!   fills `h`, `omegaM0` and `omegaL0` with its own defaults (it does not take
//!   `HubbleParam`/`Omega0` from the Header), so `f.properties["time"]` is its cosmic
//!   age, not our `Time`: read the time from `Header/Time` or our reader.
//! - **yt 4.4.3**, by hand: `yt.load("snap.hdf5")` gives a `GadgetHDF5Dataset`, turns
//!   cosmology off (OmegaLambda 0), takes `current_time` = our `Time` (in code units) and,
//!   because `BoxSize` is 0, infers the bounding box from the positions (and says that
//!   passing `bounding_box=` skips that pass). `all_data()["PartType1", "Coordinates"]`,
//!   `"Velocities"` and `"Masses"` equal ours exactly and in file order.
//!   `"ParticleIDs"` comes back as float64, so ids above 2^53 lose precision in yt.
//!
//! `BoxSize` stays 0 on purpose: given `BoxSize` = L (tried with 40), yt sets up a
//! periodic domain [0, L)^3, which bodies centred on the origin lie partly outside of
//! (`all_data()` still returns them unchanged, but yt's spatial index assumes the box).

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use ::hdf5::types::{FloatSize, IntSize, TypeDescriptor, VarLenAscii, VarLenUnicode};
use ::hdf5::{Attribute, Dataset, Group, H5Type};
use orrery_traverse::ic::PhaseSpace;

use super::{ColumnNames, Positions, Snapshot};
use crate::{Result, SimError, State};

/// How the datasets are named in error messages.
const NAMES: ColumnNames = ColumnNames {
    pos: "PartType1/Coordinates",
    vel: "PartType1/Velocities",
    mass: "PartType1/Masses",
    ids: "PartType1/ParticleIDs",
    time: "Header/Time",
};

/// The `Parameters` attribute that holds [`State::step`].
pub const STEP_ATTRIBUTE: &str = "OrreryStep";

/// The group of orrery's own datasets, beside GADGET's groups.
pub const ORRERY_GROUP: &str = "Orrery";

/// The dataset of [`ORRERY_GROUP`] that holds [`Snapshot::tree_leaves`].
pub const TREE_LEAVES_DATASET: &str = "TreeLeaves";

/// Writes `snapshot` to `path` as GADGET-4 HDF5, atomically (see [`super::write()`]).
///
/// # Errors
/// - [`State::check`]'s errors for an invalid state, [`SimError::InvalidArgument`] for
///   tree leaves that are not a leaf array (nothing is written either way);
/// - [`SimError::InvalidArgument`] for an attribute HDF5 cannot hold (an empty key, a NUL
///   in a key or value, or the reserved key [`STEP_ATTRIBUTE`]) or more than 2^32 - 1
///   bodies;
/// - [`SimError::Io`] when the file cannot be written (HDF5's message inside).
pub fn write(path: &Path, snapshot: &Snapshot) -> Result<()> {
    let state = &snapshot.state;
    state.check()?;
    super::check_write_leaves(snapshot)?;
    let n = u32::try_from(state.len()).map_err(|_| SimError::InvalidArgument {
        what: "bodies",
        reason: format!("{} bodies do not fit GADGET's 32-bit NumPart_ThisFile", state.len()),
    })?;
    let mut params = Vec::with_capacity(snapshot.attributes.len());
    for (key, value) in &snapshot.attributes {
        let invalid = |reason: String| SimError::InvalidArgument { what: "attributes", reason };
        if key.is_empty() || key == STEP_ATTRIBUTE || key == "." {
            return Err(invalid(format!("the key {key:?} cannot be an HDF5 Parameters attribute")));
        }
        let v = VarLenUnicode::from_str(value)
            .map_err(|_| invalid(format!("the value of {key:?} holds a NUL, which HDF5 strings cannot")))?;
        if key.contains('\0') {
            return Err(invalid(format!("the key {key:?} holds a NUL, which HDF5 names cannot")));
        }
        params.push((key.as_str(), v));
    }
    super::write_atomically(path, |tmp| {
        write_file(tmp, state, n, &params, snapshot.tree_leaves.as_deref())
            .map_err(|e| SimError::io(path, std::io::Error::other(format!("HDF5: {e}"))))
    })
}

fn write_file(
    tmp: &Path,
    state: &State,
    n: u32,
    params: &[(&str, VarLenUnicode)],
    leaves: Option<&[u64]>,
) -> ::hdf5::Result<()> {
    use ::hdf5::file::FileCloseDegree;
    let file = ::hdf5::File::with_options().with_fapl(|p| p.fclose_degree(FileCloseDegree::Strong)).create_excl(tmp)?;
    {
        let h = file.create_group("Header")?;
        let counts = [0, n, 0, 0, 0, 0];
        attr_vec(&h, "NumPart_ThisFile", &counts)?;
        attr_vec(&h, "NumPart_Total", &counts)?;
        attr_vec(&h, "NumPart_Total_HighWord", &[0u32; 6])?;
        attr_vec(&h, "MassTable", &[0f64; 6])?;
        for (name, v) in [
            ("Time", state.time),
            ("Redshift", 0.0),
            ("BoxSize", 0.0),
            ("Omega0", 0.0),
            ("OmegaLambda", 0.0),
            ("HubbleParam", 1.0),
        ] {
            attr_scalar(&h, name, &v)?;
        }
        for (name, v) in [
            ("NumFilesPerSnapshot", 1i32),
            ("Flag_Sfr", 0),
            ("Flag_Cooling", 0),
            ("Flag_StellarAge", 0),
            ("Flag_Metals", 0),
            ("Flag_Feedback", 0),
            ("Flag_DoublePrecision", 1),
        ] {
            attr_scalar(&h, name, &v)?;
        }

        let c = file.create_group("Config")?;
        attr_scalar(&c, "DOUBLEPRECISION", &1i32)?;
        attr_scalar(&c, "IDS_64BIT", &1i32)?;
        let version = concat!("orrery-sim ", env!("CARGO_PKG_VERSION"));
        attr_scalar(&c, "ORRERY_VERSION", &VarLenUnicode::from_str(version).unwrap_or_default())?;

        let p = file.create_group("Parameters")?;
        for (key, value) in params {
            attr_scalar(&p, key, value)?;
        }
        attr_scalar(&p, STEP_ATTRIBUTE, &state.step)?;

        let t = file.create_group("PartType1")?;
        let b = &state.bodies;
        let n = n as usize;
        let rows = |c: [&Vec<f64>; 3]| (0..n).flat_map(|i| [c[0][i], c[1][i], c[2][i]]).collect::<Vec<f64>>();
        t.new_dataset::<f64>().shape([n, 3]).create("Coordinates")?.write_raw(&rows([&b.x, &b.y, &b.z])[..])?;
        t.new_dataset::<f64>().shape([n, 3]).create("Velocities")?.write_raw(&rows([&b.vx, &b.vy, &b.vz])[..])?;
        t.new_dataset::<f64>().shape([n]).create("Masses")?.write_raw(&b.mass[..])?;
        t.new_dataset::<u64>().shape([n]).create("ParticleIDs")?.write_raw(&state.ids[..])?;

        if let Some(leaves) = leaves {
            let o = file.create_group(ORRERY_GROUP)?;
            o.new_dataset::<u64>().shape([leaves.len()]).create(TREE_LEAVES_DATASET)?.write_raw(leaves)?;
        }
    }
    file.close()
}

fn attr_vec<T: H5Type>(g: &Group, name: &str, values: &[T]) -> ::hdf5::Result<()> {
    g.new_attr::<T>().shape([values.len()]).create(name)?.write_raw(values)
}

fn attr_scalar<T: H5Type>(g: &Group, name: &str, value: &T) -> ::hdf5::Result<()> {
    g.new_attr::<T>().shape(()).create(name)?.write_scalar(value)
}

/// Reads a GADGET HDF5 snapshot's type-1 bodies, validating every field used.
///
/// # Errors
/// [`SimError::Io`] when the file cannot be opened at all; [`SimError::BadFile`] naming
/// the group, attribute or dataset for anything wrong inside.
pub fn read(path: &Path) -> Result<Snapshot> {
    let r = Reader::open(path)?;
    let n = r.count()?;
    let pt = r.group("PartType1")?;
    let [x, y, z] = r.rows3(&pt, "Coordinates", n)?;
    let [vx, vy, vz] = r.rows3(&pt, "Velocities", n)?;
    let mass = r.masses(&pt, n)?;
    let ids = r.ids(&pt, n)?;
    let time = r.header_f64("Time")?;
    let (attributes, step) = r.parameters()?;
    let tree_leaves = r.tree_leaves()?;
    let state = State { bodies: PhaseSpace { x, y, z, vx, vy, vz, mass }, ids, time, step };
    super::check_read(&state, path, &NAMES)?;
    Ok(Snapshot { state, tree_leaves, attributes })
}

/// Reads `PartType1/Coordinates` and the masses (from `Masses` or the `MassTable`).
pub(crate) fn read_positions(path: &Path) -> Result<Positions> {
    let r = Reader::open(path)?;
    let n = r.count()?;
    let pt = r.group("PartType1")?;
    let positions = r.rows3(&pt, "Coordinates", n)?;
    let masses = Some(r.masses(&pt, n)?);
    let p = Positions { positions, masses };
    super::check_positions(&p, path, NAMES.pos, NAMES.mass)?;
    Ok(p)
}

/// An open file and its path, for error messages.
struct Reader<'a> {
    path: &'a Path,
    file: ::hdf5::File,
}

/// How a numeric HDF5 type is read.
enum Num {
    Float,
    Signed,
    Unsigned,
}

fn num_kind(t: &TypeDescriptor) -> Option<Num> {
    match t {
        TypeDescriptor::Float(_) => Some(Num::Float),
        TypeDescriptor::Integer(_) => Some(Num::Signed),
        TypeDescriptor::Unsigned(_) => Some(Num::Unsigned),
        _ => None,
    }
}

impl<'a> Reader<'a> {
    fn open(path: &'a Path) -> Result<Self> {
        // Open errors that the OS reports (missing file, no permission) are I/O errors;
        // HDF5 folds everything into its own error, so look first.
        std::fs::metadata(path).map_err(|e| SimError::io(path, e))?;
        let file =
            ::hdf5::File::open(path).map_err(|e| SimError::bad_file(path, format!("not a readable HDF5 file: {e}")))?;
        Ok(Self { path, file })
    }

    fn bad(&self, reason: impl Into<String>) -> SimError {
        SimError::bad_file(self.path, reason)
    }

    fn group(&self, name: &str) -> Result<Group> {
        if !self.file.link_exists(name) {
            return Err(self.bad(format!("group `{name}` is missing")));
        }
        self.file.group(name).map_err(|e| self.bad(format!("`{name}` is not a readable group: {e}")))
    }

    fn header_attr(&self, name: &str) -> Result<(Attribute, TypeDescriptor, Vec<usize>)> {
        let h = self.group("Header")?;
        let attr = h.attr(name).map_err(|_| self.bad(format!("Header attribute `{name}` is missing")))?;
        let t = attr
            .dtype()
            .and_then(|d| d.to_descriptor())
            .map_err(|e| self.bad(format!("Header attribute `{name}` has an unreadable type: {e}")))?;
        let shape = attr.shape();
        Ok((attr, t, shape))
    }

    /// A Header attribute of 6 non-negative integers (`NumPart_*`).
    fn header_counts(&self, name: &str) -> Result<[u64; 6]> {
        let (attr, t, shape) = self.header_attr(name)?;
        let what = format!("Header attribute `{name}`");
        if shape != [6] {
            return Err(self.bad(format!("{what} has shape {shape:?}, expected [6]")));
        }
        let v: Vec<u64> = match num_kind(&t) {
            Some(Num::Unsigned) => attr.read_raw::<u64>().map_err(|e| self.bad(format!("{what}: {e}")))?,
            Some(Num::Signed) => {
                let v = attr.read_raw::<i64>().map_err(|e| self.bad(format!("{what}: {e}")))?;
                if let Some(i) = v.iter().position(|&c| c < 0) {
                    return Err(self.bad(format!("{what}[{i}] is {}, counts must be non-negative", v[i])));
                }
                v.into_iter().map(i64::cast_unsigned).collect()
            }
            _ => return Err(self.bad(format!("{what} has type {t}, expected an integer type"))),
        };
        v.try_into().map_err(|_| self.bad(format!("{what} does not hold 6 entries")))
    }

    /// A float Header attribute, scalar (or of one entry, as some writers store scalars).
    fn header_f64(&self, name: &str) -> Result<f64> {
        let (attr, t, shape) = self.header_attr(name)?;
        let what = format!("Header attribute `{name}`");
        if !(shape.is_empty() || shape == [1]) {
            return Err(self.bad(format!("{what} has shape {shape:?}, expected a scalar")));
        }
        if !matches!(t, TypeDescriptor::Float(_)) {
            return Err(self.bad(format!("{what} has type {t}, expected float64")));
        }
        let v = attr.read_raw::<f64>().map_err(|e| self.bad(format!("{what}: {e}")))?;
        v.first().copied().ok_or_else(|| self.bad(format!("{what} is empty")))
    }

    fn mass_table(&self) -> Result<[f64; 6]> {
        let (attr, t, shape) = self.header_attr("MassTable")?;
        let what = "Header attribute `MassTable`";
        if shape != [6] || !matches!(t, TypeDescriptor::Float(_)) {
            return Err(self.bad(format!("{what} has type {t} and shape {shape:?}, expected float64 [6]")));
        }
        let v = attr.read_raw::<f64>().map_err(|e| self.bad(format!("{what}: {e}")))?;
        v.try_into().map_err(|_| self.bad(format!("{what} does not hold 6 entries")))
    }

    /// The number of type-1 bodies, checked against the totals (a file of a multi-file
    /// snapshot is refused).
    fn count(&self) -> Result<usize> {
        let this = self.header_counts("NumPart_ThisFile")?;
        let total = self.header_counts("NumPart_Total")?;
        // GADGET-4 proper writes uint64 totals and no high word.
        let total1 = match self.header_attr("NumPart_Total_HighWord") {
            Ok(_) => (self.header_counts("NumPart_Total_HighWord")?[1] << 32) | total[1],
            Err(_) => total[1],
        };
        let files = self.header_int("NumFilesPerSnapshot")?;
        if files.is_some_and(|f| f != 1) || total1 != this[1] {
            return Err(self.bad(format!(
                "one file of a multi-file snapshot (NumFilesPerSnapshot {}, type-1 bodies in this file {}, in all {total1}); \
                 only single-file snapshots are read",
                files.map_or("absent".to_owned(), |f| f.to_string()),
                this[1]
            )));
        }
        if this[1] == 0 {
            return Err(self.bad("Header NumPart_ThisFile[1] is 0: the file holds no type-1 bodies"));
        }
        usize::try_from(this[1]).map_err(|_| self.bad("Header NumPart_ThisFile[1] does not fit in memory"))
    }

    /// An optional integer scalar Header attribute.
    fn header_int(&self, name: &str) -> Result<Option<i64>> {
        let Ok((attr, t, shape)) = self.header_attr(name) else { return Ok(None) };
        let what = format!("Header attribute `{name}`");
        if !(shape.is_empty() || shape == [1]) || !matches!(num_kind(&t), Some(Num::Signed | Num::Unsigned)) {
            return Err(self.bad(format!("{what} has type {t} and shape {shape:?}, expected an integer scalar")));
        }
        let v = attr.read_raw::<i64>().map_err(|e| self.bad(format!("{what}: {e}")))?;
        Ok(v.first().copied())
    }

    fn dataset(&self, group: &Group, name: &str) -> Result<Option<(Dataset, TypeDescriptor, Vec<usize>)>> {
        if !group.link_exists(name) {
            return Ok(None);
        }
        let what = format!("{}/{name}", group.name().trim_start_matches('/'));
        let ds = group.dataset(name).map_err(|e| self.bad(format!("`{what}` is not a readable dataset: {e}")))?;
        let t = ds
            .dtype()
            .and_then(|d| d.to_descriptor())
            .map_err(|e| self.bad(format!("`{what}` has an unreadable type: {e}")))?;
        let shape = ds.shape();
        Ok(Some((ds, t, shape)))
    }

    fn required(&self, group: &Group, name: &str) -> Result<(Dataset, TypeDescriptor, Vec<usize>)> {
        self.dataset(group, name)?
            .ok_or_else(|| self.bad(format!("dataset `{}/{name}` is missing", group.name().trim_start_matches('/'))))
    }

    /// A float dataset's values, after the dtype and shape checks.
    fn floats(&self, what: &str, ds: &Dataset, t: &TypeDescriptor) -> Result<Vec<f64>> {
        match t {
            TypeDescriptor::Float(FloatSize::U8) => ds.read_raw::<f64>(),
            TypeDescriptor::Float(FloatSize::U4) => {
                ds.read_raw::<f32>().map(|v| v.into_iter().map(f64::from).collect())
            }
            _ => return Err(self.bad(format!("`{what}` has type {t}, expected float64 (or float32)"))),
        }
        .map_err(|e| self.bad(format!("`{what}` cannot be read: {e}")))
    }

    fn rows3(&self, group: &Group, name: &str, n: usize) -> Result<[Vec<f64>; 3]> {
        let (ds, t, shape) = self.required(group, name)?;
        let what = format!("PartType1/{name}");
        if shape.len() != 2 || shape[1] != 3 {
            return Err(self.bad(format!("`{what}` has shape {shape:?}, expected [n, 3]")));
        }
        if shape[0] != n {
            return Err(self.bad(format!("`{what}` has {} rows, Header NumPart_ThisFile[1] is {n}", shape[0])));
        }
        let flat = self.floats(&what, &ds, &t)?;
        if flat.len() != 3 * n {
            return Err(self.bad(format!("`{what}` returned {} values, expected {}", flat.len(), 3 * n)));
        }
        Ok([0, 1, 2].map(|j| (0..n).map(|i| flat[3 * i + j]).collect()))
    }

    fn column_shape(&self, what: &str, shape: &[usize], n: usize) -> Result<()> {
        match shape {
            [rows] if *rows == n => Ok(()),
            [rows] => Err(self.bad(format!("`{what}` has {rows} rows, Header NumPart_ThisFile[1] is {n}"))),
            _ => Err(self.bad(format!("`{what}` has shape {shape:?}, expected [n]"))),
        }
    }

    fn masses(&self, group: &Group, n: usize) -> Result<Vec<f64>> {
        let what = NAMES.mass;
        if let Some((ds, t, shape)) = self.dataset(group, "Masses")? {
            self.column_shape(what, &shape, n)?;
            let m = self.floats(what, &ds, &t)?;
            if m.len() != n {
                return Err(self.bad(format!("`{what}` returned {} values, expected {n}", m.len())));
            }
            return Ok(m);
        }
        let table = self.mass_table()?[1];
        if table > 0.0 && table.is_finite() {
            Ok(vec![table; n])
        } else {
            Err(self.bad(format!("dataset `{what}` is missing and Header MassTable[1] is {table}")))
        }
    }

    fn ids(&self, group: &Group, n: usize) -> Result<Vec<u64>> {
        let what = NAMES.ids;
        let (ds, t, shape) = self.required(group, "ParticleIDs")?;
        self.column_shape(what, &shape, n)?;
        let ids = match (num_kind(&t), &t) {
            (Some(Num::Unsigned), _) => ds.read_raw::<u64>().map_err(|e| self.bad(format!("`{what}`: {e}")))?,
            (Some(Num::Signed), TypeDescriptor::Integer(IntSize::U4 | IntSize::U8)) => {
                let v = ds.read_raw::<i64>().map_err(|e| self.bad(format!("`{what}`: {e}")))?;
                if let Some(i) = v.iter().position(|&id| id < 0) {
                    return Err(self.bad(format!("`{what}` entry {i} is {}, ids must be non-negative", v[i])));
                }
                v.into_iter().map(i64::cast_unsigned).collect()
            }
            _ => return Err(self.bad(format!("`{what}` has type {t}, expected uint64 (or another integer type)"))),
        };
        if ids.len() == n { Ok(ids) } else { Err(self.bad(format!("`{what}` returned {} values", ids.len()))) }
    }

    /// `Orrery/TreeLeaves`, checked; `None` when the group or the dataset is absent.
    fn tree_leaves(&self) -> Result<Option<Vec<u64>>> {
        if !self.file.link_exists(ORRERY_GROUP) {
            return Ok(None);
        }
        let o = self.group(ORRERY_GROUP)?;
        let Some((ds, t, shape)) = self.dataset(&o, TREE_LEAVES_DATASET)? else { return Ok(None) };
        let what = format!("dataset `{ORRERY_GROUP}/{TREE_LEAVES_DATASET}`");
        if t != TypeDescriptor::Unsigned(IntSize::U8) {
            return Err(self.bad(format!("{what} has type {t}, expected uint64")));
        }
        let [len] = shape[..] else {
            return Err(self.bad(format!("{what} has shape {shape:?}, expected [L + 1]")));
        };
        let keys = ds.read_raw::<u64>().map_err(|e| self.bad(format!("{what} cannot be read: {e}")))?;
        if keys.len() != len {
            return Err(self.bad(format!("{what} returned {} values, expected {len}", keys.len())));
        }
        super::check_read_leaves(&keys, self.path, &what)?;
        Ok(Some(keys))
    }

    /// The string attributes of `Parameters` and the step; both empty / 0 when the group
    /// is absent.
    fn parameters(&self) -> Result<(BTreeMap<String, String>, u64)> {
        let mut out = BTreeMap::new();
        if !self.file.link_exists("Parameters") {
            return Ok((out, 0));
        }
        let p = self.group("Parameters")?;
        let names = p.attr_names().map_err(|e| self.bad(format!("Parameters attributes cannot be listed: {e}")))?;
        let mut step = 0;
        for name in names {
            let what = format!("Parameters attribute `{name}`");
            let attr = p.attr(&name).map_err(|e| self.bad(format!("{what}: {e}")))?;
            let t = attr.dtype().and_then(|d| d.to_descriptor());
            let scalar = attr.shape().is_empty();
            if name == STEP_ATTRIBUTE {
                if !(scalar && matches!(t, Ok(TypeDescriptor::Unsigned(_)))) {
                    return Err(self.bad(format!("{what} must be an unsigned integer scalar")));
                }
                step = attr.read_scalar::<u64>().map_err(|e| self.bad(format!("{what}: {e}")))?;
                continue;
            }
            let value = match t {
                Ok(TypeDescriptor::VarLenUnicode) if scalar => {
                    attr.read_scalar::<VarLenUnicode>().map(|s| s.as_str().to_owned())
                }
                Ok(TypeDescriptor::VarLenAscii) if scalar => {
                    attr.read_scalar::<VarLenAscii>().map(|s| s.as_str().to_owned())
                }
                _ => continue, // GADGET's own numeric and fixed-length parameters
            };
            out.insert(name, value.map_err(|e| self.bad(format!("{what}: {e}")))?);
        }
        Ok((out, step))
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::tests::{assert_bit_exact, entries, sample_snapshot};
    use super::super::{self as snapshot, Format};
    use super::*;

    #[test]
    fn hdf5_round_trip_is_bit_exact() {
        let dir = tempfile::tempdir().unwrap();
        for n in [1, 2, 17, 1000] {
            let snap = sample_snapshot(n);
            let path = dir.path().join(format!("s{n}.hdf5"));
            snapshot::write(&path, &snap, Format::Hdf5).unwrap();
            assert_bit_exact(&snapshot::read(&path).unwrap(), &snap);
            let p = snapshot::read_positions(&path).unwrap();
            let b = &snap.state.bodies;
            assert_eq!(p.positions, [b.x.clone(), b.y.clone(), b.z.clone()]);
            assert_eq!(p.masses.as_deref(), Some(&b.mass[..]));
        }
        // Overwrite in place; `.h5` and a misnamed file read the same.
        let snap = sample_snapshot(3).with_attribute("dt", "0.5");
        snapshot::write(dir.path().join("s1.hdf5"), &snap, Format::Hdf5).unwrap();
        assert_bit_exact(&snapshot::read(dir.path().join("s1.hdf5")).unwrap(), &snap);
        fs::copy(dir.path().join("s1.hdf5"), dir.path().join("s1.snap")).unwrap();
        assert_bit_exact(&snapshot::read(dir.path().join("s1.snap")).unwrap(), &snap);
        fs::remove_file(dir.path().join("s1.snap")).unwrap();
        assert_eq!(entries(dir.path()), ["s1.hdf5", "s1000.hdf5", "s17.hdf5", "s2.hdf5"]);
    }

    #[test]
    fn hdf5_header_is_gadget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.hdf5");
        snapshot::write(&path, &sample_snapshot(5), Format::Hdf5).unwrap();
        let f = ::hdf5::File::open(&path).unwrap();
        let h = f.group("Header").unwrap();
        let desc = |name: &str| h.attr(name).unwrap().dtype().unwrap().to_descriptor().unwrap();
        for name in ["NumPart_ThisFile", "NumPart_Total", "NumPart_Total_HighWord"] {
            assert_eq!(desc(name), TypeDescriptor::Unsigned(IntSize::U4), "{name}");
        }
        assert_eq!(h.attr("NumPart_Total").unwrap().read_raw::<u32>().unwrap(), [0, 5, 0, 0, 0, 0]);
        assert_eq!(h.attr("MassTable").unwrap().read_raw::<f64>().unwrap(), [0.0; 6]);
        assert_eq!(desc("NumFilesPerSnapshot"), TypeDescriptor::Integer(IntSize::U4));
        assert_eq!(h.attr("Flag_DoublePrecision").unwrap().read_scalar::<i32>().unwrap(), 1);
        assert_eq!(h.attr("HubbleParam").unwrap().read_scalar::<f64>().unwrap(), 1.0);
        let t = f.group("PartType1").unwrap();
        assert_eq!(t.dataset("Coordinates").unwrap().shape(), [5, 3]);
        let ids = t.dataset("ParticleIDs").unwrap().dtype().unwrap().to_descriptor().unwrap();
        assert_eq!(ids, TypeDescriptor::Unsigned(IntSize::U8));
        assert!(f.group("Config").is_ok());
        let p = f.group("Parameters").unwrap();
        assert_eq!(p.attr(STEP_ATTRIBUTE).unwrap().read_scalar::<u64>().unwrap(), 1_234_567_890_123);
    }

    #[test]
    fn hdf5_refuses_attributes_it_cannot_hold() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.hdf5");
        for (k, v) in [("", "x"), (STEP_ATTRIBUTE, "3"), ("nul", "a\0b"), ("a\0b", "x")] {
            let snap = sample_snapshot(2).with_attribute(k, v);
            let e = snapshot::write(&path, &snap, Format::Hdf5).unwrap_err();
            assert!(matches!(e, SimError::InvalidArgument { what: "attributes", .. }), "{k:?}: {e}");
        }
        assert!(entries(dir.path()).is_empty());
        // npz holds them all.
        let snap = sample_snapshot(2).with_attribute("", "x").with_attribute("nul", "a\0b");
        snapshot::write(dir.path().join("a.npz"), &snap, Format::Npz).unwrap();
        assert_bit_exact(&snapshot::read(dir.path().join("a.npz")).unwrap(), &snap);
    }

    /// A valid file, changed by `spoil`, must read as `BadFile` containing `want`.
    fn spoiled(dir: &Path, spoil: impl FnOnce(&::hdf5::File), want: &str) {
        let path = dir.join("bad.hdf5");
        let _ = fs::remove_file(&path);
        snapshot::write(&path, &sample_snapshot(4), Format::Hdf5).unwrap();
        {
            let f = ::hdf5::File::open_rw(&path).unwrap();
            spoil(&f);
        }
        let e = snapshot::read(&path).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, SimError::BadFile { .. }), "{msg}");
        assert!(msg.contains(want), "want {want:?} in {msg:?}");
        assert!(!msg.contains('\n'), "one line: {msg}");
    }

    fn replace<T: H5Type>(f: &::hdf5::File, name: &str, shape: &[usize], data: &[T]) {
        f.unlink(name).unwrap();
        f.new_dataset::<T>().shape(shape).create(name).unwrap().write_raw(data).unwrap();
    }

    #[test]
    fn hdf5_bad_headers_name_the_attribute() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let header = |f: &::hdf5::File| f.group("Header").unwrap();
        spoiled(
            d,
            |f| header(f).delete_attr("NumPart_ThisFile").unwrap(),
            "Header attribute `NumPart_ThisFile` is missing",
        );
        spoiled(d, |f| header(f).delete_attr("Time").unwrap(), "Header attribute `Time` is missing");
        spoiled(
            d,
            |f| {
                let h = header(f);
                h.delete_attr("Time").unwrap();
                h.new_attr::<i32>().shape(()).create("Time").unwrap().write_scalar(&1).unwrap();
            },
            "Header attribute `Time` has type int32, expected float64",
        );
        spoiled(
            d,
            |f| {
                let h = header(f);
                h.delete_attr("NumPart_Total").unwrap();
                attr_vec(&h, "NumPart_Total", &[0u32, 8, 0, 0, 0, 0]).unwrap();
            },
            "multi-file snapshot",
        );
        spoiled(
            d,
            |f| {
                let h = header(f);
                h.delete_attr("NumPart_ThisFile").unwrap();
                attr_vec(&h, "NumPart_ThisFile", &[0u32, 4, 0]).unwrap();
            },
            "Header attribute `NumPart_ThisFile` has shape [3], expected [6]",
        );
    }

    #[test]
    fn hdf5_bad_datasets_name_the_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        spoiled(d, |f| f.unlink("PartType1").unwrap(), "group `PartType1` is missing");
        spoiled(d, |f| f.unlink("Header").unwrap(), "group `Header` is missing");
        spoiled(d, |f| f.unlink("PartType1/Velocities").unwrap(), "dataset `PartType1/Velocities` is missing");
        spoiled(
            d,
            |f| replace(f, "PartType1/Coordinates", &[4, 2], &[0f64; 8]),
            "`PartType1/Coordinates` has shape [4, 2], expected [n, 3]",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/Coordinates", &[3, 3], &[0f64; 9]),
            "`PartType1/Coordinates` has 3 rows, Header NumPart_ThisFile[1] is 4",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/Coordinates", &[4, 3], &[0i32; 12]),
            "`PartType1/Coordinates` has type int32, expected float64",
        );
        spoiled(d, |f| replace(f, "PartType1/Masses", &[5], &[1f64; 5]), "`PartType1/Masses` has 5 rows");
        spoiled(
            d,
            |f| replace(f, "PartType1/Masses", &[4, 1], &[1f64; 4]),
            "`PartType1/Masses` has shape [4, 1], expected [n]",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/Masses", &[4], &[1.0, 1.0, 0.0, 1.0]),
            "`PartType1/Masses`: body 2 has mass 0",
        );
        spoiled(
            d,
            |f| f.unlink("PartType1/Masses").unwrap(),
            "dataset `PartType1/Masses` is missing and Header MassTable[1] is 0",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/ParticleIDs", &[4], &[1f64; 4]),
            "`PartType1/ParticleIDs` has type float64, expected uint64",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/ParticleIDs", &[4], &[1i64, -2, 3, 4]),
            "`PartType1/ParticleIDs` entry 1 is -2",
        );
        let mut nan = [0f64; 12];
        nan[7] = f64::NAN;
        spoiled(
            d,
            |f| replace(f, "PartType1/Coordinates", &[4, 3], &nan),
            "`PartType1/Coordinates` row 2 column 1 is NaN",
        );
        spoiled(
            d,
            |f| replace(f, "PartType1/Velocities", &[4, 3], &nan),
            "`PartType1/Velocities` row 2 column 1 is NaN",
        );
        spoiled(
            d,
            |f| {
                let h = f.group("Header").unwrap();
                h.delete_attr("Time").unwrap();
                attr_scalar(&h, "Time", &f64::INFINITY).unwrap();
            },
            "`Header/Time` inf is not finite",
        );
        spoiled(
            d,
            |f| {
                let p = f.group("Parameters").unwrap();
                p.delete_attr(STEP_ATTRIBUTE).unwrap();
                attr_scalar(&p, STEP_ATTRIBUTE, &1.5f64).unwrap();
            },
            "Parameters attribute `OrreryStep` must be an unsigned integer scalar",
        );
        let leaves = "Orrery/TreeLeaves";
        spoiled(
            d,
            |f| replace(f, leaves, &[4], &[0u64, 1 << 62, 1 << 61, 1 << 63]),
            "dataset `Orrery/TreeLeaves` is not a tree's leaf array: entry 1:",
        );
        spoiled(
            d,
            |f| replace(f, leaves, &[1], &[0u64]),
            "dataset `Orrery/TreeLeaves` is not a tree's leaf array: entry 0: a leaf array needs at least 2 keys",
        );
        spoiled(
            d,
            |f| replace(f, leaves, &[2], &[0i64, 1 << 62]),
            "dataset `Orrery/TreeLeaves` has type int64, expected uint64",
        );
        spoiled(
            d,
            |f| replace(f, leaves, &[1, 2], &[0u64, 1 << 63]),
            "dataset `Orrery/TreeLeaves` has shape [1, 2], expected [L + 1]",
        );
    }

    #[test]
    fn hdf5_reads_gadget_variants() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.hdf5");
        let snap = sample_snapshot(4);
        snapshot::write(&path, &snap, Format::Hdf5).unwrap();
        {
            // Single precision, uint32 ids, a MassTable instead of Masses, no high word,
            // no Parameters: what a GADGET run of equal-mass bodies may write.
            let f = ::hdf5::File::open_rw(&path).unwrap();
            let h = f.group("Header").unwrap();
            h.delete_attr("NumPart_Total_HighWord").unwrap();
            h.delete_attr("MassTable").unwrap();
            attr_vec(&h, "MassTable", &[0.0, 0.25, 0.0, 0.0, 0.0, 0.0]).unwrap();
            f.unlink("PartType1/Masses").unwrap();
            f.unlink("Parameters").unwrap();
            replace(&f, "PartType1/Coordinates", &[4, 3], &[0.5f32; 12]);
            replace(&f, "PartType1/ParticleIDs", &[4], &[9u32, 8, 7, 6]);
        }
        let s = snapshot::read(&path).unwrap();
        assert_eq!(s.state.bodies.x, [0.5; 4]);
        assert_eq!(s.state.bodies.mass, [0.25; 4]);
        assert_eq!(s.state.ids, [9, 8, 7, 6]);
        assert_eq!(s.state.bodies.vx, snap.state.bodies.vx);
        assert_eq!((s.state.step, s.attributes.len()), (0, 0));
        assert_eq!(s.tree_leaves, snap.tree_leaves);
        // Without the Orrery group (GADGET's own files): no leaves.
        ::hdf5::File::open_rw(&path).unwrap().unlink(ORRERY_GROUP).unwrap();
        assert_eq!(snapshot::read(&path).unwrap().tree_leaves, None);
        assert_eq!(snapshot::read_positions(&path).unwrap().masses, Some(vec![0.25; 4]));
    }

    /// Truncated copies and garbage: errors, not crashes.
    #[test]
    fn hdf5_truncated_and_garbage_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.hdf5");
        snapshot::write(&good, &sample_snapshot(50), Format::Hdf5).unwrap();
        let bytes = fs::read(&good).unwrap();
        let path = dir.path().join("t.hdf5");
        let mut lens: Vec<usize> = (0..64).chain((64..bytes.len()).step_by(97)).collect();
        lens.push(bytes.len() - 1);
        for len in lens {
            fs::write(&path, &bytes[..len]).unwrap();
            let e = snapshot::read(&path).unwrap_err();
            assert!(matches!(e, SimError::BadFile { .. }) && !e.to_string().contains('\n'), "prefix {len}: {e}");
            assert!(snapshot::read_positions(&path).is_err(), "prefix {len}");
        }
        let mut junk = b"\x89HDF\r\n\x1a\n".to_vec();
        junk.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
        fs::write(&path, &junk).unwrap();
        assert!(matches!(snapshot::read(&path).unwrap_err(), SimError::BadFile { .. }));
        fs::write(&path, b"not hdf5 at all").unwrap();
        let e = snapshot::read(&path).unwrap_err();
        assert!(e.to_string().contains("not a readable HDF5 file"), "{e}");
    }
}
