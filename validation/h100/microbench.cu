// Microbenchmarks for the figures an H100 model needs and NVIDIA does not publish:
// load-to-use latency of L1, L2 and HBM (a pointer chase over growing footprints),
// shared-memory latency, dependent FMA, integer, MUFU, conversion, shuffle and butterfly
// latencies, FMA throughput, DRAM and L2 bandwidth, device atomics (latency, one address,
// one line), the empty-kernel launch time and the SM clock the card runs at. One binary,
// one run; its output is `validation/h100/microbench.txt`, and models/chips/h100.toml
// cites each figure it takes from there.
//
// Build: nvcc -O3 -arch=sm_90 -o microbench microbench.cu
// The host part is hidden from NVRTC (__CUDACC_RTC__), so that the kernels can be checked
// without nvcc (see validation/h100/README.md).
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

// One thread follows `steps` links; the clock counts the cycles of the timed part.
__global__ void chase(const unsigned* __restrict__ next, unsigned start, int steps, unsigned* sink, long long* cycles) {
    unsigned p = start;
    for (int i = 0; i < 64; ++i) p = next[p];  // warm the TLB and the first lines
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) p = next[p];
    long long t1 = clock64();
    sink[0] = p;
    cycles[0] = t1 - t0;
}

__global__ void chase_shared(int steps, unsigned* sink, long long* cycles) {
    __shared__ unsigned next[1024];
    for (int i = 0; i < 1024; ++i) next[i] = (i + 33) % 1024;
    __syncthreads();
    unsigned p = 0;
    for (int i = 0; i < 64; ++i) p = next[p];
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) p = next[p];
    long long t1 = clock64();
    sink[0] = p;
    cycles[0] = t1 - t0;
}

__global__ void fma_chain(float a, float b, int steps, float* sink, long long* cycles) {
    float x = threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) {
        x = fmaf(x, a, b); x = fmaf(x, a, b); x = fmaf(x, a, b); x = fmaf(x, a, b);
    }
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    cycles[0] = t1 - t0;
}

// Eight independent chains per thread: throughput, not latency.
__global__ void fma_throughput(float a, float b, int steps, float* sink) {
    float x[8];
    for (int j = 0; j < 8; ++j) x[j] = threadIdx.x + j;
    for (int i = 0; i < steps; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) x[j] = fmaf(x[j], a, b);
    float s = 0;
    for (int j = 0; j < 8; ++j) s += x[j];
    sink[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

__global__ void read4(const float4* __restrict__ src, size_t n, int passes, float* sink) {
    float s = 0;
    for (int p = 0; p < passes; ++p)
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
            float4 v = src[i];
            s += v.x + v.y + v.z + v.w;
        }
    if (s == 12345.678f) sink[0] = s;
}


// Dependent chains of one warp for the per-class latencies: shuffle, a 5-step butterfly
// sum (what the generated CUDA does for simd_sum), MUFU (log2), integer add, conversion.
__global__ void shfl_chain(int steps, unsigned* sink, long long* cycles) {
    unsigned x = threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) x = __shfl_xor_sync(0xffffffffu, x, 1) + 0u;
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void reduce_chain(int steps, float* sink, long long* cycles) {
    float x = threadIdx.x * 1e-3f;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i)
        for (int m = 16; m > 0; m >>= 1) x = x + __shfl_xor_sync(0xffffffffu, x, m);
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void mufu_chain(int steps, float* sink, long long* cycles) {
    float x = 2.0f + threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) x = __log2f(x) + 2.0f;
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void iadd_chain(int steps, unsigned a, unsigned* sink, long long* cycles) {
    unsigned x = threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) { x = (x ^ a) + 3u; x = (x ^ a) + 5u; }
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

__global__ void cvt_chain(int steps, float* sink, long long* cycles) {
    float x = 1.0f + threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) x = (float)((int)x + 1);
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}

// One thread's dependent device atomics on one word (each returns the old value).
__global__ void atomic_chain(unsigned* word, int steps, unsigned* sink, long long* cycles) {
    unsigned x = 0;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) x = atomicAdd(word + (x & 0u), 1u);
    long long t1 = clock64();
    sink[0] = x;
    cycles[0] = t1 - t0;
}

// Every thread of the grid adds to one word: the L2's rate on one address.
__global__ void atomic_one_address(unsigned* word) { atomicAdd(word, 1u); }

// Lane 0 of every warp adds to one word and uses the old value (no aggregation): the
// L2's time per operation on one address.
__global__ void atomic_one_per_warp(unsigned* word, unsigned* sink) {
    if ((threadIdx.x & 31) == 0) {
        unsigned old = atomicAdd(word, 1u);
        if (old == 0xffffffffu) sink[0] = old;
    }
}

// Every warp adds to the 32 words of one 128-byte line, every warp the same line: the
// L2's time per warp request on one line.
__global__ void atomic_one_line(unsigned* words, unsigned* sink) {
    unsigned old = atomicAdd(words + (threadIdx.x & 31), 1u);
    if (old == 0xffffffffu) sink[0] = old;
}

// Every thread adds to its own word: the atomic rate without contention.
__global__ void atomic_spread(unsigned* words, unsigned mask) {
    atomicAdd(words + ((blockIdx.x * blockDim.x + threadIdx.x) & mask), 1u);
}

__global__ void empty() {}

__global__ void spin(long long cycles, long long* out) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {}
    out[0] = clock64() - t0;
}

#ifndef __CUDACC_RTC__
template <class F> static double median_ms(F f, int reps) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int i = 0; i < 3; ++i) f();
    CK(cudaDeviceSynchronize());
    for (int i = 0; i < reps; ++i) {
        CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main() {
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs, L2 %d bytes, shared/SM %zu, shared/block optin %zu, regs/SM %d, max threads/SM %d, warp %d\n",
           p.name, p.multiProcessorCount, p.l2CacheSize, p.sharedMemPerMultiprocessor, p.sharedMemPerBlockOptin,
           p.regsPerMultiprocessor, p.maxThreadsPerMultiProcessor, p.warpSize);
    int mem_clock_khz = 0, bus_width = 0;
    cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0);
    cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, 0);
    printf("memory: clock attribute %d kHz, bus %d bits\n", mem_clock_khz, bus_width);

    unsigned* sink; long long* cyc;
    CK(cudaMalloc(&sink, 1 << 20)); CK(cudaMalloc(&cyc, 64));

    // SM clock: a spin of known cycles against event time.
    double clock_mhz = 0;
    {
        const long long n = 200000000;
        double ms = median_ms([&] { spin<<<1, 1>>>(n, cyc); }, 5);
        clock_mhz = n / (ms * 1e3);
        printf("clock: %.0f MHz (spin of %lld cycles in %.3f ms)\n", clock_mhz, n, ms);
    }

    // Pointer chase: stride 256 bytes through a footprint, one thread.
    printf("\npointer chase (one thread, stride 256 B): footprint -> cycles per load\n");
    const size_t max_bytes = (size_t)1 << 30;
    unsigned* next;
    CK(cudaMalloc(&next, max_bytes));
    size_t sizes[] = {8u << 10, 32u << 10, 128u << 10, 192u << 10, 512u << 10, 2u << 20, 8u << 20,
                      16u << 20, 24u << 20, 32u << 20, 48u << 20, 64u << 20, 128u << 20, 512u << 20, (size_t)1 << 30};
    for (size_t bytes : sizes) {
        const size_t stride = 64;  // in 4-byte words: 256 bytes
        size_t n = bytes / 4;
        std::vector<unsigned> h(n, 0);
        size_t links = n / stride;
        // A random cycle over the lines, so no pattern helps.
        std::vector<unsigned> order(links);
        for (size_t i = 0; i < links; ++i) order[i] = (unsigned)i;
        srand(7);
        for (size_t i = links - 1; i > 0; --i) std::swap(order[i], order[rand() % (i + 1)]);
        for (size_t i = 0; i < links; ++i) h[order[i] * stride] = order[(i + 1) % links] * stride;
        CK(cudaMemcpy(next, h.data(), n * 4, cudaMemcpyHostToDevice));
        // One full cycle fills whatever level holds the footprint; the timed run then
        // walks on (at most a million links), every link last touched a cycle ago.
        int prime = (int)links;
        int steps = (int)std::min<size_t>(links, 1000000);
        chase<<<1, 1>>>(next, order[0] * stride, prime, sink, cyc);
        CK(cudaDeviceSynchronize());
        chase<<<1, 1>>>(next, order[0] * stride, steps, sink, cyc);
        CK(cudaGetLastError());
        long long c; CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("  %10zu KiB: %7.1f cycles\n", bytes >> 10, (double)c / steps);
    }

    {
        int steps = 100000;
        chase_shared<<<1, 1>>>(steps, sink, cyc);
        CK(cudaDeviceSynchronize());
        long long c; CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("\nshared-memory load-to-use latency: %.1f cycles\n", (double)c / steps);
    }
    {
        int steps = 100000;
        fma_chain<<<1, 32>>>(0.999f, 0.5f, steps, (float*)sink, cyc);
        CK(cudaDeviceSynchronize());
        long long c; CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent FMA latency: %.2f cycles\n", (double)c / (4.0 * steps));
    }
    {
        int steps = 20000, blocks = p.multiProcessorCount * 8, threads = 256;
        float* fs; CK(cudaMalloc(&fs, (size_t)blocks * threads * 4));
        double ms = median_ms([&] { fma_throughput<<<blocks, threads>>>(0.999f, 0.5f, steps, fs); }, 5);
        double flops = 2.0 * 8 * steps * (double)blocks * threads;
        printf("FMA throughput: %.1f TFLOP/s fp32 (%.0f FMA per SM per cycle at the spin clock above)\n",
               flops / (ms * 1e9), flops / 2.0 / (ms * 1e-3) / (p.multiProcessorCount * clock_mhz * 1e6));
        CK(cudaFree(fs));
    }
    {
        size_t bytes = (size_t)2 << 30;
        float4 *a, *b;
        CK(cudaMalloc(&a, bytes)); CK(cudaMalloc(&b, bytes));
        CK(cudaMemset(a, 1, bytes));
        size_t n = bytes / 16;
        int blocks = p.multiProcessorCount * 8;
        double ms = median_ms([&] { copy4<<<blocks, 512>>>(a, b, n); }, 10);
        printf("DRAM copy kernel (2 GiB each way): %.0f GB/s read+write\n", 2.0 * bytes / (ms * 1e6));
        double ms2 = median_ms([&] { read4<<<blocks, 512>>>(a, n, 1, (float*)sink); }, 10);
        printf("DRAM read kernel (2 GiB): %.0f GB/s\n", bytes / (ms2 * 1e6));
        size_t l2n = ((size_t)16 << 20) / 16;
        double ms3 = median_ms([&] { read4<<<blocks, 512>>>(a, l2n, 50, (float*)sink); }, 10);
        printf("L2 read kernel (16 MiB footprint, 50 passes): %.0f GB/s\n", 50.0 * (16 << 20) / (ms3 * 1e6));
        double ms4 = median_ms([&] { CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 10);
        printf("cudaMemcpy device to device (2 GiB): %.0f GB/s read+write\n", 2.0 * bytes / (ms4 * 1e6));
        CK(cudaFree(a)); CK(cudaFree(b));
    }

    {
        int steps = 100000;
        long long c;
        shfl_chain<<<1, 32>>>(steps, sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent SHFL (+IADD) latency: %.2f cycles\n", (double)c / steps);
        reduce_chain<<<1, 32>>>(steps / 5, (float*)sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("5-step butterfly sum (SHFL.BFLY + FADD) latency: %.2f cycles\n", (double)c / (steps / 5));
        mufu_chain<<<1, 32>>>(steps, (float*)sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent __log2f + FADD latency: %.2f cycles\n", (double)c / steps);
        iadd_chain<<<1, 32>>>(steps, 0x5bd1e995u, sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent (xor, add) pair latency: %.2f cycles\n", (double)c / (2.0 * steps));
        cvt_chain<<<1, 32>>>(steps, (float*)sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent F2I + IADD + I2F latency: %.2f cycles\n", (double)c / steps);
    }
    {
        unsigned* words;
        CK(cudaMalloc(&words, 64 << 20));
        CK(cudaMemset(words, 0, 64 << 20));
        int steps = 20000;
        long long c;
        atomic_chain<<<1, 1>>>(words, steps, sink, cyc);
        CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost));
        printf("dependent device atomicAdd latency (one thread, one word): %.1f cycles\n", (double)c / steps);
        int blocks = p.multiProcessorCount * 64, threads = 256;
        double n = (double)blocks * threads;
        double ms = median_ms([&] { atomic_one_address<<<blocks, threads>>>(words); }, 10);
        printf("atomicAdd to one address from %.0f threads: %.3f ms, %.2f ns per operation (%.2f SM cycles)\n",
               n, ms, ms * 1e6 / n, ms * 1e-3 * clock_mhz * 1e6 / n);
        double warps = n / 32;
        double ms5 = median_ms([&] { atomic_one_per_warp<<<blocks, threads>>>(words, sink); }, 10);
        printf("atomicAdd (old value used) to one address, one lane per warp, %.0f operations: %.3f ms, %.2f SM cycles per operation\n",
               warps, ms5, ms5 * 1e-3 * clock_mhz * 1e6 / warps);
        double ms6 = median_ms([&] { atomic_one_line<<<blocks, threads>>>(words, sink); }, 10);
        printf("atomicAdd (old value used), each warp to the 32 words of one line, %.0f warps: %.3f ms, %.2f SM cycles per warp request\n",
               warps, ms6, ms6 * 1e-3 * clock_mhz * 1e6 / warps);
        double ms2 = median_ms([&] { atomic_spread<<<blocks, threads>>>(words, (16u << 20) - 1u); }, 10);
        printf("atomicAdd to distinct words from %.0f threads: %.3f ms, %.1f G atomics/s\n", n, ms2, n / (ms2 * 1e6));
        CK(cudaFree(words));
    }
    {
        double ms = median_ms([&] { empty<<<1, 32>>>(); }, 200);
        double ms2 = median_ms([&] { empty<<<p.multiProcessorCount * 16, 256>>>(); }, 200);
        printf("empty kernel, CUDA events around it: %.2f us (1 block), %.2f us (%d blocks of 256)\n",
               ms * 1e3, ms2 * 1e3, p.multiProcessorCount * 16);
    }
    return 0;
}
#endif
