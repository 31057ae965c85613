// Elementwise kernels in the style of MLX's unary/binary kernels: operations are small
// functor structs, one kernel template per arity, and a macro stamps out an explicit
// instantiation per (operation, type) whose host name is pasted from string literals.
#include <metal_stdlib>
using namespace metal;

namespace ew {

struct Add {
    template <typename T> T operator()(T x, T y) const { return x + y; }
};
struct Maximum {
    template <typename T> T operator()(T x, T y) const { return max(x, y); }
};
struct Mul {
    template <typename T> T operator()(T x, T y) const { return x * y; }
};
struct Square {
    template <typename T> T operator()(T x) const { return x * x; }
};
struct Sigmoid {
    template <typename T> T operator()(T x) const {
        return T(1) / (T(1) + exp(-x));
    }
};
struct Abs {
    template <typename T> T operator()(T x) const { return abs(x); }
};

} // namespace ew

template <typename T, typename Op>
[[kernel]] void unary_v(
    device const T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant uint& size [[buffer(2)]],
    uint index [[thread_position_in_grid]]) {
    if (index < size) {
        out[index] = Op()(in[index]);
    }
}

template <typename T, typename Op, int N = 4>
[[kernel]] void binary_vv(
    device const T* a [[buffer(0)]],
    device const T* b [[buffer(1)]],
    device T* out [[buffer(2)]],
    constant uint& size [[buffer(3)]],
    uint index [[thread_position_in_grid]]) {
    // Each thread handles N consecutive elements.
    const uint base = index * N;
    Op op;
    for (int i = 0; i < N; ++i) {
        if (base + i < size) {
            out[base + i] = op(a[base + i], b[base + i]);
        }
    }
}

#define instantiate_unary(name, op, tname, type)                                        \
    template [[host_name(name "_" #tname)]] [[kernel]] void unary_v<type, op>(           \
        device const type*, device type*, constant uint&, uint);

#define instantiate_binary(name, op, tname, type)                                       \
    template [[host_name("vv_" name #tname)]] [[kernel]] decltype(binary_vv<type, op>)    \
        binary_vv<type, op>;

#define instantiate_unary_float(name, op)                                               \
    instantiate_unary(name, op, float32, float)                                         \
    instantiate_unary(name, op, float16, half)

#define instantiate_binary_all(name, op)                                                \
    instantiate_binary(name, op, float32, float)                                        \
    instantiate_binary(name, op, float16, half)                                         \
    instantiate_binary(name, op, int32, int)                                            \
    instantiate_binary(name, op, uint8, uint8_t)

instantiate_unary_float("square", ew::Square)
instantiate_unary_float("sigmoid", ew::Sigmoid)
instantiate_unary("abs", ew::Abs, int32, int)

instantiate_binary_all("add", ew::Add)
instantiate_binary_all("maximum", ew::Maximum)
instantiate_binary_all("mul", ew::Mul)
