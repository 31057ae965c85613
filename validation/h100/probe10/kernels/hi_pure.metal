// float_ops' `hout` and `iout` patterns with nothing to compute: 4 halves and 3 ints a
// thread, one store each.
#include <metal_stdlib>
using namespace metal;

kernel void hi_pure(device const float* a    [[buffer(0)]],
                    device half*        hout [[buffer(3)]],
                    device int*         iout [[buffer(4)]],
                    uint i [[thread_position_in_grid]])
{
    const float x = a[i];
    device half* h = hout + i * 4;
    h[0] = half(x);
    h[1] = half(x + 1.0f);
    h[2] = half(x + 2.0f);
    h[3] = half(x + 3.0f);
    device int* n = iout + i * 3;
    n[0] = int(x);
    n[1] = int(x) + 1;
    n[2] = int(x) + 2;
}
