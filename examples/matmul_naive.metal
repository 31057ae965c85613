// C = A x B for square row-major N x N float matrices, one thread per element of C.
// Every thread walks a full row of A and a full column of B straight from device memory.
#include <metal_stdlib>
using namespace metal;

kernel void matmul_naive(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float*       C [[buffer(2)]],
                         constant uint&      N [[buffer(3)]],
                         uint2 pos [[thread_position_in_grid]])
{
    const uint row = pos.y;
    const uint col = pos.x;
    if (row >= N || col >= N) {
        return;
    }
    float acc = 0.0f;
    for (uint k = 0; k < N; k++) {
        acc += A[row * N + k] * B[k * N + col];
    }
    C[row * N + col] = acc;
}
