// io_pure with every store's address computed apart, as ptxas -O0 keeps it.
#include <metal_stdlib>
using namespace metal;

kernel void io_pure_o0(device const int* a   [[buffer(0)]],
                       device int*       out [[buffer(2)]],
                       constant uint&    z   [[buffer(3)]],
                       uint i [[thread_position_in_grid]])
{
    const int x = a[i];
    device int* o = out + i * 24;
    o[0u + z] = x + 0;
    o[1u + z] = x + 1;
    o[2u + z] = x + 2;
    o[3u + z] = x + 3;
    o[4u + z] = x + 4;
    o[5u + z] = x + 5;
    o[6u + z] = x + 6;
    o[7u + z] = x + 7;
    o[8u + z] = x + 8;
    o[9u + z] = x + 9;
    o[10u + z] = x + 10;
    o[11u + z] = x + 11;
    o[12u + z] = x + 12;
    o[13u + z] = x + 13;
    o[14u + z] = x + 14;
    o[15u + z] = x + 15;
    o[16u + z] = x + 16;
    o[17u + z] = x + 17;
    o[18u + z] = x + 18;
    o[19u + z] = x + 19;
    o[20u + z] = x + 20;
    o[21u + z] = x + 21;
    o[22u + z] = x + 22;
    o[23u + z] = x + 23;
}
