// kernels/balltree/common.cuh — the prelude of the ball tree build's CUDA modules
// (crates/orrery-balltree/src/gpu): the host concatenates it, then kernels/core/segment.cuh,
// then one pass file (levels.cu, select.cu, local.cu) into each module's text.
//
// What it computes
//   The per-element rules every pass shares (host reference: gpu/spread.rs): the
//   order-preserving codes of f32 / f64 coordinates (-0.0 as 0.0), their decoding, and the
//   exact spread hi - lo as an error-free pair (TwoSum, halved when it overflows), ordered
//   exactly. Split rule (crates/orrery-balltree/src/split.rs): the dimension of largest
//   spread, ties to the lowest; the left child gets the floor(m/2) first points in the order
//   (coordinate, point index).
//
// Launch shape: device functions only. BT_ITEM_THREADS (256) is the block size of the
//   per-item kernels of levels.cu and select.cu; BT_BOUNDS_ITEMS (4) positions per thread
//   of their tiled kernels (gpu/kernels.rs holds the host's copies, checked by a test).
//
// Buffers: none.
//
// Invariants: coordinates are finite (validated on the host); ordered codes of finite
//   values are below 0xff800000 (float) / 0xfff0000000000000 (double), so the all-ones
//   padding key sorts last.
//
// Measured cost: see each pass file.
typedef unsigned int u32;
typedef unsigned long long u64;

#define BT_FROZEN 0xffffffffu
#define BT_PAD 0xffffffffu
#define BT_ITEM_THREADS 256u
#define BT_BOUNDS_ITEMS 4u

// ---- per-element rules (host reference: gpu/spread.rs) ----------------------------------

template <typename F>
struct Coord;

template <>
struct Coord<float> {
    typedef u32 Ord;
    static __device__ __forceinline__ Ord ord(float x) {
        u32 b = __float_as_uint(x);
        if (b == 0x80000000u) b = 0u;  // -0.0 is 0.0
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    static __device__ __forceinline__ float dec(Ord o) {
        return __uint_as_float((o & 0x80000000u) ? (o & 0x7fffffffu) : ~o);
    }
    static __device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
    static __device__ __forceinline__ float sub(float a, float b) { return __fsub_rn(a, b); }
    static __device__ __forceinline__ float half(float a) { return __fmul_rn(a, 0.5f); }
    static __device__ __forceinline__ bool finite(float a) { return isfinite(a); }
};

template <>
struct Coord<double> {
    typedef u64 Ord;
    static __device__ __forceinline__ Ord ord(double x) {
        u64 b = (u64)__double_as_longlong(x);
        if (b == 0x8000000000000000ull) b = 0ull;
        return (b & 0x8000000000000000ull) ? ~b : (b | 0x8000000000000000ull);
    }
    static __device__ __forceinline__ double dec(Ord o) {
        return __longlong_as_double((long long)((o & 0x8000000000000000ull) ? (o & 0x7fffffffffffffffull) : ~o));
    }
    static __device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
    static __device__ __forceinline__ double sub(double a, double b) { return __dsub_rn(a, b); }
    static __device__ __forceinline__ double half(double a) { return __dmul_rn(a, 0.5); }
    static __device__ __forceinline__ bool finite(double a) { return isfinite(a); }
};

// The exact spread hi - lo as an error-free pair (TwoSum), halved when it overflows.
template <typename F>
struct Spread {
    u32 overflow;
    F s;
    F e;
};

template <typename F>
__device__ __forceinline__ Spread<F> spread_of(F lo, F hi) {
    typedef Coord<F> C;
    F a = hi, b = -lo;
    F s = C::add(a, b);
    u32 overflow = 0u;
    if (!C::finite(s)) {
        a = C::half(hi);
        b = -C::half(lo);
        s = C::add(a, b);
        overflow = 1u;
    }
    const F bb = C::sub(s, a);
    const F e = C::add(C::sub(a, C::sub(s, bb)), C::sub(b, bb));
    Spread<F> r;
    r.overflow = overflow;
    r.s = s;
    r.e = e;
    return r;
}

template <typename F>
__device__ __forceinline__ bool spread_greater(const Spread<F>& x, const Spread<F>& y) {
    if (x.overflow != y.overflow) return x.overflow > y.overflow;
    if (x.s != y.s) return x.s > y.s;
    return x.e > y.e;
}

template <typename F>
__device__ __forceinline__ Spread<F> spread_zero() {
    Spread<F> r;
    r.overflow = 0u;
    r.s = (F)0;
    r.e = (F)0;
    return r;
}

__device__ __forceinline__ u64 item_index() { return (u64)blockIdx.x * blockDim.x + threadIdx.x; }
