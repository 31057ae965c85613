// Matrix transpose through threadgroup memory: each 16 x 16 threadgroup reads a tile in
// rows (coalesced), and writes it out in rows of the transpose, reading the tile by
// columns (padded to 17 floats per row against bank conflicts).
#include <metal_stdlib>
using namespace metal;

#define T 16

kernel void transpose(device const float* src  [[buffer(0)]],
                      device float*       dst  [[buffer(1)]],
                      constant uint2&     size [[buffer(2)]],
                      threadgroup float*  tile [[threadgroup(0)]],
                      uint2 group [[threadgroup_position_in_grid]],
                      uint2 local [[thread_position_in_threadgroup]])
{
    const uint x = group.x * T + local.x;
    const uint y = group.y * T + local.y;
    tile[local.y * (T + 1) + local.x] = (x < size.x && y < size.y) ? src[y * size.x + x] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    // Row `oy` of the transpose is column `oy` of the source.
    const uint ox = group.y * T + local.x;
    const uint oy = group.x * T + local.y;
    if (ox < size.y && oy < size.x) {
        dst[oy * size.y + ox] = tile[local.x * (T + 1) + local.y];
    }
}
