// Integer semantics, one result per operation and thread: wrapping arithmetic, division
// and remainder (by zero too), shifts past the width, bit counts, saturating and
// halving adds, rotates, bit fields, 64-bit multiply-high, narrow types and
// conversions. Checks the CUDA translation bit for bit against the simulator.
#include <metal_stdlib>
using namespace metal;

kernel void int_ops(device const int*  a   [[buffer(0)]],
                    device const int*  b   [[buffer(1)]],
                    device int*        out [[buffer(2)]],
                    uint i [[thread_position_in_grid]])
{
    const int x = a[i];
    const int y = b[i];
    const uint ux = uint(x);
    const uint uy = uint(y);
    device int* o = out + i * 24;
    o[0] = x + y;
    o[1] = x * y;
    o[2] = x / y;
    o[3] = x % y;
    o[4] = int(ux / uy);
    o[5] = int(ux % uy);
    o[6] = x >> (uy & 31u);
    o[7] = int(ux << (uy & 31u));
    o[8] = int(clz(ux));
    o[9] = int(ctz(ux));
    o[10] = int(popcount(ux));
    o[11] = mulhi(x, y);
    o[12] = addsat(x, y);
    o[13] = subsat(x, y);
    o[14] = hadd(x, y);
    o[15] = rhadd(x, y);
    o[16] = int(rotate(ux, uy));
    o[17] = int(extract_bits(ux, uy & 15u, 9u));
    o[18] = abs(x);
    o[19] = min(x, y) ^ max(x, y);
    o[20] = int(short(x) * short(y));
    o[21] = int(uchar(ux) + uchar(uy));
    o[22] = int(float(x) * 0.5f);
    o[23] = int(reverse_bits(ux));
}
