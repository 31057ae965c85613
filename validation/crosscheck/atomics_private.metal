// The same histogram privatised: each threadgroup counts into threadgroup-memory atomics,
// then adds its 256 bins to device memory, 256 device atomics per threadgroup instead of
// one per element.
#include <metal_stdlib>
using namespace metal;

kernel void atomics_private(device const uint*  data [[buffer(0)]],
                            device atomic_uint* bins [[buffer(1)]],
                            uint i   [[thread_position_in_grid]],
                            uint tid [[thread_index_in_threadgroup]])
{
    threadgroup atomic_uint local_bins[256];
    atomic_store_explicit(&local_bins[tid], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    atomic_fetch_add_explicit(&local_bins[data[i] & 255], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint count = atomic_load_explicit(&local_bins[tid], memory_order_relaxed);
    if (count != 0) {
        atomic_fetch_add_explicit(&bins[tid], count, memory_order_relaxed);
    }
}
