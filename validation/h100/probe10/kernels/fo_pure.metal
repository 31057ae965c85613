// float_ops' `out` pattern with nothing to compute: 12 floats a thread, one store each.
#include <metal_stdlib>
using namespace metal;

kernel void fo_pure(device const float* a   [[buffer(0)]],
                    device float*       out [[buffer(2)]],
                    uint i [[thread_position_in_grid]])
{
    const float x = a[i];
    device float* o = out + i * 12;
    o[0] = x;
    o[1] = x + 1.0f;
    o[2] = x + 2.0f;
    o[3] = x + 3.0f;
    o[4] = x + 4.0f;
    o[5] = x + 5.0f;
    o[6] = x + 6.0f;
    o[7] = x + 7.0f;
    o[8] = x + 8.0f;
    o[9] = x + 9.0f;
    o[10] = x + 10.0f;
    o[11] = x + 11.0f;
}
