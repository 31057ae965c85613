// Sampling textures in compute kernels: a resize through the sampler the host binds, a
// tiled pattern through a `constexpr sampler` with `repeat`, a 3D colour-grading table
// looked up with trilinear filtering in pixel coordinates, 1D curves with mirrored repeat
// (a program-scope sampler) and clamp_to_zero, and a level of detail choosing between the
// sampler's filters.
#include <metal_stdlib>
using namespace metal;

// Each output pixel samples the source at its centre, in normalized coordinates, with
// whatever state the launch spec gives `[[sampler(0)]]`.
kernel void resize(texture2d<float> src [[texture(0)]],
                   texture2d<float, access::write> dst [[texture(1)]],
                   sampler s [[sampler(0)]],
                   uint2 gid [[thread_position_in_grid]]) {
    uint2 size = uint2(dst.get_width(), dst.get_height());
    if (any(gid >= size)) {
        return;
    }
    float2 uv = (float2(gid) + 0.5f) / float2(size);
    dst.write(src.sample(s, uv), gid);
}

// A pattern repeated `scale` times across the output, one texel to the right.
kernel void tile(texture2d<half> pattern [[texture(0)]],
                 device half4* out [[buffer(0)]],
                 constant float& scale [[buffer(1)]],
                 uint2 gid [[thread_position_in_grid]],
                 uint2 grid [[threads_per_grid]]) {
    constexpr sampler tiles(coord::normalized, address::repeat, filter::nearest);
    float2 uv = (float2(gid) + 0.5f) / float2(grid) * scale - 0.25f;
    out[gid.y * grid.x + gid.x] = pattern.sample(tiles, uv, int2(1, 0));
}

// Colours graded through a 3D table, addressed in texels; outside the table reads white.
constant constexpr float lut_margin = 1.0f;

kernel void grade(texture3d<float> lut [[texture(0)]],
                  device const float4* colors [[buffer(0)]],
                  device float4* graded [[buffer(1)]],
                  uint gid [[thread_position_in_grid]]) {
    constexpr sampler table(coord::pixel, address::clamp_to_border,
                            border_color::opaque_white, filter::linear);
    float3 size = float3(lut.get_width(), lut.get_height(), lut.get_depth());
    float3 p = colors[gid].xyz * (size + 2.0f * lut_margin) - lut_margin;
    graded[gid] = lut.sample(table, p);
}

// A float curve read with linear filtering, mirrored outside [0, 1), and an integer one
// read nearest (integer textures are never filtered), zero outside.
constexpr sampler mirror(address::mirrored_repeat, filter::linear);

kernel void curves(texture1d<float> curve [[texture(0)]],
                   texture1d<int> labels [[texture(1)]],
                   device float* values [[buffer(0)]],
                   device int4* ids [[buffer(1)]],
                   uint gid [[thread_position_in_grid]],
                   uint n [[threads_per_grid]]) {
    constexpr sampler outside_zero(address::clamp_to_zero, filter::linear);
    float x = 3.0f * float(gid) / float(n) - 1.0f;
    values[gid] = curve.sample(mirror, x).x;
    ids[gid] = labels.sample(outside_zero, x);
}

// The level of detail picks `min_filter` above 0 and `mag_filter` otherwise, after the
// sampler's `lod_clamp`.
kernel void minify(texture2d<float> src [[texture(0)]],
                   device float4* out [[buffer(0)]],
                   constant float& lod [[buffer(1)]],
                   uint2 gid [[thread_position_in_grid]],
                   uint2 grid [[threads_per_grid]]) {
    constexpr sampler s(mag_filter::nearest, min_filter::linear, lod_clamp(0.0f, 4.0f));
    float2 uv = (float2(gid) + 0.25f) / float2(grid);
    out[gid.y * grid.x + gid.x] = src.sample(s, uv, level(lod));
}

// Texture arrays: a stack of images averaged slice by slice, and per-slice colour ramps
// sampled from a 1D array plus a 2D array sampled one slice further (the last slice's
// index is clamped, as for every array sample), written to a 1D array.
kernel void stack_mean(texture2d_array<float, access::read> stack [[texture(0)]],
                       texture2d<float, access::write> mean [[texture(1)]],
                       uint2 gid [[thread_position_in_grid]]) {
    float4 sum = 0.0f;
    for (uint i = 0; i < stack.get_array_size(); ++i) {
        sum += stack.read(gid, i);
    }
    mean.write(sum / float(stack.get_array_size()), gid);
}

kernel void ramps(texture1d_array<half> palette [[texture(0)]],
                  texture2d_array<float> layers [[texture(1)]],
                  texture1d_array<float, access::write> out [[texture(2)]],
                  constant float& row [[buffer(0)]],
                  uint2 gid [[thread_position_in_grid]]) {
    constexpr sampler smooth(filter::linear, address::clamp_to_edge);
    float x = (float(gid.x) + 0.5f) / float(out.get_width());
    float4 base = float4(palette.sample(smooth, x, gid.y));
    float4 tint = layers.sample(smooth, float2(x, row), gid.y + 1, level(0.0f));
    out.write(base + tint, gid.x, gid.y);
}

// Shadow lookups in a depth texture: percentage-closer filtering with `sample_compare`
// (each of the 4 taps compared with the point's depth, the results filtered), the filtered
// depth itself, and one texel read.
kernel void shadow(depth2d<float> shadow_map [[texture(0)]],
                   device const float4* points [[buffer(0)]],
                   device float4* lit [[buffer(1)]],
                   uint gid [[thread_position_in_grid]]) {
    constexpr sampler pcf(filter::linear, address::clamp_to_edge, compare_func::less_equal);
    float4 p = points[gid];
    uint2 texel = uint2(p.xy * float2(shadow_map.get_width(), shadow_map.get_height()));
    lit[gid] = float4(shadow_map.sample_compare(pcf, p.xy, p.z), shadow_map.sample(pcf, p.xy),
                      shadow_map.read(min(texel, uint2(shadow_map.get_width() - 1,
                                                       shadow_map.get_height() - 1))),
                      0.0f);
}
