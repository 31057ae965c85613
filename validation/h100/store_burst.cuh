// What the store-burst probes share on the device (inflight_probe.cu, gate_probe.cu): a
// thread's values, all computed before its first store, and keeping them live to the
// end. Moved out of the two after they ran; their SASS is the same as in
// `probe24/inflight_probe.sass.txt` and `probe25/gate_probe.sass.txt` (checked on the
// device).
#pragma once

// The thread's WORDS values: x + k for k = 0..WORDS-1.
template <int WORDS>
__device__ __forceinline__ void burst_values(unsigned x, unsigned (&v)[WORDS]) {
#pragma unroll
    for (int k = 0; k < WORDS; k++) v[k] = x + (unsigned)k;
}

// Keeps every value live to here, so that no instruction before takes a register a
// store reads: their sum is stored (to out[i]) only if it hits an unlikely value.
template <int WORDS>
__device__ __forceinline__ void keep_live(const unsigned (&v)[WORDS], unsigned* out,
                                          unsigned i) {
    unsigned keep = 0;
#pragma unroll
    for (int k = 0; k < WORDS; k++) keep += v[k];
    if (keep == 0x9e3779b9u) out[i] = keep;
}
