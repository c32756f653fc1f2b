// kernels/core/order_key.cuh — orrery_core::Element::order_key on the device, shared by
// search.cu and segmented.cu (the executor prepends it after common.cuh).
//
// What it holds: OrderKey<T> for the six element types. Kernels read elements as their
// bit patterns (`Bits`: u32 for 4-byte types, u64 for 8-byte ones) and never do float
// arithmetic on them, so NaN payloads and signed zeros survive untouched.
//
//   key(bits)    the order key: an unsigned integer whose order is the type's total
//                order, exactly Element::order_key (zero-extended to 64 bits on the host
//                for 4-byte types, which keeps the order):
//                  unsigned  bits
//                  signed    bits ^ sign bit
//                  float     sign set ? ~bits : bits | sign bit   (IEEE 754 totalOrder:
//                            -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN)
//   value(key)   the inverse of key (a bijection), so a kernel can write the element
//                back from its key bit for bit.
//   highest / lowest   the bits of Element::HIGHEST / LOWEST (+inf / -inf for floats).

template <typename T>
struct OrderKey;

template <>
struct OrderKey<u32> {
    typedef u32 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return b; }
    __device__ static __forceinline__ Bits value(Bits k) { return k; }
    __device__ static __forceinline__ Bits highest() { return 0xffffffffu; }
    __device__ static __forceinline__ Bits lowest() { return 0u; }
};

template <>
struct OrderKey<i32> {
    typedef u32 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return b ^ 0x80000000u; }
    __device__ static __forceinline__ Bits value(Bits k) { return k ^ 0x80000000u; }
    __device__ static __forceinline__ Bits highest() { return 0x7fffffffu; }
    __device__ static __forceinline__ Bits lowest() { return 0x80000000u; }
};

template <>
struct OrderKey<u64> {
    typedef u64 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return b; }
    __device__ static __forceinline__ Bits value(Bits k) { return k; }
    __device__ static __forceinline__ Bits highest() { return 0xffffffffffffffffull; }
    __device__ static __forceinline__ Bits lowest() { return 0ull; }
};

template <>
struct OrderKey<i64> {
    typedef u64 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return b ^ 0x8000000000000000ull; }
    __device__ static __forceinline__ Bits value(Bits k) { return k ^ 0x8000000000000000ull; }
    __device__ static __forceinline__ Bits highest() { return 0x7fffffffffffffffull; }
    __device__ static __forceinline__ Bits lowest() { return 0x8000000000000000ull; }
};

template <>
struct OrderKey<float> {
    typedef u32 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return (b >> 31) ? ~b : (b | 0x80000000u); }
    __device__ static __forceinline__ Bits value(Bits k) { return (k >> 31) ? (k ^ 0x80000000u) : ~k; }
    __device__ static __forceinline__ Bits highest() { return 0x7f800000u; }  // +inf
    __device__ static __forceinline__ Bits lowest() { return 0xff800000u; }   // -inf
};

template <>
struct OrderKey<double> {
    typedef u64 Bits;
    __device__ static __forceinline__ Bits key(Bits b) { return (b >> 63) ? ~b : (b | 0x8000000000000000ull); }
    __device__ static __forceinline__ Bits value(Bits k) { return (k >> 63) ? (k ^ 0x8000000000000000ull) : ~k; }
    __device__ static __forceinline__ Bits highest() { return 0x7ff0000000000000ull; }  // +inf
    __device__ static __forceinline__ Bits lowest() { return 0xfff0000000000000ull; }   // -inf
};

// The binary search of orrery_core::executor::{lower_bound_one, upper_bound_one}: the
// first index where `before` is false, halving (first, count) exactly as the host loop
// does, so an unsorted array gives the same index on every executor. `before(v)` is
// key(v) < q (lower bound) or key(v) <= q (upper bound); q is an order key. n < 2^32.
template <typename T, bool UPPER>
__device__ __forceinline__ u32 bound_search(const typename OrderKey<T>::Bits* __restrict__ sorted, u32 n,
                                            typename OrderKey<T>::Bits q) {
    typedef typename OrderKey<T>::Bits B;
    u32 first = 0u, count = n;
    while (count > 0u) {
        const u32 step = count >> 1;
        const u32 probe = first + step;
        const B v = OrderKey<T>::key(sorted[probe]);
        const bool before = UPPER ? (v <= q) : (v < q);
        if (before) {
            first = probe + 1u;
            count -= step + 1u;
        } else {
            count = step;
        }
    }
    return first;
}
