// What the generated CUDA's 8x8 SIMD-group matrix multiply-accumulate (the prelude's
// ms_matrix_mac, included from crosscheck/src/cuda/prelude.cuh, so exactly what `metalsim
// emit cuda` runs) costs when its A and B operands change from one call to the next, as
// they do in a GEMM. microbench run5 measured it with loop-invariant A and B, which nvcc
// hoists: its shuffles then leave the loop and only the FMAs remain (52 cycles per warp).
//
//   nvcc -O3 -arch=sm_90 --fmad=false -o /tmp/mp validation/h100/matrix_probe.cu && /tmp/mp
//
// - latency: one warp, a chain through C, A and B advanced by one FADD each per call;
// - throughput: 8 warps per block, 8 blocks per SM (64 warps: every sub-partition full),
//   two independent chains per warp; cycles per call per warp per sub-partition;
// - the same with A and B loop-invariant (run 5's figure, for comparison);
// - gemm-like: the suite's gemm_simdgroup pattern (two matrix loads and one
//   multiply-accumulate per step, 31 one-warp blocks per SM), cycles per step per warp.
// Every figure subtracts nothing: the FADDs that advance A and B (4 per call) are
// included and printed.
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>
#include "../../crosscheck/src/cuda/prelude.cuh"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void lat_live(int steps, float* sink, long long* cycles) {
    float a0 = threadIdx.x * 1e-3f, a1 = a0 * 0.5f, b0 = a0 + 1.0f, b1 = a1 - 1.0f;
    float d0 = 0.0f, d1 = 0.0f;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) {
        ms_matrix_mac<float>(0xffffffffu, a0, a1, b0, b1, d0, d1, d0, d1);
        a0 += 1.0f; a1 += 1.0f; b0 += 1.0f; b1 += 1.0f;
    }
    long long t1 = clock64();
    sink[threadIdx.x] = d0 + d1;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

template <bool LIVE>
__global__ void tput(int steps, float* sink) {
    float a0 = threadIdx.x * 1e-3f, a1 = a0 * 0.5f, b0 = a0 + 1.0f, b1 = a1 - 1.0f;
    float d0 = 0, d1 = 0, e0 = 0, e1 = 0;
    for (int i = 0; i < steps; ++i) {
        ms_matrix_mac<float>(0xffffffffu, a0, a1, b0, b1, d0, d1, d0, d1);
        ms_matrix_mac<float>(0xffffffffu, b1, b0, a1, a0, e0, e1, e0, e1);
        if (LIVE) { a0 += 1.0f; a1 += 1.0f; b0 += 1.0f; b1 += 1.0f; }
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = d0 + d1 + e0 + e1;
}

// The suite's gemm_simdgroup step as the generated CUDA computes it.
__global__ void gemm_like(const float* A, const float* BT, float* C, uint32_t n) {
    uint32_t row = blockIdx.y * 8, col = blockIdx.x * 8, lane = ms_lane();
    float acc0 = 0, acc1 = 0;
    for (uint32_t k = 0; k < n; k += 8) {
        float a[2], b[2];
        for (uint32_t e = 0; e < 2; ++e) {
            uint32_t r, c;
            ms_matrix_element(lane, e, r, c);
            a[e] = A[(uint64_t)(row + r) * n + k + c];
            b[e] = BT[(uint64_t)(col + c) * n + k + r];
        }
        ms_matrix_mac<float>(0xffffffffu, a[0], a[1], b[0], b[1], acc0, acc1, acc0, acc1);
    }
    uint32_t r, c;
    ms_matrix_element(lane, 0, r, c);
    C[(uint64_t)(row + r) * n + col + c] = acc0;
    C[(uint64_t)(row + r) * n + col + c + 1] = acc1;
}

template <class F> static double median_ms(F f, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    f();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int sms = p.multiProcessorCount;
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    // The clock the card runs at under load: microbench.txt measured 1979 MHz.
    const double mhz = 1979.0;
    float* sink;
    long long* cyc;
    CK(cudaMalloc(&sink, 64 << 20));
    CK(cudaMalloc(&cyc, 8));
    printf("device %s, %d SMs, nominal clock %d kHz, cycles at %.0f MHz\n", p.name, sms, clock_khz, mhz);

    int steps = 1024;
    lat_live<<<1, 32>>>(steps, sink, cyc);
    long long c;
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
    printf("latency, A and B live (+4 FADD per call): %.1f cycles per call\n", (double)c / steps);

    int tsteps = 256, blocks = sms * 8, threads = 256;
    double calls = (double)blocks * threads / 32 * tsteps * 2;
    double ms = median_ms([&] { tput<true><<<blocks, threads>>>(tsteps, sink); }, 5);
    printf("throughput, A and B live (+2 FADD per call): %.1f cycles per call per warp per sub-partition\n",
           ms * 1e-3 * mhz * 1e6 * sms * 4 / calls);
    ms = median_ms([&] { tput<false><<<blocks, threads>>>(tsteps, sink); }, 5);
    printf("throughput, A and B loop-invariant (run 5's set-up): %.1f cycles per call per warp per sub-partition\n",
           ms * 1e-3 * mhz * 1e6 * sms * 4 / calls);

    const uint32_t n = 512;
    float *A, *B, *C;
    CK(cudaMalloc(&A, n * n * 4));
    CK(cudaMalloc(&B, n * n * 4));
    CK(cudaMalloc(&C, n * n * 4));
    CK(cudaMemset(A, 0, n * n * 4));
    CK(cudaMemset(B, 0, n * n * 4));
    dim3 grid(n / 8, n / 8);
    ms = median_ms([&] { gemm_like<<<grid, 32>>>(A, B, C, n); }, 9);
    double warps = (double)grid.x * grid.y;
    printf("gemm-like 512^3 (64x64 one-warp blocks, 64 steps): %.2f us; %.0f cycles per step per warp per SM "
           "(%.1f warps per SM)\n",
           ms * 1e3, ms * 1e-3 * mhz * 1e6 * sms / (warps * (n / 8)), warps / sms);
    cudaError_t e = cudaGetLastError();
    printf("probe rc=%d (%s)\n", (int)e, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
