// Matrix kernels (MSL 2.2, 3.2, 5.6) in the styles of graphics-style compute and small
// linear-algebra kernels: a model transform of float4 points with a normal matrix from a
// uniform struct, a templated per-thread 4x4 compose with `host_name` instantiations, and
// non-square products, element-wise building and compound assignment.

#include <metal_stdlib>
using namespace metal;

// A uniform block as a renderer would bind it: the spec's table 4 gives the layout
// (float4x4: 64 bytes, float3x3: 48 bytes of three padded float3 columns).
struct Transform {
    float4x4 model;
    float3x3 normal;
    float scale;
};

kernel void transform_points(device const float4* points [[buffer(0)]],
                             constant Transform& t [[buffer(1)]],
                             device float4* out [[buffer(2)]],
                             device float4* normals [[buffer(3)]],
                             uint id [[thread_position_in_grid]]) {
    float4 p = points[id];
    float4 world = t.model * p;
    out[id] = world * t.scale;
    // The normal matrix applied to the point's direction, and the point as a row vector.
    float3 n = t.normal * p.xyz;
    float4 row = p * t.model;
    normals[id] = float4(n, row.w);
}

// C[i] = A[i] * B[i] + 0.5 * transpose(A[i]), det[i] = determinant(A[i]); A is read as 16
// scalars (column by column), B as four column vectors.
template <typename T>
kernel void compose(device const T* a [[buffer(0)]],
                    device const vec<T, 4>* b [[buffer(1)]],
                    device matrix<T, 4, 4>* c [[buffer(2)]],
                    device float* det [[buffer(3)]],
                    uint id [[thread_position_in_grid]]) {
    device const T* e = a + 16 * id;
    matrix<T, 4, 4> m(e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7],
                      e[8], e[9], e[10], e[11], e[12], e[13], e[14], e[15]);
    matrix<T, 4, 4> n(b[4 * id], b[4 * id + 1], b[4 * id + 2], b[4 * id + 3]);
    c[id] = m * n + transpose(m) * T(0.5);
    det[id] = float(determinant(m));
}

#define INSTANTIATE_COMPOSE(tname, T)                                                     \
    template [[host_name("compose_" #tname)]] [[kernel]] decltype(compose<T>) compose<T>;

INSTANTIATE_COMPOSE(float32, float)
INSTANTIATE_COMPOSE(float16, half)

// Non-square matrices and the rest of the surface, one result vector per thread:
// out[id] = (float3x3 product of a 2x3 and a 3x2).columns summed, the float2 of a row
// vector times a 2x3, the 2x2 and 3x3 determinants, and a matrix built element by element.
kernel void mixed_shapes(device const float* in [[buffer(0)]],
                         device float4* out [[buffer(1)]],
                         uint id [[thread_position_in_grid]]) {
    device const float* x = in + 8 * id;
    float2x3 a(float3(x[0], x[1], x[2]), float3(x[3], x[4], x[5]));
    float3x2 b(x[6], x[7], x[0], x[1], x[2], x[3]);
    float3x3 p = a * b;
    float2x2 q = b * a;
    float2 r = float3(x[5], x[6], x[7]) * a;
    // Built element by element with run-time indices, then updated in place.
    float3x3 s;
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 3; k++) {
            s[c][k] = x[(c * 3 + k) % 8] + (c == k ? 2.0f : 0.0f);
        }
    }
    s += float3x3(1.0f);
    s *= 0.5f;
    s[2] = -s[2];
    half2x2 h = half2x2(q);
    float3 sum = p[0] + p[1] + p[2];
    out[2 * id] = float4(sum, determinant(q));
    out[2 * id + 1] = float4(r, determinant(s), float(h[1][0]));
}
