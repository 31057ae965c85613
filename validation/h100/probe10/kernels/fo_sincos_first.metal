// fo_out with the long sin/cos first: every value is computed before the first store.
#include <metal_stdlib>
using namespace metal;

kernel void fo_sincos_first(device const float* a   [[buffer(0)]],
                            device const float* b   [[buffer(1)]],
                            device float*       out [[buffer(2)]],
                            uint i [[thread_position_in_grid]])
{
    const float x = a[i];
    const float y = b[i];
    const float s = sin(x) + cos(y);
    const float r0 = x * y + x;
    const float r1 = fma(x, y, 1.0f);
    const float r2 = x / (y + 3.5f);
    const float r3 = floor(x) + ceil(y);
    const float r4 = round(x) - trunc(y);
    const float r5 = rint(x * 3.0f);
    const float r6 = sqrt(fabs(x));
    const float r7 = exp(y * 0.5f);
    const float r8 = log(fabs(x) + 1.0f);
    const float r9 = min(x, y) - max(x, y);
    const float r10 = x > y ? x : y * 2.0f;
    device float* o = out + i * 12;
    o[0] = r0;
    o[1] = r1;
    o[2] = r2;
    o[3] = r3;
    o[4] = r4;
    o[5] = r5;
    o[6] = r6;
    o[7] = r7;
    o[8] = r8;
    o[9] = r9;
    o[10] = r10;
    o[11] = s;
}
