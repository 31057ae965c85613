// A streaming copy, b[i] = a[i]: what MLX's concatenate and PyTorch's copy_ do to memory.
#include <metal_stdlib>
using namespace metal;

kernel void copy(device const float* a [[buffer(0)]],
                 device float*       b [[buffer(1)]],
                 uint i [[thread_position_in_grid]])
{
    b[i] = a[i];
}
