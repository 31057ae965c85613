#include <metal_stdlib>
using namespace metal;

// Forgets the bounds check: the threads past the end of the buffer write out of bounds.
kernel void no_bounds_check(device float* out [[buffer(0)]],
                            uint i [[thread_position_in_grid]])
{
    out[i] = float(i) * 2.0f;
}
