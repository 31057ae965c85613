// Microbenchmarks for the figures an H100 model needs and NVIDIA does not publish:
// load-to-use latency of L1, L2 and HBM (a pointer chase over growing footprints),
// shared-memory latency, dependent FMA, integer, MUFU, conversion, shuffle and butterfly
// latencies, FMA throughput, DRAM and L2 bandwidth, device atomics (latency, one address,
// one line), the empty-kernel launch time and the SM clock the card runs at. One binary,
// one run; its output is `validation/h100/microbench.txt`, and models/chips/h100.toml
// cites each figure it takes from there.
//
// Build: nvcc -O3 -arch=sm_90 -o microbench microbench.cu; `microbench` runs the first
// runs' set, `microbench run5` the cross-check run 5 set (microbench-run5.txt).
// The host part is hidden from NVRTC (__CUDACC_RTC__), so that the kernels can be checked
// without nvcc (see validation/h100/README.md).
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
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


// ---- run 5: what the cross-check's kernels spend their time on ----------------------
// Each operation as the generated CUDA computes it (`metalsim emit cuda`'s prelude and
// nvcc -O3 --fmad=false): latency of one warp's dependent chain, throughput of many
// warps with four independent chains each. `y` and `c` are run-time values, so nvcc can
// neither fold nor strength-reduce them.
template <class T> __device__ __forceinline__ T mb_idiv(T a, T b) {  // prelude's ms_idiv
    if (b == (T)0) return (T)~(T)0;
    if ((T)-1 < (T)0 && a == (T)(1u << 31) && b == (T)-1) return a;
    return (T)(a / b);
}
template <class T> __device__ __forceinline__ T mb_irem(T a, T b) {  // prelude's ms_irem
    if (b == (T)0) return a;
    if ((T)-1 < (T)0 && b == (T)-1) return (T)0;
    return (T)(a % b);
}
#define MB_OP(NAME, T, EXPR)                                                               \
__global__ void lat_##NAME(int steps, T y, T c, T* sink, long long* cycles) {              \
    T x = (T)(threadIdx.x + 3);                                                            \
    long long t0 = clock64();                                                              \
    for (int i = 0; i < steps; ++i) { x = (EXPR); }                                        \
    long long t1 = clock64();                                                              \
    sink[threadIdx.x] = x;                                                                 \
    if (threadIdx.x == 0) cycles[0] = t1 - t0;                                             \
}                                                                                          \
__global__ void tput_##NAME(int steps, T y, T c, T* sink) {                                \
    T v[4];                                                                                \
    for (int j = 0; j < 4; ++j) v[j] = (T)(threadIdx.x + 3 + j);                           \
    for (int i = 0; i < steps; ++i) {                                                      \
        _Pragma("unroll") for (int j = 0; j < 4; ++j) { T x = v[j]; v[j] = (EXPR); }       \
    }                                                                                      \
    sink[blockIdx.x * blockDim.x + threadIdx.x] = v[0] + v[1] + v[2] + v[3];               \
}
MB_OP(fadd, float, x + y)
MB_OP(fdiv, float, x / y + c)
MB_OP(sqrt, float, sqrtf(x) + c)
MB_OP(sin, float, sinf(x) + c)
MB_OP(cos, float, cosf(x) + c)
MB_OP(exp, float, __expf(x) * c)
MB_OP(log, float, __logf(x) + c)
MB_OP(iadd, unsigned, x + y)
MB_OP(ixor, unsigned, (x ^ y) ^ c)
MB_OP(imul, unsigned, x * y)
MB_OP(sdiv, int, mb_idiv<int>(x, y) ^ c)
MB_OP(srem, int, mb_irem<int>(x, y) ^ c)
MB_OP(udiv, unsigned, mb_idiv<unsigned>(x, y) ^ c)
MB_OP(urem, unsigned, mb_irem<unsigned>(x, y) ^ c)

// The prelude's 8x8 SIMD-group matrix multiply-accumulate (shuffles and FMAs), copied.
__device__ __forceinline__ void mb_matrix_element(unsigned lane, unsigned k, unsigned& row, unsigned& col) {
    unsigned quad = (lane % 32) / 4;
    row = (quad / 4) * 4 + (lane / 2) % 4;
    col = (quad & 2) * 2 + (lane % 2) * 2 + (k & 1);
}
__device__ __forceinline__ void mb_matrix_holder(unsigned row, unsigned col, unsigned& lane, unsigned& k) {
    k = col & 1;
    unsigned pair = (col % 4) / 2;
    lane = (row / 4) * 16 + (col / 4) * 8 + (row % 4) * 2 + pair;
}
__device__ __forceinline__ void mb_matrix_mac(unsigned mask, float a0, float a1, float b0, float b1,
                                              float c0, float c1, float& d0, float& d1) {
    float out[2] = {c0, c1};
    unsigned lane = threadIdx.x & 31u;
    unsigned row[2], col[2];
    mb_matrix_element(lane, 0, row[0], col[0]);
    mb_matrix_element(lane, 1, row[1], col[1]);
    for (unsigned i = 0; i < 8; ++i) {
        for (int e = 0; e < 2; ++e) {
            unsigned la, ka, lb, kb;
            mb_matrix_holder(row[e], i, la, ka);
            mb_matrix_holder(i, col[e], lb, kb);
            float x0 = __shfl_sync(mask, a0, la), x1 = __shfl_sync(mask, a1, la);
            float y0 = __shfl_sync(mask, b0, lb), y1 = __shfl_sync(mask, b1, lb);
            out[e] = __fmaf_rn(ka ? x1 : x0, kb ? y1 : y0, out[e]);
        }
    }
    d0 = out[0];
    d1 = out[1];
}
__global__ void lat_mma(int steps, float a, float* sink, long long* cycles) {
    float a0 = a + threadIdx.x, a1 = a0 * 0.5f, d0 = 0.0f, d1 = 0.0f;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) mb_matrix_mac(0xffffffffu, a0, a1, a1, a0, d0, d1, d0, d1);
    long long t1 = clock64();
    sink[threadIdx.x] = d0 + d1;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}
__global__ void tput_mma(int steps, float a, float* sink) {
    float a0 = a + threadIdx.x, a1 = a0 * 0.5f, d0 = 0, d1 = 0, e0 = 0, e1 = 0;
    for (int i = 0; i < steps; ++i) {
        mb_matrix_mac(0xffffffffu, a0, a1, a1, a0, d0, d1, d0, d1);
        mb_matrix_mac(0xffffffffu, a1, a0, a0, a1, e0, e1, e0, e1);
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = d0 + d1 + e0 + e1;
}
// The prelude's full-mask inclusive sum scan (Hillis-Steele over shuffles).
__global__ void lat_scan(int steps, float* sink, long long* cycles) {
    float x = threadIdx.x * 1e-3f;
    unsigned lane = threadIdx.x & 31u;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i)
        for (unsigned d = 1; d < 32; d <<= 1) {
            float y = __shfl_up_sync(0xffffffffu, x, d);
            if (lane >= d) x = y + x;
        }
    long long t1 = clock64();
    sink[threadIdx.x] = x;
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
}
// The butterfly sum and the scan, many warps: throughput.
__global__ void tput_reduce(int steps, float* sink) {
    float x = threadIdx.x * 1e-3f, z = x + 1.0f;
    for (int i = 0; i < steps; ++i)
        for (int m = 16; m > 0; m >>= 1) {
            x = x + __shfl_xor_sync(0xffffffffu, x, m);
            z = z + __shfl_xor_sync(0xffffffffu, z, m);
        }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = x + z;
}
__global__ void tput_scan(int steps, float* sink) {
    float x = threadIdx.x * 1e-3f, z = x + 1.0f;
    unsigned lane = threadIdx.x & 31u;
    for (int i = 0; i < steps; ++i)
        for (unsigned d = 1; d < 32; d <<= 1) {
            float y = __shfl_up_sync(0xffffffffu, x, d);
            float w = __shfl_up_sync(0xffffffffu, z, d);
            if (lane >= d) { x = y + x; z = w + z; }
        }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = x + z;
}

// Stores of `n` floats per thread at out[i * n + k], k = 0..n-1, one store instruction
// each (n is a run-time value: no vector stores): float_ops and int_ops write this way
// (n = 12 and 24). A warp's store touches n lines and min(4n, 32) sectors.
__global__ void store_strided(float* out, int n, int threads) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= threads) return;
    for (int k = 0; k < n; ++k) out[(size_t)i * n + k] = (float)(i + k);
}

// Conflict-free threadgroup loads: every lane its own bank, four independent sums.
__global__ void shared_tput(int steps, float* sink) {
    __shared__ float s[4096];
    for (int i = threadIdx.x; i < 4096; i += blockDim.x) s[i] = i * 0.5f;
    __syncthreads();
    volatile float* vs = s;
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    unsigned b = threadIdx.x & 31u, w = (threadIdx.x >> 5) * 128u;
    for (int i = 0; i < steps; ++i) {
        unsigned o = (w + (unsigned)i * 32u) & 4095u;
        a0 += vs[(o + b) & 4095u];
        a1 += vs[(o + 1024u + b) & 4095u];
        a2 += vs[(o + 2048u + b) & 4095u];
        a3 += vs[(o + 3072u + b) & 4095u];
    }
    sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

// Barriers: every thread of the block waits at each of `steps` barriers.
__global__ void barrier_loop(int steps, float* sink, long long* cycles) {
    float x = threadIdx.x;
    long long t0 = clock64();
    for (int i = 0; i < steps; ++i) { x = x * 0.999f; __syncthreads(); }
    long long t1 = clock64();
    sink[blockIdx.x * blockDim.x + threadIdx.x] = x;
    if (threadIdx.x == 0 && blockIdx.x == 0) cycles[0] = t1 - t0;
}

// Loaded HBM latency: block 0's thread 0 chases pointers through DRAM while the other
// blocks stream-read another buffer until the chase is done.
__global__ void chase_loaded(const unsigned* __restrict__ next, unsigned start, int steps,
                             const float4* __restrict__ src, size_t n, volatile unsigned* done,
                             unsigned* sink, long long* cycles, unsigned long long* loads) {
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
    size_t stride = (size_t)(gridDim.x - 1) * blockDim.x;
    size_t i = (size_t)(blockIdx.x - 1) * blockDim.x + threadIdx.x;
    float s = 0;
    unsigned long long count = 0;
    while (*done == 0u) {
        for (int r = 0; r < 8; ++r) {
            float4 v = src[i];
            s += v.x + v.w;
            i += stride;
            if (i >= n) i -= n;
        }
        count += 8;
    }
    if (s == 12345.678f) sink[1] = 1u;
    atomicAdd(loads, count);
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


// Median of `reps` launches, each after the cross-check's own L2 flush (write, then read
// 256 MiB: crosscheck/src/cuda/host.rs), CUDA events around the launch alone.
__global__ void flush_read(const uint4* p, size_t n, unsigned* sink) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
template <class F> static double median_flushed_ms(const cudaDeviceProp& p, F f, int reps) {
    const size_t flush_bytes = (size_t)256 << 20;
    static unsigned char* flush = nullptr;
    if (!flush) CK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        CK(cudaMemsetAsync(flush, i & 0xff, flush_bytes));
        flush_read<<<p.multiProcessorCount * 4, 512>>>((const uint4*)flush, flush_bytes / 16, (unsigned*)flush);
        CK(cudaEventRecord(a)); f(); CK(cudaEventRecord(b)); CK(cudaEventSynchronize(b));
        float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Run 5's measurements (`microbench run5`).
static void run5(const cudaDeviceProp& p, double clock_mhz) {
    unsigned* sink; long long* cyc;
    CK(cudaMalloc(&sink, 64 << 20)); CK(cudaMalloc(&cyc, 64));
    const int sms = p.multiProcessorCount;
    auto cycles_of = [&]() { long long c; CK(cudaDeviceSynchronize()); CK(cudaMemcpy(&c, cyc, 8, cudaMemcpyDeviceToHost)); return (double)c; };

    printf("\nlaunch, the cross-check's method (L2 flush, then CUDA events around the launch), median of 30:\n");
    {
        double e1 = median_flushed_ms(p, [&] { empty<<<1, 32>>>(); }, 30);
        double e2 = median_flushed_ms(p, [&] { empty<<<1024, 256>>>(); }, 30);
        double e3 = median_flushed_ms(p, [&] { empty<<<4096, 128>>>(); }, 30);
        double e4 = median_flushed_ms(p, [&] { empty<<<sms * 16, 256>>>(); }, 30);
        printf("  empty kernel: %.2f us (1 block of 32), %.2f us (1024 of 256), %.2f us (4096 of 128), %.2f us (%d of 256)\n",
               e1 * 1e3, e2 * 1e3, e3 * 1e3, e4 * 1e3, sms * 16);
    }

    printf("\noperations as the generated CUDA computes them: dependent latency (one warp, cycles per step)"
           " and throughput (%d blocks of 256, 4 chains per thread: SM-sub-partition cycles per warp step)\n", sms * 8);
#define MB_RUN(NAME, T, Y, C)                                                                        \
    {                                                                                                \
        int steps = 4096;                                                                            \
        lat_##NAME<<<1, 32>>>(steps, (T)(Y), (T)(C), (T*)sink, cyc);                                 \
        double lat = cycles_of() / steps;                                                            \
        int tsteps = 2048, blocks = sms * 8, threads = 256;                                          \
        double ms = median_ms([&] { tput_##NAME<<<blocks, threads>>>(tsteps, (T)(Y), (T)(C), (T*)sink); }, 5); \
        double warp_steps = (double)blocks * threads / 32 * tsteps * 4;                              \
        double per = ms * 1e-3 * clock_mhz * 1e6 * sms * 4 / warp_steps;                            \
        printf("  %-5s latency %7.2f cycles, throughput %6.2f cycles per warp step per sub-partition\n", #NAME, lat, per); \
    }
    MB_RUN(fadd, float, 1.0001f, 0.5f)
    MB_RUN(fdiv, float, 1.0001f, 0.5f)
    MB_RUN(sqrt, float, 0.0f, 0.5f)
    MB_RUN(sin, float, 0.0f, 0.5f)
    MB_RUN(cos, float, 0.0f, 0.5f)
    MB_RUN(exp, float, 0.0f, 0.3f)
    MB_RUN(log, float, 0.0f, 2.0f)
    MB_RUN(iadd, unsigned, 0x9e3779b9u, 0u)
    MB_RUN(ixor, unsigned, 0x9e3779b9u, 0x5bd1e995u)
    MB_RUN(imul, unsigned, 0x9e3779b9u, 0u)
    MB_RUN(sdiv, int, 3, 0x55555555)
    MB_RUN(srem, int, 1000003, 0x55555555)
    MB_RUN(udiv, unsigned, 3u, 0x55555555u)
    MB_RUN(urem, unsigned, 1000003u, 0x55555555u)
#undef MB_RUN
    printf("  (each step: fadd, imul, iadd one operation; fdiv, sqrt, sin, cos, log: it plus an FADD; exp: plus an FMUL;"
           " ixor: one LOP3; sdiv, srem, udiv, urem: it plus a LOP3)\n");
    {
        int steps = 1024;
        lat_mma<<<1, 32>>>(steps, 1.0f, (float*)sink, cyc);
        double lat = cycles_of() / steps;
        int tsteps = 256, blocks = sms * 8, threads = 256;
        double ms = median_ms([&] { tput_mma<<<blocks, threads>>>(tsteps, 1.0f, (float*)sink); }, 5);
        double per = ms * 1e-3 * clock_mhz * 1e6 * sms * 4 / ((double)blocks * threads / 32 * tsteps * 2);
        printf("  8x8 matrix multiply-accumulate (prelude's ms_matrix_mac): latency %.1f cycles, throughput %.1f cycles per warp per sub-partition\n", lat, per);
        lat_scan<<<1, 32>>>(steps, (float*)sink, cyc);
        double lscan = cycles_of() / steps;
        double ms2 = median_ms([&] { tput_scan<<<blocks, threads>>>(tsteps, (float*)sink); }, 5);
        double ms3 = median_ms([&] { tput_reduce<<<blocks, threads>>>(tsteps, (float*)sink); }, 5);
        double w = (double)blocks * threads / 32 * tsteps * 2;
        printf("  5-step inclusive sum scan (SHFL.UP + FADD): latency %.1f cycles, throughput %.1f cycles per warp per sub-partition\n",
               lscan, ms2 * 1e-3 * clock_mhz * 1e6 * sms * 4 / w);
        printf("  5-step butterfly sum (SHFL.BFLY + FADD): throughput %.1f cycles per warp per sub-partition\n",
               ms3 * 1e-3 * clock_mhz * 1e6 * sms * 4 / w);
    }

    printf("\nstores: 524288 threads in blocks of 128, n floats each at out[i*n + k] (one instruction per k), the cross-check's method:\n");
    {
        const int threads = 524288;
        float* out; CK(cudaMalloc(&out, (size_t)threads * 32 * 4));
        int ns[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
        for (int n : ns) {
            double ms = median_flushed_ms(p, [&] { store_strided<<<threads / 128, 128>>>(out, n, threads); }, 30);
            double warps = threads / 32.0;
            double insts = warps * n, lines = warps * n * n, sectors = warps * n * (n < 8 ? 4 * n : 32);
            if (n == 1) lines = warps, sectors = warps * 4;
            double cycles = ms * 1e-3 * clock_mhz * 1e6;
            printf("  n=%2d: %8.2f us, %6.1f MB, %6.0f GB/s; per SM cycle: %6.3f store insts, %6.3f line requests, %6.3f sectors\n",
                   n, ms * 1e3, threads * 4.0 * n / 1e6, threads * 4.0 * n / (ms * 1e6),
                   insts / cycles / sms, lines / cycles / sms, sectors / cycles / sms);
        }
        CK(cudaFree(out));
    }

    printf("\nshared memory and barriers:\n");
    {
        int steps = 4096, blocks = sms * 2, threads = 1024;
        double ms = median_ms([&] { shared_tput<<<blocks, threads>>>(steps, (float*)sink); }, 5);
        double loads = (double)blocks * threads / 32 * steps * 4;
        printf("  conflict-free LDS.32 (%d blocks of 1024): %.3f warp loads per SM cycle\n", blocks,
               loads / (ms * 1e-3 * clock_mhz * 1e6 * sms));
        for (int t : {128, 256, 1024}) {
            barrier_loop<<<1, t>>>(steps, (float*)sink, cyc);
            double one = cycles_of() / steps;
            int per_sm = 2048 / t;
            double ms2 = median_ms([&] { barrier_loop<<<sms * per_sm, t>>>(steps, (float*)sink, cyc); }, 5);
            printf("  __syncthreads + FMUL loop, %4d threads: %.1f cycles per barrier for one block; %d blocks per SM: %.1f SM cycles per block barrier\n",
                   t, one, per_sm, ms2 * 1e-3 * clock_mhz * 1e6 / (steps * (double)per_sm));
        }
    }

    printf("\nloaded HBM latency: one thread chases a 256 MiB random cycle (stride 256 B) while other blocks of 256 stream-read 2 GiB:\n");
    {
        const size_t bytes = (size_t)256 << 20, stride = 64;
        size_t n = bytes / 4, links = n / stride;
        std::vector<unsigned> h(n, 0), order(links);
        for (size_t i = 0; i < links; ++i) order[i] = (unsigned)i;
        srand(11);
        for (size_t i = links - 1; i > 0; --i) std::swap(order[i], order[rand() % (i + 1)]);
        for (size_t i = 0; i < links; ++i) h[order[i] * stride] = order[(i + 1) % links] * stride;
        unsigned* next; CK(cudaMalloc(&next, bytes));
        CK(cudaMemcpy(next, h.data(), bytes, cudaMemcpyHostToDevice));
        const size_t sbytes = (size_t)2 << 30;
        float4* src; CK(cudaMalloc(&src, sbytes)); CK(cudaMemset(src, 1, sbytes));
        unsigned* done; unsigned long long* loads;
        CK(cudaMalloc(&done, 4)); CK(cudaMalloc(&loads, 8));
        int streamers[] = {0, 33, 66, 132, 264, 528, 924};
        int k = 0;
        for (int b : streamers) {
            int steps = 3000;
            CK(cudaMemset(done, 0, 4)); CK(cudaMemset(loads, 0, 8));
            cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
            CK(cudaEventRecord(e0));
            chase_loaded<<<1 + b, 256>>>(next, order[(k++ * 50000) % links] * (unsigned)stride, steps,
                                         src, sbytes / 16, done, sink, cyc, loads);
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
            double c = cycles_of();
            unsigned long long l; CK(cudaMemcpy(&l, loads, 8, cudaMemcpyDeviceToHost));
            printf("  %4d streaming blocks (%5.2f warps per SM): %7.1f cycles per hop, streams %6.0f GB/s\n",
                   b, b * 8.0 / sms, c / steps, l * 16.0 / (ms * 1e6));
        }
        CK(cudaFree(next)); CK(cudaFree(src));
    }
}

int main(int argc, char** argv) {
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
    if (argc > 1 && std::string(argv[1]) == "run5") {
        run5(p, clock_mhz);
        return 0;
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
