// Branch divergence of degree `ways`: the lanes of a SIMD-group split into `ways` paths
// (lane % ways), each a chain of `iters` dependent FMAs, so a SIMD-group runs the chain
// `ways` times with 32 / ways lanes active. Run at degrees 1 to 32 (divergence@N.toml).
// The chain is unrolled by four here (`iters` is a multiple of 4), as nvcc unrolls it on
// its own: metalsim's frontend does not unroll loops, and a rolled loop would compare
// three loop-control instructions per FMA in the ISA with about one in the SASS
// (docs/validation.md, H100 cross-check).
#include <metal_stdlib>
using namespace metal;

kernel void divergence(device float*   out   [[buffer(0)]],
                       constant uint&  ways  [[buffer(1)]],
                       constant uint&  iters [[buffer(2)]],
                       uint gid  [[thread_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]])
{
    float x = float(gid & 1023) * 0.001f;
    const uint path = lane % ways;
    for (uint p = 0; p < ways; ++p) {
        if (path == p) {
            const float a = 0.999f - 0.001f * float(p);
            for (uint k = 0; k < iters; k += 4) {
                x = fma(x, a, 0.5f);
                x = fma(x, a, 0.5f);
                x = fma(x, a, 0.5f);
                x = fma(x, a, 0.5f);
            }
        }
    }
    out[gid] = x;
}
