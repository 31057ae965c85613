// fo_pure with every store's address computed apart (an index the compiler cannot fold),
// as ptxas -O0's build of fo_pure keeps it: probe 26's like-for-like check.
#include <metal_stdlib>
using namespace metal;

kernel void fo_pure_o0(device const float* a   [[buffer(0)]],
                       device float*       out [[buffer(2)]],
                       constant uint&      z   [[buffer(3)]],
                       uint i [[thread_position_in_grid]])
{
    const float x = a[i];
    device float* o = out + i * 12;
    o[z] = x;
    o[1u + z] = x + 1.0f;
    o[2u + z] = x + 2.0f;
    o[3u + z] = x + 3.0f;
    o[4u + z] = x + 4.0f;
    o[5u + z] = x + 5.0f;
    o[6u + z] = x + 6.0f;
    o[7u + z] = x + 7.0f;
    o[8u + z] = x + 8.0f;
    o[9u + z] = x + 9.0f;
    o[10u + z] = x + 10.0f;
    o[11u + z] = x + 11.0f;
}
