// SIMD-group prefix sum (simd_prefix_inclusive_sum) of a stream: a scan per 32 values.
#include <metal_stdlib>
using namespace metal;

kernel void simd_scan(device const uint* data [[buffer(0)]],
                      device uint*       out  [[buffer(1)]],
                      uint gid [[thread_position_in_grid]])
{
    out[gid] = simd_prefix_inclusive_sum(data[gid]);
}
