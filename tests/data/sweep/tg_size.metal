// A kernel whose output depends on the threadgroup size: sweeping the size must flag the
// variants that disagree with the first.
#include <metal_stdlib>
using namespace metal;

kernel void tg_size(device float* out [[buffer(0)]],
                    uint gid [[thread_position_in_grid]],
                    uint tpg [[threads_per_threadgroup]])
{
    out[gid] = float(tpg);
}
