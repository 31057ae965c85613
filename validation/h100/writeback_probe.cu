// When does the H100's L2 write dirty data to HBM, and what does a store that writes
// part of a 32-byte sector cost in DRAM traffic? Each kernel below is launched once per
// size; run it under Nsight Compute to read the DRAM bytes of every launch:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/wb validation/h100/writeback_probe.cu
//   ncu --csv --print-units base --cache-control all --clock-control none \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/wb
//
// The program prints one line per launch, in launch order (the order of ncu's rows):
// - full:   every thread writes one float (whole sectors), output of N MiB;
// - spin:   as `full` at 8 MiB, then every thread spins for S cycles before it exits
//           (does the L2 write dirty lines back while DRAM is idle?);
// - sparse: thread t writes out[t * W + k] for k = 0..W-1, W = 8 (each warp store writes
//           4 bytes of 32 sectors, as `float_ops` and `int_ops` do), output of N MiB;
// - copy:   out[i] = in[i], N MiB each way.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void full(float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)i;
}

__global__ void spin(float* out, size_t n, long long cycles) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)i;
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

__global__ void sparse(float* out, size_t threads) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= threads) return;
#pragma unroll
    for (int k = 0; k < 8; k++) out[t * 8 + k] = (float)(t + k);
}

__global__ void copy(const float* in, float* out, size_t n) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

int main() {
    const size_t max_bytes = 128ull << 20;
    float *a, *b;
    cudaMalloc(&a, max_bytes);
    cudaMalloc(&b, max_bytes);
    cudaMemset(a, 0, max_bytes);
    cudaMemset(b, 0, max_bytes);
    cudaDeviceSynchronize();
    const int mib[] = {4, 8, 16, 24, 32, 40, 48, 64, 96};
    for (int m : mib) {
        size_t n = ((size_t)m << 20) / 4;
        full<<<(n + 255) / 256, 256>>>(a, n);
        cudaDeviceSynchronize();
        printf("full %d MiB\n", m);
    }
    const long long spins[] = {0, 20000, 100000, 400000};
    for (long long s : spins) {
        size_t n = (8ull << 20) / 4;
        spin<<<(n + 255) / 256, 256>>>(a, n, s);
        cudaDeviceSynchronize();
        printf("spin 8 MiB %lld cycles\n", s);
    }
    for (int m : mib) {
        size_t threads = ((size_t)m << 20) / 32;
        sparse<<<(threads + 127) / 128, 128>>>(a, threads);
        cudaDeviceSynchronize();
        printf("sparse %d MiB\n", m);
    }
    for (int m : {16, 32, 48, 64}) {
        size_t n = ((size_t)m << 20) / 4;
        copy<<<(n + 255) / 256, 256>>>(b, a, n);
        cudaDeviceSynchronize();
        printf("copy %d MiB\n", m);
    }
    cudaError_t e = cudaGetLastError();
    printf("probe rc=%d (%s)\n", (int)e, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
