// Sums each row of 128 floats: one SIMD-group per row, four elements per lane, then
// simd_sum, as a reduction over the fastest axis of (64, 128, 128, 128) does.
#include <metal_stdlib>
using namespace metal;

kernel void row_sum(device const float* x   [[buffer(0)]],
                    device float*       out [[buffer(1)]],
                    uint gid  [[thread_position_in_grid]],
                    uint lane [[thread_index_in_simdgroup]])
{
    const uint row = gid / 32;
    device const float* r = x + row * 128;
    float s = r[lane] + r[lane + 32] + r[lane + 64] + r[lane + 96];
    s = simd_sum(s);
    if (lane == 0) {
        out[row] = s;
    }
}
