// The compute guide's tiled matrix multiply (shared/seeds/003, examples/matmul_tiled.metal)
// with the tile size a macro (TILE x TILE threads per threadgroup, TILE a multiple of 4) and the tiles
// declared in the kernel: C = A x B for square row-major N x N float matrices.
#include <metal_stdlib>
using namespace metal;

#ifndef TILE
#define TILE 16
#endif

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
        const uint a_col = base + local.x;
        const uint b_row = base + local.y;
        tile_a[slot] = (row < N && a_col < N) ? A[row * N + a_col] : 0.0f;
        tile_b[slot] = (b_row < N && col < N) ? B[b_row * N + col] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);

        // Four steps per iteration, their loads first, as Apple's compiler schedules the
        // fully unrolled loop (loads hoisted above the FMAs that use them): metalsim runs
        // the ISA in program order and its optimizer unrolls at most 16 iterations.
        for (uint k = 0; k < TILE; k += 4) {
            const float a0 = tile_a[local.y * TILE + k];
            const float a1 = tile_a[local.y * TILE + k + 1];
            const float a2 = tile_a[local.y * TILE + k + 2];
            const float a3 = tile_a[local.y * TILE + k + 3];
            const float b0 = tile_b[k * TILE + local.x];
            const float b1 = tile_b[(k + 1) * TILE + local.x];
            const float b2 = tile_b[(k + 2) * TILE + local.x];
            const float b3 = tile_b[(k + 3) * TILE + local.x];
            acc += a0 * b0;
            acc += a1 * b1;
            acc += a2 * b2;
            acc += a3 * b3;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (row < N && col < N) {
        C[row * N + col] = acc;
    }
}
