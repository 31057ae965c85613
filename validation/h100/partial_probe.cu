// What bounds the H100 L2's room for partly written sectors? (docs/validation.md, "Where
// the model is still wrong", item 4: int_ops merges 33 MB of its 50 MB output, float_ops
// 4.3 MB of 36 MB, writeback_probe's `sparse` none.) Run under Nsight Compute, caches
// flushed before each launch as in the cross-check:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/pp validation/h100/partial_probe.cu
//   ncu --csv --print-units base --cache-control all --clock-control none \
//       --metrics dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum /tmp/pp
//
// Every launch runs one kernel, `pattern`: `active` threads (all resident: at most 2048
// per SM) take items t = 0, 1, ... in turn; item t writes `words` consecutive floats at
// out[t * stride + k], k = 0..words-1, one 4-byte store instruction per word (inline PTX,
// so that nvcc neither merges nor reorders them), waiting `delay` cycles before each
// store; after its last item a thread waits `tail` cycles. The program prints one line
// per launch, in launch order (the order of ncu's rows): its name and parameters. The
// kernel reads nothing, so every DRAM byte read is a sector merged for ECC (or noise).
//
// Four families:
// - never complete: sectors written in part and never finished, over a range of N MiB,
//   varying the sectors per line so written (4, 2, 1, 1/4) and the words per sector (1,
//   4, 7 of 8): what the room is counted in (sectors, lines or bytes);
// - complete: every item finishes its sectors (the patterns of writeback_probe's
//   `sparse` (8 words per 8-word stride), int_ops (24 per 24), float_ops' `out` (12 per
//   12: sectors shared by two threads) and one whole sector per line (8 per 32)), varying
//   the threads at work (all resident, or a quarter), the output (16 MiB, under the 25 MB
//   the L2 keeps dirty, or 48 MiB, over it) and the time a sector stays partial (no
//   delay, or 3000 cycles before each store);
// - idle: 4 MiB of half-written sectors, then 400,000 cycles of waiting (does the L2
//   merge partial sectors while it idles?).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void pattern(float* out, size_t items, unsigned stride, unsigned words,
                        long long delay, long long tail) {
    const size_t threads = (size_t)gridDim.x * blockDim.x;
    for (size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x; t < items; t += threads) {
        float* p = out + t * stride;
        for (unsigned k = 0; k < words; k++) {
            if (delay > 0) {
                long long s = clock64();
                while (clock64() - s < delay) {
                }
            }
            asm volatile("st.global.f32 [%0], %1;" ::"l"(p + k), "f"((float)(t + k)) : "memory");
        }
    }
    if (tail > 0) {
        long long s = clock64();
        while (clock64() - s < tail) {
        }
    }
}

static float* buf;
static int sms;

// One launch: an output range of `mib` MiB cut into items of `stride` floats.
static void launch(const char* family, int mib, unsigned stride, unsigned words,
                   size_t active, long long delay, long long tail) {
    size_t items = ((size_t)mib << 20) / (stride * 4);
    size_t most = (size_t)sms * 2048;
    if (active == 0 || active > most) active = most;
    if (active > items) active = items;
    unsigned blocks = (unsigned)((active + 127) / 128);
    pattern<<<blocks, 128>>>(buf, items, stride, words, delay, tail);
    cudaDeviceSynchronize();
    printf("%s mib=%d stride=%u words=%u threads=%u delay=%lld tail=%lld\n", family, mib,
           stride, words, blocks * 128, delay, tail);
}

int main() {
    const size_t max_bytes = 128ull << 20;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    sms = prop.multiProcessorCount;
    cudaMalloc(&buf, max_bytes);
    cudaMemset(buf, 0, max_bytes);
    cudaDeviceSynchronize();
    // Never complete: (stride, words) in floats; 8 floats to a sector, 32 to a line.
    const unsigned never[][2] = {{8, 4}, {16, 4}, {32, 4}, {128, 4}, {8, 1}, {8, 7}, {32, 1}};
    const int never_mib[] = {8, 32, 96};
    for (auto& n : never) {
        for (int mib : never_mib) launch("never", mib, n[0], n[1], 0, 0, 0);
    }
    // Complete: (stride, words).
    const unsigned complete[][2] = {{8, 8}, {24, 24}, {12, 12}, {32, 8}};
    const int complete_mib[] = {16, 48};
    const size_t actives[] = {0, (size_t)sms * 512};
    const long long delays[] = {0, 3000};
    for (auto& c : complete) {
        for (int mib : complete_mib) {
            for (size_t active : actives) {
                for (long long delay : delays) {
                    launch("complete", mib, c[0], c[1], active, delay, 0);
                }
            }
        }
    }
    // Idle: half-written sectors, then waiting.
    const long long tails[] = {0, 400000};
    for (long long tail : tails) launch("idle", 4, 8, 4, 0, 0, tail);
    cudaError_t e = cudaGetLastError();
    printf("probe rc=%d (%s)\n", (int)e, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}
