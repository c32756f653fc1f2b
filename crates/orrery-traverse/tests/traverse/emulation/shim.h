// crates/orrery-traverse/tests/traverse/emulation/shim.h — the CUDA subset that
// kernels/traverse/fmm.cu uses, on the host. A launch runs its blocks one after another;
// a block's threads are coroutines under a deterministic scheduler: exactly one thread runs
// at a time, from one barrier to its next, and the next thread to run is the
// lowest-numbered ready one (Order::Ascending) or the highest (Order::Descending).
//   __syncthreads  a barrier of every thread of the block;
//   __syncwarp     a barrier of the 32 threads of the caller's warp (threadIdx.x / 32), full
//                  mask only (a partial mask aborts: not modelled).
// Between two barriers each thread runs alone, so an access pair of two threads with no
// barrier between them happens in one order under Ascending and in the other under
// Descending: a missing barrier gives stale data in one of the two runs, which the stage
// comparisons then see (deterministically; run.sh runs both, and checks that removing any
// one barrier of fmm.cu is caught: EMU_SKIP_LINE). A barrier that cannot complete (a
// thread exited, or waits at the other kind) aborts with the threads' states. Shared
// memory is a global array, NaN at every block start; the _rn intrinsics are plain
// operations (compile with -ffp-contract=off, so that they stay unfused). See run.sh.
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>
struct uint3 { unsigned x, y, z; };
inline uint3 threadIdx{0, 0, 0}, blockIdx{0, 0, 0}, blockDim{128, 1, 1}, gridDim{1, 1, 1};
struct alignas(16) double2 { double x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline double2 make_double2(double a, double b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }

namespace emu {
enum class State { Ready, AtBlock, AtWarp, Done };
enum class Order { Ascending, Descending };
constexpr unsigned kWarp = 32;
constexpr size_t kStack = 256 * 1024;

// Context switches: a few instructions on x86-64 (callee-saved registers, the stack
// pointer, MXCSR and the x87 control word), ucontext elsewhere (which also saves the
// signal mask: a system call per switch, ~5x slower).
#if defined(__x86_64__)
extern "C" void emu_switch(void** save, void* load);
asm(R"(
    .text
    .globl emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
)");
struct Context {
    void* sp = nullptr;
};
// A fresh context whose first switch enters `entry` on `stack` (size bytes).
inline void make_context(Context& c, char* stack, size_t size, void (*entry)()) {
    auto top = reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t(15);
    auto* w = reinterpret_cast<uint64_t*>(top);
    w[-1] = 0;                                    // entry's (absent) return address: rsp = 8 mod 16 at entry
    w[-2] = reinterpret_cast<uint64_t>(entry);    // emu_switch's ret
    for (int k = 3; k <= 8; ++k) w[-k] = 0;       // rbp rbx r12 r13 r14 r15
    w[-9] = 0x1F80ull | (0x037Full << 32);        // MXCSR, x87 control word: the defaults
    c.sp = &w[-9];
}
inline void switch_context(Context& save, Context& load) { emu_switch(&save.sp, load.sp); }
#else
struct Context {
    ucontext_t uc;
};
inline void make_context(Context& c, char* stack, size_t size, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, entry, 0);
}
inline void switch_context(Context& save, Context& load) { swapcontext(&save.uc, &load.uc); }
#endif

struct Block {
    const std::function<void()>* kernel = nullptr;
    std::vector<Context> ctx;
    std::vector<std::unique_ptr<char[]>> stacks;
    std::vector<State> state;
    std::vector<unsigned> at_warp, done_warp;
    Context sched;
    unsigned current = 0, at_block = 0, done = 0;
    unsigned long long switches = 0;
};
inline Block* g_block = nullptr;
// Shared memory, filled with NaN at every block start (its contents are undefined on the
// device: a read before the block's writes must not find the previous block's values).
inline double* g_smem = nullptr;
inline size_t g_smem_doubles = 0;
// Mutation testing (run.sh): the barrier calls on this source line of fmm.cu do nothing.
inline int g_skip_line = -1;

[[noreturn]] inline void fail(const char* why) {
    Block& b = *g_block;
    std::fprintf(stderr, "emulation: %s (block %u); thread states:", why, blockIdx.x);
    for (size_t t = 0; t < b.state.size(); ++t) std::fprintf(stderr, " %zu:%d", t, (int)b.state[t]);
    std::fprintf(stderr, "\n");
    std::abort();
}

inline void yield(State s) {
    Block& b = *g_block;
    b.state[b.current] = s;
    if (s == State::AtBlock) ++b.at_block;
    if (s == State::AtWarp) ++b.at_warp[b.current / kWarp];
    switch_context(b.ctx[b.current], b.sched);
}

[[noreturn]] inline void entry() {
    (*g_block->kernel)();
    Block& b = *g_block;
    b.state[b.current] = State::Done;
    ++b.done;
    ++b.done_warp[b.current / kWarp];
    switch_context(b.ctx[b.current], b.sched);
    std::abort();  // never resumed
}

// Completes the barriers whose threads have all arrived.
inline void release(Block& b, unsigned threads) {
    if (b.at_block > 0 && b.at_block + b.done == threads) {
        if (b.done > 0) fail("__syncthreads with exited threads");
        for (auto& s : b.state) s = State::Ready;
        b.at_block = 0;
    }
    for (unsigned w = 0; w < b.at_warp.size(); ++w) {
        const unsigned lanes = std::min(kWarp, threads - w * kWarp);
        if (b.at_warp[w] == 0 || b.at_warp[w] + b.done_warp[w] < lanes) continue;
        if (b.done_warp[w] > 0 || lanes < kWarp) fail("__syncwarp with exited or missing lanes");
        for (unsigned t = w * kWarp; t < (w + 1) * kWarp; ++t) b.state[t] = State::Ready;
        b.at_warp[w] = 0;
    }
}

inline int pick(const Block& b, Order order) {
    const int n = (int)b.state.size();
    for (int k = 0; k < n; ++k) {
        const int t = order == Order::Ascending ? k : n - 1 - k;
        if (b.state[t] == State::Ready) return t;
    }
    return -1;
}

// One block of `threads` threads running `kernel` to completion. Returns the context
// switches (for the report).
inline unsigned long long run_block(unsigned threads, Order order, const std::function<void()>& kernel) {
    static Block b;
    g_block = &b;
    b.kernel = &kernel;
    b.ctx.resize(threads);
    while (b.stacks.size() < threads) b.stacks.emplace_back(new char[kStack]);
    b.state.assign(threads, State::Ready);
    const unsigned warps = (threads + kWarp - 1) / kWarp;
    b.at_warp.assign(warps, 0);
    b.done_warp.assign(warps, 0);
    b.at_block = b.done = 0;
    b.switches = 0;
    for (unsigned t = 0; t < threads; ++t) make_context(b.ctx[t], b.stacks[t].get(), kStack, entry);
    for (size_t k = 0; k < g_smem_doubles; ++k) g_smem[k] = std::nan("");
    while (b.done < threads) {
        release(b, threads);
        const int t = pick(b, order);
        if (t < 0) fail("deadlock: no thread can run");
        b.current = (unsigned)t;
        threadIdx = {(unsigned)t, 0, 0};
        ++b.switches;
        switch_context(b.sched, b.ctx[t]);
    }
    return b.switches;
}

// A launch: `blocks` blocks of `threads` threads, one block after another.
inline unsigned long long launch(unsigned blocks, unsigned threads, Order order, const std::function<void()>& kernel) {
    gridDim = {blocks, 1, 1};
    blockDim = {threads, 1, 1};
    unsigned long long switches = 0;
    for (unsigned b = 0; b < blocks; ++b) {
        blockIdx = {b, 0, 0};
        switches += run_block(threads, order, kernel);
    }
    return switches;
}
}  // namespace emu

inline void __syncthreads(int line = __builtin_LINE()) {
    if (line != emu::g_skip_line) emu::yield(emu::State::AtBlock);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
    if (mask != 0xffffffffu) emu::fail("__syncwarp with a partial mask (not modelled)");
    if (line != emu::g_skip_line) emu::yield(emu::State::AtWarp);
}
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __restrict__
#define __shared__
#define __align__(x)
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __dsqrt_rn(double a) { return std::sqrt(a); }
inline float __fadd_rn(float a, float b) { return a + b; }
