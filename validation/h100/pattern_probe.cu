// Probe 14 (docs/validation.md, "Probe 14"): two questions probe 13 left.
// 1. Is the slower streaming of large threadgroups (probe 12: `copy` 61.8 µs with 256
//    threads, 80.4 with 1,024) about the lines a threadgroup touches lying together?
//    `copy` moves one 128-byte line a warp. `contiguous`: warp w of the grid copies line
//    w, so a threadgroup's lines are one block of memory (the suite's `copy`).
//    `scattered`: warp w copies line (w * 4099) mod lines, so a threadgroup's lines lie
//    512 KiB apart; the same lines in all, each once.
// 2. Why does `simd_reduce` (one float a thread, summed over its SIMD-group, the first
//    lane storing the sum) take as long on the H100 as `copy`, which moves twice the bytes?
//    `reduce` is that kernel, in threadgroups of 256 as in the suite.
// Each launch runs plain (timed: median of 20 CUDA-event timings after 3) and traced:
// each warp reads the SM's clock at entry (t0), before its load (t1) and after its
// store has issued (t2; the store reads the loaded value, or the sum, so it issues once
// they are there), and lanes 0-7 write a record (warp, SM, warp slot, t0, t1, t2, 0, 0;
// u32) for validation/h100/probe13.py to read. Records of the warps on SMs 0-15 go to
// OUTDIR/<pattern>_tg<N>.bin.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/pp validation/h100/pattern_probe.cu && /tmp/pp OUTDIR
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "warp_clock.cuh"

constexpr unsigned kThreads = 16u << 20;
constexpr unsigned kLines = kThreads / 32;
constexpr int kKeptSms = 16;

enum Pattern { kContiguous = 0, kScattered = 1, kReduce = 2 };

template <int P, bool TRACED>
__global__ void probe(const float* src, float* dst, unsigned* trace) {
    unsigned long long t0 = 0, t1 = 0, t2 = 0;
    if (TRACED) t0 = stamp();
    const unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned warp = gid / 32, lane = gid & 31;
    const unsigned line = P == kScattered ? (warp * 4099u) & (kLines - 1) : warp;
    const unsigned i = line * 32 + lane;
    if (TRACED) t1 = stamp();
    float v = src[i];
    if (P == kReduce) {
#pragma unroll
        for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
        if (lane == 0) dst[warp] = v;
    } else {
        dst[i] = v;
    }
    if (TRACED) {
        t2 = stamp();
        write_record(trace, warp, lane, t0, t1, t2);
    }
}

template <int P, bool TRACED>
static float time_us(int tg, const float* src, float* dst, unsigned* trace) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> t;
    for (int rep = 0; rep < 23; rep++) {
        cudaEventRecord(a);
        probe<P, TRACED><<<kThreads / tg, tg>>>(src, dst, trace);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (rep >= 3) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return 1000 * t[t.size() / 2];
}

template <int P>
static void launch(const char* name, int tg, const std::string& dir, const float* src,
                   float* dst, unsigned* trace, std::vector<unsigned>& h) {
    const float plain = time_us<P, false>(tg, src, dst, trace);
    const float traced = time_us<P, true>(tg, src, dst, trace);
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s tg %d: plain %.2f us, traced %.2f us, rc=%d\n", name, tg, plain, traced, (int)e);
    cudaMemcpy(h.data(), trace, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);
    FILE* f = fopen((dir + "/" + name + "_tg" + std::to_string(tg) + ".bin").c_str(), "wb");
    for (size_t w = 0; w < kLines; w++) {
        const unsigned* r = &h[w * kRecordWords];
        if (r[1] < (unsigned)kKeptSms) fwrite(r, sizeof(unsigned), kRecordWords, f);
    }
    fclose(f);
}

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    float *src, *dst;
    unsigned* trace;
    cudaMalloc(&src, kThreads * sizeof(float));
    cudaMalloc(&dst, kThreads * sizeof(float));
    cudaMalloc(&trace, (size_t)kLines * kRecordWords * sizeof(unsigned));
    cudaMemset(src, 0, kThreads * sizeof(float));
    std::vector<unsigned> h((size_t)kLines * kRecordWords);
    for (int tg : {128, 256, 512, 1024}) {
        launch<kContiguous>("contiguous", tg, dir, src, dst, trace, h);
        launch<kScattered>("scattered", tg, dir, src, dst, trace, h);
    }
    launch<kReduce>("reduce", 256, dir, src, dst, trace, h);
    return 0;
}
