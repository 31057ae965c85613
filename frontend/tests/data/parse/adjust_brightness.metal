#include <metal_stdlib>
using namespace metal;

kernel void adjust_brightness(
    device const uchar4* input [[buffer(0)]],
    device uchar4* output [[buffer(1)]],
    constant float& factor [[buffer(2)]],
    constant uint2& dims [[buffer(3)]],
    uint2 gid [[thread_position_in_grid]]
) {
    if (gid.x >= dims.x || gid.y >= dims.y) return;
    uint idx = gid.y * dims.x + gid.x;
    float4 pixel = float4(input[idx]) / 255.0f;
    pixel.rgb = clamp(pixel.rgb * factor, 0.0f, 1.0f);
    output[idx] = uchar4(pixel * 255.0f);
}
