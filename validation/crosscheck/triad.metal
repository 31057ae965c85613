// STREAM triad: a = b + s * c, two streams read and one written, with a partial edge
// threadgroup (the grid is not a multiple of the threadgroup size).
#include <metal_stdlib>
using namespace metal;

kernel void triad(device float*       a [[buffer(0)]],
                  device const float* b [[buffer(1)]],
                  device const float* c [[buffer(2)]],
                  constant float&     s [[buffer(3)]],
                  uint i [[thread_position_in_grid]])
{
    a[i] = b[i] + s * c[i];
}
