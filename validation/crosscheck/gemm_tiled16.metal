// C = A x B tiled through threadgroup memory with 16 x 16 tiles: each element fetched from
// device memory is reused 16 times from on-chip memory. Compare with gemm_naive and the
// other tile size.
#include <metal_stdlib>
using namespace metal;

#define TILE 16

kernel void gemm_tiled16(device const float* A [[buffer(0)]],
                        device const float* B [[buffer(1)]],
                        device float*       C [[buffer(2)]],
                        constant uint&      N [[buffer(3)]],
                        uint2 group [[threadgroup_position_in_grid]],
                        uint2 local [[thread_position_in_threadgroup]])
{
    threadgroup float tile_a[TILE * TILE];
    threadgroup float tile_b[TILE * TILE];
    const uint row = group.y * TILE + local.y;
    const uint col = group.x * TILE + local.x;
    float acc = 0.0f;
    for (uint base = 0; base < N; base += TILE) {
        tile_a[local.y * TILE + local.x] = A[row * N + base + local.x];
        tile_b[local.y * TILE + local.x] = B[(base + local.y) * N + col];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE; ++k) {
            acc += tile_a[local.y * TILE + k] * tile_b[k * TILE + local.x];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    C[row * N + col] = acc;
}
