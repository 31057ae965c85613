// Image kernels with textures, in the style of image-processing compute shaders: a colour
// conversion, a separable Gaussian blur instantiated per direction, a volume update in
// place and a 1D lookup table.
#include <metal_stdlib>
using namespace metal;

// Rec. 709 luma weights.
constant float3 kLuma = float3(0.2126f, 0.7152f, 0.0722f);

kernel void luminance(texture2d<float, access::read> src [[texture(0)]],
                      texture2d<float, access::write> dst [[texture(1)]],
                      uint2 gid [[thread_position_in_grid]]) {
    if (gid.x >= src.get_width() || gid.y >= src.get_height()) {
        return;
    }
    const float4 c = src.read(gid);
    dst.write(float4(dot(c.rgb, kLuma), 0.0f, 0.0f, 1.0f), gid);
}

// One pass of a separable blur: weights[0 .. 2 * radius] along x or y, edges clamped.
template <bool HORIZONTAL>
kernel void gaussian_blur(texture2d<half, access::read> src [[texture(0)]],
                          texture2d<half, access::write> dst [[texture(1)]],
                          constant float* weights [[buffer(0)]],
                          constant int& radius [[buffer(1)]],
                          uint2 gid [[thread_position_in_grid]]) {
    const int w = src.get_width();
    const int h = src.get_height();
    if (int(gid.x) >= w || int(gid.y) >= h) {
        return;
    }
    float4 acc = float4(0.0f);
    for (int i = -radius; i <= radius; ++i) {
        int2 p = int2(gid) + (HORIZONTAL ? int2(i, 0) : int2(0, i));
        p = clamp(p, int2(0), int2(w - 1, h - 1));
        acc += weights[i + radius] * float4(src.read(uint2(p)));
    }
    dst.write(half4(acc), gid);
}

template [[host_name("blur_h")]] [[kernel]] decltype(gaussian_blur<true>) gaussian_blur<true>;
template [[host_name("blur_v")]] [[kernel]] decltype(gaussian_blur<false>) gaussian_blur<false>;

// Doubles every voxel's count and adds one, in place.
kernel void volume_step(texture3d<uint, access::read_write> vol [[texture(0)]],
                        uint3 gid [[thread_position_in_grid]]) {
    if (any(gid >= uint3(vol.get_width(), vol.get_height(), vol.get_depth()))) {
        return;
    }
    const uint4 v = vol.read(gid);
    vol.write(v * 2u + 1u, gid);
}

// Maps each value through a 1D lookup table texture.
kernel void lookup(texture1d<int, access::read> table [[texture(2)]],
                   device const uint* keys [[buffer(0)]],
                   device int* out [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
    out[gid] = table.read(keys[gid]).x;
}
