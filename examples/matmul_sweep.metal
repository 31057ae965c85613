// Two ways to compute C = A x B for square row-major N x N float matrices, for
// `metalsim sweep` to compare (docs/sweep.md):
// - matmul_naive: every thread reads its row of A and column of B from device memory;
// - matmul_tiled<TILE>: each TILE x TILE threadgroup stages one tile of A and one of B
//   in threadgroup memory per step, so each element fetched from device memory is used
//   TILE times. Dispatch it with a TILE x TILE threadgroup and N a multiple of TILE.
#include <metal_stdlib>
using namespace metal;

kernel void matmul_naive(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float*       C [[buffer(2)]],
                         constant uint&      N [[buffer(3)]],
                         uint2 gid [[thread_position_in_grid]])
{
    if (gid.x >= N || gid.y >= N) {
        return;
    }
    float acc = 0.0f;
    for (uint k = 0; k < N; ++k) {
        acc += A[gid.y * N + k] * B[k * N + gid.x];
    }
    C[gid.y * N + gid.x] = acc;
}

template <uint TILE>
kernel void matmul_tiled(device const float* A [[buffer(0)]],
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
    const uint slot = local.y * TILE + local.x;
    float acc = 0.0f;
    for (uint base = 0; base < N; base += TILE) {
        tile_a[slot] = A[row * N + base + local.x];
        tile_b[slot] = B[(base + local.y) * N + col];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE; ++k) {
            acc += tile_a[local.y * TILE + k] * tile_b[k * TILE + local.x];
        }
        // Nobody may overwrite the tiles until everyone has used them.
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    C[row * N + col] = acc;
}
