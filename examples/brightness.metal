// Scales the brightness of an RGBA8 image, clamping each colour channel to [0, 1] and
// keeping alpha. One thread per pixel over a 2D grid.
#include <metal_stdlib>
using namespace metal;

kernel void brightness(device const uchar4* src    [[buffer(0)]],
                       device uchar4*       dst    [[buffer(1)]],
                       constant float&      gain   [[buffer(2)]],
                       constant uint2&      size   [[buffer(3)]],
                       uint2 p [[thread_position_in_grid]])
{
    if (p.x >= size.x || p.y >= size.y) {
        return;
    }
    const uint at = p.y * size.x + p.x;
    float4 c = float4(src[at]) / 255.0f;
    c.rgb = clamp(c.rgb * gain, 0.0f, 1.0f);
    dst[at] = uchar4(c * 255.0f);
}
