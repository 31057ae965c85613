// A row softmax in the style of MLX's softmax kernels: one threadgroup per row, each
// thread reading N_READS elements at a time, reductions with simd_max / simd_sum and a
// threadgroup pass, and function constants that switch on an additive mask and a scale.
#include <metal_stdlib>
using namespace metal;

constant bool has_mask [[function_constant(0)]];
constant float scale_given [[function_constant(1)]];
// Program-scope constants computed from function constants.
constant float scale = is_function_constant_defined(scale_given) ? scale_given : 1.0f;
constant bool masked = is_function_constant_defined(has_mask) && has_mask;

#define SIMD_SIZE 32

// The scaled (and masked) input value at `i`, in float.
template <typename T>
METAL_FUNC float load_value(const device T* in, const device T* mask, int i) {
    float v = static_cast<float>(in[i]) * scale;
    if (masked) {
        v += static_cast<float>(mask[i]);
    }
    return v;
}

// Reduces one value per thread over the threadgroup: within each SIMD-group, then over
// the SIMD-groups' results in threadgroup memory.
template <typename Op>
METAL_FUNC float threadgroup_reduce(float v, threadgroup float* scratch, uint lane, uint group,
                                    uint groups, Op op) {
    v = op.simd(v);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {
        scratch[group] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = lane < groups ? scratch[lane] : op.identity();
    return op.simd(v);
}

struct MaxOp {
    METAL_FUNC float simd(float v) const { return simd_max(v); }
    METAL_FUNC float identity() const { return -numeric_limits<float>::infinity(); }
};

struct SumOp {
    METAL_FUNC float simd(float v) const { return simd_sum(v); }
    METAL_FUNC float identity() const { return 0.0f; }
};

template <typename T, int N_READS = 4>
[[kernel]] void softmax_looped(
    const device T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant int& axis_size [[buffer(2)]],
    const device T* mask [[buffer(3), function_constant(masked)]],
    threadgroup float* scratch [[threadgroup(0)]],
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint lsize [[threads_per_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
    const size_t row = gid * size_t(axis_size);
    in += row;
    out += row;
    if (masked) {
        mask += row;
    }
    const uint groups = (lsize + SIMD_SIZE - 1) / SIMD_SIZE;

    // The row maximum.
    float maxval = -numeric_limits<float>::infinity();
    for (int r = 0; r < axis_size; r += lsize * N_READS) {
        const int offset = r + lid * N_READS;
        for (int i = 0; i < N_READS; i++) {
            if (offset + i < axis_size) {
                maxval = max(maxval, load_value(in, mask, offset + i));
            }
        }
    }
    maxval = threadgroup_reduce(maxval, scratch, simd_lane_id, simd_group_id, groups, MaxOp());

    // The normalizer.
    float normalizer = 0;
    for (int r = 0; r < axis_size; r += lsize * N_READS) {
        const int offset = r + lid * N_READS;
        for (int i = 0; i < N_READS; i++) {
            if (offset + i < axis_size) {
                normalizer += fast::exp(load_value(in, mask, offset + i) - maxval);
            }
        }
    }
    normalizer = threadgroup_reduce(normalizer, scratch, simd_lane_id, simd_group_id, groups,
                                    SumOp());
    normalizer = 1.0f / normalizer;

    for (int r = 0; r < axis_size; r += lsize * N_READS) {
        const int offset = r + lid * N_READS;
        for (int i = 0; i < N_READS; i++) {
            if (offset + i < axis_size) {
                out[offset + i] = static_cast<T>(
                    fast::exp(load_value(in, mask, offset + i) - maxval) * normalizer);
            }
        }
    }
}

#define instantiate_softmax(name, type)                                                 \
    template [[host_name("softmax_looped_" #name)]] [[kernel]]                          \
    decltype(softmax_looped<type>) softmax_looped<type>;

instantiate_softmax(float32, float)
instantiate_softmax(float16, half)
