// Probe 26b (docs/validation.md, "Probe 26"): probe 10's `fo_pure` store pattern (12
// floats a thread at a stride of 12, one store each) written to keep ptxas from changing
// when a stored register is written again. Every address and value comes from inline
// PTX (`asm volatile`, so the order stays as written), each address in a register of
// its own computed before the stores:
// - `rewrite`: value k is computed just before store k, so at ptxas -O0, which takes the
//   lowest free register, each store's data register is written again by the next
//   value, as the ISA's register slots do (`metalsim asm` of probe10/kernels/fo_pure);
// - `fresh`: all twelve values are computed first, so no stored register is written
//   again, as ptxas -O3 does with the plain program.
// Built at -O0 and -O3 (probe26b.sh); the program launches each kernel twice, every
// launch profiled under Nsight Compute. What the SASS showed: at -O3 ptxas schedules
// the inline PTX freely and gives both kernels one program; at -O0 it copies each
// address into one register pair before its store, so both write a stored register
// again after nearly every store.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int WORDS = 12;

__device__ __forceinline__ float* offset(float* p, long long bytes) {
    float* q;
    asm volatile("add.s64 %0, %1, %2;" : "=l"(q) : "l"(p), "l"(bytes));
    return q;
}

__device__ __forceinline__ float add(float x, float k) {
    float v;
    asm volatile("add.f32 %0, %1, %2;" : "=f"(v) : "f"(x), "f"(k));
    return v;
}

__device__ __forceinline__ void store(float* p, float v) {
    asm volatile("st.global.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}

template <bool FRESH>
__global__ void fo_pure_pinned(const float* __restrict__ a, float* __restrict__ out) {
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const float x = a[i];
    float* o = out + (size_t)i * WORDS;
    float* p[WORDS];
#pragma unroll
    for (int k = 0; k < WORDS; ++k) p[k] = offset(o, 4LL * k);
    if (FRESH) {
        float v[WORDS];
#pragma unroll
        for (int k = 0; k < WORDS; ++k) v[k] = add(x, (float)k);
#pragma unroll
        for (int k = 0; k < WORDS; ++k) store(p[k], v[k]);
    } else {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) store(p[k], add(x, (float)k));
    }
}

int main() {
    const unsigned n = 524288, tg = 128;
    float *a, *out;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&out, (size_t)n * WORDS * sizeof(float));
    cudaMemset(a, 0, n * sizeof(float));
    cudaMemset(out, 0, (size_t)n * WORDS * sizeof(float));
    for (int rep = 0; rep < 2; ++rep) {
        fo_pure_pinned<false><<<n / tg, tg>>>(a, out);
        printf("rewrite rc=%d\n", (int)cudaDeviceSynchronize());
        fo_pure_pinned<true><<<n / tg, tg>>>(a, out);
        printf("fresh rc=%d\n", (int)cudaDeviceSynchronize());
    }
    float h[WORDS];
    cudaMemcpy(h, out + (size_t)(n - 1) * WORDS, sizeof h, cudaMemcpyDeviceToHost);
    for (int k = 0; k < WORDS; ++k)
        if (h[k] != (float)k) { printf("wrong output word %d: %g\n", k, h[k]); return 1; }
    printf("outputs ok\n");
    return 0;
}
