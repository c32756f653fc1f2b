// crates/orrery-traverse/tests/traverse/emulation/shim.h — the CUDA subset that
// kernels/traverse/fmm.cu uses, on the host: one std::thread per CUDA thread of a single
// block (the kernels grid-stride over their nodes, so one block covers a launch),
// __syncthreads a std::barrier, shared memory a global array, the _rn intrinsics plain
// operations (compile with -ffp-contract=off, so that they stay unfused). See run.sh.
#include <barrier>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>
struct uint3 { unsigned x, y, z; };
inline thread_local uint3 threadIdx{0, 0, 0};
inline uint3 blockIdx{0, 0, 0}, blockDim{128, 1, 1}, gridDim{1, 1, 1};
struct alignas(16) double2 { double x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline double2 make_double2(double a, double b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline std::barrier<>* g_barrier = nullptr;
inline void __syncthreads() { g_barrier->arrive_and_wait(); }
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(x)
#define __restrict__
#define __shared__
#define __align__(x)
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline float __fadd_rn(float a, float b) { return a + b; }
