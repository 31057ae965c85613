// C = A x B with 8 x 8 SIMD-group matrices: each SIMD-group accumulates one 8 x 8 block
// of C over N / 8 multiply-accumulates, B read transposed from a column-major copy. On
// the NVIDIA GPU the matrix operations are emulated lane by lane with shuffles (a
// correctness check of the translation; its time says nothing about tensor cores).
#include <metal_stdlib>
using namespace metal;

kernel void gemm_simdgroup(device const float* A  [[buffer(0)]],
                           device const float* BT [[buffer(1)]],
                           device float*       C  [[buffer(2)]],
                           constant uint&      N  [[buffer(3)]],
                           uint2 block [[threadgroup_position_in_grid]])
{
    simdgroup_float8x8 acc = simdgroup_float8x8(0);
    simdgroup_float8x8 a;
    simdgroup_float8x8 b;
    const uint row = block.y * 8;
    const uint col = block.x * 8;
    for (uint k = 0; k < N; k += 8) {
        simdgroup_load(a, A + row * N + k, N);
        simdgroup_load(b, BT + col * N + k, N, ulong2(0, 0), true);
        simdgroup_multiply_accumulate(acc, a, b, acc);
    }
    simdgroup_store(acc, C + row * N + col, N);
}
