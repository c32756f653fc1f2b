//! Device memory that another library owns — a PyTorch tensor, a CuPy array, anything
//! handed over through DLPack — used in place by orrery's kernels.
//!
//! A framework that already holds its data on the GPU must not pay a host round trip to
//! call orrery: [`CudaExecutor::wrap_external`] turns its device pointer into a
//! [`CudaBuffer`] that every primitive and kernel launch accepts and that frees nothing
//! when dropped. The pointer is checked against the driver's own record of it (memory
//! type, device, allocation range) before it is wrapped, so a host pointer, a pointer
//! of another device or a range past the end of its allocation is a typed error rather
//! than a fault. [`CudaExecutor::stream_handle`] gives the executor's stream, the one
//! a DLPack producer is asked to order its work before (`__dlpack__(stream=...)`).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::sys;
use orrery_core::{Error, Result, Storage};

use crate::buffer::{Allocation, CudaBuffer, RawBuffer};
use crate::executor::CudaExecutor;

impl CudaExecutor {
    /// Wraps `len` elements of type `T` at device address `ptr`, memory this executor
    /// does not own: the buffer can be read and written by every operation of the
    /// executor, and dropping it frees nothing. Its capacity is `len`; an operation that
    /// would grow it (a `reserve` past `len`) replaces the allocation by one of the
    /// executor's own, as for any buffer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `ptr` is null (with `len > 0`), not aligned for
    /// `T`, not device memory of this executor's device, or when the `len` elements run
    /// past the end of the allocation that holds `ptr`; [`Error::BufferTooLarge`] when the
    /// byte count overflows; device failures.
    ///
    /// # Safety
    /// The memory must stay allocated, and must not be written by anything other than
    /// this executor, while the returned buffer or any work enqueued on it is alive (the
    /// caller orders other streams' work before and after, e.g. by synchronising). The
    /// checks above catch wrong addresses; they cannot see a later free by the owner.
    pub unsafe fn wrap_external<T: Storage>(&self, ptr: u64, len: usize) -> Result<CudaBuffer<T>> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(Error::BufferTooLarge {
            backend: crate::error::BACKEND,
            requested_bytes: u64::MAX,
            max_bytes: self.total_memory() as u64,
        })?;
        if len == 0 {
            let raw = RawBuffer { alloc: Allocation::borrowed(Arc::clone(&self.stream), 0, 0), len_bytes: 0 };
            return Ok(CudaBuffer::from_raw(raw, 0, 0));
        }
        let invalid = |reason: String| Error::InvalidArgument { what: "external device pointer", reason };
        if ptr == 0 {
            return Err(invalid(format!("null pointer for {len} elements")));
        }
        if !ptr.is_multiple_of(align_of::<T>() as u64) {
            return Err(invalid(format!(
                "{ptr:#x} is not aligned to {} bytes for {}",
                align_of::<T>(),
                std::any::type_name::<T>()
            )));
        }
        self.stream.bind()?;
        let info = PointerInfo::of(ptr)?;
        if info.memory_type != sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
            return Err(invalid(format!("{ptr:#x} is not device memory (CUmemorytype {})", info.memory_type)));
        }
        if usize::try_from(info.ordinal).ok() != Some(self.ordinal()) {
            return Err(invalid(format!(
                "{ptr:#x} is on device {}, this executor on device {}",
                info.ordinal,
                self.ordinal()
            )));
        }
        if ptr + bytes as u64 > info.start + info.size as u64 {
            return Err(invalid(format!(
                "{bytes} bytes from {ptr:#x} run past the end of its allocation ({} bytes from {:#x})",
                info.size, info.start
            )));
        }
        let raw = RawBuffer { alloc: Allocation::borrowed(Arc::clone(&self.stream), ptr, bytes), len_bytes: bytes };
        Ok(CudaBuffer::from_raw(raw, len, len))
    }

    /// The executor's CUDA stream (`CUstream` as an integer): where all its work is
    /// enqueued. Give it to a DLPack producer (`tensor.__dlpack__(stream=handle)`) so
    /// that the producer's pending work is ordered before orrery's, or to
    /// `torch.cuda.ExternalStream` to order later framework work after it.
    pub fn stream_handle(&self) -> u64 {
        self.stream.raw() as u64
    }
}

/// What the driver records of a device address.
struct PointerInfo {
    /// `CUmemorytype` (0 for memory the driver does not know).
    memory_type: u32,
    /// Device ordinal of the allocation.
    ordinal: i32,
    /// Start address and size of the allocation that holds the pointer.
    start: u64,
    size: usize,
}

impl PointerInfo {
    /// All four attributes in one driver call (`cuPointerGetAttributes` leaves them zero,
    /// rather than failing, for a pointer it does not know).
    fn of(ptr: u64) -> Result<Self> {
        let mut info = Self { memory_type: 0, ordinal: -1, start: 0, size: 0 };
        let mut attributes = [
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        ];
        let mut data: [*mut c_void; 4] = [
            (&raw mut info.memory_type).cast(),
            (&raw mut info.ordinal).cast(),
            (&raw mut info.start).cast(),
            (&raw mut info.size).cast(),
        ];
        // SAFETY: each data pointer addresses a live field of the C type the driver
        // writes for its attribute (unsigned int, int, CUdeviceptr, size_t); the context
        // is current.
        let r = unsafe { sys::cuPointerGetAttributes(4, attributes.as_mut_ptr(), data.as_mut_ptr(), ptr) };
        match r {
            sys::CUresult::CUDA_SUCCESS => Ok(info),
            e => Err(crate::error::device_error("cuPointerGetAttributes", cudarc::driver::DriverError(e))),
        }
    }
}
