// Histogram with every update a device-memory atomic: 256 bins, so many lanes hit the
// same address and the atomics serialise in the L2 cache.
#include <metal_stdlib>
using namespace metal;

kernel void atomics_global(device const uint*  data [[buffer(0)]],
                           device atomic_uint* bins [[buffer(1)]],
                           uint i [[thread_position_in_grid]])
{
    atomic_fetch_add_explicit(&bins[data[i] & 255], 1u, memory_order_relaxed);
}
