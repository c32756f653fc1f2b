// core/data — data movement by element size: copy, fill, iota, gather, scatter; the
// indirect-launch arguments of a device count.
//
// What it computes (n = params.n, one invocation per element, i < n; every buffer is a
// view: element i of binding `b` is b[off_b + i], off_b the executor-filled `off_*`
// field, in the binding's elements):
//   copy_128    dst[i] = src[i]                         (16-byte units as vec4<u32>: a copy
//               whose byte offsets and length are multiples of 16)
//   copy_32     dst[i] = src[i]                         (32-bit words: the other copies of
//               4-byte aligned offsets and length)
//   fill_32     buf[i] = value                          (4-byte elements: u32, i32, f32)
//   fill_64     buf[i] = value                          (8-byte elements as vec2<u32>)
//   fill_words  word j < n * words of buf: value word (j % words) - first when it is in
//               first..first + 16 (elements of `words` 32-bit words; the host runs one
//               launch per 16 words of the element)
//   iota        buf[i] = start + i                      (wrapping u32)
//   gather_32   output[i] = input[indices[i]] (0 when indices[i] >= len)   gather_64: 8-byte
//   scatter_32  output[indices[i]] = input[i] (skipped when indices[i] >= len)   scatter_64
//   gather_words / scatter_words: the same per 32-bit word, one invocation per word of
//               the output (gather) or input (scatter), elements of `words` words
//   indirect_args  args[0..4] = gpu::indirect_words(ceil(c / items_per_block), max_dim)
//               with c = min(count[0], bound): one invocation
//
// Launch shape: WORKGROUP_SIZE (256) invocations per workgroup, ceil(n / 256) (words:
// ceil(n * words / 256)) workgroups as a 1D grid spread over a 2D dispatch
// (linear_block); invocations past the end return. indirect_args: one workgroup.
//
// Buffers (binding: direction, length, layout)
//   copy_*:           0 src (read, n), 1 dst (write, n); distinct allocations (one
//                     allocation cannot be bound read and read_write in one dispatch)
//   fill_*, iota:     0 buf (write, >= n)
//   gather_*:         0 input (read, len), 1 indices (read, n, u32), 2 output (write, n)
//   scatter_*:        0 input (read, n), 1 indices (read, n, u32), 2 output (write, len)
//   indirect_args:    0 count (read, 1, u32), 1 args (write, 4, u32)
//   last binding:     params (uniform)
// 8-byte elements (u64, i64, f64) are vec2<u32>, low word first; other element sizes are
// moved word by word: these kernels move bits and never interpret them, so one kernel
// per size serves every Storage type.
//
// Invariants: indices outside the view give 0 (gather) or are skipped (scatter), so a
// bad index never touches memory outside the views; scatter indices should be distinct
// (duplicates leave one of the candidates, word by word for the word kernels).
//
// Measured cost (examples/wgpu_primitives, median of 7, device timestamps):
//   lavapipe (llvmpipe, 2 cores), 1M u64 gather: 8.2 ms (before views). H200: not
//   measured yet.
//   Copies (examples/wgpu_probe, raw wgpu 30, H200 Vulkan, NVIDIA 580.159.04, 1 GiB):
//   one vec4<u32> per invocation 0.504 ms (4259 GB/s, CUDA's copy), one u32 per
//   invocation 0.926 ms (2318 GB/s), copy_buffer_to_buffer 2.526 ms (850 GB/s): so the
//   executor's copy is copy_128 where it can be, copy_32 otherwise.

//#include core/common

struct CopyParams128 {
    n: u32,
    off_copy128_src: u32,
    off_copy128_dst: u32,
}

struct CopyParams32 {
    n: u32,
    off_copy32_src: u32,
    off_copy32_dst: u32,
}

struct FillParams32 {
    n: u32,
    value: u32,
    off_fill32_buf: u32,
}

struct FillParams64 {
    n: u32,
    off_fill64_buf: u32,
    value: vec2<u32>,
}

struct FillParamsWords {
    n_words: u32,
    words: u32,
    first: u32,
    off_fillw_buf: u32,
    value: array<vec4<u32>, 4>,
}

struct IotaParams {
    n: u32,
    start: u32,
    off_iota_buf: u32,
}

struct MoveParams {
    n: u32,
    len: u32,
    off_move32_in: u32,
    off_move32_idx: u32,
    off_move32_out: u32,
    off_move64_in: u32,
    off_move64_idx: u32,
    off_move64_out: u32,
}

struct MoveWordsParams {
    n: u32,
    len: u32,
    words: u32,
    off_movew_in: u32,
    off_movew_idx: u32,
    off_movew_out: u32,
}

struct IndirectParams {
    bound: u32,
    items_per_block: u32,
    max_per_dimension: u32,
    off_ia_count: u32,
    off_ia_args: u32,
}

@group(0) @binding(0) var<storage, read> copy128_src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> copy128_dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> copy128_params: CopyParams128;

@compute @workgroup_size(WORKGROUP_SIZE)
fn copy_128(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < copy128_params.n {
        copy128_dst[copy128_params.off_copy128_dst + i] = copy128_src[copy128_params.off_copy128_src + i];
    }
}

@group(0) @binding(0) var<storage, read> copy32_src: array<u32>;
@group(0) @binding(1) var<storage, read_write> copy32_dst: array<u32>;
@group(0) @binding(2) var<uniform> copy32_params: CopyParams32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn copy_32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < copy32_params.n {
        copy32_dst[copy32_params.off_copy32_dst + i] = copy32_src[copy32_params.off_copy32_src + i];
    }
}

@group(0) @binding(0) var<storage, read_write> fill32_buf: array<u32>;
@group(0) @binding(1) var<uniform> fill32_params: FillParams32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn fill_32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < fill32_params.n {
        fill32_buf[fill32_params.off_fill32_buf + i] = fill32_params.value;
    }
}

@group(0) @binding(0) var<storage, read_write> fill64_buf: array<vec2<u32>>;
@group(0) @binding(1) var<uniform> fill64_params: FillParams64;

@compute @workgroup_size(WORKGROUP_SIZE)
fn fill_64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < fill64_params.n {
        fill64_buf[fill64_params.off_fill64_buf + i] = fill64_params.value;
    }
}

@group(0) @binding(0) var<storage, read_write> fillw_buf: array<u32>;
@group(0) @binding(1) var<uniform> fillw_params: FillParamsWords;

@compute @workgroup_size(WORKGROUP_SIZE)
fn fill_words(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if j < fillw_params.n_words {
        let w = j % fillw_params.words;
        if w >= fillw_params.first && w < fillw_params.first + 16u {
            let k = w - fillw_params.first;
            fillw_buf[fillw_params.off_fillw_buf + j] = fillw_params.value[k / 4u][k % 4u];
        }
    }
}

@group(0) @binding(0) var<storage, read_write> iota_buf: array<u32>;
@group(0) @binding(1) var<uniform> iota_params: IotaParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn iota(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < iota_params.n {
        iota_buf[iota_params.off_iota_buf + i] = iota_params.start + i;
    }
}

@group(0) @binding(0) var<storage, read> move32_in: array<u32>;
@group(0) @binding(1) var<storage, read> move32_idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> move32_out: array<u32>;
@group(0) @binding(3) var<uniform> move_params: MoveParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn gather_32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < move_params.n {
        let idx = move32_idx[move_params.off_move32_idx + i];
        var v = 0u;
        if idx < move_params.len {
            v = move32_in[move_params.off_move32_in + idx];
        }
        move32_out[move_params.off_move32_out + i] = v;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scatter_32(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < move_params.n {
        let idx = move32_idx[move_params.off_move32_idx + i];
        if idx < move_params.len {
            move32_out[move_params.off_move32_out + idx] = move32_in[move_params.off_move32_in + i];
        }
    }
}

@group(0) @binding(0) var<storage, read> move64_in: array<vec2<u32>>;
@group(0) @binding(1) var<storage, read> move64_idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> move64_out: array<vec2<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn gather_64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < move_params.n {
        let idx = move64_idx[move_params.off_move64_idx + i];
        var v = vec2<u32>(0u);
        if idx < move_params.len {
            v = move64_in[move_params.off_move64_in + idx];
        }
        move64_out[move_params.off_move64_out + i] = v;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scatter_64(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    if i < move_params.n {
        let idx = move64_idx[move_params.off_move64_idx + i];
        if idx < move_params.len {
            move64_out[move_params.off_move64_out + idx] = move64_in[move_params.off_move64_in + i];
        }
    }
}

@group(0) @binding(0) var<storage, read> movew_in: array<u32>;
@group(0) @binding(1) var<storage, read> movew_idx: array<u32>;
@group(0) @binding(2) var<storage, read_write> movew_out: array<u32>;
@group(0) @binding(3) var<uniform> movew_params: MoveWordsParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn gather_words(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    let w = movew_params.words;
    if j < movew_params.n * w {
        let i = j / w;
        let idx = movew_idx[movew_params.off_movew_idx + i];
        var v = 0u;
        if idx < movew_params.len {
            v = movew_in[movew_params.off_movew_in + idx * w + j % w];
        }
        movew_out[movew_params.off_movew_out + j] = v;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn scatter_words(inv: Invocation, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_block(wid, nwg) * WORKGROUP_SIZE + inv.lid;
    let w = movew_params.words;
    if j < movew_params.n * w {
        let i = j / w;
        let idx = movew_idx[movew_params.off_movew_idx + i];
        if idx < movew_params.len {
            movew_out[movew_params.off_movew_out + idx * w + j % w] = movew_in[movew_params.off_movew_in + j];
        }
    }
}

@group(0) @binding(0) var<storage, read> ia_count: array<u32>;
@group(0) @binding(1) var<storage, read_write> ia_args: array<u32>;
@group(0) @binding(2) var<uniform> ia_params: IndirectParams;

@compute @workgroup_size(WORKGROUP_SIZE)
fn indirect_args(inv: Invocation) {
    if inv.lid != 0u {
        return;
    }
    let c = min(ia_count[ia_params.off_ia_count], ia_params.bound);
    let per = ia_params.items_per_block;
    // ceil(c / per) without overflow.
    let blocks = c / per + select(0u, 1u, c % per != 0u);
    let at = ia_params.off_ia_args;
    if blocks == 0u {
        ia_args[at] = 0u;
        ia_args[at + 1u] = 1u;
        ia_args[at + 2u] = 1u;
        ia_args[at + 3u] = 0u;
        return;
    }
    let max = max(ia_params.max_per_dimension, 1u);
    let rows = blocks / max + select(0u, 1u, blocks % max != 0u);
    ia_args[at] = blocks / rows + select(0u, 1u, blocks % rows != 0u);
    ia_args[at + 1u] = rows;
    ia_args[at + 2u] = 1u;
    ia_args[at + 3u] = blocks;
}
