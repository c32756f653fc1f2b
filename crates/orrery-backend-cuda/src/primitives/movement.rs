//! Fill, iota, gather and scatter: `kernels/core/movement.cu` (4-byte fills are
//! `cuMemsetD32Async`).

use orrery_core::executor::check_len;
use orrery_core::{DeviceBuffer, Element, Result};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::buffer::CudaBuffer;
use crate::kernels::MOVEMENT;
use crate::launch::Arg;

/// The bits of a 4- or 8-byte element, zero-extended to 64 bits.
fn element_bits<T: Element>(value: T) -> u64 {
    let bytes = bytemuck::bytes_of(&value);
    let mut wide = [0u8; 8];
    wide[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(wide)
}

impl CudaExecutor {
    pub(crate) fn fill_impl<T: Element>(&self, buf: &mut CudaBuffer<T>, value: T) -> Result<()> {
        let n = buf.len();
        if n == 0 {
            return Ok(());
        }
        let bits = element_bits(value);
        if size_of::<T>() == 4 {
            return self.memset_u32(buf.device_ptr(), bits as u32, n);
        }
        self.launch_entry(
            &MOVEMENT,
            "fill_b8",
            blocks(n, self.policy.move_block_items()),
            self.policy.move_threads,
            &[Arg::buf(buf), Arg::U64(bits), Arg::U64(n as u64)],
        )
    }

    pub(crate) fn iota_impl(&self, buf: &mut CudaBuffer<u32>, start: u32) -> Result<()> {
        let n = buf.len();
        self.launch_entry(
            &MOVEMENT,
            "iota_u32",
            blocks(n, self.policy.move_block_items()),
            self.policy.move_threads,
            &[Arg::buf(buf), Arg::U32(start), Arg::U64(n as u64)],
        )
    }

    pub(crate) fn gather_impl<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        indices: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
    ) -> Result<()> {
        check_len("gather output", indices.len(), output.len())?;
        check_count("gather indices", indices.len())?;
        let entry = if size_of::<T>() == 4 { "gather_b4" } else { "gather_b8" };
        let n = indices.len();
        self.launch_entry(
            &MOVEMENT,
            entry,
            blocks(n, self.policy.move_block_items()),
            self.policy.move_threads,
            &[Arg::buf(input), Arg::buf(indices), Arg::buf(output), Arg::U64(n as u64)],
        )
    }

    pub(crate) fn scatter_impl<T: Element>(
        &self,
        input: &CudaBuffer<T>,
        indices: &CudaBuffer<u32>,
        output: &mut CudaBuffer<T>,
    ) -> Result<()> {
        check_len("scatter indices", input.len(), indices.len())?;
        check_count("scatter input", input.len())?;
        let entry = if size_of::<T>() == 4 { "scatter_b4" } else { "scatter_b8" };
        let n = input.len();
        self.launch_entry(
            &MOVEMENT,
            entry,
            blocks(n, self.policy.move_block_items()),
            self.policy.move_threads,
            &[Arg::buf(input), Arg::buf(indices), Arg::buf(output), Arg::U64(n as u64)],
        )
    }
}
