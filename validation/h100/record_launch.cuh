// What the probes that keep one record per warp share on the host (inflight_probe.cu,
// gate_probe.cu): their buffers, and one launch run as the cross-check runs a timed
// one, its records written to a file. Moved out of the two after they ran; their
// kernels are unchanged.
#pragma once

#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>

// A record probe's buffers: the input `a` (zeros), the output `out`, the warps' records
// `rec`, and `flush`, kFlushBytes of other lines to fill the L2 with.
struct ProbeBuffers {
    unsigned *a, *out, *flush;
    unsigned long long* rec;
};
constexpr size_t kFlushBytes = 256u << 20;

// Allocates a probe's buffers: `threads` input words, `out_words` output words and
// `rec_words` u64 words of records.
inline ProbeBuffers probe_buffers(size_t threads, size_t out_words, size_t rec_words) {
    ProbeBuffers b;
    cudaMalloc(&b.a, threads * sizeof(unsigned));
    cudaMalloc(&b.out, out_words * sizeof(unsigned));
    cudaMalloc(&b.rec, rec_words * sizeof(unsigned long long));
    cudaMalloc(&b.flush, kFlushBytes);
    cudaMemset(b.a, 0, threads * sizeof(unsigned));
    return b;
}

// Clears the `count` u64 words of records in `b.rec`, fills the L2 with other lines
// (`b.flush`, as the cross-check does before a timed launch), runs `launch()`, prints
// `launch NAME rc=N`, and writes the records to `path`. False on an error of the launch
// or of the file.
template <class Launch>
bool record_launch(const char* name, Launch launch, const ProbeBuffers& b, size_t count,
                   const std::string& path) {
    std::vector<unsigned long long> h(count);
    cudaMemset(b.rec, 0, count * sizeof(unsigned long long));
    cudaMemset(b.flush, 1, kFlushBytes);
    cudaDeviceSynchronize();
    launch();
    const cudaError_t e = cudaDeviceSynchronize();
    printf("launch %s rc=%d\n", name, (int)e);
    if (e != cudaSuccess) return false;
    cudaMemcpy(h.data(), b.rec, count * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    fwrite(h.data(), sizeof(unsigned long long), count, f);
    fclose(f);
    return true;
}
