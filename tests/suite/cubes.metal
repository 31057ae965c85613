// Cube, multisample and buffer textures, depth texture arrays, and `gather`: an
// environment lookup through a cube map, faces of a cube array updated in place, shadow
// tests against cube and array depth maps, a multisample resolve, a texel buffer scaled
// into another, the four texels of bilinear footprints gathered by component, and texture
// atomics.
#include <metal_stdlib>
using namespace metal;

// Each direction looks the environment up with the sampler the launch spec binds, and
// gathers the red channels and the alpha channels of the same footprint.
kernel void environment(texturecube<float> sky [[texture(0)]],
                        sampler s [[sampler(0)]],
                        device const float4* dirs [[buffer(0)]],
                        device float4* colors [[buffer(1)]],
                        device float4* reds [[buffer(2)]],
                        device float4* alphas [[buffer(3)]],
                        uint gid [[thread_position_in_grid]]) {
    float3 d = dirs[gid].xyz;
    colors[gid] = sky.sample(s, d);
    reds[gid] = sky.gather(s, d);
    alphas[gid] = sky.gather(s, d, component::w);
}

// Every texel of every face of every cube is replaced by itself plus its face and cube
// number; one thread per texel of a face, the grid's z running over faces x cubes.
kernel void mark_faces(texturecube_array<float, access::read_write> cubes [[texture(0)]],
                       uint3 gid [[thread_position_in_grid]]) {
    uint face = gid.z % 6;
    uint cube = gid.z / 6;
    if (gid.x >= cubes.get_width() || gid.y >= cubes.get_height() ||
        cube >= cubes.get_array_size()) {
        return;
    }
    float4 t = cubes.read(gid.xy, face, cube);
    cubes.write(t + float4(float(face), float(cube), 0.0f, 0.0f), gid.xy, face, cube);
}

// Shadow tests: a point light's distance cube (one cube per light) and a cascade of 2D
// depth maps, each compared with percentage-closer filtering and gathered.
constexpr sampler shadow_sampler(filter::linear, compare_func::less_equal);

kernel void shadows(depthcube_array<float> lights [[texture(0)]],
                    depth2d_array<float> cascades [[texture(1)]],
                    device const float4* points [[buffer(0)]],
                    device float4* lit [[buffer(1)]],
                    device float4* light_taps [[buffer(2)]],
                    device float4* cascade_taps [[buffer(3)]],
                    uint gid [[thread_position_in_grid]]) {
    float4 p = points[gid];
    uint light = gid % lights.get_array_size();
    uint cascade = gid % cascades.get_array_size();
    float3 dir = p.xyz * 2.0f - 1.0f;
    float2 uv = p.xy;
    lit[gid] = float4(lights.sample_compare(shadow_sampler, dir, light, p.w),
                      cascades.sample_compare(shadow_sampler, uv, cascade, p.w),
                      lights.sample(shadow_sampler, dir, light),
                      cascades.read(uint2(uv * float2(cascades.get_width(),
                                                      cascades.get_height())),
                                    cascade));
    light_taps[gid] = lights.gather_compare(shadow_sampler, dir, light, p.w);
    cascade_taps[gid] = cascades.gather_compare(shadow_sampler, uv, cascade, p.w, int2(1, -1));
}

// A multisample resolve: each pixel's samples averaged into an ordinary texture, the
// nearest of a depth array's samples kept, and an integer ID texture's samples or-ed.
kernel void resolve(texture2d_ms<float> color [[texture(0)]],
                    depth2d_ms_array<float> depth [[texture(1)]],
                    texture2d_ms<uint> ids [[texture(2)]],
                    texture2d<float, access::write> out [[texture(3)]],
                    device float* nearest [[buffer(0)]],
                    device uint* id_masks [[buffer(1)]],
                    uint2 gid [[thread_position_in_grid]]) {
    uint w = color.get_width();
    if (gid.x >= w || gid.y >= color.get_height()) {
        return;
    }
    float4 sum = float4(0.0f);
    uint n = color.get_num_samples();
    for (uint i = 0; i < n; ++i) {
        sum += color.read(gid, i);
    }
    out.write(sum / float(n), gid);
    float d = 1.0f;
    for (uint a = 0; a < depth.get_array_size(); ++a) {
        for (ushort i = 0; i < depth.get_num_samples(); ++i) {
            d = min(d, depth.read(ushort2(gid), ushort(a), i));
        }
    }
    nearest[gid.y * w + gid.x] = d;
    uint mask = 0;
    for (uint i = 0; i < ids.get_num_samples(); ++i) {
        mask |= ids.read(gid, i).x;
    }
    id_masks[gid.y * w + gid.x] = mask;
}

// A texel buffer scaled into another, back to front.
kernel void scale_texels(texture_buffer<half> in [[texture(0)]],
                         texture_buffer<float, access::write> out [[texture(1)]],
                         constant float& k [[buffer(0)]],
                         uint gid [[thread_position_in_grid]]) {
    uint n = in.get_width();
    if (gid < n) {
        out.write(float4(in.read(n - 1 - gid)) * k, gid);
    }
}

// The four texels around points of a 2D texture (green channel, one texel right and two
// up) and of a texture array's slice (red channel), with the spec's sampler.
kernel void footprints(texture2d<float> image [[texture(0)]],
                       texture2d_array<int> labels [[texture(1)]],
                       sampler s [[sampler(0)]],
                       device const float2* points [[buffer(0)]],
                       device float4* greens [[buffer(1)]],
                       device int4* label_taps [[buffer(2)]],
                       uint gid [[thread_position_in_grid]]) {
    float2 uv = points[gid];
    greens[gid] = image.gather(s, uv, int2(1, -2), component::y);
    label_taps[gid] = labels.gather(s, uv, gid % labels.get_array_size());
}

// Texture atomics (MSL 3.1): points counted into a 2D histogram, and values folded into a
// texel buffer's texels by every atomic operation (min, max, or, and, xor, sub, and a sum by
// a compare-exchange loop); one thread stores and one exchanges.
kernel void splat(texture2d<uint, access::read_write> counts [[texture(0)]],
                  texture_buffer<int, access::read_write> folds [[texture(1)]],
                  device const float2* points [[buffer(0)]],
                  device const int* values [[buffer(1)]],
                  device int* exchanged [[buffer(2)]],
                  uint gid [[thread_position_in_grid]]) {
    uint2 cell = uint2(points[gid] * float2(counts.get_width(), counts.get_height()));
    counts.atomic_fetch_add(cell, 1u);
    int v = values[gid];
    folds.atomic_fetch_min(0, int4(v));
    folds.atomic_fetch_max(1, int4(v));
    folds.atomic_fetch_or(2, int4(v & 0xff));
    folds.atomic_fetch_and(3, int4(~(1 << (v & 15))));
    folds.atomic_fetch_xor(4, int4(v));
    folds.atomic_fetch_sub(5, int4(v));
    int4 seen = folds.atomic_load(6u);
    while (!folds.atomic_compare_exchange_weak(6u, &seen, seen + int4(v, 0, 0, 0))) {
    }
    if (gid == 0) {
        folds.atomic_store(7, int4(42));
    }
    if (gid == 1) {
        exchanged[0] = folds.atomic_exchange(8, int4(-5)).x;
    }
}
