// Preprocessor errors: a bad #if expression, a macro called with the wrong number of
// arguments, an #include that cannot be found, an #error, an unterminated #if.
#include <metal_stdlib>
#include "missing_header.h"
using namespace metal;

#define PAIR(a, b) ((a) + (b))

#if __METAL_VERSION__ >= 
#endif

#if __METAL_VERSION__ < 300
#error "needs Metal 3"
#endif

kernel void k(device float* out [[buffer(0)]]) {
    out[0] = PAIR(1, 2, 3);
}

#if 1
