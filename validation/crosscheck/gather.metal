// Gather: out[i] = table[index[i]] with random indices into a 64 MiB table, so almost
// every read is its own DRAM sector (32 bytes moved for 4 used).
#include <metal_stdlib>
using namespace metal;

kernel void gather(device const float* table [[buffer(0)]],
                   device const uint*  index [[buffer(1)]],
                   device float*       out   [[buffer(2)]],
                   uint i [[thread_position_in_grid]])
{
    out[i] = table[index[i]];
}
