// kernels/core/movement.cu — data movement by element size: gather, scatter, fill, iota,
// and the indirect-launch arguments.
//
// What it computes
//   gather_b4/_b8(in, idx, out, n, len_in):   out[i] = idx[i] < len_in ? in[idx[i]] : 0     for i < n
//   scatter_b4/_b8(in, idx, out, n, len_out): out[idx[i]] = in[i] where idx[i] < len_out     for i < n
//   gather_words / scatter_words (..., words): the same for elements of `words` u32 words
//                                      (any element size that is a multiple of 4 bytes),
//                                      one thread per output word (gather) / input word
//                                      (scatter) of the n * words words.
//   fill_b8(buf, value, n):            buf[i] = value               for i < n
//   fill_words(buf, n, words, first, w0..w7): word first + k of every element i < n set to
//                                      w_k for k < min(8, words - first) (the host launches
//                                      once per 8 words of the element)
//   iota_u32(buf, start, n):           buf[i] = start + i (wrapping) for i < n
//   indirect_args(count, args, bound, items_per_block, max_per_dim): one thread;
//                                      c = min(*count, bound), blocks = ceil(c / items_per_block),
//                                      args = orrery_core::gpu::indirect_words(blocks, max_per_dim):
//                                      [0, 1, 1, 0] for no blocks, else rows = ceil(blocks / max),
//                                      [ceil(blocks / rows), rows, 1, blocks].
//   (4-byte fills use cuMemsetD32Async; copies use cuMemcpyDtoDAsync.)
//
// Launch shape: grid = ceil(items / (MOVE_THREADS * MOVE_ITEMS)) blocks, block = MOVE_THREADS
// (items = n, or n * words for the word kernels); thread t of block b handles
// i = b * MOVE_THREADS * MOVE_ITEMS + k * MOVE_THREADS + t, k < MOVE_ITEMS, so every
// warp-wide access to idx, to the output of a gather and to the input of a scatter is
// coalesced; all loads of a thread are issued before its stores. indirect_args: 1 block.
//
// Buffers (each pointer is a view's first element: element-aligned, any offset)
//   in    T[len_in]   read            (gather: indices >= len_in read 0, never fault)
//   idx   u32[n]      read            (scatter: indices >= len_out are skipped)
//   out   T[...]      written
//   count u32[1] read, args u32[4] written (indirect_args)
//
// Invariants: scatter indices are distinct, otherwise which value lands (for the word
// kernels: which value each word comes from) is unspecified; n * words < 2^64.
//
// Measured cost (H200, driver 580.159.04): gather of 64M u32 by a random permutation in
// 1.72 ms (random 4-byte reads: one 32-byte sector per element), before the bounds check
// on indices; the word kernels, fill_words and indirect_args: not measured yet.

#if !defined(MOVE_THREADS) || !defined(MOVE_ITEMS)
#error "movement.cu needs MOVE_THREADS and MOVE_ITEMS from the executor's policy"
#endif

__device__ __forceinline__ u64 move_index(u32 k) {
    return (u64)blockIdx.x * (MOVE_THREADS * MOVE_ITEMS) + (u64)k * MOVE_THREADS + threadIdx.x;
}

template <typename T>
__device__ __forceinline__ void gather_impl(const T* __restrict__ in, const u32* __restrict__ idx, T* __restrict__ out,
                                            u64 n, u64 len_in) {
    u32 j[MOVE_ITEMS];
    T v[MOVE_ITEMS];
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        j[k] = (i < n) ? idx[i] : 0u;
    }
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        v[k] = (move_index(k) < n && (u64)j[k] < len_in) ? in[j[k]] : (T)0;
    }
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        if (i < n) out[i] = v[k];
    }
}

template <typename T>
__device__ __forceinline__ void scatter_impl(const T* __restrict__ in, const u32* __restrict__ idx, T* __restrict__ out,
                                             u64 n, u64 len_out) {
    u32 j[MOVE_ITEMS];
    T v[MOVE_ITEMS];
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        j[k] = 0xffffffffu;
        v[k] = (T)0;
        if (i < n) {
            j[k] = idx[i];
            v[k] = in[i];
        }
    }
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        if (move_index(k) < n && (u64)j[k] < len_out) out[j[k]] = v[k];
    }
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    gather_b4(const u32* __restrict__ in, const u32* __restrict__ idx, u32* __restrict__ out, u64 n, u64 len_in) {
    gather_impl<u32>(in, idx, out, n, len_in);
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    gather_b8(const u64* __restrict__ in, const u32* __restrict__ idx, u64* __restrict__ out, u64 n, u64 len_in) {
    gather_impl<u64>(in, idx, out, n, len_in);
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    scatter_b4(const u32* __restrict__ in, const u32* __restrict__ idx, u32* __restrict__ out, u64 n, u64 len_out) {
    scatter_impl<u32>(in, idx, out, n, len_out);
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    scatter_b8(const u64* __restrict__ in, const u32* __restrict__ idx, u64* __restrict__ out, u64 n, u64 len_out) {
    scatter_impl<u64>(in, idx, out, n, len_out);
}

// One thread per output word g < n * words: element g / words, word g % words.
extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    gather_words(const u32* __restrict__ in, const u32* __restrict__ idx, u32* __restrict__ out, u64 n, u64 len_in,
                 u32 words) {
    const u64 total = n * words;
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 g = move_index(k);
        if (g < total) {
            const u64 e = g / words;
            const u32 w = (u32)(g - e * words);
            const u32 j = idx[e];
            out[g] = ((u64)j < len_in) ? in[(u64)j * words + w] : 0u;
        }
    }
}

// One thread per input word g < n * words.
extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    scatter_words(const u32* __restrict__ in, const u32* __restrict__ idx, u32* __restrict__ out, u64 n, u64 len_out,
                  u32 words) {
    const u64 total = n * words;
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 g = move_index(k);
        if (g < total) {
            const u64 e = g / words;
            const u32 w = (u32)(g - e * words);
            const u32 j = idx[e];
            if ((u64)j < len_out) out[(u64)j * words + w] = in[g];
        }
    }
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS) fill_b8(u64* __restrict__ buf, u64 value, u64 n) {
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        if (i < n) buf[i] = value;
    }
}

// Words first .. first + min(8, words - first) of every element i < n; one thread per element.
extern "C" __global__ void __launch_bounds__(MOVE_THREADS)
    fill_words(u32* __restrict__ buf, u64 n, u32 words, u32 first, u32 w0, u32 w1, u32 w2, u32 w3, u32 w4, u32 w5,
               u32 w6, u32 w7) {
    const u32 value[8] = {w0, w1, w2, w3, w4, w5, w6, w7};
    const u32 count = min(8u, words - first);
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        if (i < n) {
            u32* e = buf + i * words + first;
#pragma unroll
            for (u32 w = 0; w < 8; ++w) {
                if (w < count) e[w] = value[w];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(MOVE_THREADS) iota_u32(u32* __restrict__ buf, u32 start, u64 n) {
#pragma unroll
    for (u32 k = 0; k < MOVE_ITEMS; ++k) {
        const u64 i = move_index(k);
        if (i < n) buf[i] = start + (u32)i;
    }
}

extern "C" __global__ void indirect_args(const u32* __restrict__ count, u32* __restrict__ args, u32 bound,
                                         u32 items_per_block, u32 max_per_dim) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    const u32 c = min(*count, bound);
    const u32 per = max(items_per_block, 1u);
    const u32 blocks = (u32)(((u64)c + per - 1) / per);
    if (blocks == 0) {
        args[0] = 0u;
        args[1] = 1u;
        args[2] = 1u;
        args[3] = 0u;
        return;
    }
    const u32 m = max(max_per_dim, 1u);
    const u32 rows = (u32)(((u64)blocks + m - 1) / m);
    args[0] = (u32)(((u64)blocks + rows - 1) / rows);
    args[1] = rows;
    args[2] = 1u;
    args[3] = blocks;
}
