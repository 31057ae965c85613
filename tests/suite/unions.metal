// Type punning through unions as quantized-block kernels write it (ggml's block_q8_1):
// an anonymous union of an anonymous struct of two halves and their half2, a named union
// for bit tricks on floats, and a union member read after another was written.

#include <metal_stdlib>
using namespace metal;

#define QK8_1 32

typedef struct {
    union {
        struct {
            half d; // the scale
            half s; // d * sum(qs)
        };
        half2 ds;
    };
    int8_t qs[QK8_1];
} block_q8_1;

static_assert(sizeof(block_q8_1) == 2 * sizeof(half) + QK8_1, "wrong q8_1 block size");

union word {
    uint u;
    float f;
    half2 h;
    uint bits() const { return u; }
};

// |x| by clearing the sign bit of its representation.
inline float abs_by_bits(float x) {
    word w;
    w.f = x;
    w.u &= 0x7fffffffu;
    return w.f;
}

kernel void dequantize_q8_1(device const block_q8_1* blocks [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            device float* sums [[buffer(2)]],
                            device uint* scale_bits [[buffer(3)]],
                            uint id [[thread_position_in_grid]]) {
    device const block_q8_1& b = blocks[id];
    const float d = b.d;
    float sum = 0;
    for (int j = 0; j < QK8_1; ++j) {
        const float v = d * b.qs[j];
        out[id * QK8_1 + j] = abs_by_bits(v);
        sum += v;
    }
    // The two halves read through the half2 member, then as one word.
    const float2 ds = float2(b.ds);
    word w = {0u};
    w.h = b.ds;
    sums[id] = sum - ds.y;
    scale_bits[id] = w.bits();
}
