// Does HBM's loaded latency depend on what the other traffic is, reads or writes?
// (docs/validation.md, "Probe 13". The model's `memory.dram.loaded_latency` was measured
// with read-only streams [MB5]; probe 13's `copy` sees its loads take about 1,060
// cycles at about 1.6 TB/s, where that curve gives about 740.) One thread chases
// pointers through a 256 MiB random cycle (one 128-byte line every 256 bytes, so every
// hop misses L2) while B other blocks of 256 threads stream until the chase is done:
//   read:   float4 loads of a 2 GiB buffer (the microbenchmark's loaded-latency streams);
//   copy4:  float4 loads of one 1 GiB buffer and float4 stores to another;
//   copy1:  float loads and stores, one a thread per step, as the suite's `copy` does;
//   write:  float4 stores only;
//   triad1: float loads of two buffers and float stores to a third, one a thread per
//           step (a third of the traffic written).
// Per pattern and B: the chase's cycles per hop, and the streams' DRAM-side rate
// (bytes loaded plus bytes stored, by their own count, over the launch's event time).
//
//   nvcc -O3 -arch=sm_90 -o /tmp/mlp validation/h100/mix_latency_probe.cu && /tmp/mlp
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x)                                                                   \
    do {                                                                        \
        cudaError_t e = (x);                                                    \
        if (e != cudaSuccess) {                                                 \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, \
                   __LINE__);                                                   \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

enum Pattern { kRead = 0, kCopy4 = 1, kCopy1 = 2, kWrite = 3, kTriad1 = 4 };

template <int P>
__global__ void chase_mixed(const unsigned* __restrict__ next, unsigned start, int steps,
                            const float4* __restrict__ src, float4* __restrict__ dst,
                            const float* __restrict__ src2, size_t n4, volatile unsigned* done, unsigned* sink,
                            long long* cycles, unsigned long long* bytes) {
    if (blockIdx.x == 0) {
        if (threadIdx.x != 0) return;
        unsigned p = start;
        long long t0 = clock64();
        for (int i = 0; i < steps; ++i) p = next[p];
        long long t1 = clock64();
        sink[0] = p;
        cycles[0] = t1 - t0;
        __threadfence();
        *done = 1u;
        return;
    }
    const size_t stride = (size_t)(gridDim.x - 1) * blockDim.x;
    size_t i = (size_t)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
    const float* src1 = reinterpret_cast<const float*>(src);
    float* dst1 = reinterpret_cast<float*>(dst);
    const size_t n1 = n4 * 4;
    float s = 0;
    unsigned long long moved = 0;
    while (*done == 0u) {
        for (int r = 0; r < 8; ++r) {
            if (P == kRead) {
                float4 v = src[i];
                s += v.x + v.w;
                moved += 16;
            } else if (P == kCopy4) {
                dst[i] = src[i];
                moved += 32;
            } else if (P == kCopy1) {
                dst1[i] = src1[i];
                moved += 8;
            } else if (P == kTriad1) {
                dst1[i] = src1[i] + 3.0f * src2[i];
                moved += 12;
            } else {
                dst[i] = make_float4(s, s, s, s);
                moved += 16;
            }
            i += stride;
            const size_t n = P == kCopy1 || P == kTriad1 ? n1 : n4;
            if (i >= n) i -= n;
        }
    }
    if (s == 12345.678f) sink[1] = 1u;
    atomicAdd(bytes, moved);
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0);
    const size_t bytes = (size_t)256 << 20, stride = 64;
    const size_t n = bytes / 4, links = n / stride;
    std::vector<unsigned> h(n, 0), order(links);
    for (size_t i = 0; i < links; ++i) order[i] = (unsigned)i;
    srand(11);
    for (size_t i = links - 1; i > 0; --i) std::swap(order[i], order[rand() % (i + 1)]);
    for (size_t i = 0; i < links; ++i) h[order[i] * stride] = order[(i + 1) % links] * stride;
    unsigned* next;
    CK(cudaMalloc(&next, bytes));
    CK(cudaMemcpy(next, h.data(), bytes, cudaMemcpyHostToDevice));
    const size_t sbytes = (size_t)1 << 30;
    float4 *src, *dst;
    float* src2;
    CK(cudaMalloc(&src, sbytes));
    CK(cudaMalloc(&dst, sbytes));
    CK(cudaMalloc(&src2, sbytes));
    CK(cudaMemset(src2, 2, sbytes));
    CK(cudaMemset(src, 1, sbytes));
    CK(cudaMemset(dst, 0, sbytes));
    unsigned *done, *sink;
    long long* cyc;
    unsigned long long* moved;
    CK(cudaMalloc(&done, 4));
    CK(cudaMalloc(&sink, 64));
    CK(cudaMalloc(&cyc, 8));
    CK(cudaMalloc(&moved, 8));
    const char* names[] = {"read", "copy4", "copy1", "write", "triad1"};
    const int streamers[] = {0, 33, 66, 132, 198, 264, 396, 528, 924, 1848};
    printf("device %s, %d SMs; chase of 256 MiB, streams over 1 GiB buffers\n", prop.name, sms);
    int k = 0;
    for (int p = 0; p < 5; ++p) {
        for (int b : streamers) {
            const int steps = 3000;
            CK(cudaMemset(done, 0, 4));
            CK(cudaMemset(moved, 0, 8));
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0));
            CK(cudaEventCreate(&e1));
            const unsigned start = order[(k++ * 50000) % links] * (unsigned)stride;
            CK(cudaEventRecord(e0));
            const size_t n4 = sbytes / 16;
            switch (p) {
                case kRead: chase_mixed<kRead><<<1 + b, 256>>>(next, start, steps, src, dst, src2, n4, done, sink, cyc, moved); break;
                case kCopy4: chase_mixed<kCopy4><<<1 + b, 256>>>(next, start, steps, src, dst, src2, n4, done, sink, cyc, moved); break;
                case kCopy1: chase_mixed<kCopy1><<<1 + b, 256>>>(next, start, steps, src, dst, src2, n4, done, sink, cyc, moved); break;
                case kWrite: chase_mixed<kWrite><<<1 + b, 256>>>(next, start, steps, src, dst, src2, n4, done, sink, cyc, moved); break;
                default: chase_mixed<kTriad1><<<1 + b, 256>>>(next, start, steps, src, dst, src2, n4, done, sink, cyc, moved); break;
            }
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            long long c;
            unsigned long long m;
            CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(&m, moved, 8, cudaMemcpyDeviceToHost));
            printf("%-6s %5d streaming blocks (%5.2f warps per SM): %7.1f cycles per hop, streams %6.0f GB/s\n",
                   names[p], b, b * 8.0 / sms, (double)c / steps, m / (ms * 1e6));
        }
    }
    return 0;
}
