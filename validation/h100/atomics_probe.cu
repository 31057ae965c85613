// How the H100 serialises contended device atomics.
//
// `atomics_probe` (run 3): the suite's 256-bin histogram (atomics_global: 4 Mi random
// values, one atomicAdd each) with its bins spaced 1, 8 or 32 words apart (8, 64 or 256
// distinct 128-byte lines), and with 64 or 4096 bins packed. If the L2 serialises per
// line, spreading the bins over more lines speeds it up; if per address, spacing changes
// nothing. Output: validation/h100/atomics_probe.txt.
//
// `atomics_probe requests` (probe 15): what one warp request on one line costs, by its
// shape. Every warp of 131,072 sends one atomicAdd instruction whose active lanes all
// fall in one line (warp w in line w mod L); the lanes and the words they name follow a
// pattern (one lane, a sector, a whole line, one word for all, random subsets as the
// suite's histograms make), on 1 to 64 lines, adjacent or 512 KiB apart, with the old
// value unused (RED) or used (ATOM). The time per request per line is the contended
// line's service time. Output: validation/h100/probe15/atomics_requests.txt.
//
// Build: nvcc -O3 -arch=sm_90 -o atomics_probe atomics_probe.cu
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#include "event_timer.cuh"
#endif

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void histogram(const unsigned* data, unsigned* bins, unsigned mask, unsigned spacing, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(bins + (data[i] & mask) * spacing, 1u);
}

// Warp `w`'s lane `l` adds 1 to word `pattern[(w % 1024) * 32 + l]` of line `w % lines`
// (lines `line_words` apart), or does nothing where that word is ~0; `kOld`: the old
// value is used, so the add cannot be a fire-and-forget reduction.
template <bool kOld>
__global__ void line_requests(const unsigned* pattern, unsigned* words, unsigned lines,
                              unsigned line_words, unsigned* sink) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned warp = t >> 5;
    const unsigned w = pattern[(warp & 1023u) * 32u + (t & 31u)];
    if (w == ~0u) return;
    unsigned* p = words + (warp % lines) * line_words + w;
    if (kOld) {
        if (atomicAdd(p, 1u) == ~0u) sink[0] = 1u;
    } else {
        atomicAdd(p, 1u);
    }
}

#ifndef __CUDACC_RTC__
constexpr unsigned kPatternWarps = 1024, kRequestWarps = 131072, kNone = ~0u;

// A request shape: per lane the word it adds to, or kNone.
struct Shape {
    const char* name;
    unsigned (*word)(unsigned lane, unsigned& rng);
};

static unsigned next(unsigned& x) { x = x * 1664525u + 1013904223u; return x >> 8; }

static const Shape kShapes[] = {
    {"none (launch only)", [](unsigned, unsigned&) { return kNone; }},
    {"1 lane", [](unsigned l, unsigned&) { return l == 0 ? 0u : kNone; }},
    {"2 lanes, 1 sector", [](unsigned l, unsigned&) { return l < 2 ? l : kNone; }},
    {"2 lanes, 2 sectors", [](unsigned l, unsigned&) { return l < 2 ? l * 8 : kNone; }},
    {"4 lanes, 4 sectors", [](unsigned l, unsigned&) { return l < 4 ? l * 8 : kNone; }},
    {"8 lanes, 1 sector", [](unsigned l, unsigned&) { return l < 8 ? l : kNone; }},
    {"16 lanes, 2 sectors", [](unsigned l, unsigned&) { return l < 16 ? l : kNone; }},
    {"32 lanes, 4 sectors", [](unsigned l, unsigned&) { return l; }},
    {"32 lanes, 1 word", [](unsigned, unsigned&) { return 0u; }},
    {"32 lanes, 4 words", [](unsigned l, unsigned&) { return (l & 3) * 8; }},
    // atomics_private: a lane adds its own bin where its count is not 0 (1 - 1/e).
    {"random 63% of lanes, own word", [](unsigned l, unsigned& r) { return next(r) % 1000 < 632 ? l : kNone; }},
    // atomics_global over 8 lines: a lane's bin is in this line one time in 8.
    {"random 1/8 of lanes, any word", [](unsigned, unsigned& r) { return next(r) % 8 == 0 ? next(r) % 32 : kNone; }},
    // The 64-bin histogram over 2 lines.
    {"random 1/2 of lanes, any word", [](unsigned, unsigned& r) { return next(r) % 2 == 0 ? next(r) % 32 : kNone; }},
    {"all lanes, any word", [](unsigned, unsigned& r) { return next(r) % 32; }},
};

// The per-request averages of a pattern table: active lanes, distinct words, distinct
// 32-byte sectors, and the share of warps with an active lane.
struct Stats { double lanes, words, sectors, active; };

static Stats stats(const std::vector<unsigned>& pat) {
    Stats s{0, 0, 0, 0};
    for (unsigned w = 0; w < kPatternWarps; ++w) {
        unsigned words = 0, sectors = 0, lanes = 0;
        for (unsigned l = 0; l < 32; ++l) {
            unsigned x = pat[w * 32 + l];
            if (x == kNone) continue;
            ++lanes;
            words |= 1u << x;
            sectors |= 1u << (x / 8);
        }
        if (lanes == 0) continue;
        s.active += 1;
        s.lanes += lanes;
        s.words += __builtin_popcount(words);
        s.sectors += __builtin_popcount(sectors);
    }
    s.lanes /= s.active; s.words /= s.active; s.sectors /= s.active;
    s.active /= kPatternWarps;
    return s;
}

static int requests() {
    int clock_khz; CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    struct Lines { unsigned lines, line_words; const char* name; } configs[] = {
        {1, 32, "1 line"}, {2, 32, "2 lines"}, {8, 32, "8 lines"},
        {8, 32 * 4099, "8 lines 512 KiB apart"}, {64, 32, "64 lines"}};
    unsigned *pattern, *words, *sink;
    CK(cudaMalloc(&pattern, kPatternWarps * 32 * 4ull));
    CK(cudaMalloc(&words, 8ull * 4099 * 128));
    CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(words, 0, 8ull * 4099 * 128));
    printf("one atomicAdd instruction per warp, %u warps of 256-thread blocks; clock %d MHz\n",
           kRequestWarps, clock_khz / 1000);
    printf("per request (means): lanes, distinct words, distinct sectors; then per line config:\n");
    printf("  us (old value unused, RED) / us (used, ATOM), and cycles per request per line\n");
    printf("  at %d MHz after the launch-only time of the same grid\n", clock_khz / 1000);
    float base[2] = {0, 0};
    for (const Shape& sh : kShapes) {
        std::vector<unsigned> pat(kPatternWarps * 32);
        unsigned rng = 15;
        for (unsigned i = 0; i < pat.size(); ++i) pat[i] = sh.word(i % 32, rng);
        CK(cudaMemcpy(pattern, pat.data(), pat.size() * 4, cudaMemcpyHostToDevice));
        const bool none = &sh == &kShapes[0];
        Stats st = none ? Stats{0, 0, 0, 0} : stats(pat);
        printf("%s: lanes %.2f, words %.2f, sectors %.2f, warps active %.3f\n", sh.name,
               st.lanes, st.words, st.sectors, st.active);
        for (const Lines& c : configs) {
            float us[2];
            us[0] = median_event_us([&] { line_requests<false><<<kRequestWarps / 8, 256>>>(pattern, words, c.lines, c.line_words, sink); });
            us[1] = median_event_us([&] { line_requests<true><<<kRequestWarps / 8, 256>>>(pattern, words, c.lines, c.line_words, sink); });
            if (none) {
                base[0] = std::max(base[0], us[0]);
                base[1] = std::max(base[1], us[1]);
                printf("  %-22s %8.2f / %8.2f us\n", c.name, us[0], us[1]);
                continue;
            }
            const double per_line = kRequestWarps * st.active / c.lines;
            const double mhz = clock_khz / 1000.0;
            printf("  %-22s %8.2f / %8.2f us  %6.2f / %6.2f cycles\n", c.name, us[0], us[1],
                   (us[0] - base[0]) * mhz / per_line, (us[1] - base[1]) * mhz / per_line);
        }
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "requests") return requests();
    const unsigned n = 4u << 20;
    std::vector<unsigned> h(n);
    unsigned x = 51;
    for (unsigned i = 0; i < n; ++i) { x = x * 1664525u + 1013904223u; h[i] = x >> 8; }
    unsigned *data, *bins;
    CK(cudaMalloc(&data, n * 4ull));
    CK(cudaMalloc(&bins, 4096 * 32 * 4ull));
    CK(cudaMemcpy(data, h.data(), n * 4ull, cudaMemcpyHostToDevice));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    struct Case { unsigned bins, spacing; } cases[] = {{256, 1}, {256, 8}, {256, 32}, {64, 1}, {4096, 1}};
    printf("histogram of %u values, one atomicAdd each (old value unused), 256-thread blocks\n", n);
    for (Case c : cases) {
        std::vector<float> t;
        for (int r = 0; r < 12; ++r) {
            CK(cudaMemset(bins, 0, 4096 * 32 * 4ull));
            CK(cudaEventRecord(a));
            histogram<<<n / 256, 256>>>(data, bins, c.bins - 1, c.spacing, n);
            CK(cudaEventRecord(b));
            CK(cudaEventSynchronize(b));
            float ms; CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 2) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        unsigned lines = (c.bins * c.spacing * 4 + 127) / 128;
        printf("  %4u bins, %2u words apart (%3u lines): %8.1f us\n", c.bins, c.spacing,
               std::min(lines, c.bins), t[t.size() / 2] * 1e3);
    }
    return 0;
}
#endif
