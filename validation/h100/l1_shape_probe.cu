// What one warp load that hits L1 costs the SM, by the shape of its addresses: how many
// lines, sectors and distinct words the 32 lanes name (one line, contiguous; one word
// for all; two words in two lines, as gemm_naive's A; 16 words in one line, as its B;
// one sector in each of 4 or 32 lines; ...). Every warp of 64 per SM issues 8
// independent loads per step over an 8 KiB L1-resident window, so the SM's L1 is the
// limit; the time per load per SM is the shape's cost. The same shapes then run over an
// 8 MiB window (in L2, far beyond L1), each warp from its own place in it, so that every
// load misses L1: what the sectors filled from L2 add.
// Output: validation/h100/probe15/l1_shapes.txt (command in validation/h100/probe15.sh).
//
// Build: nvcc -O3 -arch=sm_90 -o l1_shape_probe l1_shape_probe.cu
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#include "event_timer.cuh"
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

constexpr unsigned kHitWords = 2048;         // 8 KiB, stepped through a line at a time
constexpr unsigned kMissWords = 2u << 20;     // 8 MiB
constexpr int kLoadsPerStep = 8;

// Lane `l` of every warp reads word `offsets[l]` past a base that moves one line per
// load over the window; `second`, where not null, adds a second load per step with its
// own offsets (two shapes in turn, as gemm_naive's loop reads A and B).
__global__ void l1_shapes(const float* __restrict__ buf, const unsigned* offsets,
                          const unsigned* second, int steps, unsigned window, float* out) {
    const unsigned lane = threadIdx.x & 31;
    const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned off = offsets[lane];
    const unsigned off2 = second ? second[lane] : 0u;
    float acc = 0.0f, acc2 = 0.0f;
    // Over the small window warps start a step apart; over the large one far apart.
    unsigned base = (window == kHitWords ? warp * 32u * kLoadsPerStep : warp * 4099u * 32u) & (window - 1);
    for (int s = 0; s < steps; ++s) {
        const float* p = buf + base + off;
#pragma unroll
        for (int u = 0; u < kLoadsPerStep; ++u) acc += p[32 * u];
        if (second) {
            const float* q = buf + base + off2;
#pragma unroll
            for (int u = 0; u < kLoadsPerStep; ++u) acc2 += q[32 * u];
        }
        base = (base + 32u * kLoadsPerStep) & (window - 1);
    }
    if (acc + acc2 == 12345.0f) out[0] = acc;
}

#ifndef __CUDACC_RTC__
struct Shape {
    const char* name;
    unsigned (*word)(unsigned lane);  // word offset of a lane's address
};

// gemm_naive's rows are 512 floats apart.
constexpr unsigned kRow = 512;

static const Shape kShapes[] = {
    {"32 words, 1 line, 4 sectors", [](unsigned l) { return l; }},
    {"1 word (broadcast)", [](unsigned) { return 0u; }},
    {"8 words, 1 line, 1 sector", [](unsigned l) { return l % 8; }},
    {"16 words, 1 line, 2 sectors (gemm_naive's B)", [](unsigned l) { return l % 16; }},
    {"2 words, 2 lines, 1 sector each (gemm_naive's A)", [](unsigned l) { return (l / 16) * kRow; }},
    {"32 words, 2 lines, 2 sectors each", [](unsigned l) { return (l / 16) * kRow + l % 16; }},
    {"32 words, 4 lines, 1 sector each", [](unsigned l) { return (l / 8) * kRow + l % 8; }},
    {"4 words, 4 lines, 1 sector each", [](unsigned l) { return (l / 8) * kRow; }},
    {"32 words every other, 2 lines, 8 sectors", [](unsigned l) { return 2 * l; }},
    {"32 words, 32 lines, 1 sector each", [](unsigned l) { return l * 32; }},
    {"32 words, 32 lines, 1 sector each, 2 KiB apart", [](unsigned l) { return l * kRow; }},
};

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int clock_khz; CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const int sms = p.multiProcessorCount, blocks = sms * 8, threads = 256, steps = 256;
    const double per_sm = (double)blocks * threads / 32 * steps * kLoadsPerStep / sms;
    float *buf, *out;
    unsigned *offs, *offs2;
    const size_t words = kMissWords + 32 * kRow + 64;
    CK(cudaMalloc(&buf, words * 4));
    CK(cudaMemset(buf, 0, words * 4));
    CK(cudaMalloc(&out, 4));
    CK(cudaMalloc(&offs, 128));
    CK(cudaMalloc(&offs2, 128));
    auto run = [&](const unsigned* second, unsigned window) {
        return median_event_us([&] { l1_shapes<<<blocks, threads>>>(buf, offs, second, steps, window, out); });
    };
    auto set = [&](unsigned* dst, const Shape& s) {
        unsigned h[32];
        for (unsigned l = 0; l < 32; ++l) h[l] = s.word(l);
        CK(cudaMemcpy(dst, h, 128, cudaMemcpyHostToDevice));
    };
    printf("%d SMs, %d blocks of %d threads (64 warps an SM), %d loads a warp; clock %d MHz\n",
           sms, blocks, threads, steps * kLoadsPerStep, clock_khz / 1000);
    for (unsigned window : {kHitWords, kMissWords}) {
        printf("per shape over %u KiB: us, and SM cycles per warp load (at that clock)\n",
               window / 256);
        for (const Shape& s : kShapes) {
            set(offs, s);
            const float us = run(nullptr, window);
            printf("  %-50s %8.2f us %6.2f cycles\n", s.name, us, us * 1e-6 * clock_khz * 1e3 / per_sm);
        }
        // gemm_naive's pair: A's shape and B's, one after the other, per load pair.
        set(offs, kShapes[4]);
        set(offs2, kShapes[3]);
        const float us = run(offs2, window);
        printf("  %-50s %8.2f us %6.2f cycles per pair\n", "gemm_naive's A then B", us,
               us * 1e-6 * clock_khz * 1e3 / per_sm);
    }
    return 0;
}
#endif
