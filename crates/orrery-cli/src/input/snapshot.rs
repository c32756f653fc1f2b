//! Points from a snapshot file: the positions of an orrery (or GADGET) snapshot, read by
//! [`orrery_sim::snapshot::read_positions`]; `.npz` always, `.hdf5` / `.h5` when the CLI
//! is built with the `hdf5` feature.
//!
//! Snapshots hold float64 positions (float32 ones are widened by the reader), so the
//! points are [`Coords::F64`]; masses, velocities and the rest are not used here. The
//! reader validates what it reads (finite positions, at least one body), and its errors
//! become one line without the file's name, which the caller adds.

use std::path::Path;

use anyhow::{anyhow, bail};
use orrery_sim::SimError;

use super::Coords;
use super::npy::io_reason;

/// Reads the positions of a snapshot. Errors do not name the file (the caller adds it).
///
/// # Errors
/// The file cannot be opened, is not a readable snapshot (truncated, corrupt, a missing
/// or malformed position member, a NaN or an infinity), holds more points than 32-bit
/// indices, or is HDF5 and the CLI was built without the `hdf5` feature.
pub fn read(path: &Path) -> anyhow::Result<Coords> {
    let p = orrery_sim::snapshot::read_positions(path).map_err(reason)?;
    if u32::try_from(p.len()).is_err() {
        bail!("{} points: more than 32-bit indices hold ({})", p.len(), u32::MAX);
    }
    Ok(Coords::F64(p.positions))
}

/// The reader's error as one reason without the path.
fn reason(e: SimError) -> anyhow::Error {
    match e {
        SimError::BadFile { reason, .. } => anyhow!(reason),
        SimError::Io { source, .. } => anyhow!("cannot open: {}", io_reason(&source)),
        #[cfg(not(feature = "hdf5"))]
        SimError::InvalidArgument { what: "snapshot format", .. } => anyhow!(
            "an HDF5 snapshot, and this orrery was built without HDF5 support: rebuild it with \
             `--features hdf5` (which needs the HDF5 C library, e.g. libhdf5-dev)"
        ),
        other => anyhow!(other),
    }
}
