// A pointer chase: one thread follows `hops` links i = next[i] & mask from 0. With
// `next` holding start + i * step (the spec's iota) and mask + 1 a power of two, the
// links are the LCG i -> (step * i + start) mod (mask + 1), which visits every element
// in a scattered order (full period: step = 1 mod 4, start odd). Latency per hop = one
// load plus the AND and the address computation, as in the published chases.
#include <metal_stdlib>
using namespace metal;

kernel void chase(device const uint* next [[buffer(0)]],
                  device uint*       out  [[buffer(1)]],
                  constant uint&     hops [[buffer(2)]],
                  constant uint&     mask [[buffer(3)]])
{
    // The loop test is computed before the load so that the loop control is off the
    // chain of dependent loads (the compiler's scheduling would do the same).
    uint i = 0;
    uint h = hops;
    bool more;
    do {
        more = h > 1;
        h--;
        i = next[i] & mask;
    } while (more);
    out[0] = i;
}
