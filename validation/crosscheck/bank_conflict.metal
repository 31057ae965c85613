// Threadgroup-memory bank conflicts: each SIMD-group reads a 32 x 32 tile by columns.
// Rows are 32 floats, so a column's 32 elements share one bank: every read is a 32-way conflict.
#include <metal_stdlib>
using namespace metal;

#define ROW 32

kernel void bank_conflict(device const float* src [[buffer(0)]],
                    device float*       dst [[buffer(1)]],
                    constant uint&      iters [[buffer(2)]],
                    uint gid  [[thread_position_in_grid]],
                    uint lane [[thread_index_in_simdgroup]],
                    uint warp [[simdgroup_index_in_threadgroup]])
{
    threadgroup float tile[4 * 32 * ROW];
    const uint base = warp * 32 * ROW;
    for (uint r = 0; r < 32; ++r) {
        tile[base + r * ROW + lane] = src[(gid / 32) * 32 + r] + float(lane);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float acc = 0.0f;
    for (uint k = 0; k < iters; ++k) {
        acc += tile[base + lane * ROW + (k & 31)];
    }
    dst[gid] = acc;
}
