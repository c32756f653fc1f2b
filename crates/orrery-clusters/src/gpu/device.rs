//! Vectors and clusters on the device.

use orrery_core::{DeviceBuffer, Error, Executor, Result};

use crate::input::{Clusters, Vectors, invalid};

/// Row-major `f32` vectors in device memory (a whole buffer: every row of a `dim % 4 == 0`
/// set starts 16-byte aligned, which the kernels' vector loads rely on).
pub struct DeviceVectors<E: Executor> {
    data: E::Buffer<f32>,
    dim: usize,
    rows: usize,
}

impl<E: Executor> DeviceVectors<E> {
    /// Uploads validated host vectors.
    ///
    /// # Errors
    /// Allocation and transfer failures.
    pub fn upload(exec: &E, vectors: &Vectors<'_>) -> Result<Self> {
        // A device buffer is never empty (wgpu binds no zero-sized buffer): no rows upload
        // one padding value.
        let data = if vectors.is_empty() { exec.upload(&[0.0f32])? } else { exec.upload(vectors.data())? };
        Ok(Self { data, dim: vectors.dim(), rows: vectors.len() })
    }

    /// Wraps a device buffer of rows of `dim` values. The values are not read: they must be
    /// finite, as [`Vectors::new`] requires of host data (the results are unspecified
    /// otherwise).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for `dim == 0`; [`Error::LengthMismatch`] when the buffer
    /// is not whole rows; [`Error::TooManyPoints`] beyond `u32::MAX` rows.
    pub fn from_buffer(data: E::Buffer<f32>, dim: usize) -> Result<Self> {
        if dim == 0 {
            return Err(invalid("dim", "0 values per vector; dim must be at least 1".into()));
        }
        let len = data.len();
        if !len.is_multiple_of(dim) {
            return Err(Error::LengthMismatch {
                what: "vectors (a multiple of dim)",
                expected: len.next_multiple_of(dim),
                actual: len,
            });
        }
        orrery_core::executor::check_count("vectors", len / dim)?;
        Ok(Self { data, dim, rows: len / dim })
    }

    /// The buffer (`len() * dim()` values; one padding value when uploaded without rows).
    pub fn data(&self) -> &E::Buffer<f32> {
        &self.data
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

/// CSR clusters on the device: the member vectors and the offsets (kept on the host too:
/// the launch plans are computed from them).
pub struct DeviceClusters<E: Executor> {
    vectors: DeviceVectors<E>,
    rows: usize,
    offsets: Vec<u32>,
    offsets_dev: E::Buffer<u32>,
}

impl<E: Executor> DeviceClusters<E> {
    /// Uploads validated host clusters.
    ///
    /// # Errors
    /// Allocation and transfer failures.
    pub fn upload(exec: &E, clusters: &Clusters<'_>) -> Result<Self> {
        let vectors = DeviceVectors::upload(exec, &clusters.vectors())?;
        Self::from_vectors(exec, vectors, clusters.offsets())
    }

    /// Splits device vectors into clusters by host `offsets` (validated as
    /// [`Clusters::new`] validates them).
    ///
    /// # Errors
    /// As [`Clusters::from_vectors`] for the offsets; transfer failures.
    pub fn from_vectors(exec: &E, vectors: DeviceVectors<E>, offsets: &[u32]) -> Result<Self> {
        check_offsets(offsets, vectors.len(), vectors.dim())?;
        let offsets_dev = exec.upload(offsets)?;
        Ok(Self { rows: vectors.len(), vectors, offsets: offsets.to_vec(), offsets_dev })
    }

    /// The member vectors.
    pub fn vectors(&self) -> &DeviceVectors<E> {
        &self.vectors
    }

    /// The offsets (host copy; `len() + 1` entries).
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// The offsets on the device.
    pub fn device_offsets(&self) -> &E::Buffer<u32> {
        &self.offsets_dev
    }

    /// Number of clusters (at least 1).
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Always `false`: there is at least one cluster (which may be empty).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Total number of member vectors.
    pub fn num_vectors(&self) -> usize {
        self.rows
    }

    /// Values per vector.
    pub fn dim(&self) -> usize {
        self.vectors.dim()
    }
}

/// [`Clusters::from_vectors`]'s checks of the offsets against `rows` rows of `dim` values
/// (the same errors, the same messages).
fn check_offsets(offsets: &[u32], rows: usize, dim: usize) -> Result<()> {
    if offsets.len() < 2 {
        return Err(Error::EmptyInput { what: "cluster offsets", min: 2 });
    }
    if offsets[0] != 0 {
        return Err(invalid("cluster offsets", format!("offsets[0] = {}: offsets must start at 0", offsets[0])));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[1] < w[0]) {
        return Err(invalid(
            "cluster offsets",
            format!(
                "offsets[{}] = {} is smaller than offsets[{i}] = {}: offsets must not decrease",
                i + 1,
                offsets[i + 1],
                offsets[i]
            ),
        ));
    }
    let last = offsets[offsets.len() - 1] as usize;
    if last != rows {
        return Err(Error::LengthMismatch { what: "vectors", expected: last * dim, actual: rows * dim });
    }
    Ok(())
}
