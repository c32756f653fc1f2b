//! The consumer side of DLPack: a tensor of another framework (a torch CUDA tensor) as a
//! device pointer, without a copy.
//!
//! `tensor.__dlpack__(stream=s)` hands over a `PyCapsule` named `"dltensor"` that holds a
//! `DLManagedTensor`; the producer has ordered its pending work on the tensor before
//! stream `s` (orrery's executor stream). The consumer renames the capsule
//! `"used_dltensor"` so it is not consumed twice, and calls the tensor's deleter when it
//! is done with the memory ([`Borrowed`]'s drop), which releases the producer's reference.
//! The structs are DLPack's C ABI (dlpack.h, v0.8 and later, unversioned capsule).

use std::ffi::{CStr, c_void};

use pyo3::ffi;
use pyo3::prelude::*;

use crate::errors::value_error;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

/// `DLManagedTensor`.
#[repr(C)]
#[allow(dead_code, reason = "C layout: the producer's context is part of the struct, never read here")]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// `kDLCUDA`.
const DL_CUDA: i32 = 2;
/// `kDLInt`, `kDLUInt`, `kDLFloat`.
const DL_INT: u8 = 0;
const DL_UINT: u8 = 1;
const DL_FLOAT: u8 = 2;

const NAME: &CStr = c"dltensor";
const USED: &CStr = c"used_dltensor";

/// Element types a borrowed tensor may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DType {
    /// float32.
    F32,
    /// float64.
    F64,
    /// int32 or uint32 (orrery's u32 outputs).
    U32,
}

impl DType {
    fn of(t: DlDataType) -> Option<Self> {
        match (t.code, t.bits, t.lanes) {
            (DL_FLOAT, 32, 1) => Some(Self::F32),
            (DL_FLOAT, 64, 1) => Some(Self::F64),
            (DL_INT | DL_UINT, 32, 1) => Some(Self::U32),
            _ => None,
        }
    }
}

/// A C-contiguous CUDA tensor taken from a DLPack capsule; its deleter runs on drop.
pub struct Borrowed {
    managed: *mut DlManagedTensor,
    /// Device address of element 0 (`data + byte_offset`).
    pub ptr: u64,
    /// CUDA device ordinal.
    pub device: usize,
    /// Element type.
    pub dtype: DType,
    /// Shape (row-major; C-contiguous by construction).
    pub shape: Vec<usize>,
}

// SAFETY: the managed tensor is only read (its fields) and deleted once, by whichever
// thread drops the `Borrowed`; DLPack producers allow the deleter on any thread.
unsafe impl Send for Borrowed {}

impl Borrowed {
    /// Takes the tensor out of `capsule` (`what` names the argument in errors).
    ///
    /// # Errors
    /// `ValueError` when the object is not an unused `"dltensor"` capsule, the tensor is
    /// not on a CUDA device, not C-contiguous, or of an element type other than
    /// float32, float64, int32 or uint32.
    pub fn take(capsule: &Bound<'_, PyAny>, what: &str) -> PyResult<Self> {
        // SAFETY: `capsule` is a live object; PyCapsule_IsValid only inspects it.
        if unsafe { ffi::PyCapsule_IsValid(capsule.as_ptr(), NAME.as_ptr()) } != 1 {
            return Err(value_error(what, "expected an unused DLPack capsule (\"dltensor\") from __dlpack__()"));
        }
        // SAFETY: valid capsule of that name (checked above).
        let managed = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), NAME.as_ptr()) }.cast::<DlManagedTensor>();
        if managed.is_null() {
            return Err(PyErr::fetch(capsule.py()));
        }
        // Mark it consumed before anything can fail: from here on the deleter is ours.
        // SAFETY: renaming a valid capsule to a static name.
        if unsafe { ffi::PyCapsule_SetName(capsule.as_ptr(), USED.as_ptr()) } != 0 {
            return Err(PyErr::fetch(capsule.py()));
        }
        let mut out = Self { managed, ptr: 0, device: 0, dtype: DType::F32, shape: Vec::new() };
        // SAFETY: the producer keeps the managed tensor valid until its deleter runs.
        let t = unsafe { &(*managed).dl_tensor };
        if t.device.device_type != DL_CUDA {
            return Err(value_error(
                what,
                format!("DLPack device type {} is not CUDA (2); pass host data as numpy", t.device.device_type),
            ));
        }
        out.device = usize::try_from(t.device.device_id).map_err(|_| value_error(what, "negative device id"))?;
        out.dtype = DType::of(t.dtype).ok_or_else(|| {
            value_error(
                what,
                format!(
                    "DLPack dtype (code {}, {} bits, {} lanes) is not float32, float64 or int32",
                    t.dtype.code, t.dtype.bits, t.dtype.lanes
                ),
            )
        })?;
        let ndim = usize::try_from(t.ndim).map_err(|_| value_error(what, "negative ndim"))?;
        // SAFETY: DLPack guarantees `ndim` entries of shape (and of strides when not null).
        let shape = unsafe { std::slice::from_raw_parts(t.shape, ndim) };
        out.shape = shape.iter().map(|&s| usize::try_from(s).unwrap_or(0)).collect();
        if !t.strides.is_null() {
            // SAFETY: as above. Size-1 dimensions may carry any stride.
            let strides = unsafe { std::slice::from_raw_parts(t.strides, ndim) };
            let mut expected = 1i64;
            for k in (0..ndim).rev() {
                if shape[k] != 1 && strides[k] != expected {
                    return Err(value_error(what, "the tensor is not C-contiguous (call .contiguous())"));
                }
                expected *= shape[k];
            }
        }
        out.ptr = (t.data as u64) + t.byte_offset;
        Ok(out)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Drop for Borrowed {
    fn drop(&mut self) {
        // SAFETY: the managed tensor is live until its deleter runs, which happens once,
        // here (the capsule was renamed, so its destructor will not call it).
        unsafe {
            if let Some(deleter) = (*self.managed).deleter {
                deleter(self.managed);
            }
        }
    }
}
