// partial_probe.cu's kernel without its delays, for the simulator: thread t of n takes
// items t, t + n, ...; item i writes WORDS consecutive floats at out[i * STRIDE + k], one
// store each. ITEMS, STRIDE and WORDS come from -D (partial_probe_sim.py sets them).
#include <metal_stdlib>
using namespace metal;

kernel void pattern(device float* out [[buffer(0)]],
                    uint tid [[thread_position_in_grid]],
                    uint n [[threads_per_grid]])
{
    for (uint t = tid; t < ITEMS; t += n) {
        device float* p = out + t * STRIDE;
        for (uint k = 0; k < WORDS; k++) {
            p[k] = float(t + k);
        }
    }
}
