// Probe 24 (docs/validation.md, "Probe 24"): how many stores a warp may have in flight,
// set by the registers it writes, against how many warps of an SM are between their
// first and last store, where they wait, and what the L2 merges. The model has a
// switch for the same limit (the diagnostic patch's MS_DIST=D with MS_WAR=0), so the
// two can be compared on one program shape, whatever registers nvcc or the ISA choose.
//
//   nvcc -O3 -arch=sm_90 -o /tmp/ifp validation/h100/inflight_probe.cu
//   /tmp/ifp OUTDIR            # writes OUTDIR/<launch>.probe.bin, probe 18's records
//
// Each launch: 524,288 threads in blocks of 128; thread i reads a[i] and writes WORDS
// 4-byte words at out[i * WORDS + k] (k = 0..WORDS-1), one store each, in order, every
// value computed before the first store (fo_pure's shape for 12 words, io_pure's for
// 24). After store k, for k >= D - 1, the clock is read into the very register store
// k - D + 1 read, added to its value (an inline-asm operand that is read and written;
// the SASS shows whether ptxas kept the register), so that a warp waits
// there until that store has taken its data: at most D stores in flight. With D = WORDS
// no stored register is written again (every value stays live to the end). The records
// (probe 18's: the SM clock at entry, after the first store and after the last, and
// the SM; 4 x u64 a warp) are of one launch after the L2 was filled with other lines.
#include <string>
#include <cuda_runtime.h>

#include "record_launch.cuh"
#include "store_burst.cuh"
#include "warp_clock.cuh"

constexpr int kThreads = 524288;
constexpr int kBlock = 128;

template <int WORDS, int D>
__global__ void __launch_bounds__(kBlock) inflight(const unsigned* a, unsigned* out,
                                                   unsigned long long* rec,
                                                   unsigned zero) {
    const unsigned i = blockIdx.x * kBlock + threadIdx.x;
    const unsigned long long t0 = stamp();
    const unsigned x = a[i];
    unsigned* o = out + (size_t)i * WORDS;
    unsigned v[WORDS];
    burst_values(x, v);
    unsigned long long t1 = 0;
#pragma unroll
    for (int k = 0; k < WORDS; k++) {
        o[k] = v[k];
        if (k == 0) t1 = stamp();
        if (D < WORDS && k >= D - 1) {
            // The register store k - D + 1 read now takes its value plus the clock (the
            // clock alone is one value for the warp, which ptxas keeps in a uniform
            // register instead).
            asm volatile("{ .reg .u32 t; mov.u32 t, %%clock; add.u32 %0, %0, t; }"
                         : "+r"(v[k - D + 1])::"memory");
            // ptxas would otherwise move the add to the end: the next value takes it
            // times `zero` (0 at run time, unknown to the compiler), so that the add
            // comes before the next store.
            if (k + 1 < WORDS) v[k + 1] += v[k - D + 1] * zero;
        }
    }
    const unsigned long long t2 = stamp();
    keep_live(v, out, i);
    if ((threadIdx.x & 31u) == 0) {
        const size_t w = i / 32;
        rec[4 * w] = t0;
        rec[4 * w + 1] = t1;
        rec[4 * w + 2] = t2;
        rec[4 * w + 3] = smid();
    }
}

struct Launch {
    const char* name;
    int words;
    void (*kernel)(const unsigned*, unsigned*, unsigned long long*, unsigned);
};

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    const size_t warps = kThreads / 32;
    const ProbeBuffers b = probe_buffers(kThreads, (size_t)kThreads * 24, warps * 4);
    const Launch launches[] = {
        {"w12_d1", 12, inflight<12, 1>},   {"w12_d2", 12, inflight<12, 2>},
        {"w12_d4", 12, inflight<12, 4>},   {"w12_d12", 12, inflight<12, 12>},
        {"w24_d1", 24, inflight<24, 1>},   {"w24_d2", 24, inflight<24, 2>},
        {"w24_d4", 24, inflight<24, 4>},   {"w24_d8", 24, inflight<24, 8>},
        {"w24_d24", 24, inflight<24, 24>},
    };
    for (const Launch& l : launches) {
        cudaMemset(b.out, 0, (size_t)kThreads * l.words * sizeof(unsigned));
        const auto launch = [&] {
            l.kernel<<<kThreads / kBlock, kBlock>>>(b.a, b.out, b.rec, 0u);
        };
        if (!record_launch(l.name, launch, b, warps * 4, dir + "/" + l.name + ".probe.bin"))
            return 1;
    }
    return 0;
}
