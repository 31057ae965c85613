// Constructs metalsim does not support yet, refused by name at their locations while
// type-checking; the independent errors of the file are all reported.
#include <metal_stdlib>
using namespace metal;

struct Bits {
    union {
        float f;
        uint u;
    };
};

kernel void image(texture2d<float> img [[texture(0)]],
                  sampler smp [[sampler(0)]],
                  texture2d_array<float, access::read> layers [[texture(1)]],
                  device float* out [[buffer(0)]],
                  uint2 gid [[thread_position_in_grid]]) {
    out[gid.x] = 1;
}

kernel void matrices(device float* out [[buffer(0)]]) {
    float2x2 m = float2x2(1, 2, 3, 4);
    out[0] = 1;
}

constant float4 weights [[function_constant(0)]];

kernel void vector_constant(device float4* out [[buffer(0)]]) {
    out[0] = 1;
}
