// kernels/core/sfc.cu — 64-bit 3D space-filling-curve keys of positions (Morton and
// Hilbert, f32 and f64), bit-identical to orrery_core::sfc::KeyMapper::<T, u64>::key_clamped.
//
// What it computes, for i < n:
//   keys[i] = curve(q(x[i], lo.x, s.x), q(y[i], lo.y, s.y), q(z[i], lo.z, s.z))
//   q(v, lo, s) = f > 0 ? (f >= 2^21 ? 2^21 - 1 : (u32)f) : 0,  f = floor((v - lo) * s)
//   in T with one rounded subtraction and one rounded multiplication (__fsub_rn/__fmul_rn,
//   never contracted into an FMA; NaN gives 0), s = KeyMapper::scale() as computed on the
//   host, lo = bbox().min().
//   Morton: bit 3l+2 of the key is bit l of x, 3l+1 of y, 3l of z (l < 21).
//   Hilbert: Cornerstone's curve as a state machine over the Morton digits, coarsest
//   level first: e = ENCODE_3D[(e & ~7) | m_l], digit_l = e & 7 (orrery_core::sfc::hilbert).
//
// Two Hilbert kernels, same output (the policy picks one; the benchmark times both):
//   sfc_hilbert1_*  the baseline: Morton key, then one lookup per level in the 192-byte
//                   table (21 dependent lookups).
//   sfc_hilbert3_*  three levels per lookup, indexed by raw coordinate bits: a 24 x 512 table
//                   of u16 (24 KB, built per block from the 192-byte one), entry =
//                   next_state << 9 | three digits, indexed by
//                   (entry & ~511) | x[3g+2..3g] << 6 | y[3g+2..3g] << 3 | z[3g+2..3g] for
//                   g = 6..0: 7 lookups and no Morton interleave at all.
//   (A two-levels-per-lookup kernel over Morton digits, 1 + 10 lookups, measured between
//   them and was dropped: 0.622 ms for the benchmark below.)
//
// Launch shape: grid-stride; grid = min(ceil(n / (SFC_THREADS * SFC_ITEMS)), SMs * sfc_blocks_per_sm),
// block = SFC_THREADS. Per round, thread t handles i = round_base + k * SFC_THREADS + t,
// k < SFC_ITEMS (coalesced 4- or 8-byte loads of x, y, z and 8-byte stores of keys).
//
// Buffers
//   x, y, z   T[n]     read  (structure of arrays)
//   keys      u64[n]   written
//
// Invariants: none on positions (any float, NaN and infinities included, is clamped as
// on the host); n < 2^63.
//
// Measured cost (H200, driver 580.159.04), 64M uniform f32 points (12 B read + 8 B written each):
//   sfc_hilbert3 0.436 ms = 3075 GB/s, 73% of the device copy; sfc_hilbert1 0.747 ms;
//   sfc_morton 0.385 ms (83%).

#if !defined(SFC_THREADS) || !defined(SFC_ITEMS)
#error "sfc.cu needs SFC_THREADS and SFC_ITEMS from the executor's policy"
#endif

#define SFC_LEVELS 21
#define SFC_LAST 2097151u

// orrery_core::sfc::hilbert::ENCODE_3D, copied literally:
// ENCODE_3D[state << 3 | morton_digit] = next_state << 3 | hilbert_digit (octal).
__constant__ unsigned char HILBERT_ENCODE_3D[192] = {
    0010, 0021, 0033, 0022, 0047, 0056, 0034, 0055,  // state 0
    0000, 0107, 0073, 0074, 0061, 0116, 0062, 0115,  // state 1
    0120, 0143, 0157, 0144, 0131, 0132, 0166, 0165,  // state 2
    0202, 0003, 0201, 0170, 0145, 0004, 0146, 0077,  // state 3
    0226, 0211, 0225, 0212, 0007, 0100, 0174, 0173,  // state 4
    0246, 0245, 0231, 0232, 0127, 0204, 0150, 0203,  // state 5
    0130, 0121, 0167, 0156, 0213, 0122, 0214, 0155,  // state 6
    0222, 0215, 0221, 0216, 0013, 0014, 0250, 0037,  // state 7
    0206, 0017, 0205, 0254, 0141, 0040, 0142, 0253,  // state 8
    0276, 0137, 0261, 0160, 0275, 0224, 0262, 0223,  // state 9
    0020, 0263, 0011, 0012, 0057, 0264, 0046, 0045,  // state 10
    0060, 0117, 0001, 0106, 0233, 0234, 0002, 0105,  // state 11
    0242, 0241, 0235, 0236, 0023, 0270, 0024, 0267,  // state 12
    0176, 0175, 0027, 0274, 0071, 0072, 0050, 0273,  // state 13
    0256, 0031, 0067, 0110, 0255, 0032, 0244, 0243,  // state 14
    0044, 0043, 0257, 0030, 0065, 0112, 0066, 0111,  // state 15
    0054, 0277, 0053, 0260, 0135, 0136, 0162, 0161,  // state 16
    0272, 0063, 0265, 0064, 0271, 0240, 0266, 0237,  // state 17
    0114, 0125, 0113, 0152, 0247, 0126, 0230, 0151,  // state 18
    0252, 0035, 0133, 0134, 0251, 0036, 0220, 0217,  // state 19
    0164, 0163, 0005, 0102, 0227, 0210, 0006, 0101,  // state 20
    0104, 0025, 0177, 0026, 0103, 0052, 0070, 0051,  // state 21
    0172, 0171, 0123, 0200, 0075, 0076, 0124, 0147,  // state 22
    0154, 0207, 0015, 0016, 0153, 0140, 0042, 0041,  // state 23
};

// ---- per-element math (also compiled on the host by the crate's tests) --------------

__device__ __forceinline__ u32 sfc_quantize(float v, float lo, float s) {
    const float f = floorf(__fmul_rn(__fsub_rn(v, lo), s));
    if (f > 0.0f) return (f >= 2097152.0f) ? SFC_LAST : (u32)f;
    return 0u;
}

__device__ __forceinline__ u32 sfc_quantize(double v, double lo, double s) {
    const double f = floor(__dmul_rn(__dsub_rn(v, lo), s));
    if (f > 0.0) return (f >= 2097152.0) ? SFC_LAST : (u32)f;
    return 0u;
}

// Spreads the low 21 bits of v so that bit l lands on bit 3l (orrery_core::sfc::morton::spread_3d).
__device__ __forceinline__ u64 sfc_spread3(u32 v) {
    u64 x = (u64)v & 0x1fffffull;
    x = (x | (x << 32)) & 0x001f00000000ffffull;
    x = (x | (x << 16)) & 0x001f0000ff0000ffull;
    x = (x | (x << 8)) & 0x100f00f00f00f00full;
    x = (x | (x << 4)) & 0x10c30c30c30c30c3ull;
    x = (x | (x << 2)) & 0x1249249249249249ull;
    return x;
}

__device__ __forceinline__ u64 sfc_morton(u32 x, u32 y, u32 z) {
    return (sfc_spread3(x) << 2) | (sfc_spread3(y) << 1) | sfc_spread3(z);
}

// One level per lookup; tab1 = HILBERT_ENCODE_3D (any memory space).
__device__ __forceinline__ u64 sfc_hilbert1(u64 m, const unsigned char* tab1) {
    u32 e = 0;
    u64 out = 0;
#pragma unroll
    for (int l = SFC_LEVELS - 1; l >= 0; --l) {
        e = tab1[(e & ~7u) | (u32)((m >> (3 * l)) & 7ull)];
        out |= (u64)(e & 7u) << (3 * l);
    }
    return out;
}

// Entry i = state * 512 + (xg << 6 | yg << 3 | zg) of the three-level table, where xg, yg,
// zg hold three levels of each coordinate, coarsest in bit 2.
__device__ __forceinline__ unsigned short sfc_hilbert3_entry(u32 i, const unsigned char* tab1) {
    u32 e = (i >> 9) << 3;
    u32 digits = 0;
#pragma unroll
    for (int j = 2; j >= 0; --j) {
        const u32 m = (((i >> (6 + j)) & 1u) << 2) | (((i >> (3 + j)) & 1u) << 1) | ((i >> j) & 1u);
        e = tab1[(e & ~7u) | m];
        digits = (digits << 3) | (e & 7u);
    }
    return (unsigned short)(((e >> 3) << 9) | digits);
}

// Levels (20, 19, 18), ..., (2, 1, 0) three at a time, straight from the coordinates.
__device__ __forceinline__ u64 sfc_hilbert3(u32 x, u32 y, u32 z, const unsigned short* tab3) {
    u32 e = 0;
    u64 out = 0;
#pragma unroll
    for (int g = 6; g >= 0; --g) {
        const u32 raw = (((x >> (3 * g)) & 7u) << 6) | (((y >> (3 * g)) & 7u) << 3) | ((z >> (3 * g)) & 7u);
        e = tab3[(e & ~511u) | raw];
        out |= (u64)(e & 511u) << (9 * g);
    }
    return out;
}

// ---- kernels ---------------------------------------------------------------------------

#define SFC_HILBERT1 0
#define SFC_HILBERT3 1
#define SFC_MORTON 2

template <typename T, int CURVE>
__device__ __forceinline__ void sfc_keys_impl(const T* __restrict__ x, const T* __restrict__ y,
                                              const T* __restrict__ z, u64* __restrict__ keys, u64 n, T lox,
                                              T loy, T loz, T sx, T sy, T sz) {
    __shared__ unsigned char tab1[192];
    __shared__ unsigned short tab[CURVE == SFC_HILBERT3 ? 24 * 512 : 1];
    if (CURVE != SFC_MORTON) {
        for (u32 i = threadIdx.x; i < 192; i += SFC_THREADS) tab1[i] = HILBERT_ENCODE_3D[i];
        __syncthreads();
    }
    if (CURVE == SFC_HILBERT3) {
        for (u32 i = threadIdx.x; i < 24 * 512; i += SFC_THREADS) tab[i] = sfc_hilbert3_entry(i, tab1);
        __syncthreads();
    }
    const u64 round = (u64)SFC_THREADS * SFC_ITEMS;
    for (u64 base = (u64)blockIdx.x * round; base < n; base += (u64)gridDim.x * round) {
        T px[SFC_ITEMS], py[SFC_ITEMS], pz[SFC_ITEMS];
#pragma unroll
        for (u32 k = 0; k < SFC_ITEMS; ++k) {
            const u64 i = base + (u64)k * SFC_THREADS + threadIdx.x;
            if (i < n) {
                px[k] = x[i];
                py[k] = y[i];
                pz[k] = z[i];
            }
        }
#pragma unroll
        for (u32 k = 0; k < SFC_ITEMS; ++k) {
            const u64 i = base + (u64)k * SFC_THREADS + threadIdx.x;
            if (i < n) {
                const u32 qx = sfc_quantize(px[k], lox, sx);
                const u32 qy = sfc_quantize(py[k], loy, sy);
                const u32 qz = sfc_quantize(pz[k], loz, sz);
                u64 key;
                if (CURVE == SFC_MORTON) {
                    key = sfc_morton(qx, qy, qz);
                } else if (CURVE == SFC_HILBERT1) {
                    key = sfc_hilbert1(sfc_morton(qx, qy, qz), tab1);
                } else {
                    key = sfc_hilbert3(qx, qy, qz, tab);
                }
                keys[i] = key;
            }
        }
    }
}

#define SFC_ENTRY(NAME, CURVE, TNAME, T)                                                                          \
    extern "C" __global__ void __launch_bounds__(SFC_THREADS)                                                     \
        NAME##_##TNAME(const T* __restrict__ x, const T* __restrict__ y, const T* __restrict__ z,                 \
                       u64* __restrict__ keys, u64 n, T lox, T loy, T loz, T sx, T sy, T sz) {                   \
        sfc_keys_impl<T, CURVE>(x, y, z, keys, n, lox, loy, loz, sx, sy, sz);                                     \
    }

SFC_ENTRY(sfc_morton, SFC_MORTON, f32, float)
SFC_ENTRY(sfc_morton, SFC_MORTON, f64, double)
SFC_ENTRY(sfc_hilbert1, SFC_HILBERT1, f32, float)
SFC_ENTRY(sfc_hilbert1, SFC_HILBERT1, f64, double)
SFC_ENTRY(sfc_hilbert3, SFC_HILBERT3, f32, float)
SFC_ENTRY(sfc_hilbert3, SFC_HILBERT3, f64, double)
