#include <metal_stdlib>
using namespace metal;

#define TILE_SIZE 16

kernel void matmul_tiled(
    device const float* A [[buffer(0)]],
    device const float* B [[buffer(1)]],
    device float* C [[buffer(2)]],
    constant uint& N [[buffer(3)]],
    threadgroup float* tileA [[threadgroup(0)]],
    threadgroup float* tileB [[threadgroup(1)]],
    uint2 tgid [[threadgroup_position_in_grid]],
    uint2 lid [[thread_position_in_threadgroup]]
) {
    uint row = tgid.y * TILE_SIZE + lid.y;
    uint col = tgid.x * TILE_SIZE + lid.x;
    float sum = 0.0f;
    uint numTiles = (N + TILE_SIZE - 1) / TILE_SIZE;
    for (uint t = 0; t < numTiles; ++t) {
        uint aCol = t * TILE_SIZE + lid.x;
        if (row < N && aCol < N)
            tileA[lid.y * TILE_SIZE + lid.x] = A[row * N + aCol];
        else
            tileA[lid.y * TILE_SIZE + lid.x] = 0.0f;
        uint bRow = t * TILE_SIZE + lid.y;
        if (bRow < N && col < N)
            tileB[lid.y * TILE_SIZE + lid.x] = B[bRow * N + col];
        else
            tileB[lid.y * TILE_SIZE + lid.x] = 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE_SIZE; ++k) {
            sum += tileA[lid.y * TILE_SIZE + k] * tileB[k * TILE_SIZE + lid.x];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (row < N && col < N) {
        C[row * N + col] = sum;
    }
}
