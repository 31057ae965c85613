// How many stores with sparsely written sectors may an H100 SM have waiting in its store
// path before a store instruction can no longer issue? (The figure behind
// `memory.store_queue` in models/chips/h100.toml.)
//
//   nvcc -O3 -arch=sm_90 -o /tmp/sq validation/h100/store_queue_probe.cu && /tmp/sq
//
// One block of W warps per SM (132 blocks). Every thread issues S stores to
// out[t * S + k], k = 0..S-1: each warp store writes 4 bytes of each of 32 sectors (the
// sparse pattern of int_ops and float_ops). A store does not wait for its data to
// arrive, so the clock read after it shows when it *issued*: while the store path has
// room the stores issue a few cycles apart; once it is full each waits for the path to
// drain 32 sectors. The knee, in stores per SM, is the path's capacity (in stores of 32
// sectors: the probe does not tell stores from sectors).
//
// Printed per W: for k = 1..S the cycles from before the first store to after store k,
// averaged over the first warp of every block, and the same for the SM's last warp.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int S = 64;

__device__ __forceinline__ unsigned now() {
    unsigned t;
    asm volatile("mov.u32 %0, %%clock;" : "=r"(t)::"memory");
    return t;
}

__global__ void stores(float* out, long long* times) {
    const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned ts[S + 1];
    __syncthreads();
    ts[0] = now();
#pragma unroll
    for (int k = 0; k < S; k++) {
        out[t * S + k] = (float)k;
        ts[k + 1] = now();
    }
    const int warp = threadIdx.x / 32;
    const int warps = blockDim.x / 32;
    if (threadIdx.x % 32 == 0 && (warp == 0 || warp == warps - 1)) {
        long long* row = times + ((size_t)blockIdx.x * 2 + (warp == 0 ? 0 : 1)) * S;
#pragma unroll
        for (int k = 0; k < S; k++) row[k] = (long long)(ts[k + 1] - ts[0]);
    }
}

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int warps_list[] = {1, 2, 4, 8, 16};
    float* out;
    long long* times;
    const size_t max_threads = (size_t)sms * 512;
    cudaMalloc(&out, max_threads * S * sizeof(float));
    cudaMalloc(&times, (size_t)sms * 2 * S * sizeof(long long));
    long long* host = new long long[(size_t)sms * 2 * S];
    printf("store_queue_probe: %d SMs, %d stores per thread, 32 sectors per warp store\n", sms, S);
    for (int w : warps_list) {
        for (int rep = 0; rep < 2; rep++) {  // the first launch warms up
            cudaMemset(out, 0, max_threads * S * sizeof(float));
            stores<<<sms, 32 * w>>>(out, times);
            cudaDeviceSynchronize();
        }
        cudaMemcpy(host, times, (size_t)sms * 2 * S * sizeof(long long), cudaMemcpyDeviceToHost);
        for (int which = 0; which < 2; which++) {
            printf("W=%d %s warp:", w, which == 0 ? "first" : "last");
            for (int k = 0; k < S; k++) {
                double sum = 0;
                for (int b = 0; b < sms; b++) sum += host[((size_t)b * 2 + which) * S + k];
                printf(" %.0f", sum / sms);
            }
            printf("\n");
        }
    }
    cudaError_t e = cudaGetLastError();
    printf("probe rc=%d (%s)\n", (int)e, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
