// Streaming bandwidth with 16-byte vector accesses: y = a * x on float4, so each thread
// moves 32 bytes and the load/store instructions are a quarter of copy's.
#include <metal_stdlib>
using namespace metal;

kernel void scale4(device const float4* x [[buffer(0)]],
                   device float4*       y [[buffer(1)]],
                   constant float&      a [[buffer(2)]],
                   uint i [[thread_position_in_grid]])
{
    y[i] = a * x[i];
}
