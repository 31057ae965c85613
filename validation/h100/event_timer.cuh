// What the H100 probes that time whole launches share (atomics_probe.cu's `requests`,
// l1_shape_probe.cu): the median of CUDA-event timings of a launch. Host code.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

// Exits with the call's text where a CUDA call failed.
inline void event_timer_check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        exit(1);
    }
}

// The median in microseconds of 10 CUDA-event timings of `launch()`, after 2 untimed
// ones (the upper of the two middle values).
template <class F> float median_event_us(F launch) {
    cudaEvent_t a, b;
    event_timer_check(cudaEventCreate(&a), "cudaEventCreate");
    event_timer_check(cudaEventCreate(&b), "cudaEventCreate");
    std::vector<float> t;
    for (int r = 0; r < 12; ++r) {
        event_timer_check(cudaEventRecord(a), "cudaEventRecord");
        launch();
        event_timer_check(cudaEventRecord(b), "cudaEventRecord");
        event_timer_check(cudaEventSynchronize(b), "cudaEventSynchronize");
        float ms;
        event_timer_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
        if (r >= 2) t.push_back(ms * 1e3f);
    }
    event_timer_check(cudaGetLastError(), "the timed launch");
    event_timer_check(cudaEventDestroy(a), "cudaEventDestroy");
    event_timer_check(cudaEventDestroy(b), "cudaEventDestroy");
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}
