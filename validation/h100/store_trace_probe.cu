// Why does int_ops' store pattern merge on the H100 and float_ops' not? (docs/
// validation.md, "Probe 11". Probe 10 found that a burst of 12 stores a thread leaves
// the L2 next to nothing to merge and a burst of 24 a third to a half.) Run under
// Nsight Compute for the DRAM bytes of each launch, caches flushed before each, as in
// the cross-check (validation/h100/probe11.sh):
//
//   nvcc -O3 -arch=sm_90 -o /tmp/stp validation/h100/store_trace_probe.cu
//   ncu --csv --print-units base --cache-control all --clock-control none \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/stp OUTDIR
//
// Each launch: 524,288 threads in blocks of 128; thread i reads a[i] and writes WORDS
// floats at out[i * WORDS + k] (k = 0..WORDS-1), one store each, the values computed
// before the first store. Three programs per WORDS:
// - `wN`: the stores alone, as nvcc schedules them (it reuses a stored value's
//   register for a later value: see the SASS);
// - `wN_timed`: the clock read after each store (a "memory" clobber keeps the stores in
//   order), every value kept live to the end, so no instruction writes a register a
//   store still has to read;
// - `wN_timed_reuse`: the same without keeping the values live: ptxas writes each clock
//   read into the register the store before it reads, so the warp waits there until
//   that store has taken its data (one store in flight per warp).
// Timed launches write the warp's clock reads, its SM and its warp slot to `trace`
// (whole sectors) at the end. Per launch the program prints one line (ncu's rows follow
// launch order) and, for timed ones, how long a warp takes from its first store to its
// last (the window) and how many warps of an SM have their window open at once, on
// average over the SM's busy time; OUTDIR/<name>.sm0.txt has SM 0's warps, one a line:
// warp, warp slot, then the clock before the first store and after each.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "warp_clock.cuh"

constexpr int kThreads = 524288;
constexpr int kBlock = 128;

template <int WORDS, int SPREAD, bool TIMED, bool KEEP>
__global__ void __launch_bounds__(kBlock) burst(const float* a, float* out,
                                                unsigned long long* trace) {
    const unsigned i = blockIdx.x * kBlock + threadIdx.x;
    const unsigned lane = threadIdx.x & 31;
    const float x = a[i];
    float* o = out + (size_t)i * WORDS;
    // Every value is computed first and stays live to the end, so that no clock read
    // reuses a register a store still reads (that would hold the warp until the store's
    // data has left: one store in flight per warp, which is another program).
    float v[WORDS];
#pragma unroll
    for (int k = 0; k < WORDS; k++) {
        v[k] = x + (float)k;
#pragma unroll
        for (int s = 0; s < SPREAD; s++) v[k] = fmaf(v[k], 0.999f, 0.5f);
    }
    unsigned long long t[WORDS + 1];
    if (TIMED) t[0] = stamp();
#pragma unroll
    for (int k = 0; k < WORDS; k++) {
        o[k] = v[k];
        if (TIMED) t[k + 1] = stamp();
    }
    // KEEP: a sum that starts from the last clock read keeps every value live past it.
    // Without it a value is dead after its store, and ptxas writes the next clock read
    // into the stored register: the read waits for the store to take its data.
    float keep = 0.0f;
    if (TIMED && KEEP) {
        keep = (float)(t[WORDS] & 1);
#pragma unroll
        for (int k = 0; k < WORDS; k++) keep += v[k];
    }
    if (TIMED) {
        // 64 slots a warp: slot j <= WORDS is t[j], 62 the warp slot, 63 the SM; lane j
        // writes slots j and 32 + j (two coalesced stores of whole sectors).
        unsigned long long lo = 0, hi = 0;
#pragma unroll
        for (int k = 0; k <= WORDS; k++) {
            if (lane == (unsigned)k) lo = t[k];
            if (lane + 32 == (unsigned)k) hi = t[k];
        }
        if (lane == 29) hi = __float_as_uint(keep);
        if (lane == 30) hi = warpslot();
        if (lane == 31) hi = smid();
        unsigned long long* r = trace + (size_t)(i / 32) * 64;
        r[lane] = lo;
        r[32 + lane] = hi;
    }
}

struct Launch {
    const char* name;
    int words;
    int spread;
    bool timed;
    void (*kernel)(const float*, float*, unsigned long long*);
};

int main(int argc, char** argv) {
    const std::string dir = argc > 1 ? argv[1] : ".";
    float *a, *out;
    unsigned long long* trace;
    const size_t warps = kThreads / 32;
    cudaMalloc(&a, kThreads * sizeof(float));
    cudaMalloc(&out, (size_t)kThreads * 32 * sizeof(float));
    cudaMalloc(&trace, warps * 64 * sizeof(unsigned long long));
    cudaMemset(a, 0, kThreads * sizeof(float));
    const Launch launches[] = {
        {"w8", 8, 0, false, burst<8, 0, false, false>},
        {"w8_timed", 8, 0, true, burst<8, 0, true, true>},
        {"w8_timed_reuse", 8, 0, true, burst<8, 0, true, false>},
        {"w12", 12, 0, false, burst<12, 0, false, false>},
        {"w12_timed", 12, 0, true, burst<12, 0, true, true>},
        {"w12_timed_reuse", 12, 0, true, burst<12, 0, true, false>},
        {"w16", 16, 0, false, burst<16, 0, false, false>},
        {"w16_timed", 16, 0, true, burst<16, 0, true, true>},
        {"w16_timed_reuse", 16, 0, true, burst<16, 0, true, false>},
        {"w20", 20, 0, false, burst<20, 0, false, false>},
        {"w20_timed", 20, 0, true, burst<20, 0, true, true>},
        {"w20_timed_reuse", 20, 0, true, burst<20, 0, true, false>},
        {"w24", 24, 0, false, burst<24, 0, false, false>},
        {"w24_timed", 24, 0, true, burst<24, 0, true, true>},
        {"w24_timed_reuse", 24, 0, true, burst<24, 0, true, false>},
        {"w32", 32, 0, false, burst<32, 0, false, false>},
        {"w32_timed", 32, 0, true, burst<32, 0, true, true>},
        {"w32_timed_reuse", 32, 0, true, burst<32, 0, true, false>},
    };
    std::vector<unsigned long long> h(warps * 64);
    for (const Launch& l : launches) {
        cudaMemset(trace, 0, warps * 64 * sizeof(unsigned long long));
        cudaDeviceSynchronize();
        l.kernel<<<kThreads / kBlock, kBlock>>>(a, out, trace);
        cudaError_t e = cudaDeviceSynchronize();
        printf("launch %s words=%d spread=%d timed=%d rc=%d\n", l.name, l.words, l.spread,
               (int)l.timed, (int)e);
        if (!l.timed || e != cudaSuccess) continue;
        cudaMemcpy(h.data(), trace, h.size() * sizeof(unsigned long long),
                   cudaMemcpyDeviceToHost);
        // Per SM: busy span (first store to last), the warps' windows.
        int sms = 0;
        for (size_t w = 0; w < warps; w++) sms = std::max(sms, (int)h[w * 64 + 63] + 1);
        std::vector<double> open_sum(sms, 0), span(sms, 0);
        std::vector<unsigned long long> lo(sms, ~0ull), hi(sms, 0);
        std::vector<int> count(sms, 0);
        std::vector<double> windows;
        FILE* f0 = fopen((dir + "/" + l.name + ".sm0.txt").c_str(), "w");
        for (size_t w = 0; w < warps; w++) {
            const unsigned long long* r = &h[w * 64];
            const int sm = (int)r[63];
            const unsigned long long first = r[1], last = r[l.words];
            windows.push_back((double)(last - first));
            open_sum[sm] += (double)(last - first);
            lo[sm] = std::min(lo[sm], r[0]);
            hi[sm] = std::max(hi[sm], last);
            count[sm]++;
            if (sm == 0 && f0) {
                fprintf(f0, "%zu %llu", w, r[62]);
                for (int k = 0; k <= l.words; k++) fprintf(f0, " %llu", r[k]);
                fprintf(f0, "\n");
            }
        }
        if (f0) fclose(f0);
        std::sort(windows.begin(), windows.end());
        double open = 0, n = 0;
        for (int s = 0; s < sms; s++) {
            if (!count[s]) continue;
            open += open_sum[s] / (double)(hi[s] - lo[s]);
            n += 1;
        }
        printf("  %s: warps %zu, window (first to last store, cycles) median %.0f, p10 %.0f, "
               "p90 %.0f; warps with an open window per SM, mean over SMs %.2f\n",
               l.name, warps, windows[windows.size() / 2], windows[windows.size() / 10],
               windows[windows.size() * 9 / 10], open / n);
    }
    return 0;
}
