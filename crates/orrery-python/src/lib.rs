//! # orrery-python
//!
//! The extension module `orrery._orrery` under the Python package `orrery`
//! (python/orrery): Erwin's ball tree from orrery-balltree on numpy arrays and torch
//! tensors, on the CPU (rayon), CUDA and wgpu. The Python layer (`orrery.balltree`) gives
//! it the names, arguments and return types of `balltree-erwin`; this crate holds the
//! primitives it calls ([`balltree`]), the DLPack consumer that takes CUDA tensors in
//! place ([`dlpack`]), the executors kept between calls ([`executors`]) and the mapping
//! of orrery's typed errors to Python exceptions ([`errors`]).
//!
//! Built with maturin (`pip install ./crates/orrery-python`, or `maturin build`); one
//! abi3 wheel serves CPython 3.9 and later.

pub mod balltree;
pub mod dlpack;
pub mod errors;
pub mod executors;

use pyo3::prelude::*;

/// The extension module.
#[pymodule]
fn _orrery(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(balltree::build, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::partition, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::build_cuda, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::cuda_stream, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::slot_count, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::rotation_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(balltree::time_rust_build, m)?)?;
    m.add_function(wrap_pyfunction!(executors_available, m)?)?;
    m.add_class::<balltree::PyBallTree>()?;
    Ok(())
}

/// `executors_available() -> list[str]`: the executors this process can open now
/// ("cpu" always; "cuda" with a driver and a device; "wgpu" with an adapter).
#[pyfunction]
fn executors_available(py: Python<'_>) -> Vec<&'static str> {
    py.detach(|| {
        let mut out = vec!["cpu"];
        if orrery_backend_cuda::device_count().is_ok_and(|n| n > 0) {
            out.push("cuda");
        }
        if executors::wgpu().is_ok() {
            out.push("wgpu");
        }
        out
    })
}
