//! The ball tree functions of the extension module: host arrays (numpy) on any executor,
//! and CUDA tensors in place through DLPack.
//!
//! These are the primitives under `orrery.balltree` (python/orrery/balltree.py), which
//! gives them `balltree-erwin`'s names, arguments and return types. Every call validates
//! its input in Rust (orrery-balltree's typed errors, mapped by [`crate::errors`]) and
//! releases the GIL for the build.

#![allow(
    clippy::missing_errors_doc,
    reason = "Python functions: every error is an exception, ValueError or RuntimeError by crate::errors"
)]
#![allow(clippy::needless_pass_by_value, reason = "PyO3 extracts Python arguments as owned values")]

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use orrery_backend_cuda::CudaExecutor;
use orrery_balltree::gpu::GpuReal;
use orrery_balltree::{BallTree, Batches, Level, PointCloud, Weighting, cpu, erwin_rotation_matrix};
use orrery_core::{Error, Executor, GpuExecutor, Result};
use pyo3::prelude::*;
use rayon::prelude::*;

use crate::dlpack::{Borrowed, DType};
use crate::errors::{IntoPy, value_error};
use crate::executors::{Choice, GpuState, cuda, lock, wgpu};

/// Host points of either precision, borrowed from a numpy array.
pub enum HostPoints<'py> {
    /// float32.
    F32(PyReadonlyArray2<'py, f32>),
    /// float64.
    F64(PyReadonlyArray2<'py, f64>),
}

impl<'py> HostPoints<'py> {
    /// Borrows `obj` (`what` names the argument).
    ///
    /// # Errors
    /// `ValueError` unless `obj` is a C-contiguous 2-D float32 or float64 numpy array.
    pub fn extract(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Self> {
        let points = if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f32>>() {
            Self::F32(a)
        } else if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f64>>() {
            Self::F64(a)
        } else {
            return Err(value_error(what, "expected a 2-D float32 or float64 numpy array"));
        };
        let contiguous = match &points {
            Self::F32(a) => a.is_c_contiguous(),
            Self::F64(a) => a.is_c_contiguous(),
        };
        if !contiguous {
            return Err(value_error(what, "the array is not C-contiguous (np.ascontiguousarray)"));
        }
        Ok(points)
    }

    /// Rows and columns.
    fn shape(&self) -> (usize, usize) {
        let s = match self {
            Self::F32(a) => a.shape(),
            Self::F64(a) => a.shape(),
        };
        (s[0], s[1])
    }
}

/// Runs `$body` with `$slice` bound to the points as `&[f32]` or `&[f64]`.
macro_rules! with_points {
    ($points:expr, $slice:ident => $body:expr) => {
        match $points {
            HostPoints::F32(a) => {
                let $slice = a.as_slice()?;
                $body
            }
            HostPoints::F64(a) => {
                let $slice = a.as_slice()?;
                $body
            }
        }
    };
}

/// Batches from CSR offsets (any integers; validated).
fn batches_of(offsets: &[i64]) -> Result<Batches> {
    Batches::from_offsets(offsets)
}

/// Builds the tree of host points on the chosen executor.
fn build_host<T: GpuReal>(points: &[T], dim: usize, batches: Batches, choice: Choice) -> Result<BallTree> {
    let cloud = PointCloud::new(points, dim, batches)?;
    match choice {
        Choice::Cpu => cpu::build(&cloud),
        Choice::Cuda(ordinal) => build_uploaded(&mut lock(&*cuda(ordinal)?), &cloud),
        Choice::Wgpu => build_uploaded(&mut lock(&*wgpu()?), &cloud),
    }
}

/// The tree of host points (`what` names the points argument in errors), the GIL
/// released for the build.
fn host_tree(
    py: Python<'_>,
    points: &Bound<'_, PyAny>,
    offsets: &PyReadonlyArray1<'_, i64>,
    executor: &str,
    what: &str,
) -> PyResult<BallTree> {
    let choice = Choice::parse(executor).py_err()?;
    let points = HostPoints::extract(points, what)?;
    let (_, dim) = points.shape();
    let offsets = offsets.as_slice()?;
    with_points!(&points, p => py.detach(|| batches_of(offsets).and_then(|b| build_host(p, dim, b, choice)))).py_err()
}

/// Uploads validated host points, builds on the device and downloads the tree.
fn build_uploaded<E: GpuExecutor, T: GpuReal>(state: &mut GpuState<E>, cloud: &PointCloud<'_, T>) -> Result<BallTree> {
    let GpuState { exec, builder } = state;
    let points = exec.upload(cloud.points())?;
    builder.build(exec, &points, cloud.dim(), cloud.batches())?.download(exec)
}

/// A tree as numpy arrays: slot indices (int64) and mask (bool).
type TreeArrays<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<bool>>);

/// A permutation and its inverse (int64).
type PermutationPair<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>);

/// Indices as int64 (numpy's intp, what `balltree-erwin` returns).
fn to_i64(v: &[u32]) -> Vec<i64> {
    v.par_iter().map(|&i| i64::from(i)).collect()
}

/// `build(points, offsets, executor="auto") -> (indices int64, mask bool)`: the ball
/// tree of host points, every batch a CSR range of `offsets`.
#[pyfunction]
#[pyo3(signature = (points, offsets, executor = "auto"))]
pub fn build<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    offsets: PyReadonlyArray1<'py, i64>,
    executor: &str,
) -> PyResult<TreeArrays<'py>> {
    let tree = host_tree(py, points, &offsets, executor, "data")?;
    let (indices, mask) = py.detach(|| (to_i64(tree.indices()), tree.mask().to_vec()));
    Ok((PyArray1::from_vec(py, indices), PyArray1::from_vec(py, mask)))
}

/// `partition(points, offsets, target_level) -> order int64`: Erwin's
/// `partition_balltree` (on the CPU).
#[pyfunction]
pub fn partition<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    offsets: PyReadonlyArray1<'py, i64>,
    target_level: i64,
) -> PyResult<Bound<'py, PyArray1<i64>>> {
    let level = u32::try_from(target_level)
        .map_err(|_| value_error("target_level", format!("{target_level} must be non-negative (and below 2^32)")))?;
    let points = HostPoints::extract(points, "data")?;
    let (_, dim) = points.shape();
    let offsets = offsets.as_slice()?;
    let order = with_points!(&points, p => py.detach(|| {
        let cloud = PointCloud::new(p, dim, batches_of(offsets)?)?;
        cpu::partition(&cloud, level).map(|part| to_i64(part.order()))
    }))
    .py_err()?;
    Ok(PyArray1::from_vec(py, order))
}

/// `cuda_stream(device) -> int`: the CUDA stream of orrery's executor on `device`
/// (opened on first use), for `tensor.__dlpack__(stream=...)`.
#[pyfunction]
pub fn cuda_stream(py: Python<'_>, device: usize) -> PyResult<u64> {
    let state = py.detach(|| cuda(device)).py_err()?;
    Ok(lock(&state).exec.stream_handle())
}

/// `build_cuda(points, offsets, out_indices, out_mask)`: builds the tree of a CUDA
/// tensor in place. `points`, `out_indices` and `out_mask` are DLPack capsules of
/// C-contiguous tensors on one device (`[n, d]` float32/float64; int32 outputs of
/// `slots` elements, `slots` from [`slot_count`]); `offsets` are host CSR offsets. The
/// tree's u32 indices and 0/1 mask are written into the outputs; the call returns when
/// the device is done.
#[pyfunction]
pub fn build_cuda(
    py: Python<'_>,
    points: &Bound<'_, PyAny>,
    offsets: Vec<i64>,
    out_indices: &Bound<'_, PyAny>,
    out_mask: &Bound<'_, PyAny>,
) -> PyResult<()> {
    let points = Borrowed::take(points, "data")?;
    let out_indices = Borrowed::take(out_indices, "out_indices")?;
    let out_mask = Borrowed::take(out_mask, "out_mask")?;
    if points.shape.len() != 2 {
        return Err(value_error("data", format!("expected a 2-D tensor, got shape {:?}", points.shape)));
    }
    let dim = points.shape[1];
    for (t, name) in [(&out_indices, "out_indices"), (&out_mask, "out_mask")] {
        if t.dtype != DType::U32 || t.shape.len() != 1 {
            return Err(value_error(name, "expected a 1-D int32 tensor"));
        }
        if t.device != points.device {
            return Err(value_error(name, format!("on cuda:{}, the points on cuda:{}", t.device, points.device)));
        }
    }
    let (ordinal, dtype) = (points.device, points.dtype);
    let (ptr, len) = (points.ptr, points.len());
    let (idx_ptr, idx_len, mask_ptr, mask_len) = (out_indices.ptr, out_indices.len(), out_mask.ptr, out_mask.len());
    py.detach(|| -> Result<()> {
        let batches = batches_of(&offsets)?;
        let state = cuda(ordinal)?;
        let mut state = lock(&state);
        let out = Outputs { idx_ptr, idx_len, mask_ptr, mask_len };
        match dtype {
            DType::F32 => build_in_place::<f32>(&mut state, ptr, len, dim, &batches, out),
            DType::F64 => build_in_place::<f64>(&mut state, ptr, len, dim, &batches, out),
            DType::U32 => {
                Err(Error::InvalidArgument { what: "data", reason: "int32 points: expected float32 or float64".into() })
            }
        }
    })
    .py_err()?;
    // The tensors' deleters run here, with the GIL held, after the device is done.
    drop((points, out_indices, out_mask));
    Ok(())
}

/// Device addresses and lengths of the two output tensors.
#[derive(Clone, Copy)]
struct Outputs {
    idx_ptr: u64,
    idx_len: usize,
    mask_ptr: u64,
    mask_len: usize,
}

/// Wraps the tensors, builds, copies the tree into the outputs and waits.
fn build_in_place<T: GpuReal>(
    state: &mut GpuState<CudaExecutor>,
    ptr: u64,
    len: usize,
    dim: usize,
    batches: &Batches,
    out: Outputs,
) -> Result<()> {
    let GpuState { exec, builder } = state;
    let slots = orrery_balltree::TreeLayout::new(batches)?.num_slots();
    for (what, got) in [("out_indices", out.idx_len), ("out_mask", out.mask_len)] {
        if got != slots {
            return Err(Error::LengthMismatch { what, expected: slots, actual: got });
        }
    }
    // SAFETY: the DLPack producer keeps the three tensors allocated until their deleters
    // run, after this function returns and the stream is synchronised; it ordered its
    // pending work on them before our stream (`__dlpack__(stream=...)`), and nothing
    // else writes them while the caller waits in this call.
    let (points, mut indices, mut mask) = unsafe {
        (
            exec.wrap_external::<T>(ptr, len)?,
            exec.wrap_external::<u32>(out.idx_ptr, out.idx_len)?,
            exec.wrap_external::<u32>(out.mask_ptr, out.mask_len)?,
        )
    };
    let tree = builder.build(exec, &points, dim, batches)?;
    exec.copy(tree.indices(), &mut indices)?;
    exec.copy(tree.mask(), &mut mask)?;
    exec.synchronize()
}

/// `slot_count(offsets) -> int`: the number of tree slots of a batch layout.
#[pyfunction]
pub fn slot_count(offsets: Vec<i64>) -> PyResult<usize> {
    let batches = batches_of(&offsets).py_err()?;
    Ok(orrery_balltree::TreeLayout::new(&batches).py_err()?.num_slots())
}

/// `rotation_matrix(angle_degrees, dim) -> list[float]`: Erwin's rotation, row-major.
#[pyfunction]
pub fn rotation_matrix(angle_degrees: f64, dim: usize) -> PyResult<Vec<f64>> {
    erwin_rotation_matrix(angle_degrees, dim).py_err()
}

/// A ball tree built on the host, with the operations of orrery-balltree beyond the
/// reference: permutations, pooling, ball statistics and rotated partitions.
#[pyclass(name = "BallTree", module = "orrery._orrery", frozen)]
pub struct PyBallTree {
    tree: BallTree,
}

/// Pooling weighting from its name.
fn weighting(name: &str) -> Result<Weighting> {
    match name {
        "slots" => Ok(Weighting::Slots),
        "points" => Ok(Weighting::Points),
        s => Err(Error::InvalidArgument {
            what: "weighting",
            reason: format!("{s:?}: expected \"slots\" or \"points\""),
        }),
    }
}

/// A `[rows, width]` numpy array from a row-major vector.
fn matrix<T: numpy::Element>(py: Python<'_>, v: Vec<T>, width: usize) -> PyResult<Bound<'_, PyArray2<T>>> {
    let rows = v.len().checked_div(width).unwrap_or(0);
    PyArray1::from_vec(py, v).reshape([rows, width])
}

#[pymethods]
impl PyBallTree {
    /// `BallTree(points, offsets, executor="auto")`: builds the tree of host points.
    #[new]
    #[pyo3(signature = (points, offsets, executor = "auto"))]
    fn new(
        py: Python<'_>,
        points: &Bound<'_, PyAny>,
        offsets: PyReadonlyArray1<'_, i64>,
        executor: &str,
    ) -> PyResult<Self> {
        Ok(Self { tree: host_tree(py, points, &offsets, executor, "points")? })
    }

    /// The point index of every slot (int64).
    #[getter]
    fn indices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, to_i64(self.tree.indices()))
    }

    /// True where a slot holds a real point, False on padding.
    #[getter]
    fn mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        PyArray1::from_vec(py, self.tree.mask().to_vec())
    }

    /// Slot offsets of the batches (`num_batches + 1`, int64).
    #[getter]
    fn slot_offsets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, to_i64(self.tree.layout().slot_offsets()))
    }

    /// The fraction of slots that are padding.
    #[getter]
    fn padding_ratio(&self) -> f64 {
        self.tree.padding_ratio()
    }

    /// The points in tree order without padding: `points[perm]` lists every point once,
    /// ball by ball (int64).
    fn permutation<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, to_i64(&self.tree.permutation()))
    }

    /// The inverse of [`PyBallTree::permutation`]: `x_tree[inv]` restores point order.
    fn inverse_permutation<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_vec(py, to_i64(&self.tree.inverse_permutation()))
    }

    /// Mean of per-point rows (`[n, width]`, point order) over every ball of `2^height`
    /// slots; `weighting` "slots" (Erwin's, padding counted) or "points".
    #[pyo3(signature = (values, height, weighting = "slots"))]
    fn pool_mean<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        height: u32,
        weighting: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let w = self::weighting(weighting).py_err()?;
        let values = HostPoints::extract(values, "values")?;
        let (_, width) = values.shape();
        Ok(match &values {
            HostPoints::F32(a) => {
                let v = a.as_slice()?;
                let out = py.detach(|| self.tree.pool_mean(v, width, Level::Height(height), w)).py_err()?;
                matrix(py, out, width)?.into_any()
            }
            HostPoints::F64(a) => {
                let v = a.as_slice()?;
                let out = py.detach(|| self.tree.pool_mean(v, width, Level::Height(height), w)).py_err()?;
                matrix(py, out, width)?.into_any()
            }
        })
    }

    /// `(centres [balls, dim], radii [balls])` of every ball of `2^height` slots.
    #[pyo3(signature = (points, height, weighting = "slots"))]
    fn ball_stats<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        height: u32,
        weighting: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let w = self::weighting(weighting).py_err()?;
        let points = HostPoints::extract(points, "points")?;
        let (_, dim) = points.shape();
        let batches = self.tree.layout().batches().clone();
        macro_rules! stats {
            ($a:expr) => {{
                let p = $a.as_slice()?;
                let s = py
                    .detach(|| {
                        let cloud = PointCloud::new(p, dim, batches)?;
                        self.tree.ball_stats(&cloud, Level::Height(height), w)
                    })
                    .py_err()?;
                (matrix(py, s.centres, dim)?.into_any(), PyArray1::from_vec(py, s.radii).into_any())
            }};
        }
        Ok(match &points {
            HostPoints::F32(a) => stats!(a),
            HostPoints::F64(a) => stats!(a),
        })
    }

    /// Erwin's rotated re-partitions: per layer `(perm, inverse)` (int64), for the
    /// rotation by `angle` degrees (2-D or 3-D), ball sizes and strides of the encoder.
    fn rotated_partitions<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        angle: f64,
        ball_sizes: Vec<usize>,
        strides: Vec<usize>,
    ) -> PyResult<Vec<PermutationPair<'py>>> {
        let points = HostPoints::extract(points, "points")?;
        let (_, dim) = points.shape();
        let batches = self.tree.layout().batches().clone();
        let layers = with_points!(&points, p => py.detach(|| {
            let cloud = PointCloud::new(p, dim, batches)?;
            let rotation = erwin_rotation_matrix(angle, dim)?;
            let parts = cpu::rotated_partitions(&self.tree, &cloud, &rotation, &ball_sizes, &strides)?;
            Ok::<_, Error>(parts.iter().map(|r| (to_i64(r.permutation()), to_i64(r.inverse()))).collect::<Vec<_>>())
        }))
        .py_err()?;
        Ok(layers.into_iter().map(|(p, i)| (PyArray1::from_vec(py, p), PyArray1::from_vec(py, i))).collect())
    }

    fn __len__(&self) -> usize {
        self.tree.num_slots()
    }

    fn __repr__(&self) -> String {
        format!(
            "BallTree(points={}, batches={}, slots={}, padding_ratio={:.3})",
            self.tree.num_points(),
            self.tree.num_batches(),
            self.tree.num_slots(),
            self.tree.padding_ratio()
        )
    }
}

/// `time_rust_build(points, offsets, executor="cuda", warmup=2, repeats=10, wall=False)
/// -> list[float]`: the Rust-side time of the build, in milliseconds per build, for
/// comparing the Python path against it. On "cpu": [`cpu::build`] of the validated cloud
/// (validation untimed) on the host clock, the tree dropped inside the timing. On a GPU:
/// the host points are uploaded once (untimed);
/// each sample is [`orrery_balltree::gpu::GpuBallTreeBuilder::build`] alone, the builder
/// keeping its plan and buffers: between two device markers (as `orrery-bench balltree`
/// times it), or with `wall` on the host clock from the call until the device is done
/// (what a Rust caller that waits for the tree sees).
#[pyfunction]
#[pyo3(signature = (points, offsets, executor = "cuda", warmup = 2, repeats = 10, wall = false))]
pub fn time_rust_build(
    py: Python<'_>,
    points: &Bound<'_, PyAny>,
    offsets: PyReadonlyArray1<'_, i64>,
    executor: &str,
    warmup: usize,
    repeats: usize,
    wall: bool,
) -> PyResult<Vec<f64>> {
    let choice = Choice::parse(executor).py_err()?;
    let points = HostPoints::extract(points, "points")?;
    let (_, dim) = points.shape();
    let offsets = offsets.as_slice()?;
    with_points!(&points, p => py.detach(|| {
        let cloud = PointCloud::new(p, dim, batches_of(offsets)?)?;
        match choice {
            Choice::Cuda(ordinal) => time_builds(&mut lock(&*cuda(ordinal)?), &cloud, warmup, repeats, wall),
            Choice::Wgpu => time_builds(&mut lock(&*wgpu()?), &cloud, warmup, repeats, wall),
            Choice::Cpu => time_cpu_builds(&cloud, warmup, repeats),
        }
    }))
    .py_err()
}

/// Builds `warmup` times, then times `repeats` builds of the validated cloud on the host
/// clock (what `orrery-bench balltree` times on the CPU).
fn time_cpu_builds<T: GpuReal>(cloud: &PointCloud<'_, T>, warmup: usize, repeats: usize) -> Result<Vec<f64>> {
    for _ in 0..warmup {
        cpu::build(cloud)?;
    }
    let mut samples = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let start = std::time::Instant::now();
        let tree = cpu::build(cloud)?;
        drop(tree);
        samples.push(start.elapsed().as_secs_f64() * 1e3);
    }
    Ok(samples)
}

/// Uploads once, builds `warmup` times, then times `repeats` builds with device markers
/// (`wall`: on the host clock, from the call until the device is done).
fn time_builds<E: GpuExecutor, T: GpuReal>(
    state: &mut GpuState<E>,
    cloud: &PointCloud<'_, T>,
    warmup: usize,
    repeats: usize,
    wall: bool,
) -> Result<Vec<f64>> {
    let GpuState { exec, builder } = state;
    let points = exec.upload(cloud.points())?;
    for _ in 0..warmup {
        builder.build(exec, &points, cloud.dim(), cloud.batches())?;
    }
    exec.synchronize()?;
    let mut samples = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        if wall {
            let start = std::time::Instant::now();
            builder.build(exec, &points, cloud.dim(), cloud.batches())?;
            exec.synchronize()?;
            samples.push(start.elapsed().as_secs_f64() * 1e3);
        } else {
            let start = exec.mark()?;
            builder.build(exec, &points, cloud.dim(), cloud.batches())?;
            let end = exec.mark()?;
            samples.push(exec.elapsed(&start, &end)?.as_secs_f64() * 1e3);
        }
    }
    Ok(samples)
}
