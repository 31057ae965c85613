// float_ops with its `out` stores only (no `hout`, `iout`): are the merges `out`'s?
#include <metal_stdlib>
using namespace metal;

kernel void fo_out(device const float* a   [[buffer(0)]],
                   device const float* b   [[buffer(1)]],
                   device float*       out [[buffer(2)]],
                   uint i [[thread_position_in_grid]])
{
    const float x = a[i];
    const float y = b[i];
    device float* o = out + i * 12;
    o[0] = x * y + x;
    o[1] = fma(x, y, 1.0f);
    o[2] = x / (y + 3.5f);
    o[3] = floor(x) + ceil(y);
    o[4] = round(x) - trunc(y);
    o[5] = rint(x * 3.0f);
    o[6] = sqrt(fabs(x));
    o[7] = exp(y * 0.5f);
    o[8] = log(fabs(x) + 1.0f);
    o[9] = min(x, y) - max(x, y);
    o[10] = x > y ? x : y * 2.0f;
    o[11] = sin(x) + cos(y);
}
