// int_ops' pattern with nothing to compute: 24 ints a thread, one store each.
#include <metal_stdlib>
using namespace metal;

kernel void io_pure(device const int* a   [[buffer(0)]],
                    device int*       out [[buffer(2)]],
                    uint i [[thread_position_in_grid]])
{
    const int x = a[i];
    device int* o = out + i * 24;
    for (int k = 0; k < 24; k += 4) {
        o[k] = x + k;
        o[k + 1] = x + k + 1;
        o[k + 2] = x + k + 2;
        o[k + 3] = x + k + 3;
    }
}
