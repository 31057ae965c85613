// Why does the H100 copy more slowly with larger threadgroups? (docs/validation.md,
// "Probe 13". Probe 12 measured the suite's `copy` at 61.8 µs with threadgroups of 256
// threads and 80.4 with 1,024, the same bytes.) Each launch copies 16 Mi floats, one a
// thread, as the suite's `copy` does, in threadgroups of TG threads, twice: plain (the
// time alone) and traced, where each warp reads the SM's clock four times and writes
// them with its SM and warp slot (one whole sector a warp, lanes 0-7):
//   t0 at entry, t1 just before the load, t2 once the store has issued (it reads the
//   loaded value, so it issues when the load is back).
// The program prints each launch's median time over repeated CUDA-event timings and
// writes the records of the warps on SMs 0 to 15 to OUTDIR/tgTG.bin (8 little-endian
// u32 a warp: warp index, SM, warp slot, t0, t1, t2 (low 32 bits), 0, 0), which
// validation/h100/probe13.py reads:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/ctp validation/h100/copy_trace_probe.cu
//   /tmp/ctp OUTDIR
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "warp_clock.cuh"

constexpr unsigned kThreads = 16u << 20;
constexpr int kKeptSms = 16;

__global__ void copy_plain(const float* src, float* dst, unsigned n) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

__global__ void copy_traced(const float* src, float* dst, unsigned n, unsigned* trace) {
    const unsigned long long t0 = stamp();
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned lane = threadIdx.x & 31;
    const unsigned long long t1 = stamp();
    const float v = i < n ? src[i] : 0.0f;
    if (i < n) dst[i] = v;
    // The store reads `v`, so it issues once the load is back: t2 is the load's return.
    const unsigned long long t2 = stamp();
    write_record(trace, i / 32, lane, t0, t1, t2);
}

static float median_ms(const std::vector<float>& v) {
    std::vector<float> s = v;
    std::sort(s.begin(), s.end());
    return s[s.size() / 2];
}

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    const size_t warps = kThreads / 32;
    float *src, *dst;
    unsigned* trace;
    cudaMalloc(&src, kThreads * sizeof(float));
    cudaMalloc(&dst, kThreads * sizeof(float));
    cudaMalloc(&trace, warps * kRecordWords * sizeof(unsigned));
    cudaMemset(src, 0, kThreads * sizeof(float));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<unsigned> h(warps * kRecordWords);
    const int tgs[] = {128, 256, 512, 1024};
    for (int tg : tgs) {
        const unsigned blocks = kThreads / tg;
        std::vector<float> plain, traced;
        for (int rep = 0; rep < 23; rep++) {
            float ms = 0;
            cudaEventRecord(a);
            copy_plain<<<blocks, tg>>>(src, dst, kThreads);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            cudaEventElapsedTime(&ms, a, b);
            if (rep >= 3) plain.push_back(ms);
            cudaEventRecord(a);
            copy_traced<<<blocks, tg>>>(src, dst, kThreads, trace);
            cudaEventRecord(b);
            cudaEventSynchronize(b);
            cudaEventElapsedTime(&ms, a, b);
            if (rep >= 3) traced.push_back(ms);
        }
        cudaError_t e = cudaDeviceSynchronize();
        printf("tg %d: plain %.2f us, traced %.2f us (median of %zu), rc=%d\n", tg,
               1000 * median_ms(plain), 1000 * median_ms(traced), plain.size(), (int)e);
        cudaMemcpy(h.data(), trace, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost);
        FILE* f = fopen((dir + "/tg" + std::to_string(tg) + ".bin").c_str(), "wb");
        size_t kept = 0;
        for (size_t w = 0; w < warps; w++) {
            const unsigned* r = &h[w * kRecordWords];
            if (r[1] < (unsigned)kKeptSms) {
                fwrite(r, sizeof(unsigned), kRecordWords, f);
                kept++;
            }
        }
        fclose(f);
        printf("  %zu warps of SMs 0-%d written\n", kept, kKeptSms - 1);
    }
    return 0;
}
