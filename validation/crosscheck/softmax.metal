// Row softmax: one threadgroup of 256 per row of 1024 floats. Maximum and sum each
// reduced in two stages (simd_max / simd_sum, then across SIMD-groups through
// threadgroup memory), then every element normalised: exp, reductions and barriers.
#include <metal_stdlib>
using namespace metal;

#define COLS 1024
#define THREADS 256

kernel void softmax(device const float* x [[buffer(0)]],
                    device float*       y [[buffer(1)]],
                    uint row  [[threadgroup_position_in_grid]],
                    uint tid  [[thread_index_in_threadgroup]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint warp [[simdgroup_index_in_threadgroup]])
{
    threadgroup float partial[THREADS / 32];
    device const float* in = x + row * COLS;
    device float* out = y + row * COLS;

    float m = -INFINITY;
    for (uint c = tid; c < COLS; c += THREADS) {
        m = max(m, in[c]);
    }
    m = simd_max(m);
    if (lane == 0) {
        partial[warp] = m;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    m = partial[0];
    for (uint w = 1; w < THREADS / 32; ++w) {
        m = max(m, partial[w]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    float s = 0.0f;
    for (uint c = tid; c < COLS; c += THREADS) {
        s += exp(in[c] - m);
    }
    s = simd_sum(s);
    if (lane == 0) {
        partial[warp] = s;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = 0.0f;
    for (uint w = 0; w < THREADS / 32; ++w) {
        s += partial[w];
    }
    const float inv = 1.0f / s;
    for (uint c = tid; c < COLS; c += THREADS) {
        out[c] = exp(in[c] - m) * inv;
    }
}
