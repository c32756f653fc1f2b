//! Fill, iota, gather and scatter: `kernels/core/movement.cu` (fills whose element is one
//! repeated 32-bit word are `cuMemsetD32Async`).
//!
//! Element sizes 4 and 8 have their own kernels; every other multiple of 4 bytes goes
//! through the word kernels (one thread per 32-bit word), so any [`Storage`] type a GPU
//! buffer can hold moves.

use orrery_core::executor::check_len;
use orrery_core::{Result, Storage, ViewMutOf, ViewOf};

use super::{blocks, check_count};
use crate::CudaExecutor;
use crate::kernels::MOVEMENT;
use crate::launch::Arg;

/// The element's 32-bit words (its size is a multiple of 4: `check_gpu_storage` holds for
/// every buffer).
fn element_words<T: Storage>(value: &T) -> Vec<u32> {
    bytemuck::bytes_of(value).chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

impl CudaExecutor {
    pub(crate) fn fill_impl<T: Storage>(&self, dst: ViewMutOf<'_, Self, T>, value: T) -> Result<()> {
        let n = dst.len();
        if n == 0 {
            return Ok(());
        }
        let words = element_words(&value);
        let offset = (dst.offset() * size_of::<T>()) as u64;
        if words.iter().all(|&w| w == words[0]) {
            return self.memset_u32(&dst.buffer().raw, offset, words[0], n * words.len());
        }
        let p = self.policy;
        if words.len() == 2 {
            let bits = u64::from(words[0]) | (u64::from(words[1]) << 32);
            return self.launch_entry(
                &MOVEMENT,
                "fill_b8",
                blocks(n, p.move_block_items()),
                p.move_threads,
                &[Arg::view_mut(&dst), Arg::U64(bits), Arg::U64(n as u64)],
            );
        }
        for (chunk_index, chunk) in words.chunks(8).enumerate() {
            let mut w = [0u32; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.launch_entry(
                &MOVEMENT,
                "fill_words",
                blocks(n, p.move_block_items()),
                p.move_threads,
                &[
                    Arg::view_mut(&dst),
                    Arg::U64(n as u64),
                    Arg::U32(words.len() as u32),
                    Arg::U32((chunk_index * 8) as u32),
                    Arg::U32(w[0]),
                    Arg::U32(w[1]),
                    Arg::U32(w[2]),
                    Arg::U32(w[3]),
                    Arg::U32(w[4]),
                    Arg::U32(w[5]),
                    Arg::U32(w[6]),
                    Arg::U32(w[7]),
                ],
            )?;
        }
        Ok(())
    }

    pub(crate) fn iota_impl(&self, dst: ViewMutOf<'_, Self, u32>, start: u32) -> Result<()> {
        let n = dst.len();
        self.launch_entry(
            &MOVEMENT,
            "iota_u32",
            blocks(n, self.policy.move_block_items()),
            self.policy.move_threads,
            &[Arg::view_mut(&dst), Arg::U32(start), Arg::U64(n as u64)],
        )
    }

    /// Gather (`scatter == false`) or scatter: `len_other` is the length of the indexed
    /// side (the gather's input, the scatter's output), which bounds the indices.
    #[allow(clippy::too_many_arguments)]
    fn move_indexed<T: Storage>(
        &self,
        entry_b4: &str,
        entry_b8: &str,
        entry_words: &str,
        input: ViewOf<'_, Self, T>,
        indices: ViewOf<'_, Self, u32>,
        output: &ViewMutOf<'_, Self, T>,
        n: usize,
        len_other: usize,
    ) -> Result<()> {
        let p = self.policy;
        let size = size_of::<T>();
        let common = [
            Arg::view(input),
            Arg::view(indices),
            Arg::view_mut(output),
            Arg::U64(n as u64),
            Arg::U64(len_other as u64),
        ];
        match size {
            4 => self.launch_entry(&MOVEMENT, entry_b4, blocks(n, p.move_block_items()), p.move_threads, &common),
            8 => self.launch_entry(&MOVEMENT, entry_b8, blocks(n, p.move_block_items()), p.move_threads, &common),
            _ => {
                let words = size / 4;
                let total = n.checked_mul(words).ok_or(orrery_core::Error::TooManyPoints {
                    count: n,
                    max: usize::MAX / words,
                    what: "elements of a word-wise gather or scatter",
                })?;
                let mut args = common.to_vec();
                args.push(Arg::U32(words as u32));
                self.launch_entry(&MOVEMENT, entry_words, blocks(total, p.move_block_items()), p.move_threads, &args)
            }
        }
    }

    pub(crate) fn gather_impl<T: Storage>(
        &self,
        input: ViewOf<'_, Self, T>,
        indices: ViewOf<'_, Self, u32>,
        output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        check_len("gather output", indices.len(), output.len())?;
        check_count("gather indices", indices.len())?;
        let n = indices.len();
        self.move_indexed("gather_b4", "gather_b8", "gather_words", input, indices, &output, n, input.len())
    }

    pub(crate) fn scatter_impl<T: Storage>(
        &self,
        input: ViewOf<'_, Self, T>,
        indices: ViewOf<'_, Self, u32>,
        output: ViewMutOf<'_, Self, T>,
    ) -> Result<()> {
        check_len("scatter indices", input.len(), indices.len())?;
        check_count("scatter input", input.len())?;
        let n = input.len();
        let len_out = output.len();
        self.move_indexed("scatter_b4", "scatter_b8", "scatter_words", input, indices, &output, n, len_out)
    }
}
