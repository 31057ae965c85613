// How the H100 serialises contended device atomics: the suite's 256-bin histogram
// (atomics_global: 4 Mi random values, one atomicAdd each) with its bins spaced 1, 8 or
// 32 words apart (8, 64 or 256 distinct 128-byte lines), and with 64 or 4096 bins packed.
// If the L2 serialises per line, spreading the bins over more lines speeds it up; if per
// address, spacing changes nothing. Output: validation/h100/atomics_probe.txt.
//
// Build: nvcc -O3 -arch=sm_90 -o atomics_probe atomics_probe.cu
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void histogram(const unsigned* data, unsigned* bins, unsigned mask, unsigned spacing, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(bins + (data[i] & mask) * spacing, 1u);
}

#ifndef __CUDACC_RTC__
int main() {
    const unsigned n = 4u << 20;
    std::vector<unsigned> h(n);
    unsigned x = 51;
    for (unsigned i = 0; i < n; ++i) { x = x * 1664525u + 1013904223u; h[i] = x >> 8; }
    unsigned *data, *bins;
    CK(cudaMalloc(&data, n * 4ull));
    CK(cudaMalloc(&bins, 4096 * 32 * 4ull));
    CK(cudaMemcpy(data, h.data(), n * 4ull, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    struct Case { unsigned bins, spacing; } cases[] = {{256, 1}, {256, 8}, {256, 32}, {64, 1}, {4096, 1}};
    printf("histogram of %u values, one atomicAdd each (old value unused), 256-thread blocks\n", n);
    for (Case c : cases) {
        std::vector<float> t;
        for (int r = 0; r < 12; ++r) {
            CK(cudaMemset(bins, 0, 4096 * 32 * 4ull));
            CK(cudaEventRecord(a));
            histogram<<<n / 256, 256>>>(data, bins, c.bins - 1, c.spacing, n);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms; CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 2) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        unsigned lines = (c.bins * c.spacing * 4 + 127) / 128;
        printf("  %4u bins, %2u words apart (%3u lines): %8.1f us\n", c.bins, c.spacing,
               std::min(lines, c.bins), t[t.size() / 2] * 1e3);
    }
    return 0;
}
#endif
