//! The points that `tree` and `balltree` work on: a file (`--input FILE`) or a generated
//! set (`--generate MODEL --n N --seed S`), and the precision they are computed in.
//!
//! Files are read by extension ([`read_file`]): `.npy` is read here ([`npy`]), snapshots
//! (`.npz`, and `.hdf5` / `.h5` with the `hdf5` feature) by orrery-sim ([`snapshot`]).
//! Every problem with a file is one error naming the file and the problem.

pub mod generate;
pub mod npy;
pub mod snapshot;

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use clap::ValueEnum;
use orrery_core::{DType, Real};

pub use generate::Model;

/// Where the points come from (exactly one of `--input` and `--generate`).
#[derive(Debug, Clone, clap::Args)]
#[group(skip)]
pub struct PointArgs {
    /// Read the points from FILE: a .npy array of shape (n, 3), float32 or float64, or
    /// the positions of a snapshot (.npz; .hdf5 / .h5 when built with `--features hdf5`).
    #[arg(long, value_name = "FILE", required_unless_present = "generate", conflicts_with = "generate")]
    pub input: Option<PathBuf>,
    /// Generate the points from a seeded model instead of reading a file.
    #[arg(long, value_enum, value_name = "MODEL", requires = "n")]
    pub generate: Option<Model>,
    /// Number of points to generate (with --generate).
    #[arg(long, value_name = "N", requires = "generate", value_parser = clap::value_parser!(u64).range(1..=u64::from(u32::MAX)))]
    pub n: Option<u64>,
    /// Seed of the generated set (with --generate).
    #[arg(long, value_name = "S", default_value_t = 42, requires = "generate")]
    pub seed: u64,
    /// Precision to compute in: the input's own (auto; f64 is rounded to f32 on
    /// executors that run no f64 tree kernels, such as wgpu), or f32 / f64.
    #[arg(long, value_enum, default_value_t = Precision::Auto)]
    pub precision: Precision,
}

/// The precision `--precision` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum Precision {
    /// The input's precision, lowered to f32 where the executor has no f64 kernels.
    #[default]
    Auto,
    /// Single precision.
    F32,
    /// Double precision.
    F64,
}

/// Coordinates as three columns (structure of arrays) of one precision.
#[derive(Debug, Clone, PartialEq)]
pub enum Coords {
    /// Single precision.
    F32([Vec<f32>; 3]),
    /// Double precision.
    F64([Vec<f64>; 3]),
}

impl Coords {
    /// Number of points.
    pub fn len(&self) -> usize {
        match self {
            Coords::F32(c) => c[0].len(),
            Coords::F64(c) => c[0].len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The precision of the values.
    pub fn dtype(&self) -> DType {
        match self {
            Coords::F32(_) => DType::F32,
            Coords::F64(_) => DType::F64,
        }
    }

    /// The same points in `dtype` (rounded to the nearest f32, or widened exactly).
    #[must_use]
    pub fn converted(self, dtype: DType) -> Coords {
        match (self, dtype) {
            (Coords::F64(c), DType::F32) => Coords::F32(c.map(|v| cast(&v))),
            (Coords::F32(c), DType::F64) => Coords::F64(c.map(|v| cast(&v))),
            (same, _) => same,
        }
    }
}

fn cast<A: Real, B: Real>(values: &[A]) -> Vec<B> {
    values.iter().map(|&v| <B as Real>::from_f64(v.into())).collect()
}

/// Points and where they came from.
#[derive(Debug, Clone)]
pub struct Points {
    /// The coordinates.
    pub coords: Coords,
    /// `points.npy` or `plummer n=1000 seed=42`, for reports.
    pub origin: String,
}

impl PointArgs {
    /// Reads or generates the points.
    ///
    /// # Errors
    /// One error naming the file and its problem, or the generator's error.
    pub fn load(&self) -> anyhow::Result<Points> {
        if let Some(path) = &self.input {
            let coords = read_file(path).map_err(|e| anyhow!("{}: {e:#}", path.display()))?;
            return Ok(Points { coords, origin: path.display().to_string() });
        }
        let (Some(model), Some(n)) = (self.generate, self.n) else {
            bail!("give --input FILE or --generate MODEL --n N");
        };
        let n = usize::try_from(n)?;
        let coords = generate::generate(model, n, self.seed)?;
        Ok(Points { coords, origin: format!("{} n={n} seed={}", model.name(), self.seed) })
    }

    /// The precision to compute in for an executor that does (`f64_kernels`) or does not
    /// run f64 kernels, and a note when the input is rounded for that reason.
    pub fn precision(&self, input: DType, f64_kernels: bool) -> (DType, Option<String>) {
        match self.precision {
            Precision::F32 => (DType::F32, None),
            Precision::F64 => (DType::F64, None),
            Precision::Auto if input == DType::F64 && !f64_kernels => {
                (DType::F32, Some("f64 input rounded to f32: the executor runs no f64 tree kernels".to_owned()))
            }
            Precision::Auto => (input, None),
        }
    }
}

/// The files `--input` reads, for errors.
const EXPECTED: &str = "expected a .npy array of shape (n, 3) or a .npz / .hdf5 / .h5 snapshot";

/// Reads the points of a file, by its extension.
///
/// # Errors
/// An unknown or unsupported extension; the reader's errors.
pub fn read_file(path: &Path) -> anyhow::Result<Coords> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("npy") => npy::read(path),
        Some("npz" | "hdf5" | "h5") => snapshot::read(path),
        Some(ext) => bail!("unknown file type .{ext}: {EXPECTED}"),
        None => bail!("no file extension: {EXPECTED}"),
    }
}
