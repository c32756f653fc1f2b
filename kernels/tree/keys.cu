// kernels/tree/keys.cu — particle keys of the Cornerstone tree build
// (crates/orrery-tree-build/src/gpu/keys.rs; host reference crate::input::particle_keys).
// Module "tree/keys": common.cuh, this file.
//
// What it computes, for i < n:
//   tb_remove_outside_F  keys[i] = key_end (1 << key_bits) where the particle is not in the
//                        closed box, i.e. !(lo[a] <= p[a] && p[a] <= hi[a]) on some axis
//                        (NaN included); other keys are left as they are. Octree keys come
//                        from the executor's sfc_keys primitive (KeyMapper::key_clamped),
//                        binary keys from tb_binary_keys_F; this pass then removes.
//   tb_binary_keys_F     keys[i] = BinaryLayout::<F, u64>::key_clamped(x[i], y[i], z[i]):
//                        per axis c = q((p - min) * scale) in F (__fsub_rn/__fmul_rn or
//                        __dsub_rn/__dmul_rn: one rounded subtraction and multiplication,
//                        never an FMA), q(g) = 0 unless g > 0, 2^bits[a] - 1 when
//                        g >= 2^bits[a] (compared in F: powers of two are exact), else
//                        trunc(g) (64-bit: an axis may take up to 63 bits); then one key bit
//                        per level l = 0..levels, most significant first, the next bit from
//                        the top of axis axes[l]'s coordinate.
//
// Launch shape: one thread per particle, ceil(n / TB_THREADS) blocks of TB_THREADS: every
//   key is independent and the positions are read once, coalesced (structure of arrays).
//
// Buffers (direction, length, layout)
//   x, y, z  read   n        F positions (structure of arrays)
//   bounds   read   6        F box: lo x, y, z, hi x, y, z
//   axes     read   levels   u32 split axis per level (BinaryLayout::axes)
//   keys     write  n        u64 keys
//
// Invariants: none on positions (any value is clamped as on the host); the scalars are
//   the host's BinaryLayout (scale, bits per axis) of the same box.
//
// Measured cost: not measured yet. Later: fuse the removal into the key kernels (one read
//   of the positions instead of two).

template <typename F>
__device__ __forceinline__ void remove_outside(const F* __restrict__ x, const F* __restrict__ y,
                                               const F* __restrict__ z, const F* __restrict__ bounds,
                                               u64* __restrict__ keys, u32 n, u32 key_bits) {
    const u64 i = tb_item();
    if (i >= n) return;
    const F px = x[i], py = y[i], pz = z[i];
    const bool inside = bounds[0] <= px && px <= bounds[3] && bounds[1] <= py && py <= bounds[4] &&
                        bounds[2] <= pz && pz <= bounds[5];
    if (!inside) keys[i] = 1ull << key_bits;
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_remove_outside_f32(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                          const float* __restrict__ bounds, u64* __restrict__ keys, u32 n, u32 key_bits) {
    remove_outside<float>(x, y, z, bounds, keys, n, key_bits);
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_remove_outside_f64(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                          const double* __restrict__ bounds, u64* __restrict__ keys, u32 n, u32 key_bits) {
    remove_outside<double>(x, y, z, bounds, keys, n, key_bits);
}

__device__ __forceinline__ float tb_scaled(float p, float lo, float s) { return __fmul_rn(__fsub_rn(p, lo), s); }
__device__ __forceinline__ double tb_scaled(double p, double lo, double s) { return __dmul_rn(__dsub_rn(p, lo), s); }

template <typename F>
__device__ __forceinline__ u64 tb_quantize(F p, F lo, F s, F cells, u32 bits) {
    const F g = tb_scaled(p, lo, s);
    if (!(g > (F)0)) return 0ull;
    if (g >= cells) return (1ull << bits) - 1ull;
    return (u64)g;  // 0 < g < 2^63: truncation, as the host's signed conversion
}

template <typename F>
__device__ __forceinline__ void binary_keys(const F* __restrict__ x, const F* __restrict__ y, const F* __restrict__ z,
                                            const u32* __restrict__ axes, u64* __restrict__ keys, u32 n, u32 levels,
                                            F min_x, F min_y, F min_z, F scale_x, F scale_y, F scale_z,
                                            u32 bits_x, u32 bits_y, u32 bits_z) {
    const u64 i = tb_item();
    if (i >= n) return;
    u64 c[3];
    c[0] = tb_quantize<F>(x[i], min_x, scale_x, (F)(1ull << bits_x), bits_x);
    c[1] = tb_quantize<F>(y[i], min_y, scale_y, (F)(1ull << bits_y), bits_y);
    c[2] = tb_quantize<F>(z[i], min_z, scale_z, (F)(1ull << bits_z), bits_z);
    u32 remaining[3] = {bits_x, bits_y, bits_z};
    u64 key = 0ull;
    for (u32 l = 0u; l < levels; ++l) {
        const u32 a = axes[l] % 3u;
        remaining[a] -= 1u;
        key = (key << 1) | ((c[a] >> (remaining[a] & 63u)) & 1ull);
    }
    keys[i] = key;
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_binary_keys_f32(const float* __restrict__ x, const float* __restrict__ y, const float* __restrict__ z,
                       const u32* __restrict__ axes, u64* __restrict__ keys, u32 n, u32 levels, float min_x,
                       float min_y, float min_z, float scale_x, float scale_y, float scale_z, u32 bits_x,
                       u32 bits_y, u32 bits_z) {
    binary_keys<float>(x, y, z, axes, keys, n, levels, min_x, min_y, min_z, scale_x, scale_y, scale_z, bits_x,
                       bits_y, bits_z);
}

extern "C" __global__ void __launch_bounds__(TB_THREADS)
    tb_binary_keys_f64(const double* __restrict__ x, const double* __restrict__ y, const double* __restrict__ z,
                       const u32* __restrict__ axes, u64* __restrict__ keys, u32 n, u32 levels, double min_x,
                       double min_y, double min_z, double scale_x, double scale_y, double scale_z, u32 bits_x,
                       u32 bits_y, u32 bits_z) {
    binary_keys<double>(x, y, z, axes, keys, n, levels, min_x, min_y, min_z, scale_x, scale_y, scale_z, bits_x,
                        bits_y, bits_z);
}
