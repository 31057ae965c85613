// A row reduction parameterized by its operation as a template template parameter, the way
// kernels pass `Sum`/`Max` functor templates: the op is given explicitly to the kernel
// template (`row_reduce<Sum, float>`), forwarded to a helper that deduces it from an
// argument (`Op<T>`), and defaulted in a class template (`RowReducer<>`) and a function
// template.
#include <metal_stdlib>
using namespace metal;

template <typename T>
struct Sum {
    static constexpr T init() { return T(0); }
    T operator()(T a, T b) const { return a + b; }
};

template <typename T>
struct Max {
    static constexpr T init() { return numeric_limits<T>::lowest(); }
    T operator()(T a, T b) const { return max(a, b); }
};

// Reduces a SIMD-group's values with `op`, deduced from the argument.
template <template <typename> class Op, typename T>
T simd_reduce(Op<T> op, T v) {
    for (ushort offset = 16; offset > 0; offset /= 2) {
        v = op(v, simd_shuffle_down(v, offset));
    }
    return v;
}

template <template <typename> class Op = Sum>
struct RowReducer {
    template <typename T>
    static T run(device const T* row, uint n, uint lane) {
        Op<T> op;
        T acc = Op<T>::init();
        for (uint i = lane; i < n; i += 32) {
            acc = op(acc, row[i]);
        }
        return simd_reduce(op, acc);
    }
};

// One SIMD-group per row.
template <template <typename> class Op, typename T>
[[kernel]] void row_reduce(device const T* x [[buffer(0)]],
                           device T* out [[buffer(1)]],
                           constant uint& n [[buffer(2)]],
                           uint row [[threadgroup_position_in_grid]],
                           uint lane [[thread_index_in_simdgroup]]) {
    T r = RowReducer<Op>::template run<T>(x + row * n, n, lane);
    if (lane == 0) {
        out[row] = r;
    }
}

template [[host_name("row_sum_float32")]] [[kernel]] decltype(row_reduce<Sum, float>) row_reduce<Sum, float>;
template [[host_name("row_max_float32")]] [[kernel]] decltype(row_reduce<Max, float>) row_reduce<Max, float>;
template [[host_name("row_max_int32")]] [[kernel]] decltype(row_reduce<Max, int>) row_reduce<Max, int>;

// The op defaults to Sum; T is deduced.
template <template <typename> class Op = Sum, typename T>
T reduce_row(device const T* row, uint n, uint lane) {
    return RowReducer<Op>::template run<T>(row, n, lane);
}

kernel void row_sum_default(device const float* x [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            constant uint& n [[buffer(2)]],
                            uint row [[threadgroup_position_in_grid]],
                            uint lane [[thread_index_in_simdgroup]]) {
    // Both sum in the same order, so their mean is exactly the sum.
    float r = 0.5f * (RowReducer<>::run(x + row * n, n, lane) + reduce_row(x + row * n, n, lane));
    if (lane == 0) {
        out[row] = r;
    }
}
