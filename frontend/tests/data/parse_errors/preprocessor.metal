#include "does_not_exist.h"
#define ADD(a, b) ((a) + (b))
#define BAD(x) #y
#if 1 +
#endif
#ifdef ANYTHING
#else
#else
#endif
#frobnicate
#error "this kernel needs a newer compiler"
#warning "just a warning"
kernel void k(device float* out [[buffer(0)]]) {
    out[0] = ADD(1.0f);
}
#if 1
