// crates/orrery-traverse/tests/traverse/emulation/main.cpp — runs the expansion kernels of
// kernels/traverse/fmm.cu on the host (shim.h) over the inputs the ignored test
// gpu_fmm::fmm_dump_for_the_host_emulation writes, in the launch order of
// orrery_traverse::gpu::fmm::GpuFmm (P2M, M2M per level deepest first, M2L, L2L per level,
// L2P onto the CPU's near field), and compares each stage with the CPU's passes: the
// expansions per degree and bit for bit, the forces per body.
//   [EMU_SKIP_LINE=L] emu CASE_DIR SHAPE ORDER
// SHAPE: block (fmm_m2m, fmm_m2l, fmm_l2l: one block of FMM_THREADS per node, one block per
// launch, as the grid-stride loops allow) or warp (fmm_*_warp: as many warps per block as
// fit 48 KiB, at most FMM_WARP_NODES, the host's rule (gpu::fmm::warps_per_block), and
// kWarpBlocks blocks per launch, so that the grid-stride loops over warps of several blocks
// run) or dir (fmm_*_dir, launched as warp, with the case's direction table and per-entry
// directions: all FMM_NONE for a quarter-turn plan). ORDER: ascending or descending (the scheduler's order, shim.h).
// EMU_SKIP_LINE: the barriers on that line of fmm.cu are left out (run.sh's mutation check).
// Exit code 0 when every expansion stage equals the CPU's bits and the forces are within
// the device tests' tolerance; it prints how far from bit-equal each stage is. See run.sh.
#include "shim.h"
#include "kernels/traverse/fmm.cu"
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
constexpr size_t kSmemDoubles = 16384;
alignas(16) double fmm_smem[kSmemDoubles];
// Blocks per launch of the warp shape (a node count not a multiple of the warps of a
// launch leaves some warps idle, as on the device).
constexpr unsigned kWarpBlocks = 3;

template <class T> std::vector<T> rd(const std::string& dir, const char* name) {
    std::ifstream f(dir + "/" + name, std::ios::binary | std::ios::ate);
    if (!f) { std::fprintf(stderr, "missing %s/%s\n", dir.c_str(), name); std::exit(2); }
    size_t n = f.tellg(); f.seekg(0);
    std::vector<T> v(n / sizeof(T)); f.read((char*)v.data(), n); return v;
}
// The worst per-degree relative difference; `differing` counts the coefficients whose bits differ.
double cmp(const std::vector<double2>& g, const std::vector<double>& c, unsigned p, const char* what, size_t& differing) {
    unsigned nc = (p + 1) * (p + 2) / 2; size_t nodes = c.size() / 2 / nc; double worst = 0;
    size_t nans = 0, nonzero = 0; for (auto& v : g) { nans += std::isnan(v.x) || std::isnan(v.y); nonzero += v.x != 0.0; }
    differing = 0;
    for (size_t i = 0; i < g.size(); ++i) differing += std::memcmp(&g[i].x, &c[2 * i], 8) != 0 || std::memcmp(&g[i].y, &c[2 * i + 1], 8) != 0;
    printf("  %s: %zu NaN, %zu non-zero real parts of %zu\n", what, nans, nonzero, g.size()); if (nans) worst = 1e300;
    for (size_t node = 0; node < nodes; ++node) for (unsigned n = 0; n <= p; ++n) {
        double diff = 0, scale = 0;
        for (unsigned m = 0; m <= n; ++m) { size_t i = node * nc + n * (n + 1) / 2 + m;
            diff = fmax(diff, fmax(fabs(g[i].x - c[2 * i]), fabs(g[i].y - c[2 * i + 1])));
            scale = fmax(scale, fmax(fabs(c[2 * i]), fabs(c[2 * i + 1]))); }
        double r = scale > 0 ? diff / scale : (diff > 0 ? 1e300 : 0); worst = fmax(worst, r);
    }
    printf("  %s: worst per-degree relative difference %.3e, %zu of %zu coefficients not bit-equal\n", what, worst, differing, g.size());
    return worst;
}
int main(int argc, char** argv) {
    if (argc != 4) { std::fprintf(stderr, "usage: emu CASE_DIR block|warp ascending|descending\n"); return 2; }
    std::string cdir = argv[1], shape = argv[2], ord = argv[3];
    if ((shape != "block" && shape != "warp" && shape != "dir") || (ord != "ascending" && ord != "descending")) {
        std::fprintf(stderr, "bad shape or order: %s %s\n", argv[2], argv[3]); return 2; }
    const bool warp = shape != "block", dir = shape == "dir";
    emu::g_smem = fmm_smem;
    emu::g_smem_doubles = kSmemDoubles;
    if (const char* skip = std::getenv("EMU_SKIP_LINE")) emu::g_skip_line = std::atoi(skip);
    const emu::Order order = ord == "ascending" ? emu::Order::Ascending : emu::Order::Descending;
    auto s = rd<double>(cdir, "scalars");
    unsigned p = s[0], N = s[1], n = s[2], children = s[3], leaves_count = s[4];
    double ox = s[5], oy = s[6], oz = s[7], inv_scale = s[8], hx = s[9], hy = s[10], hz = s[11], far_acc = s[12], far_pot = s[13];
    unsigned nlev = s[14];
    unsigned warps = FMM_WARP_NODES;
    while (warps > 1 && 8 * fmm_warp_shared_doubles(p, warps) > 48 * 1024) --warps;
    const size_t smem = warp ? fmm_warp_shared_doubles(p, warps) : fmm_shared_doubles(p);
    if (smem > kSmemDoubles) { std::fprintf(stderr, "shared memory: %zu doubles > %zu\n", smem, kSmemDoubles); return 2; }
    auto levels = rd<u32>(cdir, "levels"); auto tables = rd<double>(cdir, "tables"); auto grid = rd<i64>(cdir, "grid");
    auto centres = rd<double>(cdir, "centres"); auto has_local = rd<u32>(cdir, "has_local"); auto pn = rd<u32>(cdir, "particle_nodes");
    auto bodies = rd<float>(cdir, "bodies"); auto leaves = rd<u32>(cdir, "leaves"); auto begins = rd<u32>(cdir, "begins");
    auto counts = rd<u32>(cdir, "counts"); auto fc = rd<u32>(cdir, "first_children"); auto parents = rd<u32>(cdir, "parents");
    auto mo = rd<u32>(cdir, "m2l_offsets"); auto ms = rd<u32>(cdir, "m2l_sources");
    auto dirs = rd<double>(cdir, "directions"); auto md = rd<u32>(cdir, "m2l_directions"); auto pd = rd<u32>(cdir, "parent_directions");
    unsigned nc = (p + 1) * (p + 2) / 2;
    std::vector<double2> mp(N * nc, double2{NAN, NAN}), lc(N * nc, double2{NAN, NAN});
    // A translation launch of the chosen shape.
    auto translation = [&](const std::function<void()>& block_kernel, const std::function<void()>& warp_kernel,
                           const std::function<void()>& dir_kernel) {
        return warp ? emu::launch(kWarpBlocks, FMM_WARP * warps, order, dir ? dir_kernel : warp_kernel)
                    : emu::launch(1, FMM_THREADS, order, block_kernel);
    };
    unsigned long long switches = emu::launch(1, FMM_THREADS, order, [&] { fmm_p2m(bodies.data(), leaves.data(), begins.data(), counts.data(), centres.data(), tables.data(), mp.data(), leaves_count, p, ox, oy, oz, inv_scale); });
    for (int l = nlev - 1; l >= 0; --l)
        switches += translation(
            [&] { fmm_m2m(grid.data(), fc.data(), counts.data(), tables.data(), mp.data(), levels[2 * l], levels[2 * l + 1], children, p, hx, hy, hz); },
            [&] { fmm_m2m_warp(grid.data(), fc.data(), counts.data(), tables.data(), mp.data(), levels[2 * l], levels[2 * l + 1], children, p, hx, hy, hz); },
            [&] { fmm_m2m_dir(grid.data(), fc.data(), counts.data(), pd.data(), tables.data(), dirs.data(), mp.data(), levels[2 * l], levels[2 * l + 1], children, p, hx, hy, hz); });
    size_t d1, d2, d3;
    double e1 = cmp(mp, rd<double>(cdir, "ref_multipoles"), p, "multipoles", d1);
    switches += translation(
        [&] { fmm_m2l(grid.data(), mo.data(), ms.data(), tables.data(), mp.data(), lc.data(), N, p, hx, hy, hz); },
        [&] { fmm_m2l_warp(grid.data(), mo.data(), ms.data(), tables.data(), mp.data(), lc.data(), N, p, hx, hy, hz); },
        [&] { fmm_m2l_dir(grid.data(), mo.data(), ms.data(), md.data(), tables.data(), dirs.data(), mp.data(), lc.data(), N, p, hx, hy, hz); });
    double e2 = cmp(lc, rd<double>(cdir, "ref_m2l"), p, "M2L", d2);
    for (unsigned l = 1; l < nlev; ++l)
        switches += translation(
            [&] { fmm_l2l(grid.data(), parents.data(), counts.data(), has_local.data(), tables.data(), lc.data(), levels[2 * l], levels[2 * l + 1], p, hx, hy, hz); },
            [&] { fmm_l2l_warp(grid.data(), parents.data(), counts.data(), has_local.data(), tables.data(), lc.data(), levels[2 * l], levels[2 * l + 1], p, hx, hy, hz); },
            [&] { fmm_l2l_dir(grid.data(), parents.data(), counts.data(), has_local.data(), pd.data(), tables.data(), dirs.data(), lc.data(), levels[2 * l], levels[2 * l + 1], p, hx, hy, hz); });
    double e3 = cmp(lc, rd<double>(cdir, "ref_locals"), p, "L2L", d3);
    auto near = rd<float>(cdir, "ref_near"); auto full = rd<float>(cdir, "ref_full");
    std::vector<float4> acc(n);
    for (unsigned i = 0; i < n; ++i) acc[i] = {near[4 * i], near[4 * i + 1], near[4 * i + 2], near[4 * i + 3]};
    blockDim = {FMM_L2P_THREADS, 1, 1};
    for (unsigned b = 0; b * FMM_L2P_THREADS < n; ++b) { blockIdx = {b, 0, 0};
        for (unsigned t = 0; t < FMM_L2P_THREADS; ++t) { threadIdx = {t, 0, 0};
            fmm_l2p(bodies.data(), pn.data(), has_local.data(), centres.data(), tables.data(), lc.data(), acc.data(), n, p, ox, oy, oz, inv_scale, far_acc, far_pot); } }
    double worst = 0; unsigned differing = 0;
    for (unsigned i = 0; i < n; ++i) {
        float g[4] = {acc[i].x, acc[i].y, acc[i].z, acc[i].w}; double na = 0, d = 0;
        for (int a = 0; a < 3; ++a) { na += (double)full[4 * i + a] * full[4 * i + a]; d += pow((double)g[a] - full[4 * i + a], 2); }
        double r = sqrt(d) / sqrt(na); worst = fmax(worst, r);
        worst = fmax(worst, fabs((double)g[3] - full[4 * i + 3]) / fabs((double)full[4 * i + 3]));
        for (int a = 0; a < 4; ++a) differing += g[a] != full[4 * i + a];
    }
    printf("  forces (near from the CPU + emulated L2P): worst relative difference %.3e, %u of %u components not bit-equal\n", worst, differing, 4 * n);
    printf("  %llu context switches (%s shape%s, %s order)\n", switches, shape.c_str(),
           warp ? (", " + std::to_string(warps) + " warps per block").c_str() : "", ord.c_str());
    bool ok = d1 == 0 && d2 == 0 && d3 == 0 && e1 < 1e-11 && e2 < 1e-11 && e3 < 1e-11 && worst < 1e-6;
    printf("  %s\n", ok ? "OK" : "FAIL");
    return ok ? 0 : 1;
}
