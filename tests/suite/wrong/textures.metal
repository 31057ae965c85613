// Textures used against their declared access or shape, and texture parameters that
// cannot be bound; each is reported at its source.
#include <metal_stdlib>
using namespace metal;

kernel void copy_back(texture2d<float, access::read> src [[texture(0)]],
                      texture2d<float, access::write> dst [[texture(1)]],
                      uint2 gid [[thread_position_in_grid]]) {
    src.write(dst.read(gid), gid);
}

kernel void bad_params(texture2d<bool, access::read> flags [[texture(0)]],
                       texture1d<float, access::read> lut [[texture(40)]],
                       device float* out [[buffer(0)]],
                       uint gid [[thread_position_in_grid]]) {
    out[gid] = 0;
}

kernel void wrong_coordinates(texture3d<float, access::read> vol [[texture(0)]],
                              device float* out [[buffer(0)]],
                              uint2 gid [[thread_position_in_grid]]) {
    out[gid.x] = vol.read(gid).x + vol.sample(gid).x;
}

kernel void sample_without_access(texture2d<float, access::read> src [[texture(0)]],
                                  sampler s [[sampler(0)]],
                                  device float4* out [[buffer(0)]],
                                  uint2 gid [[thread_position_in_grid]]) {
    out[gid.x] = src.sample(s, float2(gid));
}

kernel void bad_samplers(texture2d<float> src [[texture(0)]],
                         float s [[sampler(1)]],
                         sampler far [[sampler(16)]],
                         device float4* out [[buffer(0)]],
                         uint2 gid [[thread_position_in_grid]]) {
    constexpr sampler nearest(filter::nearest);
    out[gid.x] = src.sample(nearest, float3(0.5f)) + src.sample(nearest, 0.5f, level(0));
}

kernel void array_without_slice(texture2d_array<float, access::read> stack [[texture(0)]],
                                device float4* out [[buffer(0)]],
                                uint2 gid [[thread_position_in_grid]]) {
    out[gid.x] = stack.read(gid) + float4(stack.get_depth());
}
