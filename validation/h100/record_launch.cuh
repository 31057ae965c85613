// What the probes that keep one record per warp share on the host (inflight_probe.cu,
// gate_probe.cu): one launch run as the cross-check runs a timed one, its records
// written to a file. Moved out of the two after they ran; their kernels are unchanged.
#pragma once

#include <cstdio>
#include <string>
#include <vector>
#include <cuda_runtime.h>

// Clears the `count` u64 words of records at `rec`, fills the L2 with other lines (the
// `flush_bytes` at `flush`, as the cross-check does before a timed launch), runs
// `launch()`, prints `launch NAME rc=N`, and writes the records to `path`. False on an
// error of the launch or of the file.
template <class Launch>
bool record_launch(const char* name, Launch launch, unsigned long long* rec, size_t count,
                   unsigned* flush, size_t flush_bytes, const std::string& path) {
    std::vector<unsigned long long> h(count);
    cudaMemset(rec, 0, count * sizeof(unsigned long long));
    cudaMemset(flush, 1, flush_bytes);
    cudaDeviceSynchronize();
    launch();
    const cudaError_t e = cudaDeviceSynchronize();
    printf("launch %s rc=%d\n", name, (int)e);
    if (e != cudaSuccess) return false;
    cudaMemcpy(h.data(), rec, count * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    FILE* f = fopen(path.c_str(), "wb");
    if (!f) return false;
    fwrite(h.data(), sizeof(unsigned long long), count, f);
    fclose(f);
    return true;
}
