// Streaming bandwidth, the simplest case: one float read and one written per thread.
// Isolates DRAM bandwidth (64 MiB each way, far past every cache).
#include <metal_stdlib>
using namespace metal;

kernel void copy(device const float* src [[buffer(0)]],
                 device float*       dst [[buffer(1)]],
                 uint i [[thread_position_in_grid]])
{
    dst[i] = src[i];
}
