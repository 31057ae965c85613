// Divergence-heavy: every lane runs its own trip count (0 to 31) of a loop with a
// three-way branch chosen by its own pseudo-random state, so SIMD-groups split and
// reconverge on every iteration.
#include <metal_stdlib>
using namespace metal;

kernel void divergent(device uint* out [[buffer(0)]],
                      uint gid [[thread_position_in_grid]])
{
    uint x = gid * 2654435761u ^ (gid >> 3);
    uint acc = 0;
    const uint trips = x & 31u;
    for (uint i = 0; i < trips; ++i) {
        if ((x & 3u) == 0u) {
            acc += x >> 3;
        } else if ((x & 3u) == 1u) {
            acc ^= x * 2246822519u;
        } else {
            acc = (acc << 1) | (acc >> 31);
        }
        x = x * 1664525u + 1013904223u;
    }
    out[gid] = acc;
}
