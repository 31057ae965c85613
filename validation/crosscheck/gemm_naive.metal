// C = A x B, naive: one thread per element of C, every operand from device memory
// (the caches catch the reuse). The baseline for the tiled versions.
#include <metal_stdlib>
using namespace metal;

kernel void gemm_naive(device const float* A [[buffer(0)]],
                       device const float* B [[buffer(1)]],
                       device float*       C [[buffer(2)]],
                       constant uint&      N [[buffer(3)]],
                       uint2 pos [[thread_position_in_grid]])
{
    const uint row = pos.y;
    const uint col = pos.x;
    float acc = 0.0f;
    for (uint k = 0; k < N; ++k) {
        acc += A[row * N + k] * B[k * N + col];
    }
    C[row * N + col] = acc;
}
