// In the style of llama.cpp's ggml-metal kernels: wide declarator spacing, pointer casts,
// helper macros with statement bodies, a typedef'd struct, a C enum, and a template
// instantiated through decltype.
#include <metal_stdlib>

using namespace metal;

#define MAX(x, y) ((x) > (y) ? (x) : (y))
#define MIN(x, y) ((x) < (y) ? (x) : (y))
#define SWAP(x, y) { auto tmp = (x); (x) = (y); (y) = tmp; }

#define QK4_0 32
#define N_SIMDWIDTH 32

typedef struct {
    half    d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

enum ggml_sort_order {
    GGML_SORT_ORDER_ASC,
    GGML_SORT_ORDER_DESC,
};

// general-purpose kernel for addition of two tensors
kernel void kernel_add(
        device const char * src0,
        device const char * src1,
        device       char * dst,
        constant  int64_t & ne00,
        constant uint64_t & nb01,
        constant  int64_t & ne0,
        constant uint64_t & nb0,
        uint3 tgpig[[threadgroup_position_in_grid]],
        uint3 tpitg[[thread_position_in_threadgroup]],
        uint3   ntg[[threads_per_threadgroup]]) {
    const int64_t i03 = tgpig.z;
    const int64_t i02 = tgpig.y;
    const int64_t i01 = tgpig.x;

    device const char * src0_ptr = src0 + i03*nb01 + i02*nb01 + i01*nb01;
    device       char * dst_ptr  = dst  + i03*nb0  + i02*nb0  + i01*nb0;

    for (int i0 = tpitg.x; i0 < ne0; i0 += ntg.x) {
        const int i10 = i0 % ne00;
        *((device float *)(dst_ptr + i0*nb0)) = *((device float *)(src0_ptr + i0*nb0)) + *((device float *)(src1 + i10*nb0));
    }
}

kernel void kernel_scale_4(
        device const float4 * src0,
        device       float4 * dst,
        constant     float  & scale,
        uint tpig[[thread_position_in_grid]]) {
    dst[tpig] = src0[tpig] * scale;
}

static float rope_yarn_ramp(const float low, const float high, const int i0) {
    const float y = (i0 / 2 - low) / MAX(0.001f, high - low);
    return 1.0f - MIN(1.0f, MAX(0.0f, y));
}

inline float block_q_n_dot_y(device const block_q4_0 * qb_curr, float sumy, thread float * yl, int il) {
    float d = qb_curr->d;
    float2 acc = 0.f;
    device const uint16_t * qs = ((device const uint16_t *)qb_curr + 1 + il/2);
    for (int i = 0; i < 8; i+=2) {
        acc[0] += yl[i + 0] * (qs[i / 2] & 0x000F)
                + yl[i + 1] * (qs[i / 2] & 0x0F00);
        acc[1] += yl[i + 8] * (qs[i / 2] & 0x00F0)
                + yl[i + 9] * (qs[i / 2] & 0xF000);
    }
    return d * (sumy * -8.f + acc[0] + acc[1]);
}

kernel void kernel_soft_max(
        device const char * src0,
        device       char * dst,
        threadgroup  float * buf [[threadgroup(0)]],
        uint  tgpig[[threadgroup_position_in_grid]],
        uint  tpitg[[thread_position_in_threadgroup]],
        uint  sgitg[[simdgroup_index_in_threadgroup]],
        uint  tiisg[[thread_index_in_simdgroup]],
        uint    ntg[[threads_per_threadgroup]]) {
    float lmax = -INFINITY;
    lmax = simd_max(lmax);
    if (ntg > N_SIMDWIDTH) {
        if (sgitg == 0) {
            buf[tiisg] = -INFINITY;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        float max_val = buf[tiisg];
        max_val = simd_max(max_val);
    }
    float tmp[4] = { 0.f };
    SWAP(tmp[0], tmp[1]);
}

template<typename T>
kernel void kernel_cpy(device const T * src, device T * dst, uint tpig[[thread_position_in_grid]]) {
    dst[tpig] = src[tpig];
}

typedef decltype(kernel_cpy<float>) kernel_cpy_t;

template [[host_name("kernel_cpy_f32")]] kernel kernel_cpy_t kernel_cpy<float>;
