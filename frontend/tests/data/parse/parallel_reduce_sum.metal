#include <metal_stdlib>
using namespace metal;

kernel void parallel_reduce_sum(
    device const float* input [[buffer(0)]],
    device atomic_float* output [[buffer(1)]],
    constant uint& count [[buffer(2)]],
    threadgroup float* partials [[threadgroup(0)]],
    uint gid [[thread_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_id [[simdgroup_index_in_threadgroup]],
    uint simd_size [[threads_per_simdgroup]],
    uint tg_size [[threads_per_threadgroup]]
) {
    float val = (gid < count) ? input[gid] : 0.0f;
    for (uint offset = simd_size / 2; offset > 0; offset /= 2) {
        val += simd_shuffle_down(val, offset);
    }
    uint num_simdgroups = (tg_size + simd_size - 1) / simd_size;
    if (simd_lane == 0) {
        partials[simd_id] = val;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (simd_id == 0) {
        val = (lid < num_simdgroups) ? partials[lid] : 0.0f;
        for (uint offset = simd_size / 2; offset > 0; offset /= 2) {
            val += simd_shuffle_down(val, offset);
        }
    }
    if (lid == 0) {
        atomic_fetch_add_explicit(output, val, memory_order_relaxed);
    }
}
