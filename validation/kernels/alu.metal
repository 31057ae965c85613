// Instruction throughput and latency as Turner's metal-benchmarks measures it: each
// thread runs `iters` iterations of 16 dependent operations per chain, with 1 or 4
// independent chains (ILP). OP is the operation on a chain value x:
//   FFMA: x = fma(x, a, b)    FADD: x = x + a
// and T the type (float or half).
#include <metal_stdlib>
using namespace metal;

#ifndef T
#define T float
#endif
#ifndef ILP
#define ILP 1
#endif
#ifdef FADD
#define OP(x) x = x + a
#else
#define OP(x) x = fma(x, a, b)
#endif

#if ILP == 1
#define STEP OP(x0)
#else
#define STEP OP(x0); OP(x1); OP(x2); OP(x3)
#endif
#define STEP4 STEP; STEP; STEP; STEP
#define STEP16 STEP4; STEP4; STEP4; STEP4

kernel void alu(device T*       out   [[buffer(0)]],
                constant float* ab    [[buffer(1)]],
                constant uint&  iters [[buffer(2)]],
                uint gid [[thread_position_in_grid]])
{
    const T a = T(ab[0]);
    const T b = T(ab[1]);
    T x0 = T(gid);
    T x1 = x0 + T(1);
    T x2 = x0 + T(2);
    T x3 = x0 + T(3);
    for (uint i = 0; i < iters; i++) {
        STEP16;
    }
    out[gid] = x0 + x1 + x2 + x3;
}
