// Sum of a float array in three stages: a shuffle-down tree inside each SIMD-group,
// SIMD-group partials combined through threadgroup memory by the first SIMD-group, and
// one atomic add per threadgroup into the result.
#include <metal_stdlib>
using namespace metal;

kernel void reduce_sum(device const float*  data     [[buffer(0)]],
                       device atomic_float* total    [[buffer(1)]],
                       constant uint&       count    [[buffer(2)]],
                       threadgroup float*   partials [[threadgroup(0)]],
                       uint gid        [[thread_position_in_grid]],
                       uint tid        [[thread_position_in_threadgroup]],
                       uint lane       [[thread_index_in_simdgroup]],
                       uint warp       [[simdgroup_index_in_threadgroup]],
                       uint warp_width [[threads_per_simdgroup]],
                       uint group_size [[threads_per_threadgroup]])
{
    float v = gid < count ? data[gid] : 0.0f;

    // Stage 1: fold the SIMD-group onto lane 0.
    for (uint step = warp_width / 2; step > 0; step >>= 1) {
        v += simd_shuffle_down(v, step);
    }
    if (lane == 0) {
        partials[warp] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Stage 2: the first SIMD-group folds the partials.
    const uint warps = (group_size + warp_width - 1) / warp_width;
    if (warp == 0) {
        v = tid < warps ? partials[tid] : 0.0f;
        for (uint step = warp_width / 2; step > 0; step >>= 1) {
            v += simd_shuffle_down(v, step);
        }
    }

    // Stage 3: one atomic per threadgroup.
    if (tid == 0) {
        atomic_fetch_add_explicit(total, v, memory_order_relaxed);
    }
}
