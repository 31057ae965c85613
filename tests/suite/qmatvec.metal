// A quantized matrix-vector product in the style of llama.cpp's ggml-metal kernels:
// weights in 32-element blocks (a half scale and 4- or 8-bit quants), rows split over
// SIMD-groups, lanes striding over blocks, and `simd_sum` to finish each row.
#include <metal_stdlib>
using namespace metal;

#define QK4_0 32
#define QK8_0 32
#define N_SIMDWIDTH 32
#define N_SIMDGROUPS 2

typedef struct {
    half    d;            // scale
    uint8_t qs[QK4_0 / 2];  // 4-bit quants, two per byte, offset by 8
} block_q4_0;
static_assert(sizeof(block_q4_0) == sizeof(half) + QK4_0 / 2, "wrong q4_0 block size");

typedef struct {
    half   d;
    int8_t qs[QK8_0];
} block_q8_0;
static_assert(sizeof(block_q8_0) == sizeof(half) + QK8_0, "wrong q8_0 block size");

struct MatVecArgs {
    int ne00;  // columns
    int ne01;  // rows
};

// What the kernel template needs to know about a block type.
template <typename block_q> struct block_traits;
template <> struct block_traits<block_q4_0> { static constexpr int size = QK4_0; };
template <> struct block_traits<block_q8_0> { static constexpr int size = QK8_0; };

// Dot product of one block with 32 floats of y. The 4-bit quants are read 16 bits at a
// time (the block is only 2-byte aligned) and split into bytes with as_type.
inline float block_dot(device const block_q4_0 & b, device const float * y) {
    const float d = b.d;
    device const uint16_t * qw = (device const uint16_t *) b.qs;
    float acc = 0.f;
    for (int w = 0; w < QK4_0 / 4; ++w) {
        const uchar2 q = as_type<uchar2>(qw[w]);
        for (int k = 0; k < 2; ++k) {
            const int j = 2 * w + k;
            acc += y[j] * (float((q[k] & 0x0F)) - 8.0f);
            acc += y[j + QK4_0 / 2] * (float((q[k] >> 4)) - 8.0f);
        }
    }
    return d * acc;
}

inline float block_dot(device const block_q8_0 & b, device const float * y) {
    float acc = 0.f;
    for (int j = 0; j < QK8_0; ++j) {
        acc += y[j] * b.qs[j];
    }
    return float(b.d) * acc;
}

template <typename block_q, int NR>
kernel void kernel_mul_mv_q(
        device const char * src0,
        device const float * src1,
        device       float * dst,
        constant MatVecArgs & args,
        uint3  tgpig [[threadgroup_position_in_grid]],
        ushort tiisg [[thread_index_in_simdgroup]],
        ushort sgitg [[simdgroup_index_in_threadgroup]]) {
    constexpr int QK = block_traits<block_q>::size;
    const int nb = args.ne00 / QK;
    const int first_row = (tgpig.x * N_SIMDGROUPS + sgitg) * NR;

    device const block_q * x = (device const block_q *) src0 + first_row * nb;

    float sumf[NR] = {0.f};
    for (int ib = tiisg; ib < nb; ib += N_SIMDWIDTH) {
        for (int row = 0; row < NR; ++row) {
            if (first_row + row < args.ne01) {
                sumf[row] += block_dot(x[ib + row * nb], src1 + ib * QK);
            }
        }
    }
    for (int row = 0; row < NR; ++row) {
        const float tot = simd_sum(sumf[row]);
        if (tiisg == 0 && first_row + row < args.ne01) {
            dst[first_row + row] = tot;
        }
    }
}

typedef decltype(kernel_mul_mv_q<block_q4_0, 4>) mul_mv_q_t;

template [[host_name("kernel_mul_mv_q4_0_f32")]] kernel mul_mv_q_t kernel_mul_mv_q<block_q4_0, 4>;
template [[host_name("kernel_mul_mv_q8_0_f32")]] kernel mul_mv_q_t kernel_mul_mv_q<block_q8_0, 4>;
