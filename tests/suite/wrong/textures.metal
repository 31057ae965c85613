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

kernel void cube_misuse(texturecube<float, access::read> sky [[texture(0)]],
                        depthcube<float> shadow [[texture(1)]],
                        texture2d<float> img [[texture(2)]],
                        sampler s [[sampler(0)]],
                        device float4* out [[buffer(0)]],
                        uint2 gid [[thread_position_in_grid]]) {
    out[0] = sky.read(gid);
    out[1] = sky.gather(s, float3(1.0f));
    out[2] = shadow.gather(s, float2(0.5f));
    out[3] = img.gather_compare(s, float2(0.5f), 0.5f);
    out[4] = sky.sample(s, float2(0.5f));
}

kernel void multisample_misuse(texture2d_ms<float, access::write> target [[texture(0)]],
                               depth2d_ms<float> depth [[texture(1)]],
                               sampler s [[sampler(0)]],
                               device float* out [[buffer(0)]],
                               uint2 gid [[thread_position_in_grid]]) {
    out[0] = depth.sample(s, float2(0.5f));
    out[1] = depth.read(gid);
}

kernel void buffer_misuse(texture_buffer<float, access::read> texels [[texture(0)]],
                          device float4* out [[buffer(0)]],
                          uint2 gid [[thread_position_in_grid]]) {
    out[0] = texels.read(gid);
    out[1] = texels.read(gid.x, 0);
    texels.write(float4(1.0f), gid.x);
}

kernel void atomic_misuse(texture2d<float, access::read_write> img [[texture(0)]],
                          texture2d<uint, access::read> counts [[texture(1)]],
                          texturecube<uint, access::read_write> cube [[texture(2)]],
                          uint2 gid [[thread_position_in_grid]]) {
    img.atomic_fetch_add(gid, float4(1.0f));
    counts.atomic_fetch_add(gid, 1u);
    cube.atomic_fetch_add(gid, 0u, 1u);
}
