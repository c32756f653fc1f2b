//! Points from a NumPy `.npy` file: shape `(n, 3)`, float32 or float64, either byte
//! order, C (or Fortran) order, every value finite.
//!
//! The file is checked before npyz decodes anything it could choke on: the magic, the
//! version and the header length are read here and compared with the file size, the
//! header is parsed by npyz behind [`quietly`] (npyz can panic on some garbage, e.g. a
//! shape whose product overflows), and the data size the header promises is compared
//! with the bytes the file holds before a single value is read, so a lying header never
//! makes anything allocate what the file does not hold.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use anyhow::{Context, anyhow, bail};
use npyz::{DType, Deserialize, NpyFile, Order, TypeChar};
use orrery_core::Real;

use super::Coords;

/// The first six bytes of every `.npy` file.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Reads the points of a `.npy` file. Errors do not name the file (the caller adds it).
///
/// # Errors
/// The file cannot be read, is not a `.npy` file, is truncated or has bytes past its
/// data, holds another dtype than float32 / float64 or another shape than `(n, 3)` with
/// `n >= 1`, or holds a NaN or an infinity.
pub fn read(path: &Path) -> anyhow::Result<Coords> {
    let file = File::open(path).map_err(|e| anyhow!("cannot open: {}", io_reason(&e)))?;
    let len = file.metadata().map_err(|e| anyhow!("cannot read: {}", io_reason(&e)))?.len();
    if len == 0 {
        bail!("the file is empty");
    }
    let mut reader = BufReader::new(file);
    let data_offset = data_offset(&mut reader, len)?;
    reader.seek(SeekFrom::Start(0)).map_err(|e| anyhow!("cannot read: {}", io_reason(&e)))?;
    let npy = quietly(|| NpyFile::new(reader))
        .ok_or_else(|| anyhow!("malformed .npy header"))?
        .map_err(|e| anyhow!("malformed .npy header: {e}"))?;

    let float_bytes = float_size(&npy.dtype())?;
    let shape = npy.shape().to_vec();
    let &[n, 3] = shape.as_slice() else {
        bail!("shape {}: expected (n, 3)", shape_text(&shape));
    };
    if n == 0 {
        bail!("no points: shape {}", shape_text(&shape));
    }
    let n = u32::try_from(n)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| anyhow!("shape {}: more points than 32-bit indices hold ({})", shape_text(&shape), u32::MAX))?;
    let expected = (n as u64).checked_mul(3 * float_bytes).ok_or_else(|| anyhow!("shape overflows"))?;
    let actual = len - data_offset;
    if actual < expected {
        bail!(
            "truncated: the header promises {n} points ({expected} bytes of data), the file holds {actual} bytes of data"
        );
    }
    if actual > expected {
        bail!("{} unexpected bytes after the {n} points the header declares", actual - expected);
    }
    let order = npy.order();
    Ok(if float_bytes == 4 {
        Coords::F32(columns::<f32, _>(npy, n, order)?)
    } else {
        Coords::F64(columns::<f64, _>(npy, n, order)?)
    })
}

/// A file-system error without the "(os error 2)" suffix.
pub(super) fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        std::io::ErrorKind::IsADirectory => "is a directory".to_owned(),
        _ => e.to_string(),
    }
}

/// Checks the magic, version and header length; returns where the data begins.
fn data_offset(reader: &mut impl Read, len: u64) -> anyhow::Result<u64> {
    let mut prefix = [0u8; 8];
    let got = read_up_to(reader, &mut prefix)?;
    if got < MAGIC.len() || &prefix[..6] != MAGIC {
        bail!("not a .npy file (the NumPy magic bytes are missing)");
    }
    if got < 8 {
        bail!("truncated .npy header");
    }
    let (size_bytes, before_text) = match (prefix[6], prefix[7]) {
        (1, 0) => (2, 10u64),
        (2 | 3, 0) => (4, 12u64),
        (major, minor) => bail!("unsupported .npy format version {major}.{minor}"),
    };
    let mut size = [0u8; 4];
    if read_up_to(reader, &mut size[..size_bytes])? < size_bytes {
        bail!("truncated .npy header");
    }
    let header_len = u64::from(u32::from_le_bytes(size));
    let offset = before_text + header_len;
    if offset > len {
        bail!(
            "truncated .npy header: it declares {header_len} bytes, the file has {} after the preamble",
            len - before_text
        );
    }
    Ok(offset)
}

/// Fills as much of `buf` as the reader has; returns how much.
fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> anyhow::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => bail!("cannot read: {}", io_reason(&e)),
        }
    }
    Ok(filled)
}

/// Runs `f`, turning a panic into `None` without printing the panic message.
pub fn quietly<R>(f: impl FnOnce() -> R) -> Option<R> {
    let hook = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(hook);
    result.ok()
}

/// The byte size of a float32 / float64 dtype; an error naming any other dtype.
fn float_size(dtype: &DType) -> anyhow::Result<u64> {
    let DType::Plain(ts) = dtype else {
        bail!("structured dtype {}: expected float32 or float64", dtype.descr());
    };
    let kind = match ts.type_char() {
        TypeChar::Float if matches!(ts.size_field(), 4 | 8) => return Ok(ts.size_field()),
        TypeChar::Float => "a float of another width",
        TypeChar::Int => "signed integers",
        TypeChar::Uint => "unsigned integers",
        TypeChar::Bool => "booleans",
        TypeChar::Complex => "complex numbers",
        TypeChar::TimeDelta | TypeChar::DateTime => "times",
        TypeChar::ByteStr | TypeChar::UnicodeStr => "strings",
        _ => "raw or unknown data",
    };
    bail!("dtype {ts} ({kind}): expected float32 or float64")
}

/// `(10, 3)`, `(5,)`: a shape as Python writes it.
fn shape_text(shape: &[u64]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!("({})", shape.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// The `n x 3` values as three columns, each checked finite.
fn columns<T: Real + Deserialize, R: Read>(npy: NpyFile<R>, n: usize, order: Order) -> anyhow::Result<[Vec<T>; 3]> {
    let data = npy.data::<T>().map_err(|e| anyhow!("cannot decode: {e}"))?;
    let mut cols: [Vec<T>; 3] = std::array::from_fn(|_| Vec::with_capacity(n));
    for (k, value) in data.enumerate() {
        let value = value.context("cannot read the data")?;
        let (point, axis) = match order {
            Order::C => (k / 3, k % 3),
            Order::Fortran => (k % n, k / n),
        };
        if !value.finite() {
            bail!("point {point} has {} = {}", ["x", "y", "z"][axis], value);
        }
        cols[axis].push(value);
    }
    if cols.iter().any(|c| c.len() != n) {
        bail!("truncated: fewer values than the header declares");
    }
    Ok(cols)
}
