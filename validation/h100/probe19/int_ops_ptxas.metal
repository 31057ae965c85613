// int_ops (validation/crosscheck/int_ops.metal) in the order ptxas runs it on the H100
// (validation/h100/run20/sass/int_ops.sass.txt): every value computed before the first
// store, the 24 stores in the SASS's order, and the four values whose registers ptxas
// takes from the first four stores computed between those stores and the rest. Run
// with int_ops' spec: the outputs are int_ops'.
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
    const int r0 = x + y;
    const int r1 = x * y;
    const int r2 = x / y;
    const int r3 = x % y;
    const int r4 = int(ux / uy);
    const int r5 = int(ux % uy);
    const int r6 = x >> (uy & 31u);
    const int r7 = int(ux << (uy & 31u));
    const int r8 = int(clz(ux));
    const int r10 = int(popcount(ux));
    const int r11 = mulhi(x, y);
    const int r14 = hadd(x, y);
    const int r15 = rhadd(x, y);
    const int r16 = int(rotate(ux, uy));
    const int r17 = int(extract_bits(ux, uy & 15u, 9u));
    const int r19 = min(x, y) ^ max(x, y);
    const int r20 = int(short(x) * short(y));
    const int r21 = int(uchar(ux) + uchar(uy));
    const int r22 = int(float(x) * 0.5f);
    const int r23 = int(reverse_bits(ux));
    o[1] = r1;
    o[10] = r10;
    o[23] = r23;
    o[19] = r19;
    const int r18 = abs(x);
    const int r9 = int(ctz(ux));
    const int r13 = subsat(x, y);
    const int r12 = addsat(x, y);
    o[0] = r0;
    o[6] = r6;
    o[7] = r7;
    o[21] = r21;
    o[8] = r8;
    o[18] = r18;
    o[14] = r14;
    o[16] = r16;
    o[20] = r20;
    o[9] = r9;
    o[2] = r2;
    o[11] = r11;
    o[15] = r15;
    o[3] = r3;
    o[13] = r13;
    o[12] = r12;
    o[4] = r4;
    o[17] = r17;
    o[5] = r5;
    o[22] = r22;
}
