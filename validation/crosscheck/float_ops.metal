// Floating-point semantics in float and half: arithmetic, fused multiply-add, rounding
// functions, square roots, exp/log, min/max, conversions to integers (saturating) and
// to half, select. Float results within rounding of the simulator's.
#include <metal_stdlib>
using namespace metal;

kernel void float_ops(device const float* a   [[buffer(0)]],
                      device const float* b   [[buffer(1)]],
                      device float*       out [[buffer(2)]],
                      device half*        hout [[buffer(3)]],
                      device int*         iout [[buffer(4)]],
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
    const half hx = half(x);
    const half hy = half(y);
    device half* h = hout + i * 4;
    h[0] = hx * hy + hx;
    h[1] = hx - hy;
    h[2] = max(hx, hy);
    h[3] = half(x * 1000.0f);
    device int* n = iout + i * 3;
    n[0] = int(x * 3.0e9f);
    n[1] = int(uint(fabs(y) * 1.0e10f));
    n[2] = int(x * 100.0f);
}
