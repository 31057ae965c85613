// Constructs metalsim does not support yet or MSL forbids (function constants of struct or
// array type), refused by name at their locations while type-checking, and misuses of unions
// and matrices; the independent errors of the file are all reported.
#include <metal_stdlib>
using namespace metal;

union Bits {
    float f;
    uint u;
};

kernel void image(texture2d<float> img [[texture(0)]],
                  sampler smp [[sampler(0)]],
                  device float* out [[buffer(0)]],
                  uint2 gid [[thread_position_in_grid]]) {
    out[gid.x] = 1;
}

kernel void matrices(device float* out [[buffer(0)]]) {
    Bits two_members = {1.0f, 2u};
    bfloat2x2 m = bfloat2x2(1, 2, 3, 4);
    float2x2 ok = float2x2(1, 2, 3, 4);
    float2x2 short_of_columns = float2x2(float2(1), float2(2), float2(3));
    out[0] = 1;
}

struct Weights {
    float4 w;
};

constant Weights weights [[function_constant(0)]];
constant float taps[4] [[function_constant(1)]];

kernel void struct_constant(device float4* out [[buffer(0)]]) {
    out[0] = 1;
}
