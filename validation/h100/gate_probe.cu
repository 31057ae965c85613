// Probe 25 (docs/validation.md, "Probe 25"): the gate that probe 24's records show in
// its W = 24 launches. There, an SM's warps make their first store in batches, one
// batch about every 16,400 SM cycles, on every SM; their last stores show no such
// period, nor do the W = 12 launches' first stores. This probe asks three things:
// - Is it the load or the first store that waits for the gate? Each warp records the
//   clock right after its load issues (the clock read does not wait for the load's
//   data) as well as after its first store.
// - Does the gate come with the output outgrowing the L2 (50 MB at W = 24 and 524,288
//   threads; 25 MB at W = 12) or with the store's shape? W = 12 with twice the
//   threads (a 50 MB output) and W = 24 with half (25 MB) separate the two.
// - Is its period counted in SM cycles or in time? Each warp also records the global
//   timer (ns) at entry and after its last store, so the SM clock's rate is known.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/gp validation/h100/gate_probe.cu
//   /tmp/gp OUTDIR            # writes OUTDIR/<launch>.gate.bin
//
// Each launch: thread i reads a[i] and writes WORDS 4-byte words at
// out[i * WORDS + k] (k = 0..WORDS-1), one store each, in order, every value computed
// before the first store and kept live to the end, so that no stored register is
// written again (probe 24's D = W). Blocks of 128 threads. A warp's record, 8 x u64
// written by lane 0: SM clock at entry, after the load issued, after the first store,
// after the last store; global timer at entry and after the last store; SM; 0.
// The L2 is filled with other lines before each launch, as the cross-check does.
#include <string>
#include <cuda_runtime.h>

#include "record_launch.cuh"
#include "store_burst.cuh"
#include "warp_clock.cuh"

constexpr int kBlock = 128;
constexpr int kMaxThreads = 1048576;

__device__ __forceinline__ unsigned long long globaltimer() {
    unsigned long long r;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)::"memory");
    return r;
}

template <int WORDS>
__global__ void __launch_bounds__(kBlock) gate(const unsigned* a, unsigned* out,
                                               unsigned long long* rec) {
    const unsigned i = blockIdx.x * kBlock + threadIdx.x;
    const unsigned long long g0 = globaltimer();
    const unsigned long long t0 = stamp();
    const unsigned x = a[i];
    const unsigned long long tl = stamp();
    unsigned* o = out + (size_t)i * WORDS;
    unsigned v[WORDS];
    burst_values(x, v);
    unsigned long long t1 = 0;
#pragma unroll
    for (int k = 0; k < WORDS; k++) {
        o[k] = v[k];
        if (k == 0) t1 = stamp();
    }
    const unsigned long long t2 = stamp();
    const unsigned long long g2 = globaltimer();
    keep_live(v, out, i);
    if ((threadIdx.x & 31u) == 0) {
        unsigned long long* r = rec + (size_t)(i / 32) * 8;
        r[0] = t0;
        r[1] = tl;
        r[2] = t1;
        r[3] = t2;
        r[4] = g0;
        r[5] = g2;
        r[6] = smid();
        r[7] = 0;
    }
}

struct Launch {
    const char* name;
    int words;
    int threads;
    void (*kernel)(const unsigned*, unsigned*, unsigned long long*);
};

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    const ProbeBuffers b = probe_buffers(kMaxThreads, (size_t)kMaxThreads * 12,
                                         (size_t)kMaxThreads / 32 * 8);
    const Launch launches[] = {
        {"w24_n512k", 24, 524288, gate<24>},
        {"w12_n1m", 12, 1048576, gate<12>},
        {"w12_n512k", 12, 524288, gate<12>},
        {"w24_n256k", 24, 262144, gate<24>},
    };
    for (const Launch& l : launches) {
        cudaMemset(b.out, 0, (size_t)l.threads * l.words * sizeof(unsigned));
        const auto launch = [&] {
            l.kernel<<<l.threads / kBlock, kBlock>>>(b.a, b.out, b.rec);
        };
        if (!record_launch(l.name, launch, b, (size_t)l.threads / 32 * 8,
                           dir + "/" + l.name + ".gate.bin"))
            return 1;
    }
    return 0;
}
