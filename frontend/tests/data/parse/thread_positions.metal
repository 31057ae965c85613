// Every thread-position attribute, in scalar and vector forms.
#include <metal_stdlib>
using namespace metal;

kernel void positions_1d(
    device uint* out [[buffer(0)]],
    uint tpig [[thread_position_in_grid]],
    uint tpitg [[thread_position_in_threadgroup]],
    uint tgpig [[threadgroup_position_in_grid]],
    uint tptg [[threads_per_threadgroup]],
    uint tgpg [[threadgroups_per_grid]],
    uint tpg [[threads_per_grid]],
    uint tiitg [[thread_index_in_threadgroup]],
    uint tiisg [[thread_index_in_simdgroup]],
    uint sgitg [[simdgroup_index_in_threadgroup]],
    uint tpsg [[threads_per_simdgroup]],
    uint sgptg [[simdgroups_per_threadgroup]],
    uint dtptg [[dispatch_threads_per_threadgroup]],
    uint origin [[grid_origin]],
    uint size [[grid_size]],
    ushort qiitg [[thread_index_in_quadgroup]],
    ushort width [[thread_execution_width]]
) {
    out[tpig] = tpitg + tgpig * tptg + tgpg + tpg + tiitg + tiisg + sgitg + tpsg + sgptg
        + dtptg + origin + size + qiitg + width;
}

kernel void positions_2d(
    device uint* out [[buffer(0)]],
    uint2 tpig [[thread_position_in_grid]],
    uint2 tpitg [[thread_position_in_threadgroup]],
    uint2 tgpig [[threadgroup_position_in_grid]],
    uint2 tptg [[threads_per_threadgroup]],
    uint2 tgpg [[threadgroups_per_grid]],
    uint2 tpg [[threads_per_grid]],
    ushort2 small [[thread_position_in_threadgroup]]
) {
    uint i = tpig.y * tpg.x + tpig.x;
    out[i] = tpitg.x + tgpig.y * tptg.x + tgpg.x + small.y;
}

kernel void positions_3d(
    device uint* out [[buffer(0)]],
    uint3 tpig [[thread_position_in_grid]],
    uint3 tpitg [[thread_position_in_threadgroup]],
    uint3 tgpig [[threadgroup_position_in_grid]],
    uint3 tptg [[threads_per_threadgroup]],
    uint3 tgpg [[threadgroups_per_grid]],
    uint3 tpg [[threads_per_grid]],
    uint3 origin [[grid_origin]],
    uint3 size [[grid_size]]
) {
    uint i = (tpig.z * tpg.y + tpig.y) * tpg.x + tpig.x;
    out[i] = tpitg.z + tgpig.x + tptg.y + tgpg.z + origin.x + size.x;
}
