// SIMD-group reduction: each SIMD-group sums its 32 values with simd_sum and its first
// lane writes the partial. Isolates the SIMD-group reduction (a shuffle tree on the
// GPU) over a streaming read.
#include <metal_stdlib>
using namespace metal;

kernel void simd_reduce(device const float* data     [[buffer(0)]],
                        device float*       partials [[buffer(1)]],
                        uint gid  [[thread_position_in_grid]],
                        uint lane [[thread_index_in_simdgroup]])
{
    const float s = simd_sum(data[gid]);
    if (lane == 0) {
        partials[gid / 32] = s;
    }
}
