// Does the H100 (ECC on: device-run6.txt) read a sector from HBM when it writes back a
// sector the kernel wrote only in part, and when: at the write-back, or when the partial
// write arrives at L2? Run under Nsight Compute to read each launch's DRAM bytes:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/ecc validation/h100/ecc_probe.cu
//   ncu --csv --print-units base --cache-control all --clock-control none \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/ecc
//
// One line per launch, in launch order (the order of ncu's rows):
// - half:  thread t writes out[t * 8 + k] for k = 0..3: the first 16 bytes of every
//          32-byte sector, never the rest, over N MiB. If partial sectors are merged at
//          write-back, the DRAM reads follow the bytes written back (none up to about
//          25 MB, as writeback_probe.txt's `full`); if at the write's arrival, every
//          sector is read (N MiB) whatever N.
// - whole: thread t writes out[t * 8 + k] for k = 0..7 (whole sectors, the control).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void half(float* out, size_t threads) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= threads) return;
#pragma unroll
    for (int k = 0; k < 4; k++) out[t * 8 + k] = (float)(t + k);
}

__global__ void whole(float* out, size_t threads) {
    size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (t >= threads) return;
#pragma unroll
    for (int k = 0; k < 8; k++) out[t * 8 + k] = (float)(t + k);
}

int main() {
    const size_t max_bytes = 128ull << 20;
    float* a;
    cudaMalloc(&a, max_bytes);
    cudaMemset(a, 0, max_bytes);
    cudaDeviceSynchronize();
    const int mib[] = {8, 16, 32, 48, 64, 96};
    for (int m : mib) {
        size_t threads = ((size_t)m << 20) / 32;
        half<<<(threads + 127) / 128, 128>>>(a, threads);
        cudaDeviceSynchronize();
        printf("half %d MiB\n", m);
    }
    for (int m : mib) {
        size_t threads = ((size_t)m << 20) / 32;
        whole<<<(threads + 127) / 128, 128>>>(a, threads);
        cudaDeviceSynchronize();
        printf("whole %d MiB\n", m);
    }
    cudaError_t e = cudaGetLastError();
    printf("probe rc=%d (%s)\n", (int)e, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
