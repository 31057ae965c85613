#include <metal_stdlib>
using namespace metal;

constant constexpr uint T = 16;

kernel void transpose(
    device const float4* src [[buffer(0)]],
    device float4* dst [[buffer(1)]],
    constant uint2& size [[buffer(2)]],
    uint2 gid [[thread_position_in_grid]],
    uint2 lid [[thread_position_in_threadgroup]],
    uint2 tg [[threadgroup_position_in_grid]]
) {
    threadgroup float tile[16][16];
    threadgroup float4 staging[T * T];
    thread float acc[4] = {0.0f};
    float4 v = src[gid.y * size.x + gid.x];
    v.xy = v.yx;
    v.w = 1.0h;
    v.rgb *= 0.5f;
    tile[lid.y][lid.x] = v.x + acc[0];
    staging[lid.y * T + lid.x] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float4 out = staging[lid.x * T + lid.y];
    out.x = tile[lid.x][lid.y];
    uint2 o = tg.yx * T + lid;
    dst[o.y * size.y + o.x] = out.wzyx;
}
