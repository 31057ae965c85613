// Element-wise sum of two float arrays: out[i] = x[i] + y[i].
// The simplest data-parallel kernel; one thread per element.
#include <metal_stdlib>
using namespace metal;

kernel void vector_add(device const float* x   [[buffer(0)]],
                       device const float* y   [[buffer(1)]],
                       device float*       out [[buffer(2)]],
                       constant uint&      n   [[buffer(3)]],
                       uint i [[thread_position_in_grid]])
{
    if (i >= n) {
        return;
    }
    out[i] = x[i] + y[i];
}
