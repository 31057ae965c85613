#include <metal_stdlib>
using namespace metal;

kernel void mistyped(device float4* out [[buffer(0)]],
                     uint i [[thread_position_in_grid]])
{
    int4 v = int4(1, 2, 3, 4);
    out[i] = v;
    out[i].q = 1.0f;
    undefined_function(i);
}
