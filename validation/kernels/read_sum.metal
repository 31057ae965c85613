// Reads a large array and sums it: thread t adds x[t + k * threads] for k < count, so
// every step of the grid reads one contiguous stretch. The partial sums go to `out`.
// T is float (clpeak's global read) or long (a 64-bit integer SUM).
#include <metal_stdlib>
using namespace metal;

#ifndef T
#define T float
#endif

kernel void read_sum(device const T* x     [[buffer(0)]],
                     device T*       out   [[buffer(1)]],
                     constant uint&  count [[buffer(2)]],
                     uint gid     [[thread_position_in_grid]],
                     uint threads [[threads_per_grid]])
{
    T s = 0;
    for (uint k = 0; k < count; k++) {
        s += x[gid + k * threads];
    }
    out[gid] = s;
}
