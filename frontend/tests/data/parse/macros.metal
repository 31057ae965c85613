// Function-like macros from a local header, conditional compilation, attributes.
#include <metal_stdlib>
#include "common.h"
#include "common.h"
using namespace metal;

#if __METAL_VERSION__ >= 300 && defined(__HAVE_BFLOAT__)
#define HAS_BF 1
#else
#define HAS_BF 0
#endif

#ifndef BLOCK
#define BLOCK 32
#endif

inline void log_values(int code) {}
inline void log_values(int code, float v) {}

__attribute__((always_inline)) METAL_FUNC float smooth(float a, float b, float t) {
    return LERP(a, b, CLAMP01(t));
}

kernel void macro_kernel(
    device VEC(float, 4)* out [[buffer(0)]],
    uint id [[thread_position_in_grid]]
) {
    VEC(float, 4) acc = VEC(float, 4)(0.0f);
    FOR_N(i, BLOCK) {
        acc += smooth(0.0f, 1.0f, float(i) / BLOCK);
    }
#if HAS_BF
    bfloat b = bfloat(acc.x);
    acc.y = float(b);
#endif
    LOG(1);
    LOG(2, acc.x);
    out[id] = acc;
}
