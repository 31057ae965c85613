#include <metal_stdlib>
using namespace metal;

kernel void histogram(
    device const uchar* pixels [[buffer(0)]],
    device atomic_uint* bins [[buffer(1)]],
    threadgroup atomic_uint* local_bins [[threadgroup(0)]],
    constant uint& n [[buffer(2)]],
    uint gid [[thread_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]],
    uint lane [[thread_index_in_simdgroup]]
) {
    if (lid < 256) {
        atomic_store_explicit(&local_bins[lid], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (gid < n) {
        atomic_fetch_add_explicit(&local_bins[pixels[gid]], 1u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_device);
    uint total = simd_sum(lane < 4 ? 1u : 0u);
    uint first = simd_prefix_exclusive_sum(total);
    bool any = simd_any(first > 0);
    if (lid < 256 && any) {
        uint v = atomic_load_explicit(&local_bins[lid], memory_order_relaxed);
        atomic_fetch_add_explicit(bins + lid, v, memory_order_relaxed);
    }
    simdgroup_float8x8 mat;
    simdgroup_matrix<float, 8, 8> acc = simdgroup_matrix<float, 8, 8>(0);
    simdgroup_barrier(mem_flags::mem_none);
}
